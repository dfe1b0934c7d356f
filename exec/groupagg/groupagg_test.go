package groupagg

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// step is one input batch and the changelog it must produce.
type step struct {
	in  []string
	out []string
}

func runSteps(t *testing.T, h *harness, steps []step) {
	t.Helper()
	for _, s := range steps {
		expectRows(t, "batch "+strings.Join(s.in, "; "), h.batch(s.in...), s.out...)
	}
}

// SELECT k, COUNT(*), SUM(x) FROM t GROUP BY k over (k STRING, x INT).
var countSum = spec{
	schema: []types.Type{types.String, types.Int},
	keys:   []int{0},
	calls:  []callSpec{{name: "COUNT"}, {name: "SUM", args: []int{1}}},
}

func TestChangelog(t *testing.T) {
	runSteps(t, newHarness(t, countSum), []step{
		{in: []string{"+I a 1", "+I b 2"}, out: []string{"+I[a, 1, 1]", "+I[b, 1, 2]"}},
		{in: []string{"+I a 3"}, out: []string{"-U[a, 1, 1]", "+U[a, 2, 4]"}},
		// Retraction input: -D and -U both retract.
		{in: []string{"-D a 1"}, out: []string{"-U[a, 2, 4]", "+U[a, 1, 3]"}},
		// The last row of a key retracted: -D of the last result.
		{in: []string{"-U a 3"}, out: []string{"-D[a, 1, 3]"}},
		// The key starts over with +I.
		{in: []string{"+U a 5"}, out: []string{"+I[a, 1, 5]"}},
		// A retraction for a key without rows is ignored.
		{in: []string{"-D zz 1"}, out: nil},
		// An update whose result did not change emits nothing; b only
		// changes, and emits, once.
		{in: []string{"-U b 2", "+U b 2", "+I b 0"}, out: []string{"-U[b, 1, 2]", "+U[b, 2, 2]"}},
	})
}

func TestMiniBatch(t *testing.T) {
	runSteps(t, newHarness(t, countSum), []step{
		// A hot key updated many times in a batch emits one row; keys emit
		// in first-touch order.
		{in: []string{"+I b 1", "+I a 1", "+I a 2", "+I b 5", "+I a 3"},
			out: []string{"+I[b, 2, 6]", "+I[a, 3, 6]"}},
		{in: []string{"+I a 4", "+I a 5", "-D a 1"}, out: []string{"-U[a, 3, 6]", "+U[a, 4, 14]"}},
		// Changes that cancel within the batch emit nothing.
		{in: []string{"+I a 7", "-D a 7"}, out: nil},
		// A key born and emptied within one batch emits nothing.
		{in: []string{"+I c 1", "-D c 1"}, out: nil},
		// A key emptied and refilled within a batch: one update from the
		// last emitted result to the new one.
		{in: []string{"-D b 1", "-D b 5", "+I b 9"}, out: []string{"-U[b, 2, 6]", "+U[b, 1, 9]"}},
		// Emptied at the end of the batch: -D of the last emitted result.
		{in: []string{"+I b 1", "-D b 9", "-D b 1"}, out: []string{"-D[b, 1, 9]"}},
	})
}

func TestCountDistinctRetraction(t *testing.T) {
	// SELECT k, COUNT(DISTINCT u), COUNT(*) FROM t GROUP BY k.
	h := newHarness(t, spec{
		schema: []types.Type{types.String, types.String},
		keys:   []int{0},
		calls:  []callSpec{{name: "COUNT", args: []int{1}, distinct: true}, {name: "COUNT"}},
	})
	runSteps(t, h, []step{
		{in: []string{"+I k u1", "+I k u2", "+I k u1", "+I k NULL"}, out: []string{"+I[k, 2, 4]"}},
		{in: []string{"-D k u1"}, out: []string{"-U[k, 2, 4]", "+U[k, 2, 3]"}},
		{in: []string{"-D k u1"}, out: []string{"-U[k, 2, 3]", "+U[k, 1, 2]"}},
		// u2 updated to u3: still one distinct value, two rows.
		{in: []string{"-U k u2", "+U k u3"}, out: nil},
		{in: []string{"+I k u1"}, out: []string{"-U[k, 1, 2]", "+U[k, 2, 3]"}},
		{in: []string{"-D k u1", "-D k u3", "-D k NULL"}, out: []string{"-D[k, 2, 3]"}},
	})
}

