package datagen

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func newSource(t *testing.T, schema types.Schema, opts connector.Options, now int64) connector.Source {
	t.Helper()
	opts["connector"] = "datagen"
	reg := connector.NewRegistry()
	if err := reg.Register(New()); err != nil {
		t.Fatal(err)
	}
	env := connector.Env{Now: func() int64 { return now }}
	s, err := reg.Source(connector.Table{Name: "gen", Schema: schema, Options: opts}, env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readAll reads every partition of a bounded source to the end.
func readAll(t *testing.T, s connector.Source) [][]types.Row {
	t.Helper()
	ctx := context.Background()
	out := make([][]types.Row, s.Partitions())
	for p := range s.Partitions() {
		r, err := s.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b := types.NewBatch(16, 4)
			err := r.Read(ctx, b, 7)
			for _, row := range b.Rows {
				out[p] = append(out[p], types.CopyRow(row))
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestSequencePartitions(t *testing.T) {
	schema := types.NewSchema(
		types.Column{Name: "id", Type: types.BigInt},
		types.Column{Name: "name", Type: types.String},
		types.Column{Name: "d", Type: types.Decimal(10, 2)},
	)
	s := newSource(t, schema, connector.Options{
		"rows-per-second": "1000000",
		"fields.id.kind":  "sequence", "fields.id.start": "10", "fields.id.end": "109",
		"fields.name.kind": "sequence", "fields.name.start": "1", "fields.name.end": "1000",
		"fields.d.kind": "sequence", "fields.d.start": "5", "fields.d.end": "1000",
		"partitions": "3",
	}, 0)
	if !s.Bounded() || s.Partitions() != 3 {
		t.Fatalf("bounded=%v partitions=%d", s.Bounded(), s.Partitions())
	}
	parts := readAll(t, s)
	seen := map[int64]bool{}
	total := 0
	for p, rows := range parts {
		for i, r := range rows {
			if r.Origin != (types.Origin{Part: int32(p), Offset: int64(i + 1)}) {
				t.Fatalf("partition %d row %d: origin %+v", p, i, r.Origin)
			}
			id := r.Vals[0].Int()
			if seen[id] || id < 10 || id > 109 {
				t.Fatalf("id %d repeated or out of range", id)
			}
			seen[id] = true
			g := id - 10
			if r.Vals[1].Str() != strconv.FormatInt(1+g, 10) {
				t.Fatalf("name = %q, want %d", r.Vals[1].Str(), 1+g)
			}
			if d := r.Vals[2]; d.Kind() != types.KindDecimal || d.Unscaled() != (5+g)*100 || d.Scale() != 2 {
				t.Fatalf("d = %v/%d", d.Unscaled(), d.Scale())
			}
		}
		total += len(rows)
	}
	if total != 100 {
		t.Fatalf("total rows = %d, want 100 (the shortest sequence)", total)
	}
}

func allTypesSchema() types.Schema {
	return types.NewSchema(
		types.Column{Name: "b", Type: types.Boolean},
		types.Column{Name: "ti", Type: types.TinyInt},
		types.Column{Name: "si", Type: types.SmallInt},
		types.Column{Name: "i", Type: types.Int},
		types.Column{Name: "bi", Type: types.BigInt},
		types.Column{Name: "f", Type: types.Float},
		types.Column{Name: "d", Type: types.Double},
		types.Column{Name: "dec", Type: types.Decimal(10, 3)},
		types.Column{Name: "s", Type: types.String},
		types.Column{Name: "c", Type: types.Char(5)},
		types.Column{Name: "by", Type: types.Bytes},
		types.Column{Name: "dt", Type: types.Date},
		types.Column{Name: "tm", Type: types.Time(0)},
		types.Column{Name: "ts", Type: types.Timestamp(3)},
		types.Column{Name: "ltz", Type: types.TimestampLTZ(3)},
		types.Column{Name: "arr", Type: types.ArrayOf(types.Int)},
		types.Column{Name: "m", Type: types.MapOf(types.String, types.Double)},
		types.Column{Name: "r", Type: types.RowOf(types.Field{Name: "x", Type: types.Int}, types.Field{Name: "y", Type: types.String})},
	)
}

func TestRandomAllTypes(t *testing.T) {
	const now = int64(1586937900123456) // 2020-04-15 08:05:00.123456
	s := newSource(t, allTypesSchema(), connector.Options{
		"number-of-rows": "200", "rows-per-second": "1e9", "seed": "42",
		"fields.i.min": "-5", "fields.i.max": "5",
		"fields.d.min": "1.5", "fields.d.max": "2.5",
		"fields.dec.min": "-1.5", "fields.dec.max": "1.5",
		"fields.s.length":    "8",
		"fields.ts.max-past": "10 s",
		"fields.arr.length":  "4", "fields.arr.element.min": "0", "fields.arr.element.max": "9",
		"fields.m.length": "2", "fields.m.key.length": "4",
		"fields.r.x.kind": "sequence", "fields.r.x.start": "0", "fields.r.x.end": "1000",
		"fields.r.y.null-rate": "1",
	}, now)
	rows := readAll(t, s)[0]
	if len(rows) != 200 {
		t.Fatalf("rows = %d", len(rows))
	}
	for n, r := range rows {
		v := r.Vals
		for i, c := range allTypesSchema().Columns {
			want := c.Type.Kind
			if v[i].Kind() != want {
				t.Fatalf("row %d column %s: kind %v, want %v", n, c.Name, v[i].Kind(), want)
			}
		}
		if x := v[3].Int(); x < -5 || x > 5 {
			t.Fatalf("i = %d", x)
		}
		if x := v[6].Float(); x < 1.5 || x > 2.5 {
			t.Fatalf("d = %v", x)
		}
		if x := v[7]; x.Scale() != 3 || x.Unscaled() < -1500 || x.Unscaled() > 1500 {
			t.Fatalf("dec = %d/%d", x.Unscaled(), x.Scale())
		}
		if x := v[8].Str(); len(x) != 8 || strings.Trim(x, "0123456789abcdef") != "" {
			t.Fatalf("s = %q", x)
		}
		if x := v[9].Str(); len(x) != 5 {
			t.Fatalf("c = %q", x)
		}
		if x := v[10].Str(); len(x) != 100 {
			t.Fatalf("by has %d bytes", len(x))
		}
		if x := v[11].Int(); x != 18367 {
			t.Fatalf("dt = %d", x)
		}
		if x := v[12].Int(); x != (8*3600+5*60)*1e6 {
			t.Fatalf("tm = %d", x)
		}
		if x := v[13].Int(); x > now || x < now-10e6 || x%1000 != 0 {
			t.Fatalf("ts = %d", x)
		}
		if x := v[14].Int(); x != now-456 {
			t.Fatalf("ltz = %d", x)
		}
		arr := v[15].Elems()
		if len(arr) != 4 {
			t.Fatalf("arr = %v", arr)
		}
		for _, e := range arr {
			if e.Int() < 0 || e.Int() > 9 {
				t.Fatalf("arr elem = %d", e.Int())
			}
		}
		if m := v[16].Map(); len(m.Keys) < 1 || len(m.Keys) > 2 || len(m.Keys[0].Str()) != 4 {
			t.Fatalf("map = %+v", m)
		}
		if f := v[17].Elems(); f[0].Int() != int64(n) || !f[1].IsNull() {
			t.Fatalf("row = %+v", f)
		}
	}
}

func TestSeededDeterminism(t *testing.T) {
	opts := func(seed string) connector.Options {
		return connector.Options{"number-of-rows": "50", "rows-per-second": "1e9", "seed": seed, "partitions": "2"}
	}
	a := readAll(t, newSource(t, allTypesSchema(), opts("7"), 1e15))
	b := readAll(t, newSource(t, allTypesSchema(), opts("7"), 1e15))
	c := readAll(t, newSource(t, allTypesSchema(), opts("8"), 1e15))
	same := func(x, y [][]types.Row) bool {
		for p := range x {
			if len(x[p]) != len(y[p]) {
				return false
			}
			for i := range x[p] {
				for j := range x[p][i].Vals {
					if !types.Equal(x[p][i].Vals[j], y[p][i].Vals[j]) {
						return false
					}
				}
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("equal seeds gave different rows")
	}
	if same(a, c) {
		t.Fatal("different seeds gave equal rows")
	}
	if len(a[0])+len(a[1]) != 50 {
		t.Fatalf("rows = %d + %d", len(a[0]), len(a[1]))
	}
}

func TestRateLimitAndUnbounded(t *testing.T) {
	schema := types.NewSchema(types.Column{Name: "x", Type: types.Int})
	s := newSource(t, schema, connector.Options{"rows-per-second": "0.001"}, 0)
	if s.Bounded() {
		t.Fatal("datagen without number-of-rows must be unbounded")
	}
	ctx := context.Background()
	r, err := s.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := types.NewBatch(100, 1)
	if err := r.Read(ctx, b, 100); err != nil || b.Len() != 1 {
		t.Fatalf("first read: %d rows, err %v; want the first row at once", b.Len(), err)
	}
	// The next row is due in 1000 s: Read must come back empty-handed
	// (after at most a short wait) rather than block.
	b.Reset()
	if err := r.Read(ctx, b, 100); err != nil || b.Len() != 0 {
		t.Fatalf("second read: %d rows, err %v; want none", b.Len(), err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Read(cctx, b, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: err %v", err)
	}
}

func TestOptionErrors(t *testing.T) {
	schema := types.NewSchema(types.Column{Name: "x", Type: types.Int}, types.Column{Name: "s", Type: types.String})
	reg := connector.NewRegistry()
	reg.Register(New())
	for _, tc := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"rows-per-secnd": "1"}, `unsupported option 'rows-per-secnd' (did you mean "rows-per-second"?)`},
		{connector.Options{"fields.x.mn": "1"}, `unsupported option 'fields.x.mn' (did you mean "fields.x.min"?)`},
		{connector.Options{"fields.s.min": "1"}, `unsupported option 'fields.s.min'`},
		{connector.Options{"fields.z.min": "1"}, `unsupported option 'fields.z.min'`},
		{connector.Options{"fields.x.kind": "sequence", "fields.x.start": "1"}, `'fields.x.end' is required`},
		{connector.Options{"fields.x.kind": "seq"}, `unknown kind 'seq'`},
		{connector.Options{"fields.x.max": "1e10"}, `cannot parse "1e10" as an integer`},
		{connector.Options{"fields.x.max": "10000000000"}, `does not fit in INT`},
		{connector.Options{"fields.x.null-rate": "2"}, `must be between 0 and 1`},
		{connector.Options{"number-of-rows": "-1"}, `must not be negative`},
	} {
		tc.opts["connector"] = "datagen"
		_, err := reg.Source(connector.Table{Name: "gen", Schema: schema, Options: tc.opts}, connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func BenchmarkDatagen(b *testing.B) {
	schema := types.NewSchema(
		types.Column{Name: "id", Type: types.BigInt},
		types.Column{Name: "price", Type: types.Decimal(10, 2)},
		types.Column{Name: "ts", Type: types.Timestamp(3)},
		types.Column{Name: "item", Type: types.String},
	)
	s, err := New().CreateSource(connector.Table{Name: "gen", Schema: schema, Options: connector.Options{
		"rows-per-second": "1e12", "fields.item.length": "10", "seed": "1"}}, connector.Env{})
	if err != nil {
		b.Fatal(err)
	}
	r, _ := s.Open(context.Background(), 0)
	batch := types.NewBatch(1024, 4)
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset()
		if err := r.Read(context.Background(), batch, 1024); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1024)/b.Elapsed().Seconds(), "rows/s")
}
