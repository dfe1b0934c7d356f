package agg

import (
	"errors"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestListAgg(t *testing.T) {
	for _, appendOnly := range []bool{false, true} {
		a := newAcc(t, "LISTAGG", appendOnly, false, "STRING", types.String)
		checkResult(t, a, types.Value{})
		for _, v := range []types.Value{types.StringValue("a"), {}, types.StringValue("b"), types.StringValue("a")} {
			add(t, a, v)
		}
		checkResult(t, a, types.StringValue("a,b,a"))
		if appendOnly {
			if err := a.Retract([]types.Value{types.StringValue("a")}); !errors.Is(err, ErrAppendOnly) {
				t.Fatalf("append-only LISTAGG retract: %v", err)
			}
			continue
		}
		retract(t, a, types.StringValue("a"))
		checkResult(t, a, types.StringValue("b,a"))
		retract(t, a, types.StringValue("b"))
		retract(t, a, types.StringValue("a"))
		checkResult(t, a, types.Value{})
	}
}

func TestListAggSeparator(t *testing.T) {
	for _, appendOnly := range []bool{false, true} {
		a := newAcc(t, "LISTAGG", appendOnly, false, "STRING", types.String, types.Char(1))
		sep := types.CharValue("|")
		add(t, a, types.StringValue("x"), sep)
		add(t, a, types.StringValue("y"), sep)
		add(t, a, types.Value{}, sep)
		checkResult(t, a, types.StringValue("x|y"))
		b := newAcc(t, "LISTAGG", appendOnly, false, "", types.String, types.Char(1))
		add(t, b, types.StringValue("z"), sep)
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		checkResult(t, a, types.StringValue("x|y|z"))
	}
	if _, err := mustFunc(t, "LISTAGG").ResultType([]types.Type{types.Int}); err == nil {
		t.Fatal("LISTAGG(INT) accepted")
	}
}

func TestListAggDistinct(t *testing.T) {
	a := newAcc(t, "LISTAGG", false, true, "STRING", types.String)
	for _, s := range []string{"a", "b", "a", "c"} {
		add(t, a, types.StringValue(s))
	}
	checkResult(t, a, types.StringValue("a,b,c"))
	retract(t, a, types.StringValue("a"))
	checkResult(t, a, types.StringValue("a,b,c"))
	retract(t, a, types.StringValue("a"))
	checkResult(t, a, types.StringValue("b,c"))
}
