package agg

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestCollect(t *testing.T) {
	a := newAcc(t, "COLLECT", false, false, "MULTISET<INT NOT NULL> NOT NULL", types.Int)
	checkResult(t, a, types.MultisetValue(nil))
	for _, v := range []types.Value{types.Int32Value(2), {}, types.Int32Value(1), types.Int32Value(2)} {
		add(t, a, v)
	}
	r := a.Result()
	checkResult(t, a, types.MultisetValue([]types.Value{types.Int32Value(2), types.Int32Value(1), types.Int32Value(2)}))
	retract(t, a, types.Int32Value(2))
	checkResult(t, a, types.MultisetValue([]types.Value{types.Int32Value(1), types.Int32Value(2)}))
	// An earlier result is not changed by later calls.
	if len(r.Elems()) != 3 || r.Elems()[0].Int() != 2 {
		t.Fatalf("earlier result changed: %s", show(r))
	}
}
