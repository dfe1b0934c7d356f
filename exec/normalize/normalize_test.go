package normalize

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

type collect struct {
	exec.Passthrough
	rows []string
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		if r.Origin != types.NoOrigin {
			c.rows = append(c.rows, "origin set")
		}
		s := r.Kind.String() + "["
		for i, v := range r.Vals {
			if i > 0 {
				s += ", "
			}
			s += types.FormatValue(v, cols[i])
		}
		c.rows = append(c.rows, s+"]")
	}
	return nil
}
func (c *collect) Watermark(int64) error { return nil }
func (c *collect) Finish() error         { return nil }
func (c *collect) Close() error          { return nil }

// cols are (k STRING, v INT), keyed by k.
var cols = []types.Type{types.String, types.Int}

// TestNormalize pins the changelog made of an upsert stream, and that a
// restored operator goes on from the rows it kept.
func TestNormalize(t *testing.T) {
	st := state.NewMemory()
	open := func() (*Operator, *collect) {
		out := &collect{}
		o, err := New(Config{ID: "n", Keys: []int{0}, Types: cols, Next: out})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Open(&exec.Context{State: st}); err != nil {
			t.Fatal(err)
		}
		return o, out
	}
	off := int64(0)
	send := func(o *Operator, kind types.RowKind, k string, v int) {
		t.Helper()
		off++
		b := types.NewBatch(1, 2)
		vals := b.AddRow(kind, types.Origin{Part: 0, Offset: off}, 2)
		vals[0] = types.StringValue(k)
		if v >= 0 {
			vals[1] = types.IntValue(types.KindInt, int64(v))
		}
		if err := o.Process(b); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(c *collect, want ...string) {
		t.Helper()
		if got := strings.Join(c.rows, " "); got != strings.Join(want, " ") {
			t.Fatalf("got  %s\nwant %s", got, strings.Join(want, " "))
		}
		c.rows = nil
	}
	o, out := open()
	send(o, types.Insert, "a", 1)
	send(o, types.UpdateAfter, "a", 2)
	send(o, types.UpdateAfter, "a", 2) // the same row: nothing
	send(o, types.UpdateBefore, "a", 2)
	send(o, types.Insert, "b", 5)
	send(o, types.Delete, "b", -1) // a tombstone: the key only
	send(o, types.Delete, "zz", -1)
	send(o, types.UpdateAfter, "c", 7) // +U of an unknown key: +I
	expect(out, "+I[a, 1]", "-U[a, 1]", "+U[a, 2]", "+I[b, 5]", "-D[b, 5]", "+I[c, 7]")
	if err := o.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	o2, out2 := open()
	send(o2, types.UpdateAfter, "a", 3)
	send(o2, types.Insert, "b", 1)
	send(o2, types.Delete, "c", -1)
	expect(out2, "-U[a, 2]", "+U[a, 3]", "+I[b, 1]", "-D[c, 7]")
	// A replay is dropped.
	b := types.NewBatch(1, 2)
	vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: 2}, 2)
	vals[0], vals[1] = types.StringValue("a"), types.IntValue(types.KindInt, 9)
	if err := o2.Process(b); err != nil {
		t.Fatal(err)
	}
	expect(out2)
}
