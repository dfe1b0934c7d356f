package rank

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// TestTTL: a partition not written for the TTL is forgotten without
// output; its next row starts a new top N (+I at 1), and the store
// forgets it at the next checkpoint.
func TestTTL(t *testing.T) {
	st := state.NewMemory()
	now := int64(1_000_000)
	open := func() (*Operator, *collect) {
		out := &collect{}
		o, err := New(Config{ID: "r", Partition: []int{0}, Limit: 2, Types: cols,
			Order: []SortKey{{Col: 1, Desc: true}}, TTL: 10 * time.Second, Next: out})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Open(&exec.Context{State: st, Now: func() int64 { return now }, Metrics: &exec.Metrics{}}); err != nil {
			t.Fatal(err)
		}
		return o, out
	}
	o, out := open()
	off := int64(0)
	send := func(o *Operator, p, v int) {
		t.Helper()
		off++
		b := types.NewBatch(1, 3)
		vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: off}, 3)
		vals[0], vals[1], vals[2] = types.IntValue(types.KindInt, int64(p)), types.IntValue(types.KindInt, int64(v)), types.StringValue("x")
		if err := o.Process(b); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(out *collect, want ...string) {
		t.Helper()
		if got := strings.Join(out.rows, " "); got != strings.Join(want, " ") {
			t.Fatalf("got  %s\nwant %s", got, strings.Join(want, " "))
		}
		out.rows = nil
	}
	if got := o.TickEvery(); got != time.Second {
		t.Fatalf("TickEvery = %v, want 1s", got)
	}
	send(o, 1, 5)
	send(o, 2, 7)
	expect(out, "+I[1, 5, x, 1]", "+I[2, 7, x, 1]")
	if err := o.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	now += 6_000_000
	send(o, 1, 6) // partition 1 written at 7 s
	expect(out, "-U[1, 5, x, 1]", "+U[1, 5, x, 2]", "+I[1, 6, x, 1]")
	now += 5_000_000 // partition 2: 11 s old
	if err := o.Tick(); err != nil {
		t.Fatal(err)
	}
	expect(out)
	if len(o.parts) != 1 {
		t.Fatalf("%d partitions kept, want 1", len(o.parts))
	}
	// Partition 2 starts over: 3 enters at 1, not below the forgotten 7.
	send(o, 2, 3)
	expect(out, "+I[2, 3, x, 1]")
	if err := o.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Everything expires; the store forgets it at the checkpoint.
	now += 20_000_000
	if err := o.Tick(); err != nil {
		t.Fatal(err)
	}
	if err := o.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	o2, out2 := open()
	if len(o2.parts) != 0 {
		t.Fatalf("restored %d partitions after they expired", len(o2.parts))
	}
	send(o2, 1, 1)
	expect(out2, "+I[1, 1, x, 1]")
}
