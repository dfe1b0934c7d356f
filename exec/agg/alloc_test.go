package agg

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

// TestAddDoesNotAllocate holds the hot functions to the package invariant.
func TestAddDoesNotAllocate(t *testing.T) {
	for _, tc := range []struct {
		fn         string
		appendOnly bool
		arg        types.Type
		val        types.Value
	}{
		{"COUNT", false, types.BigInt, types.BigIntValue(1)},
		{"SUM", false, types.BigInt, types.BigIntValue(3)},
		{"SUM", false, types.Decimal(10, 2), types.DecimalValue(1999, 2)},
		{"AVG", false, types.Int, types.Int32Value(3)},
		{"AVG", false, types.Decimal(10, 2), types.DecimalValue(1999, 2)},
		{"MIN", true, types.BigInt, types.BigIntValue(3)},
		{"MAX", true, types.String, types.StringValue("x")},
	} {
		a := newAcc(t, tc.fn, tc.appendOnly, false, "", tc.arg)
		args := []types.Value{tc.val}
		if n := testing.AllocsPerRun(100, func() { _ = a.Add(args) }); n != 0 {
			t.Errorf("%s(%s).Add: %v allocs", tc.fn, tc.arg, n)
		}
	}
}