func TestFilter(t *testing.T) {
	// SELECT k, COUNT(*) FILTER (WHERE ok), SUM(x) FILTER (WHERE ok), COUNT(*)
	// FROM t GROUP BY k over (k STRING, x INT, ok BOOLEAN).
	h := newHarness(t, spec{
		schema: []types.Type{types.String, types.Int, types.Boolean},
		keys:   []int{0},
		calls: []callSpec{
			{name: "COUNT", filter1: 3},
			{name: "SUM", args: []int{1}, filter1: 3},
			{name: "COUNT"},
		},
	})
	runSteps(t, h, []step{
		{in: []string{"+I a 1 true", "+I a 10 false", "+I a 100 NULL"}, out: []string{"+I[a, 1, 1, 3]"}},
		{in: []string{"-D a 1 true"}, out: []string{"-U[a, 1, 1, 3]", "+U[a, 0, NULL, 2]"}},
		{in: []string{"-D a 10 false"}, out: []string{"-U[a, 0, NULL, 2]", "+U[a, 0, NULL, 1]"}},
	})
}

func TestNullKeys(t *testing.T) {
	// SELECT k1, k2, COUNT(*) GROUP BY k1, k2: NULLs group together, and
	// (NULL, 'a') is not ('a', NULL).
	h := newHarness(t, spec{
		schema: []types.Type{types.String, types.String},
		keys:   []int{0, 1},
		calls:  []callSpec{{name: "COUNT"}},
	})
	runSteps(t, h, []step{
		{in: []string{"+I NULL NULL", "+I NULL a", "+I a NULL", "+I NULL NULL", "+I NULL a"},
			out: []string{"+I[NULL, NULL, 2]", "+I[NULL, a, 2]", "+I[a, NULL, 1]"}},
		{in: []string{"-D NULL NULL", "-D NULL NULL"}, out: []string{"-D[NULL, NULL, 2]"}},
	})
}

func TestGlobalAggregate(t *testing.T) {
	// SELECT COUNT(*), SUM(x) FROM t: no keys, one group.
	h := newHarness(t, spec{
		schema: []types.Type{types.String, types.Int},
		calls:  []callSpec{{name: "COUNT"}, {name: "SUM", args: []int{1}}},
	})
	runSteps(t, h, []step{
		{in: []string{"+I a 1", "+I b 2"}, out: []string{"+I[2, 3]"}},
		{in: []string{"-D a 1", "-D b 2"}, out: []string{"-D[2, 3]"}},
	})
}

func TestReplayDropped(t *testing.T) {
	h := newHarness(t, countSum)
	runSteps(t, h, []step{
		{in: []string{"+I a 1 @0:10", "+I a 2 @1:5"}, out: []string{"+I[a, 2, 3]"}},
		// Replays: offsets not above the partition's last. Partition 1
		// moves on, partition 0 is replayed; rows without origin are
		// never dropped.
		{in: []string{"+I a 1 @0:10", "+I a 100 @0:3", "+I a 4 @1:6", "+I a 2 @1:5", "+I a 8 @-", "+I a 8 @-"},
			out: []string{"-U[a, 2, 3]", "+U[a, 5, 23]"}},
	})
	if n := h.ctx.Metrics.ReplayRows.Load(); n != 3 {
		t.Fatalf("ReplayRows = %d, want 3", n)
	}
	// A nil Metrics is allowed: replays are dropped uncounted.
	out := &collector{types: []types.Type{types.String}}
	op, err := New(Config{ID: "x", Keys: []int{0}, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&exec.Context{}); err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(2, 2)
	for range 2 {
		b.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: 0, Offset: 1},
			Vals: []types.Value{types.StringValue("a"), {}}})
	}
	if err := op.Process(b); err != nil {
		t.Fatal(err)
	}
	expectRows(t, "nil metrics", out.take(), "+I[a]")
}

