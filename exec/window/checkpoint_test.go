package window

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/lsm"
	"github.com/sluicesql/sluice/types"
)

// newHarnessOn is newHarness over a given state backend.
func newHarnessOn(t testing.TB, backend state.Backend, build func(next exec.Operator) (exec.Operator, error)) *harness {
	t.Helper()
	h := &harness{t: t, metrics: &exec.Metrics{}, wm: exec.MinWatermark}
	h.rec = &recorder{cur: &h.wm}
	op, err := build(h.rec)
	if err != nil {
		t.Fatal(err)
	}
	h.op = op
	if err := op.Open(&exec.Context{Ctx: context.Background(), State: backend, Metrics: h.metrics}); err != nil {
		t.Fatal(err)
	}
	return h
}

func aggBuilder(cfg AggregateConfig) func(exec.Operator) (exec.Operator, error) {
	return func(next exec.Operator) (exec.Operator, error) {
		cfg.Next = next
		return NewAggregate(cfg)
	}
}

func assignBuilder(cfg AssignConfig) func(exec.Operator) (exec.Operator, error) {
	return func(next exec.Operator) (exec.Operator, error) {
		cfg.Next = next
		return NewAssign(cfg)
	}
}

func (h *harness) checkpoint() {
	h.t.Helper()
	cp, ok := h.op.(exec.Checkpointer)
	if !ok {
		h.t.Fatalf("%T is not a Checkpointer", h.op)
	}
	if err := cp.Checkpoint(); err != nil {
		h.t.Fatal(err)
	}
}

// restart checkpoints h's operator and returns a new operator restored from
// the same backend; its rows continue h's offsets.
func (h *harness) restart(backend state.Backend, build func(exec.Operator) (exec.Operator, error)) *harness {
	h.t.Helper()
	h.checkpoint()
	h2 := newHarnessOn(h.t, backend, build)
	h2.offset = h.offset
	return h2
}

// finishCheckpointed ends the input, takes the last checkpoint (as the
// runtime does, between Finish and Close) and closes the operator.
func (h *harness) finishCheckpointed() {
	h.t.Helper()
	h.wm = exec.MaxWatermark
	if err := h.op.Finish(); err != nil {
		h.t.Fatal(err)
	}
	h.checkpoint()
	if err := h.op.Close(); err != nil {
		h.t.Fatal(err)
	}
}

// storeKeys lists the keys of a store, printed by their kind.
func storeKeys(t testing.TB, backend state.Backend, id string) []string {
	t.Helper()
	st, err := backend.Store(id)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := st.Scan(nil, func(k, _ []byte) bool {
		keys = append(keys, string(k[:1]))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestCheckpointTumble(t *testing.T) {
	backend := state.NewMemory()
	build := aggBuilder(AggregateConfig{ID: "agg", Spec: Spec{Kind: Tumble, Size: 10 * sec}, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})
	h := newHarnessOn(t, backend, build)
	h.send(r(1*sec, "a", 1), r(3*sec, "b", 2), r(12*sec, "a", 5))
	h.watermark(10 * sec)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 1, 1]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 2, 2]",
		"WM 1970-01-01 00:00:10",
	)
	h2 := h.restart(backend, build)
	// The window that fired before the checkpoint does not fire again;
	// a row of it is still late.
	h2.send(r(5*sec, "a", 100))
	if n := h2.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows after restore %d, want 1", n)
	}
	// Replays of rows folded in before the checkpoint are dropped.
	h2.sendAt(0, 3, r(12*sec, "a", 5))
	h2.sendAt(0, 1, r(1*sec, "a", 1))
	if n := h2.metrics.ReplayRows.Load(); n != 2 {
		t.Fatalf("replays after restore %d, want 2", n)
	}
	h2.send(r(14*sec, "a", 7))
	h2.watermark(exec.MaxWatermark)
	h2.expect(
		"+I[a, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999, 2, 12, 7]",
		"WM MAX",
	)
	h2.finishCheckpointed()
	// Everything fired: the store keeps only the meta record.
	if keys := storeKeys(t, backend, "agg"); strings.Join(keys, "") != "m" {
		t.Fatalf("store keys after the end %q, want only the meta record", keys)
	}
	// Run again over a grown input: the windows emitted at the end are
	// still fired, later ones are new.
	h3 := newHarnessOn(t, backend, build)
	h3.offset = 100
	h3.send(r(15*sec, "b", 1)) // late: [10 s, 20 s) fired at the end
	h3.send(r(25*sec, "a", 1))
	h3.watermark(21 * sec)
	h3.finish()
	h3.expect(
		"WM 1970-01-01 00:00:21",
		"+I[a, 1970-01-01 00:00:20, 1970-01-01 00:00:30, 1970-01-01 00:00:29.999, 1, 1, 1]",
	)
	if n := h3.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows in the second run %d, want 1", n)
	}
}

