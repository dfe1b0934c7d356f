package groupagg

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// collector is the downstream operator of the tests: it prints every row it
// receives as Flink's print sink does, e.g. "-U[a, 2, 4.50]".
type collector struct {
	types    []types.Type
	rows     []string
	wms      []int64
	opened   bool
	finished bool
	closed   bool
}

func (c *collector) Open(*exec.Context) error { c.opened = true; return nil }

func (c *collector) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		if r.Origin != types.NoOrigin {
			c.rows = append(c.rows, "origin set")
		}
		var sb strings.Builder
		sb.WriteString(r.Kind.String())
		sb.WriteByte('[')
		for i, v := range r.Vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(types.FormatValue(v, c.types[i]))
		}
		sb.WriteByte(']')
		c.rows = append(c.rows, sb.String())
	}
	return nil
}

func (c *collector) Watermark(wm int64) error { c.wms = append(c.wms, wm); return nil }
func (c *collector) Finish() error            { c.finished = true; return nil }
func (c *collector) Close() error             { c.closed = true; return nil }

// take returns the rows collected since the last call.
func (c *collector) take() []string {
	r := c.rows
	c.rows = nil
	return r
}

// harness drives one operator over textual input rows.
type harness struct {
	t       *testing.T
	schema  []types.Type
	op      exec.Operator
	out     *collector
	ctx     *exec.Context
	backend *state.Memory
	offset  int64
	now     int64 // the operator's processing time, µs
}

// spec is a test query: input schema, keys and calls.
type spec struct {
	schema     []types.Type
	keys       []int
	calls      []callSpec
	appendOnly bool
	// Mini-batch and TTL settings (Config's fields of the same names).
	miniBatchLatency time.Duration
	miniBatchSize    int
	ttl              time.Duration
}

// callSpec is an aggregate call: name, argument columns, FILTER column
// (0 means none; columns count from 1 here to keep the zero value "none")
// and DISTINCT.
type callSpec struct {
	name     string
	args     []int
	filter1  int
	distinct bool
}

func (s spec) config(t testing.TB, reg *agg.Registry, next exec.Operator) (Config, []types.Type) {
	t.Helper()
	var outTypes []types.Type
	for _, k := range s.keys {
		outTypes = append(outTypes, s.schema[k])
	}
	var calls []agg.Call
	for _, cs := range s.calls {
		f, err := reg.Lookup(cs.name)
		if err != nil {
			t.Fatal(err)
		}
		var at []types.Type
		for _, a := range cs.args {
			at = append(at, s.schema[a])
		}
		rt, err := f.ResultType(at)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, agg.Call{Func: f, Args: cs.args, ArgTypes: at, Result: rt,
			Filter: cs.filter1 - 1, Distinct: cs.distinct})
		outTypes = append(outTypes, rt)
	}
	return Config{ID: "job/agg-1", Keys: s.keys, Calls: calls, AppendOnlyInput: s.appendOnly, Next: next,
		MiniBatchLatency: s.miniBatchLatency, MiniBatchSize: s.miniBatchSize, TTL: s.ttl}, outTypes
}

func newHarness(t *testing.T, s spec) *harness {
	t.Helper()
	return newHarnessOn(t, s, state.NewMemory())
}

func newHarnessOn(t *testing.T, s spec, backend *state.Memory) *harness {
	t.Helper()
	out := &collector{}
	cfg, outTypes := s.config(t, agg.NewRegistry(), out)
	out.types = outTypes
	op, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, schema: s.schema, op: op, out: out, backend: backend, now: 1_000_000}
	h.ctx = &exec.Context{State: backend, Metrics: &exec.Metrics{}, Now: func() int64 { return h.now }}
	if err := op.Open(h.ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// batch processes one batch of rows written "+I a 1 2.50", values separated
// by spaces in schema order; "NULL" is NULL. A trailing "@p:off" sets the
// origin (partition p, offset off), "@-" means no origin; otherwise rows
// come from partition 0 at increasing offsets. It returns the rows emitted.
func (h *harness) batch(rows ...string) []string {
	h.t.Helper()
	out, err := h.try(rows...)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) try(rows ...string) ([]string, error) {
	h.t.Helper()
	b := types.NewBatch(len(rows), len(h.schema))
	for _, line := range rows {
		f := strings.Fields(line)
		kind := map[string]types.RowKind{"+I": types.Insert, "-U": types.UpdateBefore,
			"+U": types.UpdateAfter, "-D": types.Delete}[f[0]]
		f = f[1:]
		h.offset++
		origin := types.Origin{Part: 0, Offset: h.offset}
		if last := f[len(f)-1]; strings.HasPrefix(last, "@") {
			f = f[:len(f)-1]
			if last == "@-" {
				origin = types.NoOrigin
			} else {
				p, off, _ := strings.Cut(last[1:], ":")
				pn, _ := strconv.Atoi(p)
				on, _ := strconv.ParseInt(off, 10, 64)
				origin = types.Origin{Part: int32(pn), Offset: on}
			}
		}
		if len(f) != len(h.schema) {
			h.t.Fatalf("row %q: %d values for %d columns", line, len(f), len(h.schema))
		}
		vals := b.AddRow(kind, origin, len(h.schema))
		for i, s := range f {
			vals[i] = parseValue(h.t, s, h.schema[i])
		}
	}
	err := h.op.Process(b)
	return h.out.take(), err
}

func parseValue(t *testing.T, s string, typ types.Type) types.Value {
	t.Helper()
	if s == "NULL" {
		return types.Value{}
	}
	var (
		v   types.Value
		err error
	)
	switch k := typ.Kind; {
	case k == types.KindBoolean:
		v = types.BoolValue(strings.EqualFold(s, "true"))
	case k.IsInteger():
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		v = types.IntValue(k, n)
	case k == types.KindDouble:
		var f float64
		f, err = strconv.ParseFloat(s, 64)
		v = types.DoubleValue(f)
	case k == types.KindDecimal:
		v, err = types.ParseDecimal(s)
		if err == nil {
			v = types.Rescale(v, typ.Scale)
		}
	case k.IsString():
		v = types.StringValue(s).WithKind(k)
	default:
		t.Fatalf("cannot parse %q as %s", s, typ)
	}
	if err != nil {
		t.Fatalf("cannot parse %q as %s: %v", s, typ, err)
	}
	return v
}

func expectRows(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\ngot:\n  %s\nwant:\n  %s", step, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
