package metricgroup

import (
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// sink keeps the metric values of the rows it gets (the columns after
// the input's).
type sink struct {
	exec.Passthrough
	width int
	rows  [][]types.Value
}

func (s *sink) Open(*exec.Context) error { return nil }
func (s *sink) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		s.rows = append(s.rows, append([]types.Value(nil), r.Vals[s.width:]...))
	}
	return nil
}
func (s *sink) Watermark(int64) error { return nil }
func (s *sink) Finish() error         { return nil }
func (s *sink) Close() error          { return nil }

// pub records what is published.
type pub struct{ changes []Change }

func (p *pub) Define(string, int, []types.Column, []types.Column) error { return nil }

func (p *pub) Publish(group string, changes []Change) error {
	p.changes = append(p.changes, changes...)
	return nil
}

const sec = int64(1_000_000)

// newCount returns an operator over (k STRING, ts TIMESTAMP) with
// COUNT(*) over LAST(10 s) and over TUMBLE(5 s), keyed by k.
func newCount(t *testing.T, p Publisher) (*Operator, *sink) {
	t.Helper()
	f, err := agg.NewRegistry().Lookup("COUNT")
	if err != nil {
		t.Fatal(err)
	}
	call := agg.Call{Func: f, Result: types.BigInt, Filter: -1}
	out := &sink{width: 2}
	o, err := New(Config{Group: "g", Keys: []int{0}, TimeCol: 1, Calls: []agg.Call{call},
		Metrics: []Metric{
			{Name: "last", Call: 0, Window: Window{Kind: "LAST", Size: 10 * sec}, Computes: "COUNT(*) LAST"},
			{Name: "tumble", Call: 0, Window: Window{Kind: "TUMBLE", Size: 5 * sec}, Computes: "COUNT(*) TUMBLE"},
		},
		Types: []types.Type{types.String, types.Timestamp(3)}, Publisher: p, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		t.Fatal(err)
	}
	return o, out
}

func row(b *types.Batch, k string, t int64) {
	r := b.AddRow(types.Insert, types.NoOrigin, 2)
	r[0], r[1] = types.StringValue(k), types.TimestampValue(t)
}

// A key whose windows are all past is let go when the watermark passes
// them, its values published as deleted; a row of it later finds the
// windows as empty as they would have been.
func TestExpiry(t *testing.T) {
	var p pub
	o, out := newCount(t, &p)
	b := types.NewBatch(4, 2)
	row(b, "a", 1*sec)
	row(b, "b", 2*sec)
	row(b, "a", 3*sec)
	if err := o.Process(b); err != nil {
		t.Fatal(err)
	}
	if err := o.Watermark(12 * sec); err != nil { // a's and b's windows reach 13 s, 12 s
		t.Fatal(err)
	}
	if len(o.keys) != 2 {
		t.Fatalf("%d keys after watermark 12 s, want 2", len(o.keys))
	}
	if err := o.Watermark(20 * sec); err != nil {
		t.Fatal(err)
	}
	if len(o.keys) != 0 {
		t.Fatalf("%d keys after watermark 20 s, want none", len(o.keys))
	}
	deleted := 0
	for _, c := range p.changes {
		if c.Deleted {
			deleted++
		}
	}
	if deleted != 2 {
		t.Fatalf("published %+v, want both keys deleted", p.changes)
	}
	b.Reset()
	row(b, "a", 21*sec)
	if err := o.Process(b); err != nil {
		t.Fatal(err)
	}
	got := out.rows[len(out.rows)-1]
	if got[0].Int() != 1 || got[1].Int() != 1 {
		t.Fatalf("after expiry: %v, want [1 1]", got)
	}
}