func TestAppendOnlyInput(t *testing.T) {
	s := spec{
		schema:     []types.Type{types.String, types.Int},
		keys:       []int{0},
		calls:      []callSpec{{name: "MAX", args: []int{1}}, {name: "LISTAGG", args: []int{0}}},
		appendOnly: true,
	}
	h := newHarness(t, s)
	runSteps(t, h, []step{
		{in: []string{"+I a 3", "+I a 1"}, out: []string{"+I[a, 3, a,a]"}},
		{in: []string{"+I a 7"}, out: []string{"-U[a, 3, a,a]", "+U[a, 7, a,a,a]"}},
	})
	if _, err := h.try("-D a 7"); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("retraction into append-only aggregate: %v", err)
	}
}

func TestMinMaxRetraction(t *testing.T) {
	h := newHarness(t, spec{
		schema: []types.Type{types.String, types.Int},
		keys:   []int{0},
		calls:  []callSpec{{name: "MIN", args: []int{1}}, {name: "MAX", args: []int{1}}},
	})
	runSteps(t, h, []step{
		{in: []string{"+I a 5", "+I a 1", "+I a 9", "+I a 1"}, out: []string{"+I[a, 1, 9]"}},
		{in: []string{"-D a 1"}, out: nil},
		{in: []string{"-D a 1", "-D a 9"}, out: []string{"-U[a, 1, 9]", "+U[a, 5, 5]"}},
	})
}

func TestForwarding(t *testing.T) {
	h := newHarness(t, countSum)
	if !h.out.opened {
		t.Fatal("Open not forwarded")
	}
	if err := h.op.Watermark(42); err != nil {
		t.Fatal(err)
	}
	if err := h.op.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := h.op.Close(); err != nil {
		t.Fatal(err)
	}
	if len(h.out.wms) != 1 || h.out.wms[0] != 42 || !h.out.finished || !h.out.closed {
		t.Fatalf("forwarding: wms %v finished %v closed %v", h.out.wms, h.out.finished, h.out.closed)
	}
}

func TestErrors(t *testing.T) {
	reg := agg.NewRegistry()
	count, _ := reg.Lookup("COUNT")
	sum, _ := reg.Lookup("SUM")
	next := &collector{}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ID: "x"}, "no downstream operator"},
		{Config{Next: next}, "empty operator ID"},
		{Config{ID: "x", Keys: []int{-1}, Next: next}, "negative key column"},
		{Config{ID: "x", Calls: []agg.Call{{Filter: -1}}, Next: next}, "call 1 has no function"},
		{Config{ID: "x", Calls: []agg.Call{{Func: sum, Args: []int{0}, Filter: -1}}, Next: next},
			"call 1 (SUM) has 1 arguments and 0 argument types"},
		{Config{ID: "x", Calls: []agg.Call{{Func: count, Filter: -2}}, Next: next}, "filter column -2"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: error %v, want %q", err, tc.want)
		}
	}

	// A row narrower than the columns the operator reads.
	h := newHarness(t, countSum)
	b := types.NewBatch(1, 1)
	b.AddRow(types.Insert, types.NoOrigin, 1)
	if err := h.op.Process(b); err == nil || !strings.Contains(err.Error(), "cannot read column 1") {
		t.Fatalf("narrow row: %v", err)
	}
}