func TestCheckpointHopAndCumulate(t *testing.T) {
	for _, spec := range []Spec{
		{Kind: Hop, Size: 10 * sec, Slide: 5 * sec},
		{Kind: Cumulate, Size: 10 * sec, Step: 5 * sec},
	} {
		t.Run(spec.String(), func(t *testing.T) {
			backend := state.NewMemory()
			build := aggBuilder(AggregateConfig{ID: "agg", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})
			h := newHarnessOn(t, backend, build)
			h.send(r(1*sec, "a", 1), r(6*sec, "a", 2))
			h.watermark(5 * sec)
			first := rowsOnly(h.take())
			h2 := h.restart(backend, build)
			// Late for the window ending at 5 s, not for the later ones.
			h2.send(r(2*sec, "a", 10))
			h2.send(r(12*sec, "a", 100))
			h2.watermark(exec.MaxWatermark)
			got := append(first, rowsOnly(h2.take())...)
			h2.finish()

			ref := newAgg(t, AggregateConfig{ID: "agg", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})
			ref.send(r(1*sec, "a", 1), r(6*sec, "a", 2))
			ref.watermark(5 * sec)
			ref.send(r(2*sec, "a", 10))
			ref.send(r(12*sec, "a", 100))
			ref.watermark(exec.MaxWatermark)
			want := rowsOnly(ref.take())
			ref.finish()
			if joinLines(got) != joinLines(want) {
				t.Fatalf("got:\n\t%s\nwant:\n\t%s", joinLines(got), joinLines(want))
			}
			if len(first) != 1 {
				t.Fatalf("before the checkpoint: %q, want one window", first)
			}
		})
	}
}

