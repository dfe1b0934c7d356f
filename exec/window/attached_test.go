package window

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Rows of the attached aggregate's tests: window_start, window_end (the
// window the row carries), key STRING, v BIGINT.
func wr(start, end int64, key string, v int64) []types.Value {
	return []types.Value{types.TimestampValue(start), types.TimestampValue(end), types.StringValue(key), types.BigIntValue(v)}
}

func attachedConfig(t testing.TB, spec Spec) AggregateConfig {
	return AggregateConfig{ID: "agg", Spec: spec, TimeCol: -1, Attached: true, StartCol: 0, EndCol: 1, Keys: []int{2},
		Calls: []agg.Call{call(t, "COUNT", nil), call(t, "SUM", []int{3}, types.BigInt), call(t, "MAX", []int{3}, types.BigInt)}}
}

// TestAttachedFiring: rows in overlapping HOP windows each count in the
// window they carry only; a window fires when the watermark reaches its
// last instant, windows by end then start, keys in order; a row of a
// fired window is late.
func TestAttachedFiring(t *testing.T) {
	h := newAgg(t, attachedConfig(t, Spec{Kind: Hop, Size: 10 * sec, Slide: 5 * sec}))
	h.send(wr(0, 10*sec, "b", 1), wr(5*sec, 15*sec, "a", 2), wr(0, 10*sec, "a", 3), wr(0, 10*sec, "b", 4))
	h.watermark(9*sec + 998*ms)
	h.expect("WM 1970-01-01 00:00:09.998")
	h.send(wr(10*sec, 20*sec, "a", 5))
	h.watermark(15 * sec)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 3, 3]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 2, 5, 4]",
		"+I[a, 1970-01-01 00:00:05, 1970-01-01 00:00:15, 1970-01-01 00:00:14.999, 1, 2, 2]",
		"WM 1970-01-01 00:00:15",
	)
	h.send(wr(5*sec, 15*sec, "a", 100))
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows %d, want 1", n)
	}
	h.finish()
	h.expect("+I[a, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999, 1, 5, 5]")
}

// TestAttachedWindowsSharingAnEnd: windows are told apart by both bounds
// (sessions of different keys may share an end): they fire together, the
// earlier start first.
func TestAttachedWindowsSharingAnEnd(t *testing.T) {
	h := newAgg(t, attachedConfig(t, Spec{Kind: Session, Gap: 5 * sec}))
	h.send(wr(3*sec, 12*sec, "a", 1), wr(1*sec, 12*sec, "a", 2), wr(3*sec, 12*sec, "a", 3), wr(7*sec, 9*sec, "b", 4))
	h.watermark(exec.MaxWatermark)
	h.expect(
		"+I[b, 1970-01-01 00:00:07, 1970-01-01 00:00:09, 1970-01-01 00:00:08.999, 1, 4, 4]",
		"+I[a, 1970-01-01 00:00:01, 1970-01-01 00:00:12, 1970-01-01 00:00:11.999, 1, 2, 2]",
		"+I[a, 1970-01-01 00:00:03, 1970-01-01 00:00:12, 1970-01-01 00:00:11.999, 2, 4, 3]",
		"WM MAX",
	)
}

