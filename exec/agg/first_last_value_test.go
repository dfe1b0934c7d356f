package agg

import (
	"errors"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestFirstLastValue(t *testing.T) {
	for _, appendOnly := range []bool{false, true} {
		first := newAcc(t, "FIRST_VALUE", appendOnly, false, "BIGINT", types.BigInt.WithNullable(false))
		last := newAcc(t, "LAST_VALUE", appendOnly, false, "BIGINT", types.BigInt)
		checkResult(t, first, types.Value{})
		for _, v := range []types.Value{{}, types.BigIntValue(3), types.BigIntValue(1), types.BigIntValue(3), types.BigIntValue(2), {}} {
			add(t, first, v)
			add(t, last, v)
		}
		checkResult(t, first, types.BigIntValue(3)) // NULLs are skipped
		checkResult(t, last, types.BigIntValue(2))
		if appendOnly {
			if err := last.Retract([]types.Value{types.BigIntValue(2)}); !errors.Is(err, ErrAppendOnly) {
				t.Fatalf("append-only LAST_VALUE retract: %v", err)
			}
			continue
		}
		// History: 3 1 3 2. Retraction removes the earliest equal value.
		retract(t, first, types.BigIntValue(3))
		checkResult(t, first, types.BigIntValue(1)) // 1 3 2
		retract(t, last, types.BigIntValue(2))
		checkResult(t, last, types.BigIntValue(3)) // 3 1 3
		retract(t, last, types.BigIntValue(3))
		checkResult(t, last, types.BigIntValue(3)) // 1 3
		retract(t, last, types.BigIntValue(3))
		checkResult(t, last, types.BigIntValue(1)) // 1
		retract(t, last, types.BigIntValue(1))
		checkResult(t, last, types.Value{})
	}
}

func TestFirstLastValueMerge(t *testing.T) {
	a := newAcc(t, "FIRST_VALUE", false, false, "", types.String)
	b := newAcc(t, "FIRST_VALUE", false, false, "", types.String)
	add(t, b, types.StringValue("b"))
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	checkResult(t, a, types.StringValue("b"))
	c := newAcc(t, "LAST_VALUE", true, false, "", types.String)
	d := newAcc(t, "LAST_VALUE", true, false, "", types.String)
	add(t, c, types.StringValue("c"))
	add(t, d, types.StringValue("d"))
	if err := c.Merge(d); err != nil {
		t.Fatal(err)
	}
	checkResult(t, c, types.StringValue("d"))
}