func TestCheckpointRestore(t *testing.T) {
	backend := state.NewMemory()
	s := spec{
		schema: []types.Type{types.String, types.Decimal(10, 2)},
		keys:   []int{0},
		calls: []callSpec{
			{name: "COUNT"}, {name: "SUM", args: []int{1}}, {name: "MAX", args: []int{1}},
			{name: "COUNT", args: []int{1}, distinct: true}, {name: "LISTAGG", args: []int{0}},
		},
	}
	h := newHarnessOn(t, s, backend)
	runSteps(t, h, []step{
		{in: []string{"+I a 1.50 @0:1", "+I b 2.00 @0:2", "+I a 3.00 @0:3", "+I c 1.00 @0:4"},
			out: []string{"+I[a, 2, 4.50, 3.00, 2, a,a]", "+I[b, 1, 2.00, 2.00, 1, b]", "+I[c, 1, 1.00, 1.00, 1, c]"}},
		{in: []string{"-D c 1.00 @0:5"}, out: []string{"-D[c, 1, 1.00, 1.00, 1, c]"}},
	})
	if err := h.op.(Checkpointer).Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Work after the checkpoint: in a crash it is lost with the operator,
	// but here the backend keeps it in memory, so a second operator would
	// see it; start the restored operator from a checkpointed copy.
	restored := state.NewMemory()
	copyStore(t, backend, restored, "job/agg-1")
	runSteps(t, h, []step{{in: []string{"+I a 9.00 @0:6"}, out: []string{"-U[a, 2, 4.50, 3.00, 2, a,a]", "+U[a, 3, 13.50, 9.00, 3, a,a,a]"}}})

	h2 := newHarnessOn(t, s, restored)
	runSteps(t, h2, []step{
		// The replay of offsets up to 5 is dropped; 6 is folded in again
		// and the output continues from the checkpointed results.
		{in: []string{"+I a 1.50 @0:1", "+I c 1.00 @0:4", "+I a 9.00 @0:6"},
			out: []string{"-U[a, 2, 4.50, 3.00, 2, a,a]", "+U[a, 3, 13.50, 9.00, 3, a,a,a]"}},
		{in: []string{"-D a 9.00 @0:7", "-D b 2.00 @0:8"},
			out: []string{"-U[a, 3, 13.50, 9.00, 3, a,a,a]", "+U[a, 2, 4.50, 3.00, 2, a,a]", "-D[b, 1, 2.00, 2.00, 1, b]"}},
		{in: []string{"+I c 4.00 @0:9"}, out: []string{"+I[c, 1, 4.00, 4.00, 1, c]"}},
	})
	if n := h2.ctx.Metrics.ReplayRows.Load(); n != 2 {
		t.Fatalf("ReplayRows = %d, want 2", n)
	}
	// The emptied key b is deleted from the store at the next checkpoint.
	if err := h2.op.(Checkpointer).Checkpoint(); err != nil {
		t.Fatal(err)
	}
	st, _ := restored.Store("job/agg-1")
	var keys int
	_ = st.Scan(nil, func(k, v []byte) bool { keys++; return true })
	if keys != 2 {
		t.Fatalf("%d groups stored, want 2 (a, c)", keys)
	}
}

// copyStore copies one operator's entries and offsets between backends, the
// way a durable backend's restore would present them.
func copyStore(t *testing.T, from, to *state.Memory, id string) {
	t.Helper()
	src, _ := from.Store(id)
	dst, _ := to.Store(id)
	_ = src.Scan(nil, func(k, v []byte) bool {
		if err := dst.Put(k, v); err != nil {
			t.Fatal(err)
		}
		return true
	})
	for p, off := range src.Offsets().All() {
		dst.Offsets().Set(p, off)
	}
}

func TestRestoreCorrupt(t *testing.T) {
	backend := state.NewMemory()
	st, _ := backend.Store("job/agg-1")
	if err := st.Put([]byte("gkey"), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := countSum.config(t, agg.NewRegistry(), &collector{})
	op, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&exec.Context{State: backend}); err == nil || !strings.Contains(err.Error(), "cannot restore groups") {
		t.Fatalf("Open over corrupt state: %v", err)
	}
}

func TestCheckpointLargeState(t *testing.T) {
	// Accumulator states longer than 127 bytes take multi-byte length
	// prefixes in the stored group.
	backend := state.NewMemory()
	s := spec{
		schema: []types.Type{types.String, types.String},
		keys:   []int{0},
		calls:  []callSpec{{name: "LISTAGG", args: []int{1}}, {name: "COUNT", args: []int{1}, distinct: true}},
	}
	h := newHarnessOn(t, s, backend)
	var in []string
	var want []string
	for i := range 300 {
		v := "v" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		in = append(in, "+I k "+v)
		want = append(want, v)
	}
	got := h.batch(in...)
	if len(got) != 1 || !strings.HasPrefix(got[0], "+I[k, "+strings.Join(want, ",")+", ") {
		t.Fatalf("got %q", got)
	}
	if err := h.op.(Checkpointer).Checkpoint(); err != nil {
		t.Fatal(err)
	}
	h2 := newHarnessOn(t, s, backend)
	got2 := h2.batch("-D k " + want[0] + " @0:301")
	if len(got2) != 2 || got2[0] != "-U"+strings.TrimPrefix(got[0], "+I") ||
		!strings.HasPrefix(got2[1], "+U[k, "+strings.Join(want[1:], ",")+", ") {
		t.Fatalf("after restore: %q", got2)
	}
}

