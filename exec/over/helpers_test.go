package over

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/lsm"
	"github.com/sluicesql/sluice/types"
)

// cols are (p STRING, ts TIMESTAMP(3), v BIGINT).
var cols = []types.Type{types.String, types.Timestamp(3), types.BigInt}

// callNames are the aggregates the tests compute, over v (column 2).
var callNames = []string{"COUNT(*)", "COUNT", "SUM", "MIN", "MAX", "AVG"}

func testCalls(t testing.TB) ([]agg.Call, []types.Type) {
	t.Helper()
	reg := agg.NewRegistry()
	var calls []agg.Call
	outTypes := append([]types.Type(nil), cols...)
	for _, n := range callNames {
		name, args := n, []int{2}
		if n == "COUNT(*)" {
			name, args = "COUNT", nil
		}
		f, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		var argTypes []types.Type
		for range args {
			argTypes = append(argTypes, types.BigInt)
		}
		rt, err := f.ResultType(argTypes)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, agg.Call{Func: f, Args: args, ArgTypes: argTypes, Result: rt, Filter: -1})
		outTypes = append(outTypes, rt)
	}
	return calls, outTypes
}

// collect records the rows it receives, formatted.
type collect struct {
	exec.Passthrough
	types []types.Type
	rows  []string
	wms   []int64
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		c.rows = append(c.rows, r.Kind.String()+format(r.Vals, c.types))
	}
	return nil
}
func (c *collect) Watermark(wm int64) error { c.wms = append(c.wms, wm); return nil }
func (c *collect) Finish() error            { return nil }
func (c *collect) Close() error             { return nil }

func format(vals []types.Value, typs []types.Type) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = types.FormatValue(v, typs[i])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// harness runs an operator over a state backend and can restore it.
type harness struct {
	t       testing.TB
	cfg     Config
	st      state.Backend
	dir     string // a durable backend's, or ""
	metrics *exec.Metrics
	op      *Operator
	out     *collect
}

func newHarness(t testing.TB, rows bool, preceding int64, proc bool) *harness {
	calls, outTypes := testCalls(t)
	h := &harness{t: t, st: state.NewMemory(), metrics: &exec.Metrics{},
		cfg: Config{ID: "over", Partition: []int{0}, TimeCol: 1, ProcTime: proc, Rows: rows, Preceding: preceding,
			Calls: calls, Types: cols}}
	h.out = &collect{types: outTypes}
	h.open()
	return h
}

// open (re)starts the operator from the state's last checkpoint.
func (h *harness) open() {
	h.t.Helper()
	cfg := h.cfg
	cfg.Next = h.out
	o, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := o.Open(&exec.Context{State: h.st, Metrics: h.metrics}); err != nil {
		h.t.Fatal(err)
	}
	h.op = o
}

// row is an input row: partition, time in ms, value (nil: NULL), offset.
type row struct {
	p   string
	ms  int64
	v   *int64
	off int64
}

func val(v int64) *int64 { return &v }

func (h *harness) feed(rows ...row) {
	h.t.Helper()
	b := types.NewBatch(len(rows), 3)
	for _, r := range rows {
		origin := types.Origin{Part: 0, Offset: r.off}
		if r.off == 0 {
			origin = types.NoOrigin
		}
		vals := b.AddRow(types.Insert, origin, 3)
		vals[0] = types.StringValue(r.p)
		vals[1] = types.TimestampValue(r.ms * 1000)
		if r.v != nil {
			vals[2] = types.IntValue(types.KindBigInt, *r.v)
		}
	}
	if err := h.op.Process(b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) watermark(ms int64) {
	h.t.Helper()
	wm := ms * 1000
	if ms == exec.MaxWatermark {
		wm = ms
	}
	if err := h.op.Watermark(wm); err != nil {
		h.t.Fatal(err)
	}
}

// checkpoint checkpoints the operator; a durable backend commits.
func (h *harness) checkpoint() {
	h.t.Helper()
	if err := h.op.Checkpoint(); err != nil {
		h.t.Fatal(err)
	}
	if h.dir != "" {
		if err := h.st.Commit("", map[string]int64{}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// durable moves the harness onto a local durable backend (before any row).
func (h *harness) durable() {
	h.t.Helper()
	h.dir = h.t.TempDir()
	h.crash()
	h.t.Cleanup(func() { h.st.Close() })
}

// crash drops the operator and, with a durable backend, what it did since
// the last commit, and restarts from there.
func (h *harness) crash() {
	h.t.Helper()
	if h.dir == "" {
		h.open()
		return
	}
	if b, ok := h.st.(*lsm.Backend); ok {
		if err := b.Close(); err != nil {
			h.t.Fatal(err)
		}
	}
	b, err := lsm.Open(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	h.st = b
	h.open()
}

// take returns the rows emitted since the last take.
func (h *harness) take() []string {
	r := h.out.rows
	h.out.rows = nil
	return r
}
