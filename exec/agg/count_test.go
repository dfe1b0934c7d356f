package agg

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestCount(t *testing.T) {
	star := newAcc(t, "COUNT", false, false, "BIGINT NOT NULL")
	checkResult(t, star, types.BigIntValue(0))
	add(t, star)
	add(t, star)
	retract(t, star)
	add(t, star)
	checkResult(t, star, types.BigIntValue(2))

	x := newAcc(t, "count", false, false, "BIGINT NOT NULL", types.Int)
	add(t, x, types.Int32Value(1))
	add(t, x, types.Value{})
	add(t, x, types.Int32Value(1))
	checkResult(t, x, types.BigIntValue(2))
	retract(t, x, types.Value{})
	retract(t, x, types.Int32Value(1))
	checkResult(t, x, types.BigIntValue(1))
}

func TestCountDistinct(t *testing.T) {
	a := newAcc(t, "COUNT", false, true, "BIGINT NOT NULL", types.String)
	for _, s := range []string{"a", "b", "a", "c", "a"} {
		add(t, a, types.StringValue(s))
	}
	add(t, a, types.Value{})
	checkResult(t, a, types.BigIntValue(3))
	retract(t, a, types.StringValue("a"))
	retract(t, a, types.StringValue("a"))
	checkResult(t, a, types.BigIntValue(3)) // one "a" left
	retract(t, a, types.StringValue("a"))
	checkResult(t, a, types.BigIntValue(2))
	// A retraction that overtakes its accumulation nets out.
	retract(t, a, types.StringValue("z"))
	checkResult(t, a, types.BigIntValue(2))
	add(t, a, types.StringValue("z"))
	checkResult(t, a, types.BigIntValue(2))
	add(t, a, types.StringValue("z"))
	checkResult(t, a, types.BigIntValue(3))

	// Merge is the union of counts.
	b := newAcc(t, "COUNT", false, true, "", types.String)
	add(t, b, types.StringValue("b"))
	add(t, b, types.StringValue("q"))
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	checkResult(t, a, types.BigIntValue(4)) // b c z q
	c := newAcc(t, "COUNT", false, true, "", types.String)
	retract(t, c, types.StringValue("q"))
	if err := a.Merge(c); err != nil {
		t.Fatal(err)
	}
	checkResult(t, a, types.BigIntValue(3))
}