// TestMiniBatchLatency: with a mini-batch latency, updates of several
// input batches are held back and emitted once: when the latency passed
// (on the next batch or on a tick), when the size is reached, at a
// checkpoint barrier, and at the end of input.
func TestMiniBatchLatency(t *testing.T) {
	s := countSum
	s.miniBatchLatency = time.Second
	s.miniBatchSize = 5
	h := newHarness(t, s)
	timed := h.op.(exec.Timed)
	if got := timed.TickEvery(); got != 250*time.Millisecond {
		t.Fatalf("TickEvery = %v, want 250ms", got)
	}
	tick := func() []string {
		t.Helper()
		if err := timed.Tick(); err != nil {
			t.Fatal(err)
		}
		return h.out.take()
	}
	// Three batches within the latency: nothing yet.
	expectRows(t, "first batch", h.batch("+I a 1"), nil...)
	h.now += 300_000
	expectRows(t, "second batch", h.batch("+I a 2", "+I b 1"), nil...)
	h.now += 300_000
	expectRows(t, "tick before the deadline", tick(), nil...)
	h.now += 400_000
	// The deadline (1 s after the first pending row) passed: one row per
	// key for all three batches.
	expectRows(t, "tick at the deadline", tick(), "+I[a, 2, 3]", "+I[b, 1, 1]")
	expectRows(t, "tick with nothing pending", tick(), nil...)

	// The size bound: the fifth pending row emits.
	expectRows(t, "below the size", h.batch("+I a 3", "+I a 4"), nil...)
	expectRows(t, "the size reached", h.batch("+I a 5", "-D b 1", "+I c 1"),
		"-U[a, 2, 3]", "+U[a, 5, 15]", "-D[b, 1, 1]", "+I[c, 1, 1]")

	// A batch arriving after the deadline emits at once.
	expectRows(t, "pending", h.batch("+I c 2"), nil...)
	h.now += 2_000_000
	expectRows(t, "late batch", h.batch("+I c 3"), "-U[c, 1, 1]", "+U[c, 3, 6]")

	// A checkpoint emits what is pending before the state is written; a
	// restored operator continues from the emitted result.
	expectRows(t, "pending", h.batch("+I a 6"), nil...)
	if err := h.op.(Checkpointer).Checkpoint(); err != nil {
		t.Fatal(err)
	}
	expectRows(t, "checkpoint", h.out.take(), "-U[a, 5, 15]", "+U[a, 6, 21]")
	h2 := newHarnessOn(t, s, h.backend)
	h2.offset = h.offset
	expectRows(t, "restored, pending", h2.batch("+I a 1"), nil...)
	if err := h2.op.Finish(); err != nil {
		t.Fatal(err)
	}
	expectRows(t, "finish", h2.out.take(), "-U[a, 6, 21]", "+U[a, 7, 22]")
}

