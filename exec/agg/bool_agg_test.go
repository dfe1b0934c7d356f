package agg

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestBoolAgg(t *testing.T) {
	and := newAcc(t, "BOOL_AND", false, false, "BOOLEAN", types.Boolean)
	or := newAcc(t, "BOOL_OR", false, false, "BOOLEAN", types.Boolean)
	checkResult(t, and, types.Value{})
	checkResult(t, or, types.Value{})
	for _, v := range []types.Value{types.BoolValue(true), {}, types.BoolValue(false)} {
		add(t, and, v)
		add(t, or, v)
	}
	checkResult(t, and, types.BoolValue(false))
	checkResult(t, or, types.BoolValue(true))
	retract(t, and, types.BoolValue(false))
	retract(t, or, types.BoolValue(true))
	checkResult(t, and, types.BoolValue(true))
	checkResult(t, or, types.BoolValue(false))
	if _, err := mustFunc(t, "BOOL_OR").ResultType([]types.Type{types.Int}); err == nil {
		t.Fatal("BOOL_OR(INT) accepted")
	}
}
