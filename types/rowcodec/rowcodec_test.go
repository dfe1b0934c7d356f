package rowcodec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// allTypes has one column of every kind the codec knows.
var allTypes = []types.Type{
	types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.BigInt,
	types.Float, types.Double, types.Decimal(10, 2), types.Char(3), types.String,
	{Kind: types.KindBinary, Precision: 4}, types.Bytes, types.Date, types.Time(3),
	types.Timestamp(3), types.TimestampLTZ(6), types.IntervalDT, types.IntervalYM,
	types.ArrayOf(types.Int), types.MapOf(types.String, types.Double),
	types.RowOf(types.Field{Name: "a", Type: types.Int}, types.Field{Name: "b", Type: types.String}),
	{Kind: types.KindMultiset, Elem: &types.String}, types.Null,
}

func bigInt(s string) *big.Int {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return b
}

// sampleRow returns row i of a table over allTypes, with edge values,
// NULLs and values whose kinds differ from their columns'.
func sampleRow(i int) types.Row {
	n := int64(i)
	vals := []types.Value{
		types.BoolValue(i%2 == 0),
		types.IntValue(types.KindTinyInt, -128+n%256),
		types.IntValue(types.KindSmallInt, -n*100),
		types.Int32Value(int32(n) * 7919),
		types.BigIntValue(math.MinInt64 + n),
		types.FloatValue(float32(n) / 3),
		types.DoubleValue(-float64(n) * 1.5),
		types.DecimalValue(12345+n, 2),
		types.CharValue("abc"),
		types.StringValue(strings.Repeat("é", i%5)),
		types.BytesValue([]byte{0, byte(n), 0xff, 1}),
		types.BytesValue(nil),
		types.DateValue(-n),
		types.TimeValue(n * 1000),
		types.TimestampValue(1_600_000_000_000_000 + n),
		types.TimestampLTZValue(-n),
		types.IntervalDayTimeValue(n),
		types.IntervalYearMonthValue(-n),
		types.ArrayValue([]types.Value{types.Int32Value(1), {}, types.Int32Value(int32(n))}),
		types.NewMapValue(&types.MapValue{
			Keys:   []types.Value{types.StringValue("k"), types.StringValue("x")},
			Values: []types.Value{types.DoubleValue(math.Inf(-1)), {}},
		}),
		types.RowValue([]types.Value{types.Int32Value(int32(n)), types.StringValue("b")}),
		types.MultisetValue([]types.Value{types.StringValue("m")}),
		{},
	}
	switch i % 7 {
	case 1:
		for j := range vals {
			if j%3 == 0 {
				vals[j] = types.Value{}
			}
		}
	case 2:
		// Kinds that differ from the columns': kept as they are.
		vals[3] = types.BigIntValue(n)
		vals[7] = types.DecimalValue(-n, 5)
		vals[9] = types.CharValue("char in a varchar column")
		vals[22] = types.StringValue("in a NULL column")
		vals[6] = types.DoubleValue(math.NaN())
	case 3:
		vals[7] = types.BigDecimalValue(bigInt("-123456789012345678901234567890"), 2)
		vals[5] = types.FloatValue(float32(math.Inf(1)))
		vals[6] = types.DoubleValue(math.Copysign(0, -1))
	case 4:
		vals[18] = types.ArrayValue([]types.Value{types.ArrayValue(nil), types.BigDecimalValue(bigInt("99999999999999999999"), 0)})
		vals[19] = types.NewMapValue(&types.MapValue{})
	}
	origins := []types.Origin{{Part: 3, Offset: n}, types.NoOrigin, {Part: 0, Offset: math.MaxInt64 - n}, {Part: math.MaxInt32, Offset: -5}}
	o := origins[0]
	if i%11 >= 8 {
		o = origins[i%11-7]
	}
	return types.Row{Kind: types.RowKind(i % 4), Origin: o, Vals: vals}
}