func TestCheckpointSessionSpansRestart(t *testing.T) {
	for _, tt := range []struct {
		name       string
		keys, part []int
		want       []string
	}{{
		name: "per key",
		keys: []int{1},
		want: []string{"+I[u, 1970-01-01 00:00:01, 1970-01-01 00:00:25, 1970-01-01 00:00:24.999, 5, 15, 8]"},
	}, {
		name: "per page in a user's sessions",
		keys: []int{1, 3},
		part: []int{1},
		want: []string{
			"+I[u, p1, 1970-01-01 00:00:01, 1970-01-01 00:00:25, 1970-01-01 00:00:24.999, 2, 5, 4]",
			"+I[u, p2, 1970-01-01 00:00:01, 1970-01-01 00:00:25, 1970-01-01 00:00:24.999, 3, 10, 8]",
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			for _, durable := range []bool{false, true} {
				var backend state.Backend = state.NewMemory()
				dir := t.TempDir()
				if durable {
					backend = openLSM(t, dir)
				}
				build := aggBuilder(AggregateConfig{ID: "s", Spec: Spec{Kind: Session, Gap: 5 * sec},
					TimeCol: 0, Keys: tt.keys, PartitionKeys: tt.part, Calls: countSumMax(t)})
				h := newHarnessOn(t, backend, build)
				// Two sessions of u: [1 s, 6 s) and [15 s, 20 s).
				h.send(r4(1*sec, "u", 1, "p1"), r4(15*sec, "u", 2, "p2"))
				h.watermark(2 * sec)
				h.checkpoint()
				if durable {
					backend = reopenLSM(t, backend, dir)
				}
				h2 := newHarnessOn(t, backend, build)
				h2.offset = h.offset
				// [6 s, 11 s) and [10 s, 15 s) bridge them; [20 s, 25 s)
				// extends the result.
				h2.send(r4(6*sec, "u", 4, "p1"), r4(10*sec, "u", 8, "p2"))
				h2.checkpoint()
				h3 := newHarnessOn(t, backend, build)
				h3.offset = h2.offset
				h3.send(r4(20*sec, "u", 0, "p2"))
				h3.watermark(exec.MaxWatermark)
				if got := rowsOnly(h3.take()); joinLines(got) != joinLines(tt.want) {
					t.Fatalf("durable=%v: got:\n\t%s\nwant:\n\t%s", durable, joinLines(got), joinLines(tt.want))
				}
				h3.finishCheckpointed()
				if keys := storeKeys(t, backend, "s"); strings.Join(keys, "") != "m" {
					t.Fatalf("store keys after the end %q, want only the meta record", keys)
				}
				if err := backend.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestCheckpointSessionAssign(t *testing.T) {
	backend := state.NewMemory()
	build := assignBuilder(AssignConfig{Spec: Spec{Kind: Session, Gap: 5 * sec}, TimeCol: 0, PartitionKeys: []int{1}, ID: "sess"})
	h := newHarnessOn(t, backend, build)
	h.send(r(10*sec, "a", 1), r(1*sec, "b", 2), r(12*sec, "a", 3))
	h.watermark(15 * sec)
	h.expect(
		"+I[1970-01-01 00:00:01, b, 2, 1970-01-01 00:00:01, 1970-01-01 00:00:06, 1970-01-01 00:00:05.999]",
		"WM 1970-01-01 00:00:15",
	)
	h2 := h.restart(backend, build)
	h2.send(r(2*sec, "b", 4))          // late: b's session fired before the checkpoint
	h2.sendAt(0, 3, r(12*sec, "a", 3)) // a replay
	h2.send(r(8*sec, "a", 5))          // extends a's restored session back to 8 s
	h3 := h2.restart(backend, build)
	h3.send(r(16*sec, "a", 6))
	h3.watermark(exec.MaxWatermark)
	h3.expect(
		"+I[1970-01-01 00:00:10, a, 1, 1970-01-01 00:00:08, 1970-01-01 00:00:21, 1970-01-01 00:00:20.999]",
		"+I[1970-01-01 00:00:12, a, 3, 1970-01-01 00:00:08, 1970-01-01 00:00:21, 1970-01-01 00:00:20.999]",
		"+I[1970-01-01 00:00:08, a, 5, 1970-01-01 00:00:08, 1970-01-01 00:00:21, 1970-01-01 00:00:20.999]",
		"+I[1970-01-01 00:00:16, a, 6, 1970-01-01 00:00:08, 1970-01-01 00:00:21, 1970-01-01 00:00:20.999]",
		"WM MAX",
	)
	if n := h2.metrics.LateRows.Load(); n != 1 {
		t.Errorf("late rows %d, want 1", n)
	}
	if n := h2.metrics.ReplayRows.Load(); n != 1 {
		t.Errorf("replays %d, want 1", n)
	}
	h3.finishCheckpointed()
	if keys := storeKeys(t, backend, "sess"); strings.Join(keys, "") != "m" {
		t.Fatalf("store keys after the end %q, want only the meta record", keys)
	}
}

func TestAlignedAssignIsStateless(t *testing.T) {
	op, err := NewAssign(AssignConfig{Spec: Spec{Kind: Hop, Size: 10 * sec, Slide: 5 * sec}, TimeCol: 0, Next: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := op.(exec.Checkpointer); ok {
		t.Fatal("a HOP assigner keeps no state, it must not be a Checkpointer")
	}
}

func TestCheckpointRefusesOtherState(t *testing.T) {
	backend := state.NewMemory()
	h := newHarnessOn(t, backend, aggBuilder(AggregateConfig{ID: "agg", Spec: Spec{Kind: Tumble, Size: 10 * sec},
		TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)}))
	h.send(r(1*sec, "a", 1))
	h.checkpoint()
	op, err := NewAggregate(AggregateConfig{ID: "agg", Spec: Spec{Kind: Tumble, Size: 20 * sec},
		TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t), Next: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	err = op.Open(&exec.Context{Ctx: context.Background(), State: backend})
	if err == nil || !strings.Contains(err.Error(), "another window") {
		t.Fatalf("got %v, want an error about state of another window", err)
	}
}

// countingBackend counts the writes to the stores of a real backend.
type countingBackend struct {
	state.Backend
	puts, deletes int
}

func (b *countingBackend) Store(id string) (state.Store, error) {
	st, err := b.Backend.Store(id)
	return &countingStore{Store: st, b: b}, err
}

type countingStore struct {
	state.Store
	b *countingBackend
}

func (s *countingStore) Put(k, v []byte) error { s.b.puts++; return s.Store.Put(k, v) }
func (s *countingStore) Delete(k []byte) error { s.b.deletes++; return s.Store.Delete(k) }

func TestCheckpointIsIncremental(t *testing.T) {
	for _, spec := range []Spec{
		{Kind: Tumble, Size: 10 * sec},
		{Kind: Hop, Size: 10 * sec, Slide: 5 * sec},
		{Kind: Cumulate, Size: 10 * sec, Step: 5 * sec},
		{Kind: Session, Gap: 5 * sec},
	} {
		t.Run(spec.String(), func(t *testing.T) {
			backend := &countingBackend{Backend: state.NewMemory()}
			h := newHarnessOn(t, backend, aggBuilder(AggregateConfig{ID: "agg", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)}))
			const keys = 500
			rows := make([][]types.Value, keys)
			for i := range rows {
				rows[i] = r(1*sec, fmt.Sprintf("k%03d", i), 1)
			}
			h.send(rows...)
			h.checkpoint()
			// keys entries (slices or sessions) and the meta record.
			if backend.puts != keys+1 {
				t.Fatalf("first checkpoint: %d puts, want %d", backend.puts, keys+1)
			}
			backend.puts = 0
			h.send(r(2*sec, "k007", 1), r(3*sec, "k007", 2), r(1*sec, "k300", 1))
			h.checkpoint()
			if backend.puts != 2 || backend.deletes != 0 {
				t.Fatalf("second checkpoint: %d puts and %d deletes, want 2 and 0", backend.puts, backend.deletes)
			}
			backend.puts = 0
			h.checkpoint()
			if backend.puts != 0 {
				t.Fatalf("checkpoint without changes: %d puts", backend.puts)
			}
			// Fire everything: every entry is deleted, the meta
			// record rewritten.
			h.watermark(exec.MaxWatermark)
			h.checkpoint()
			if backend.puts != 1 || backend.deletes != keys {
				t.Fatalf("after firing: %d puts and %d deletes, want 1 and %d", backend.puts, backend.deletes, keys)
			}
			if keys := storeKeys(t, backend, "agg"); strings.Join(keys, "") != "m" {
				t.Fatalf("store keys after the end %q, want only the meta record", keys)
			}
		})
	}
}

func TestChangeListsStayBounded(t *testing.T) {
	// A job that never checkpoints lists no changes. One that restored
	// state lists changes until the list outgrows dirtyLimit; it then
	// stops, and its next checkpoint writes the live state in full.
	listed := func(op exec.Operator) (n, limit int) {
		switch op := op.(type) {
		case *slicingAggregate:
			return len(op.dirty) + len(op.removed), dirtyLimit(op.live)
		case *sessionAggregate:
			return len(op.set.dirty) + len(op.set.removed), dirtyLimit(op.set.live)
		case *sessionAssign:
			return len(op.fresh) + len(op.removed), dirtyLimit(op.buffered)
		}
		t.Fatalf("unexpected operator %T", op)
		return 0, 0
	}
	for _, tt := range []struct {
		name  string
		build func(exec.Operator) (exec.Operator, error)
	}{
		{"tumble", aggBuilder(AggregateConfig{ID: "op", Spec: Spec{Kind: Tumble, Size: sec}, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})},
		{"session aggregate", aggBuilder(AggregateConfig{ID: "op", Spec: Spec{Kind: Session, Gap: 500 * ms}, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})},
		{"session assign", assignBuilder(AssignConfig{ID: "op", Spec: Spec{Kind: Session, Gap: 500 * ms}, TimeCol: 0, PartitionKeys: []int{1}})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Every key gets a new window or session every second:
			// 100 keys over 100 s churn 10000 of them.
			churn := func(h *harness, from int64) {
				for i := range int64(100) {
					rows := make([][]types.Value, 100)
					for j := range rows {
						rows[j] = r(from+i*sec, fmt.Sprintf("k%d", j), int64(j))
					}
					h.send(rows...)
					h.watermark(from + i*sec)
				}
			}
			ref := newHarnessOn(t, state.NewMemory(), tt.build)
			churn(ref, 0)
			churn(ref, 100*sec)
			churn(ref, 200*sec)
			ref.finish()
			want := rowsOnly(ref.take())

			backend := state.NewMemory()
			h := newHarnessOn(t, backend, tt.build)
			churn(h, 0)
			if n, _ := listed(h.op); n != 0 {
				t.Fatalf("without checkpoints: %d changes listed", n)
			}
			h2 := h.restart(backend, tt.build)
			churn(h2, 100*sec)
			if n, limit := listed(h2.op); n > limit {
				t.Fatalf("after restore without checkpoints: %d changes listed, limit %d", n, limit)
			}
			h3 := h2.restart(backend, tt.build)
			churn(h3, 200*sec)
			h3.finish()
			got := append(append(rowsOnly(h.take()), rowsOnly(h2.take())...), rowsOnly(h3.take())...)
			if joinLines(got) != joinLines(want) {
				t.Fatalf("got %d rows, want %d; first difference:\n%s", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

// openLSM opens a durable backend in dir.
func openLSM(t testing.TB, dir string) *lsm.Backend {
	t.Helper()
	b, err := lsm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reopenLSM commits b, closes it and opens dir again.
func reopenLSM(t testing.TB, b state.Backend, dir string) state.Backend {
	t.Helper()
	if err := b.Commit("", map[string]int64{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return openLSM(t, dir)
}

// restartRun drives an operator through events, restarting it from
// checkpoints, and records what it emitted and counted.
type restartRun struct {
	t       *testing.T
	build   func(exec.Operator) (exec.Operator, error)
	durable bool
	dir     string
	backend state.Backend
	h       *harness

	out          []string
	late, replay int64
}

func (rr *restartRun) open() {
	rr.t.Helper()
	if rr.backend == nil {
		if rr.durable {
			rr.backend = openLSM(rr.t, rr.dir)
		} else {
			rr.backend = state.NewMemory()
		}
	}
	rr.h = newHarnessOn(rr.t, rr.backend, rr.build)
}

func (rr *restartRun) apply(ev randEvent) {
	rr.t.Helper()
	h := rr.h
	if ev.rows == nil {
		h.watermark(ev.wm)
		return
	}
	b := types.NewBatch(len(ev.rows), 4)
	for _, r := range ev.rows {
		b.Append(types.Row{Kind: types.Insert, Origin: r.origin, Vals: r4(r.t, r.user, r.v, r.page)})
	}
	if err := h.op.Process(b); err != nil {
		rr.t.Fatal(err)
	}
}

// settle keeps what the current operator emitted and counted.
func (rr *restartRun) settle() {
	for _, row := range rr.h.rec.rows {
		rr.out = append(rr.out, fmtRow(row))
	}
	rr.h.rec.rows = nil
	rr.late += rr.h.metrics.LateRows.Swap(0)
	rr.replay += rr.h.metrics.ReplayRows.Swap(0)
}

// checkpoint checkpoints the operator; durable backends commit.
func (rr *restartRun) checkpoint() {
	rr.t.Helper()
	rr.h.checkpoint()
	if rr.durable {
		if err := rr.backend.Commit("", map[string]int64{}); err != nil {
			rr.t.Fatal(err)
		}
	}
	rr.settle()
}

// crash drops the operator and whatever it did since the last checkpoint.
// A durable backend is closed, dropping uncommitted writes, and reopened.
func (rr *restartRun) crash() {
	rr.t.Helper()
	if rr.durable {
		if err := rr.backend.Close(); err != nil {
			rr.t.Fatal(err)
		}
		rr.backend = nil
	}
	rr.open()
}

// runWithRestarts applies events, checkpointing at random points and
// restarting from some of the checkpoints. After a restart it replays a few
// rows the checkpoint already holds (dropped as replays); with a durable
// backend the operator first runs on past the checkpoint, and what it did
// there is lost with the crash. It returns the rows emitted, the late rows
// and the replays, less the deliberate ones.
func runWithRestarts(t *testing.T, rng *rand.Rand, build func(exec.Operator) (exec.Operator, error), durable bool, events []randEvent) ([]string, int64, int64) {
	rr := &restartRun{t: t, build: build, durable: durable, dir: t.TempDir()}
	rr.open()
	// 3 to 8 checkpoints; a restart from half of them (at least one), the
	// others are incremental checkpoints of a running operator.
	restartAt := map[int]bool{}
	for range 3 + rng.IntN(6) {
		restartAt[rng.IntN(len(events))] = rng.IntN(2) == 0
	}
	forced := rng.IntN(len(events))
	restartAt[forced] = true
	extra, restarts := int64(0), 0
	for i := 0; i < len(events); i++ {
		rr.apply(events[i])
		restart, ok := restartAt[i]
		if !ok {
			continue
		}
		rr.checkpoint()
		if !restart {
			continue
		}
		if durable {
			for j := i + 1; j < min(i+6, len(events)); j++ {
				rr.apply(events[j])
			}
			if rng.IntN(2) == 0 {
				// Checkpointed but not committed: lost too.
				rr.h.checkpoint()
			}
		}
		rr.crash()
		restarts++
		// The source resumes a little before the checkpoint.
		for j := max(0, i-3); j <= i; j++ {
			if events[j].rows != nil {
				rr.apply(events[j])
				extra += int64(len(events[j].rows))
			}
		}
	}
	rr.h.watermark(exec.MaxWatermark)
	rr.h.finishCheckpointed()
	rr.settle()
	// Nothing is left but the meta record: every fired window's and
	// session's records were deleted.
	if keys := storeKeys(t, rr.backend, "rand"); strings.Join(keys, "") != "m" {
		t.Fatalf("store keys after the end %q, want only the meta record", keys)
	}
	if rr.durable {
		if err := rr.backend.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if restarts == 0 {
		t.Fatal("no restart")
	}
	return rr.out, rr.late, rr.replay - extra
}

// runOnce applies events to one operator without checkpoints.
func runOnce(t *testing.T, build func(exec.Operator) (exec.Operator, error), events []randEvent) ([]string, int64, int64) {
	rr := &restartRun{t: t, build: build}
	rr.open()
	for _, ev := range events {
		rr.apply(ev)
	}
	rr.h.watermark(exec.MaxWatermark)
	rr.h.finish()
	rr.settle()
	return rr.out, rr.late, rr.replay
}

func TestRandomRestoredAgainstUninterrupted(t *testing.T) {
	seeds, durableSeeds, rows := 40, 8, 500
	if raceEnabled || testing.Short() {
		seeds, durableSeeds, rows = 12, 3, 250
	}
	type config struct {
		name  string
		build func(spec Spec) func(exec.Operator) (exec.Operator, error)
		kinds []Kind
	}
	configs := []config{{
		name: "aggregate",
		build: func(spec Spec) func(exec.Operator) (exec.Operator, error) {
			return aggBuilder(AggregateConfig{ID: "rand", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})
		},
		kinds: []Kind{Tumble, Hop, Cumulate, Session},
	}, {
		name: "aggregate by page",
		build: func(spec Spec) func(exec.Operator) (exec.Operator, error) {
			return aggBuilder(AggregateConfig{ID: "rand", Spec: spec, TimeCol: 0, Keys: []int{1, 3}, PartitionKeys: []int{1}, Calls: countSumMax(t)})
		},
		kinds: []Kind{Session},
	}, {
		name: "assign",
		build: func(spec Spec) func(exec.Operator) (exec.Operator, error) {
			return assignBuilder(AssignConfig{ID: "rand", Spec: spec, TimeCol: 0, PartitionKeys: []int{1}})
		},
		kinds: []Kind{Session},
	}}
	for _, c := range configs {
		for _, kind := range c.kinds {
			for seed := range seeds {
				rng := rand.New(rand.NewPCG(uint64(seed), 7+uint64(kind)))
				spec := randomSpec(rng, kind)
				// Some rows are late: the watermark lags 0-20 s, rows
				// are up to 10 s out of order.
				events := genEvents(rng, rows, 10*sec, 0, 20*sec)
				build := c.build(spec)
				want, wantLate, wantReplay := runOnce(t, build, events)
				for _, durable := range []bool{false, true} {
					if durable && seed >= durableSeeds {
						continue
					}
					t.Run(fmt.Sprintf("%s/%s/durable=%v/%d", c.name, spec, durable, seed), func(t *testing.T) {
						got, late, replay := runWithRestarts(t, rng, build, durable, events)
						if joinLines(got) != joinLines(want) {
							t.Fatalf("got %d rows, want %d; first difference:\n%s", len(got), len(want), firstDiff(got, want))
						}
						if late != wantLate || replay != wantReplay {
							t.Fatalf("late %d and replays %d, want %d and %d", late, replay, wantLate, wantReplay)
						}
					})
				}
			}
		}
	}
}

func TestRunAgainAfterEnd(t *testing.T) {
	// A job whose input ended emitted every window; run again over a
	// grown input it drops the rows of those windows as late and
	// aggregates later ones. Run 1 holds rows at 1 s and 12 s.
	aggCfg := func(spec Spec) func(exec.Operator) (exec.Operator, error) {
		return aggBuilder(AggregateConfig{ID: "op", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})
	}
	for _, tt := range []struct {
		name  string
		build func(exec.Operator) (exec.Operator, error)
		late  int64 // a row of a window emitted by run 1
		fresh int64
		want  []string
	}{{
		name: "tumble", build: aggCfg(Spec{Kind: Tumble, Size: 10 * sec}), late: 15 * sec, fresh: 25 * sec,
		want: []string{"+I[a, 1970-01-01 00:00:20, 1970-01-01 00:00:30, 1970-01-01 00:00:29.999, 1, 1, 1]"},
	}, {
		// [10 s, 20 s) was emitted, [15 s, 25 s) was not.
		name: "hop", build: aggCfg(Spec{Kind: Hop, Size: 10 * sec, Slide: 5 * sec}), late: 2 * sec, fresh: 17 * sec,
		want: []string{"+I[a, 1970-01-01 00:00:15, 1970-01-01 00:00:25, 1970-01-01 00:00:24.999, 1, 1, 1]"},
	}, {
		name: "cumulate", build: aggCfg(Spec{Kind: Cumulate, Size: 10 * sec, Step: 5 * sec}), late: 17 * sec, fresh: 22 * sec,
		want: []string{
			"+I[a, 1970-01-01 00:00:20, 1970-01-01 00:00:25, 1970-01-01 00:00:24.999, 1, 1, 1]",
			"+I[a, 1970-01-01 00:00:20, 1970-01-01 00:00:30, 1970-01-01 00:00:29.999, 1, 1, 1]",
		},
	}, {
		// Run 1 emitted [12 s, 17 s); [10 s, 15 s) ends before.
		name: "session", build: aggCfg(Spec{Kind: Session, Gap: 5 * sec}), late: 10 * sec, fresh: 14 * sec,
		want: []string{"+I[a, 1970-01-01 00:00:14, 1970-01-01 00:00:19, 1970-01-01 00:00:18.999, 1, 1, 1]"},
	}, {
		name:  "session assign",
		build: assignBuilder(AssignConfig{ID: "op", Spec: Spec{Kind: Session, Gap: 5 * sec}, TimeCol: 0, PartitionKeys: []int{1}}),
		late:  10 * sec, fresh: 14 * sec,
		want: []string{"+I[1970-01-01 00:00:14, a, 1, 1970-01-01 00:00:14, 1970-01-01 00:00:19, 1970-01-01 00:00:18.999]"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			backend := state.NewMemory()
			h := newHarnessOn(t, backend, tt.build)
			h.send(r(1*sec, "a", 1), r(12*sec, "a", 1))
			h.finishCheckpointed()
			h2 := newHarnessOn(t, backend, tt.build)
			h2.offset = h.offset
			h2.send(r(tt.late, "a", 1), r(tt.fresh, "a", 1))
			h2.finish()
			if got := rowsOnly(h2.take()); joinLines(got) != joinLines(tt.want) {
				t.Fatalf("got:\n\t%s\nwant:\n\t%s", joinLines(got), joinLines(tt.want))
			}
			if n := h2.metrics.LateRows.Load(); n != 1 {
				t.Fatalf("late rows %d, want 1", n)
			}
		})
	}
}
