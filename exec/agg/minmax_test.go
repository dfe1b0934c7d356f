package agg

import (
	"errors"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestMinMax(t *testing.T) {
	for _, appendOnly := range []bool{false, true} {
		mn := newAcc(t, "MIN", appendOnly, false, "VARCHAR(10)", types.VarChar(10).WithNullable(false))
		mx := newAcc(t, "MAX", appendOnly, false, "VARCHAR(10)", types.VarChar(10))
		checkResult(t, mn, types.Value{})
		checkResult(t, mx, types.Value{})
		for _, s := range []string{"m", "c", "x", "c"} {
			add(t, mn, types.StringValue(s))
			add(t, mx, types.StringValue(s))
		}
		add(t, mn, types.Value{})
		checkResult(t, mn, types.StringValue("c"))
		checkResult(t, mx, types.StringValue("x"))
		if appendOnly {
			err := mn.Retract([]types.Value{types.StringValue("c")})
			if !errors.Is(err, ErrAppendOnly) {
				t.Fatalf("append-only MIN retract: %v", err)
			}
			continue
		}
		retract(t, mn, types.StringValue("c"))
		checkResult(t, mn, types.StringValue("c")) // one "c" left
		retract(t, mn, types.StringValue("c"))
		checkResult(t, mn, types.StringValue("m"))
		retract(t, mx, types.StringValue("x"))
		checkResult(t, mx, types.StringValue("m"))
		for _, s := range []string{"m", "c", "c"} {
			retract(t, mx, types.StringValue(s))
		}
		checkResult(t, mx, types.Value{})
	}
}

func TestMinMaxNumericAndMerge(t *testing.T) {
	a := newAcc(t, "MAX", false, false, "DECIMAL(10, 2)", types.Decimal(10, 2))
	b := newAcc(t, "MAX", false, false, "", types.Decimal(10, 2))
	add(t, a, types.DecimalValue(150, 2))
	add(t, b, types.DecimalValue(1499, 3)) // 1.499 < 1.50
	add(t, b, types.DecimalValue(-3, 0))
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	checkResult(t, a, types.DecimalValue(150, 2))
	retract(t, a, types.DecimalValue(150, 2))
	checkResult(t, a, types.DecimalValue(1499, 3))

	// A retraction that overtakes its accumulation nets out.
	m := newAcc(t, "MIN", false, false, "", types.Int)
	retract(t, m, types.Int32Value(1))
	checkResult(t, m, types.Value{})
	add(t, m, types.Int32Value(5))
	checkResult(t, m, types.Int32Value(5))
	add(t, m, types.Int32Value(1))
	checkResult(t, m, types.Int32Value(5))

	ao := newAcc(t, "MIN", true, false, "TIMESTAMP(3)", types.Timestamp(3))
	add(t, ao, types.TimestampValue(30))
	add(t, ao, types.TimestampValue(10))
	other := newAcc(t, "MIN", true, false, "", types.Timestamp(3))
	add(t, other, types.TimestampValue(5))
	if err := ao.Merge(other); err != nil {
		t.Fatal(err)
	}
	checkResult(t, ao, types.TimestampValue(5))

	if _, err := mustFunc(t, "MIN").ResultType([]types.Type{types.MapOf(types.Int, types.Int)}); err == nil {
		t.Fatal("MIN(MAP) accepted")
	}
}