// sameValue reports whether two values are identical: kind, bits, scale.
func sameValue(a, b types.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch classOf(a.Kind()) {
	case classNull:
		return true
	case classDecimal:
		return a.Scale() == b.Scale() && a.IsBigDecimal() == b.IsBigDecimal() && a.BigUnscaled().Cmp(b.BigUnscaled()) == 0
	case classBytes:
		return a.Str() == b.Str()
	case classList:
		x, y := a.Elems(), b.Elems()
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case classMap:
		x, y := a.Map(), b.Map()
		if len(x.Keys) != len(y.Keys) {
			return false
		}
		for i := range x.Keys {
			if !sameValue(x.Keys[i], y.Keys[i]) || !sameValue(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	}
	return a.Int() == b.Int()
}

func sameRow(t testing.TB, i int, got, want types.Row) {
	t.Helper()
	if got.Kind != want.Kind || got.Origin != want.Origin || len(got.Vals) != len(want.Vals) {
		t.Fatalf("row %d: got %v %+v (%d values), want %v %+v (%d values)",
			i, got.Kind, got.Origin, len(got.Vals), want.Kind, want.Origin, len(want.Vals))
	}
	for j := range got.Vals {
		if !sameValue(got.Vals[j], want.Vals[j]) {
			t.Fatalf("row %d column %d: got %s %v, want %s %v", i, j,
				got.Vals[j].Kind(), got.Vals[j], want.Vals[j].Kind(), want.Vals[j])
		}
	}
}

func mustCodec(t testing.TB, cols []types.Type) *Codec {
	t.Helper()
	c, err := New(cols)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTrip(t *testing.T) {
	c := mustCodec(t, allTypes)
	e := c.NewEncoder()
	var want []types.Row
	for i := 0; i < 200; i++ {
		r := sampleRow(i)
		if err := e.Append(r); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		want = append(want, r)
	}
	if e.Rows() != len(want) {
		t.Fatalf("Rows() = %d, want %d", e.Rows(), len(want))
	}
	b := types.NewBatch(8, len(allTypes))
	n, err := c.Decode(b, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) || b.Len() != len(want) {
		t.Fatalf("decoded %d rows (batch %d), want %d", n, b.Len(), len(want))
	}
	for i := range want {
		sameRow(t, i, b.Rows[i], want[i])
	}
}

// TestDecodeInSteps decodes one payload a few rows at a time into batches
// that are reset in between, as a reader handing out at most max rows does.
func TestDecodeInSteps(t *testing.T) {
	c := mustCodec(t, allTypes)
	e := c.NewEncoder()
	for i := 0; i < 50; i++ {
		if err := e.Append(sampleRow(i)); err != nil {
			t.Fatal(err)
		}
	}
	d := c.NewDecoder()
	if err := d.Reset(e.Bytes()); err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(8, len(allTypes))
	next := 0
	for d.More() {
		b.Reset()
		n, err := d.Decode(b, 7)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || n > 7 || n != b.Len() {
			t.Fatalf("Decode appended %d rows (batch %d), want 1..7", n, b.Len())
		}
		for _, r := range b.Rows {
			sameRow(t, next, r, sampleRow(next))
			next++
		}
	}
	if next != 50 {
		t.Fatalf("decoded %d rows, want 50", next)
	}
}

// TestOriginBytes checks that consecutive offsets of one partition cost no
// origin bytes, so that a merged payload is not dominated by origins.
func TestOriginBytes(t *testing.T) {
	c := mustCodec(t, []types.Type{types.BigInt})
	e := c.NewEncoder()
	hdr := e.Len()
	for i := int64(0); i < 100; i++ {
		if err := e.Append(types.Row{Origin: types.Origin{Part: 0, Offset: 1 + i}, Vals: []types.Value{types.BigIntValue(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.Len() - hdr; got != 200 { // head byte + one-byte varint
		t.Fatalf("100 sequential rows took %d bytes, want 200", got)
	}
}

// TestOriginModes covers every origin mode and the changes between them:
// next offset, same origin, a gap or a step back, another partition.
func TestOriginModes(t *testing.T) {
	c := mustCodec(t, []types.Type{types.Int})
	e := c.NewEncoder()
	origins := []types.Origin{{Part: 1, Offset: 5}, {Part: 1, Offset: 6}, {Part: 1, Offset: 6}, {Part: 1, Offset: 10},
		{Part: 1, Offset: 2}, {Part: 2, Offset: 3}, types.NoOrigin, types.NoOrigin, {Part: 0, Offset: math.MinInt64}}
	for _, o := range origins {
		if err := e.Append(types.Row{Origin: o, Vals: []types.Value{types.Int32Value(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	b := types.NewBatch(len(origins), 1)
	if _, err := c.Decode(b, e.Bytes()); err != nil {
		t.Fatal(err)
	}
	for i, o := range origins {
		if b.Rows[i].Origin != o {
			t.Errorf("row %d: origin %+v, want %+v", i, b.Rows[i].Origin, o)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	c := mustCodec(t, []types.Type{types.Int, types.ArrayOf(types.Int)})
	e := c.NewEncoder()
	if err := e.Append(types.Row{Vals: []types.Value{types.Int32Value(1)}}); err == nil {
		t.Error("short row: no error")
	}
	if err := e.Append(types.Row{Kind: 9, Vals: make([]types.Value, 2)}); err == nil {
		t.Error("bad row kind: no error")
	}
	cyc := make([]types.Value, 1)
	cyc[0] = types.ArrayValue(cyc)
	if err := e.Append(types.Row{Vals: []types.Value{{}, types.ArrayValue(cyc)}}); err == nil {
		t.Error("cyclic value: no error")
	}
	if err := e.Append(types.Row{Vals: []types.Value{types.Int32Value(1), types.Int32Value(1).WithKind(200)}}); err == nil {
		t.Error("unknown kind: no error")
	}
	if e.Rows() != 0 || e.Len() != len(c.header) {
		t.Fatalf("failed appends left %d rows, %d bytes", e.Rows(), e.Len())
	}
	if _, err := New([]types.Type{{Kind: 99}}); err == nil {
		t.Error("New with an unknown kind: no error")
	}
}

// TestDecodeCorrupt checks every truncation and every single-byte change of
// a payload: each either decodes or fails with ErrCorrupt and leaves the
// batch as it was.
func TestDecodeCorrupt(t *testing.T) {
	c := mustCodec(t, allTypes)
	e := c.NewEncoder()
	for i := 0; i < 12; i++ {
		if err := e.Append(sampleRow(i)); err != nil {
			t.Fatal(err)
		}
	}
	payload := e.Bytes()
	check := func(p []byte) {
		b := types.NewBatch(4, 4)
		b.Append(types.Row{Vals: []types.Value{types.BigIntValue(1)}})
		if _, err := c.Decode(b, p); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			if b.Len() != 1 {
				t.Fatalf("failed decode left %d rows", b.Len())
			}
		}
	}
	for n := 0; n < len(payload); n++ {
		check(payload[:n])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, len(payload))
	for i := 0; i < 2000; i++ {
		copy(p, payload)
		p[rng.IntN(len(p))] = byte(rng.Uint32())
		check(p)
	}
	if _, err := c.Decode(types.NewBatch(1, 1), []byte{Version, 3}); err == nil {
		t.Error("column count mismatch: no error")
	}
}

func TestNoColumns(t *testing.T) {
	c := mustCodec(t, nil)
	e := c.NewEncoder()
	for i := 0; i < 3; i++ {
		if err := e.Append(types.Row{Kind: types.Delete, Origin: types.Origin{Part: 1, Offset: int64(i * 10)}}); err != nil {
			t.Fatal(err)
		}
	}
	b := types.NewBatch(4, 0)
	if n, err := c.Decode(b, e.Bytes()); err != nil || n != 3 {
		t.Fatalf("Decode = %d, %v", n, err)
	}
	if b.Rows[2].Origin.Offset != 20 || b.Rows[2].Kind != types.Delete {
		t.Fatalf("row 2 = %+v", b.Rows[2])
	}
}

func ExampleEncoder() {
	c, _ := New([]types.Type{types.String, types.BigInt})
	e := c.NewEncoder()
	for i := int64(0); i < 3; i++ {
		_ = e.Append(types.Row{Origin: types.Origin{Part: 2, Offset: 100 + i},
			Vals: []types.Value{types.StringValue("key"), types.BigIntValue(i)}})
	}
	b := types.NewBatch(3, 2)
	n, err := c.Decode(b, e.Bytes())
	fmt.Println(n, err, e.Len(), b.Rows[2].Origin, b.Rows[2].Vals[1].Int())
	// Output: 3 <nil> 23 {2 102} 2
}
