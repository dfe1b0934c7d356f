package agg

import (
	"math"
	"math/big"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestValueCodec(t *testing.T) {
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	vals := []types.Value{
		{},
		types.BoolValue(true),
		types.IntValue(types.KindTinyInt, -3),
		types.BigIntValue(math.MinInt64),
		types.DoubleValue(-0.5),
		types.FloatValue(1.25),
		types.DecimalValue(-12345, 3),
		types.DecimalValue(100, 2), // scale kept: not normalised like a key
		types.BigDecimalValue(huge, 4),
		types.StringValue("héllo"),
		types.CharValue("x"),
		types.BytesValue([]byte{0, 1, 2}),
		types.DateValue(19000),
		types.TimestampLTZValue(1700000000000000),
		types.IntervalYearMonthValue(14),
		types.ArrayValue([]types.Value{types.Int32Value(1), {}}),
		types.RowValue([]types.Value{types.StringValue("a"), types.DecimalValue(5, 1)}),
		types.MultisetValue([]types.Value{types.Int32Value(2)}),
		types.NewMapValue(&types.MapValue{Keys: []types.Value{types.StringValue("k")}, Values: []types.Value{types.BigIntValue(9)}}),
	}
	var buf []byte
	for _, v := range vals {
		buf = AppendStateValue(buf, v)
	}
	src := buf
	for i, want := range vals {
		got, rest, err := DecodeStateValue(src)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if got.Kind() != want.Kind() || types.Compare(got, want) != 0 ||
			(want.Kind() == types.KindDecimal && got.Scale() != want.Scale()) {
			t.Fatalf("value %d: got %s, want %s", i, show(got), show(want))
		}
		src = rest
	}
	if len(src) != 0 {
		t.Fatalf("%d bytes left over", len(src))
	}
	// Every truncation fails cleanly rather than panicking.
	for i := range buf {
		b := buf[:i]
		for len(b) > 0 {
			var err error
			if _, b, err = DecodeStateValue(b); err != nil {
				break
			}
		}
	}
}

func TestLoadStateCorrupt(t *testing.T) {
	for _, name := range NewRegistry().Names() {
		f := mustFunc(t, name)
		arg := types.Int
		switch name {
		case "LISTAGG":
			arg = types.String
		case "BOOL_AND", "BOOL_OR":
			arg = types.Boolean
		}
		for _, distinct := range []bool{false, true} {
			a := newAcc(t, name, false, distinct, "", arg)
			gen := map[types.Kind]types.Value{
				types.KindInt: types.Int32Value(7), types.KindVarChar: types.StringValue("s"),
				types.KindBoolean: types.BoolValue(true),
			}[arg.Kind]
			add(t, a, gen)
			st := a.AppendState(nil)
			for i := range st {
				b := newAcc(t, name, false, distinct, "", arg)
				_ = b.LoadState(st[:i]) // must not panic
			}
			if err := a.LoadState(append(st, 0xff)); err == nil {
				t.Errorf("%s: trailing garbage accepted", f.Name())
			}
		}
	}
}