// TestAttachedCheckpoint: a restored operator keeps its open windows,
// fires no window twice, takes no row of a fired window, and drops the
// replays of the rows its checkpoint holds.
func TestAttachedCheckpoint(t *testing.T) {
	backend := state.NewMemory()
	build := aggBuilder(attachedConfig(t, Spec{Kind: Tumble, Size: 10 * sec}))
	h := newHarnessOn(t, backend, build)
	h.send(wr(0, 10*sec, "a", 1), wr(10*sec, 20*sec, "a", 2), wr(10*sec, 20*sec, "b", 3))
	h.watermark(10 * sec)
	h.expect("+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 1, 1]", "WM 1970-01-01 00:00:10")
	if keys := storeKeys(t, backend, "agg"); len(keys) != 0 {
		t.Fatalf("store keys before the first checkpoint %q", keys)
	}
	h2 := h.restart(backend, build)
	if keys := strings.Join(storeKeys(t, backend, "agg"), ""); keys != "mww" {
		t.Fatalf("store keys %q, want the meta record and the open window's two entries", keys)
	}
	h2.sendAt(0, 2, wr(10*sec, 20*sec, "a", 2)) // a replay
	h2.send(wr(0, 10*sec, "a", 100))            // late
	h2.send(wr(10*sec, 20*sec, "a", 4))
	h2.watermark(exec.MaxWatermark)
	h2.expect(
		"+I[a, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999, 2, 6, 4]",
		"+I[b, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999, 1, 3, 3]",
		"WM MAX",
	)
	if late, replays := h2.metrics.LateRows.Load(), h2.metrics.ReplayRows.Load(); late != 1 || replays != 1 {
		t.Fatalf("late rows %d and replays %d, want 1 and 1", late, replays)
	}
	h2.checkpoint()
	if keys := strings.Join(storeKeys(t, backend, "agg"), ""); keys != "m" {
		t.Fatalf("store keys after the end %q, want only the meta record", keys)
	}
	// State of an aggregate over a window TVF is not this operator's.
	op, err := NewAggregate(AggregateConfig{ID: "agg", Spec: Spec{Kind: Tumble, Size: 10 * sec}, TimeCol: 0, Keys: []int{2},
		Calls: attachedConfig(t, Spec{}).Calls, Next: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&exec.Context{State: backend}); err == nil || !strings.Contains(err.Error(), "another window") {
		t.Fatalf("got %v, want a refusal of the state of another window", err)
	}
}

func TestAttachedErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  AggregateConfig
		want string
	}{
		{AggregateConfig{ID: "x", Spec: Spec{Kind: Tumble, Size: sec}, TimeCol: -1, Attached: true, StartCol: -1, EndCol: 1}, "negative window bound column"},
		{AggregateConfig{ID: "x", Spec: Spec{Kind: Tumble, Size: sec}, TimeCol: 0, Attached: true, StartCol: 0, EndCol: 1}, "not assigned one by time column 0"},
		{AggregateConfig{ID: "x", Spec: Spec{Kind: Session, Gap: sec}, TimeCol: -1, Attached: true, StartCol: 0, EndCol: 1,
			Keys: []int{2}, PartitionKeys: []int{2}}, "take no partition keys"},
	} {
		c.cfg.Next = &recorder{}
		if _, err := NewAggregate(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	h := newAgg(t, attachedConfig(t, Spec{Kind: Tumble, Size: 10 * sec}))
	err := h.sendErr([]types.Value{types.NullValue, types.TimestampValue(10 * sec), types.StringValue("a"), types.BigIntValue(1)})
	if err == nil || !strings.Contains(err.Error(), "window_start (column 0) or window_end (column 1) is NULL") {
		t.Fatalf("got %v", err)
	}
}

// tumbleAttacher gives each row [t, user, v, page] the TUMBLE window of t
// as two more columns, keeping its origin: the rows a window TVF would
// give, for an attached aggregate.
type tumbleAttacher struct {
	spec Spec
	next exec.Operator
	out  *types.Batch
}

func (a *tumbleAttacher) Open(ctx *exec.Context) error { return a.next.Open(ctx) }
func (a *tumbleAttacher) Process(b *types.Batch) error {
	a.out.Reset()
	for _, r := range b.Rows {
		start := alignedStart(r.Vals[0].Int(), a.spec.Offset, a.spec.Size)
		vals := a.out.AddRow(r.Kind, r.Origin, 6)
		copy(vals, r.Vals)
		vals[4], vals[5] = types.TimestampValue(start), types.TimestampValue(start+a.spec.Size)
	}
	return a.next.Process(a.out)
}
func (a *tumbleAttacher) Watermark(wm int64) error { return a.next.Watermark(wm) }
func (a *tumbleAttacher) Finish() error            { return a.next.Finish() }
func (a *tumbleAttacher) Close() error             { return a.next.Close() }
func (a *tumbleAttacher) Checkpoint() error        { return a.next.(exec.Checkpointer).Checkpoint() }

// TestRandomAttachedAgainstTumble: a TUMBLE aggregate is the attached
// aggregate of the rows given their TUMBLE window, row for row, with the
// same late rows and replays, restored from checkpoints or not.
func TestRandomAttachedAgainstTumble(t *testing.T) {
	seeds, durableSeeds, rows := 20, 4, 400
	if raceEnabled || testing.Short() {
		seeds, durableSeeds, rows = 6, 2, 200
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		spec := randomSpec(rng, Tumble)
		events := genEvents(rng, rows, 10*sec, 0, 20*sec)
		want, wantLate, wantReplay := runOnce(t, aggBuilder(AggregateConfig{ID: "rand", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)}), events)
		attached := func(next exec.Operator) (exec.Operator, error) {
			op, err := NewAggregate(AggregateConfig{ID: "rand", Spec: spec, TimeCol: -1, Attached: true, StartCol: 4, EndCol: 5,
				Keys: []int{1}, Calls: countSumMax(t), Next: next})
			return &tumbleAttacher{spec: spec, next: op, out: types.NewBatch(16, 6)}, err
		}
		for _, durable := range []bool{false, true} {
			if durable && seed >= durableSeeds {
				continue
			}
			t.Run(fmt.Sprintf("%s/durable=%v/%d", spec, durable, seed), func(t *testing.T) {
				got, late, replay := runWithRestarts(t, rng, attached, durable, events)
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