// TestTTL: a key not updated for the TTL is forgotten without output; its
// next row starts a new group (+I), and the store forgets it at the next
// checkpoint.
func TestTTL(t *testing.T) {
	s := countSum
	s.ttl = 10 * time.Second
	h := newHarness(t, s)
	timed := h.op.(exec.Timed)
	if got := timed.TickEvery(); got != time.Second {
		t.Fatalf("TickEvery = %v, want 1s", got)
	}
	checkpoint := func() {
		t.Helper()
		if err := h.op.(Checkpointer).Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	expectRows(t, "first rows", h.batch("+I a 1", "+I b 2"), "+I[a, 1, 1]", "+I[b, 1, 2]")
	checkpoint()
	h.now += 6_000_000
	expectRows(t, "a updated", h.batch("+I a 3"), "-U[a, 1, 1]", "+U[a, 2, 4]")
	h.now += 5_000_000 // b: 11 s old; a: 5 s
	if err := timed.Tick(); err != nil {
		t.Fatal(err)
	}
	expectRows(t, "expiry emits nothing", h.out.take(), nil...)
	if got := h.ctx.Metrics.ExpiredKeys.Load(); got != 1 {
		t.Fatalf("ExpiredKeys = %d, want 1", got)
	}
	checkpoint()
	// b starts over; a keeps its group.
	expectRows(t, "after expiry", h.batch("+I b 7", "+I a 1"), "+I[b, 1, 7]", "-U[a, 2, 4]", "+U[a, 3, 5]")
	checkpoint()

	// The store holds b's new group, not the old one: a restored operator
	// continues from +I[b, 1, 7].
	h2 := newHarnessOn(t, s, h.backend)
	h2.offset = h.offset
	expectRows(t, "restored", h2.batch("+I b 1"), "-U[b, 1, 7]", "+U[b, 2, 8]")

	// Expiry of a key forgotten before a checkpoint deletes it from the
	// store: a restored operator starts it over.
	h.now += 20_000_000
	if err := timed.Tick(); err != nil {
		t.Fatal(err)
	}
	checkpoint()
	h3 := newHarnessOn(t, s, h.backend)
	h3.offset = h.offset + 10
	expectRows(t, "restored after expiry", h3.batch("+I a 1", "+I b 1"), "+I[a, 1, 1]", "+I[b, 1, 1]")
}

// SELECT DISTINCT k FROM t (or GROUP BY k without aggregates, or the
// aggregate of a UNION): a group without calls emits its key once when it
// gains its first row, whatever the batches, and deletes it when it loses
// its last, as Flink's GroupAggregate(groupBy=[k], select=[k]) does.
var distinctOnly = spec{schema: []types.Type{types.String}, keys: []int{0}}

func TestDistinctWithoutCalls(t *testing.T) {
	runSteps(t, newHarness(t, distinctOnly), []step{
		{in: []string{"+I a", "+I b", "+I a"}, out: []string{"+I[a]", "+I[b]"}},
		// A later batch of a known key emits nothing.
		{in: []string{"+I a"}, out: nil},
		{in: []string{"+I b", "+I c"}, out: []string{"+I[c]"}},
		// Retractions: the key goes once its last row does.
		{in: []string{"-D a"}, out: nil},
		{in: []string{"-U a", "-D b"}, out: nil},
		{in: []string{"-D a"}, out: []string{"-D[a]"}},
		{in: []string{"+I a"}, out: []string{"+I[a]"}},
	})
}

func TestDistinctWithoutCallsRestore(t *testing.T) {
	backend := state.NewMemory()
	h := newHarnessOn(t, distinctOnly, backend)
	runSteps(t, h, []step{{in: []string{"+I a @0:1", "+I b @0:2", "+I a @0:3"}, out: []string{"+I[a]", "+I[b]"}}})
	if err := h.op.(Checkpointer).Checkpoint(); err != nil {
		t.Fatal(err)
	}
	restored := state.NewMemory()
	copyStore(t, backend, restored, "job/agg-1")
	h2 := newHarnessOn(t, distinctOnly, restored)
	runSteps(t, h2, []step{
		// Keys emitted before the checkpoint are not emitted again.
		{in: []string{"+I a @0:4", "+I c @0:5"}, out: []string{"+I[c]"}},
		{in: []string{"-D b @0:6"}, out: []string{"-D[b]"}},
		{in: []string{"-D a @0:7", "-D a @0:8"}, out: nil},
		{in: []string{"-D a @0:9"}, out: []string{"-D[a]"}},
	})
}

// TestDistinct: a GROUP BY without aggregate calls (SELECT DISTINCT) emits
// a key once, when its first row comes, however many batches bring more;
// -D when its last row is retracted; and so again after a restore.
func TestDistinct(t *testing.T) {
	backend := state.NewMemory()
	s := spec{schema: []types.Type{types.String}, keys: []int{0}}
	h := newHarnessOn(t, s, backend)
	runSteps(t, h, []step{
		{in: []string{"+I a", "+I b"}, out: []string{"+I[a]", "+I[b]"}},
		{in: []string{"+I a"}, out: nil},
		{in: []string{"-D a"}, out: nil},
		{in: []string{"-D a"}, out: []string{"-D[a]"}},
		{in: []string{"+I a"}, out: []string{"+I[a]"}},
	})
	if err := h.op.(Checkpointer).Checkpoint(); err != nil {
		t.Fatal(err)
	}
	restored := state.NewMemory()
	copyStore(t, backend, restored, "job/agg-1")
	h2 := newHarnessOn(t, s, restored)
	h2.offset = h.offset
	runSteps(t, h2, []step{
		{in: []string{"+I a", "+I b"}, out: nil},
		{in: []string{"-D b", "-D b"}, out: []string{"-D[b]"}},
	})
}
