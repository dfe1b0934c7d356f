package window

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// Rows of these tests: ts TIMESTAMP, key STRING, v BIGINT[, page STRING].
func r(at int64, key string, v int64) []types.Value {
	return []types.Value{types.TimestampValue(at), types.StringValue(key), types.BigIntValue(v)}
}

func r4(at int64, key string, v int64, page string) []types.Value {
	return append(r(at, key, v), types.StringValue(page))
}

// countSumMax is COUNT(*), SUM(v), MAX(v).
func countSumMax(t testing.TB) []agg.Call {
	return []agg.Call{
		call(t, "COUNT", nil),
		call(t, "SUM", []int{2}, types.BigInt),
		call(t, "MAX", []int{2}, types.BigInt),
	}
}

func keyedAgg(t testing.TB, spec Spec) *harness {
	return newAgg(t, AggregateConfig{ID: "agg", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)})
}

func TestTumbleFiringAndLateness(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Tumble, Size: 10 * sec})
	// Out of order within the watermark delay.
	h.send(r(1*sec, "a", 1), r(3*sec, "b", 2), r(2*sec, "a", 5))
	h.watermark(9*sec + 998*ms)
	h.expect("WM 1970-01-01 00:00:09.998")
	// The window's last instant is 9.999 s: it fires at that watermark.
	h.watermark(9*sec + 999*ms)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 2, 6, 5]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 2, 2]",
		"WM 1970-01-01 00:00:09.999",
	)
	// Late: its window fired. Dropped and counted.
	h.send(r(9*sec+500*ms, "a", 100))
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows %d, want 1", n)
	}
	h.send(r(10*sec+500*ms, "a", 7))
	// Finish without MaxWatermark still fires the open windows.
	h.finish()
	h.expect("+I[a, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999, 1, 7, 7]")
}

func TestHopLateRowCountsInUnfiredWindows(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Hop, Size: 10 * sec, Slide: 5 * sec})
	h.send(r(1*sec, "a", 1))
	h.watermark(4*sec + 999*ms)
	h.expect(
		"+I[a, 1969-12-31 23:59:55, 1970-01-01 00:00:05, 1970-01-01 00:00:04.999, 1, 1, 1]",
		"WM 1970-01-01 00:00:04.999",
	)
	// Late for [-5 s, 5 s), which fired, but not for [0 s, 10 s).
	h.send(r(2*sec, "a", 10), r(2*sec, "b", 100))
	h.watermark(20 * sec)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 2, 11, 10]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 100, 100]",
		"WM 1970-01-01 00:00:20",
	)
	// Every window of its slice fired: late.
	h.send(r(3*sec, "a", 1000))
	h.watermark(exec.MaxWatermark)
	h.expect("WM MAX")
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows %d, want 1", n)
	}
	h.finish()
}

func TestCumulateLateRowCountsInUnfiredWindows(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Cumulate, Size: 10 * sec, Step: 2 * sec})
	h.send(r(1*sec, "a", 1))
	h.watermark(3*sec + 999*ms)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:02, 1970-01-01 00:00:01.999, 1, 1, 1]",
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:04, 1970-01-01 00:00:03.999, 1, 1, 1]",
		"WM 1970-01-01 00:00:03.999",
	)
	// The [0 s, 2 s) slice fired; the rows still count in the windows
	// that end later.
	h.send(r(1500*ms, "a", 10), r(1*sec, "b", 5))
	h.watermark(exec.MaxWatermark)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:06, 1970-01-01 00:00:05.999, 2, 11, 10]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:06, 1970-01-01 00:00:05.999, 1, 5, 5]",
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:08, 1970-01-01 00:00:07.999, 2, 11, 10]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:08, 1970-01-01 00:00:07.999, 1, 5, 5]",
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 2, 11, 10]",
		"+I[b, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 5, 5]",
		"WM MAX",
	)
	h.send(r(500*ms, "a", 1))
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows %d, want 1", n)
	}
	h.finish()
	h.expect()
}

func TestSessionLateness(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Session, Gap: 5 * sec})
	h.send(r(10*sec, "a", 1))
	h.watermark(14*sec + 999*ms)
	h.expect(
		"+I[a, 1970-01-01 00:00:10, 1970-01-01 00:00:15, 1970-01-01 00:00:14.999, 1, 1, 1]",
		"WM 1970-01-01 00:00:14.999",
	)
	// Its own session [9 s, 14 s) would have fired: late.
	h.send(r(9*sec, "a", 2))
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows %d, want 1", n)
	}
	h.send(r(20*sec, "a", 3))
	h.watermark(22 * sec)
	// [16 s, 21 s) alone would have fired, but it joins the live session
	// [20 s, 25 s), which has not: kept, as in Flink.
	h.send(r(16*sec, "a", 4))
	// A session of another key whose window fired is late.
	h.send(r(16*sec, "b", 5))
	if n := h.metrics.LateRows.Load(); n != 2 {
		t.Fatalf("late rows %d, want 2", n)
	}
	h.watermark(exec.MaxWatermark)
	h.expect(
		"WM 1970-01-01 00:00:22",
		"+I[a, 1970-01-01 00:00:16, 1970-01-01 00:00:25, 1970-01-01 00:00:24.999, 2, 7, 4]",
		"WM MAX",
	)
	h.finish()
}

func TestNegativeTimestamps(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Tumble, Size: 10 * sec})
	h.send(r(-1*sec, "a", 1), r(-10*sec, "a", 2), r(-11*sec, "a", 4), r(-10*sec-1*ms, "a", 8), r(0, "a", 16))
	h.watermark(-10*sec - 1*ms)
	h.expect(
		"+I[a, 1969-12-31 23:59:40, 1969-12-31 23:59:50, 1969-12-31 23:59:49.999, 2, 12, 8]",
		"WM 1969-12-31 23:59:49.999",
	)
	h.watermark(exec.MaxWatermark)
	h.expect(
		"+I[a, 1969-12-31 23:59:50, 1970-01-01 00:00, 1969-12-31 23:59:59.999, 2, 3, 2]",
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 1, 16, 16]",
		"WM MAX",
	)
	h.finish()
}

func TestTumbleOffset(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Tumble, Size: 10 * sec, Offset: -3 * sec})
	h.send(r(-4*sec, "a", 1), r(-3*sec, "a", 2), r(6*sec, "a", 4), r(7*sec, "a", 8))
	h.watermark(exec.MaxWatermark)
	h.expect(
		"+I[a, 1969-12-31 23:59:47, 1969-12-31 23:59:57, 1969-12-31 23:59:56.999, 1, 1, 1]",
		"+I[a, 1969-12-31 23:59:57, 1970-01-01 00:00:07, 1970-01-01 00:00:06.999, 2, 6, 4]",
		"+I[a, 1970-01-01 00:00:07, 1970-01-01 00:00:17, 1970-01-01 00:00:16.999, 1, 8, 8]",
		"WM MAX",
	)
	h.finish()
}

func TestMaxWatermarkFiresInOrder(t *testing.T) {
	for _, spec := range []Spec{
		{Kind: Tumble, Size: 10 * sec},
		{Kind: Hop, Size: 10 * sec, Slide: 5 * sec},
	} {
		t.Run(spec.String(), func(t *testing.T) {
			h := keyedAgg(t, spec)
			h.send(r(25*sec, "c", 1), r(1*sec, "b", 1), r(12*sec, "a", 1), r(2*sec, "c", 1), r(11*sec, "b", 1), r(3*sec, "a", 1))
			h.watermark(exec.MaxWatermark)
			var got []string
			for _, e := range rowsOnly(h.take()) {
				f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(e, "+I["), "]"), ", ")
				got = append(got, f[2]+" "+f[0])
			}
			want := map[Kind]string{
				Tumble: "1970-01-01 00:00:10 a|1970-01-01 00:00:10 b|1970-01-01 00:00:10 c|" +
					"1970-01-01 00:00:20 a|1970-01-01 00:00:20 b|1970-01-01 00:00:30 c",
				Hop: "1970-01-01 00:00:05 a|1970-01-01 00:00:05 b|1970-01-01 00:00:05 c|" +
					"1970-01-01 00:00:10 a|1970-01-01 00:00:10 b|1970-01-01 00:00:10 c|" +
					"1970-01-01 00:00:15 a|1970-01-01 00:00:15 b|" +
					"1970-01-01 00:00:20 a|1970-01-01 00:00:20 b|" +
					"1970-01-01 00:00:30 c|1970-01-01 00:00:35 c",
			}[spec.Kind]
			if g := strings.Join(got, "|"); g != want {
				t.Fatalf("got  %s\nwant %s", g, want)
			}
			h.finish()
		})
	}
}

func TestSessionMergesThreeSessions(t *testing.T) {
	for _, tt := range []struct {
		name string
		keys []int
		part []int
		want []string
	}{{
		name: "accumulators per full key",
		keys: []int{1, 3},
		part: []int{1},
		want: []string{
			"+I[u, p1, 1970-01-01 00:00, 1970-01-01 00:00:40, 1970-01-01 00:00:39.999, 2, 11, 10]",
			"+I[u, p2, 1970-01-01 00:00, 1970-01-01 00:00:40, 1970-01-01 00:00:39.999, 1, 2, 2]",
			"+I[u, p3, 1970-01-01 00:00, 1970-01-01 00:00:40, 1970-01-01 00:00:39.999, 2, 24, 20]",
			"+I[v, p1, 1970-01-01 00:00:08, 1970-01-01 00:00:18, 1970-01-01 00:00:17.999, 1, 100, 100]",
		},
	}, {
		name: "sessions per full key",
		keys: []int{1},
		want: []string{
			"+I[u, 1970-01-01 00:00, 1970-01-01 00:00:40, 1970-01-01 00:00:39.999, 5, 37, 20]",
			"+I[v, 1970-01-01 00:00:08, 1970-01-01 00:00:18, 1970-01-01 00:00:17.999, 1, 100, 100]",
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			h := newAgg(t, AggregateConfig{ID: "s", Spec: Spec{Kind: Session, Gap: 10 * sec},
				TimeCol: 0, Keys: tt.keys, PartitionKeys: tt.part, Calls: countSumMax(t)})
			// Three sessions of u: [0 s, 10 s), [15 s, 25 s), [30 s, 40 s).
			h.send(r4(0, "u", 1, "p1"), r4(15*sec, "u", 2, "p2"), r4(30*sec, "u", 4, "p3"), r4(8*sec, "v", 100, "p1"))
			// [8 s, 18 s) bridges the first two, [22 s, 32 s) the
			// result and the third.
			h.send(r4(8*sec, "u", 10, "p1"))
			h.send(r4(22*sec, "u", 20, "p3"))
			h.watermark(exec.MaxWatermark)
			h.finish()
			got := rowsOnly(h.take())
			// v's session ends first.
			want := append([]string{tt.want[len(tt.want)-1]}, tt.want[:len(tt.want)-1]...)
			if joinLines(got) != joinLines(want) {
				t.Fatalf("got:\n\t%s\nwant:\n\t%s", joinLines(got), joinLines(want))
			}
		})
	}
}

func TestReplaysDropped(t *testing.T) {
	h := keyedAgg(t, Spec{Kind: Tumble, Size: 10 * sec})
	h.sendAt(0, 1, r(1*sec, "a", 1))
	h.sendAt(0, 2, r(2*sec, "a", 2))
	h.sendAt(0, 2, r(2*sec, "a", 2)) // replayed
	h.sendAt(0, 1, r(1*sec, "a", 1)) // replayed
	h.sendAt(1, 1, r(3*sec, "a", 4)) // another partition
	h.sendAt(-1, 0, r(4*sec, "a", 8))
	h.sendAt(-1, 0, r(4*sec, "a", 8)) // no origin: never a replay
	h.watermark(exec.MaxWatermark)
	h.expect(
		"+I[a, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999, 5, 23, 8]",
		"WM MAX",
	)
	if n := h.metrics.ReplayRows.Load(); n != 2 {
		t.Fatalf("replays %d, want 2", n)
	}
	h.finish()
}

func TestAggregateInputErrors(t *testing.T) {
	for _, spec := range []Spec{{Kind: Tumble, Size: sec}, {Kind: Session, Gap: sec}} {
		h := keyedAgg(t, spec)
		b := types.NewBatch(1, 3)
		b.Append(types.Row{Kind: types.Delete, Origin: types.NoOrigin, Vals: r(0, "a", 1)})
		err := h.op.Process(b)
		if err == nil || !strings.Contains(err.Error(), `window aggregate "agg"`) || !strings.Contains(err.Error(), "-D") {
			t.Errorf("%s: retraction: got %v", spec, err)
		}
		err = h.sendErr([]types.Value{{}, types.StringValue("a"), types.BigIntValue(1)})
		if err == nil || !strings.Contains(err.Error(), "NULL time attribute") {
			t.Errorf("%s: NULL time: got %v", spec, err)
		}
		err = h.sendErr([]types.Value{types.TimestampValue(0), types.StringValue("a")})
		if err == nil || !strings.Contains(err.Error(), "cannot read column 2 of a row of 2 columns") {
			t.Errorf("%s: narrow row: got %v", spec, err)
		}
	}
}

func TestNewAggregateErrors(t *testing.T) {
	calls := countSumMax(t)
	next := &recorder{}
	for _, tt := range []struct {
		cfg AggregateConfig
		err string
	}{
		{AggregateConfig{ID: "x", Spec: Spec{Kind: Tumble}, Next: next}, `cannot build window aggregate "x": invalid TUMBLE`},
		{AggregateConfig{ID: "x", Spec: Spec{Kind: Tumble, Size: sec}}, "no downstream operator"},
		{AggregateConfig{Spec: Spec{Kind: Tumble, Size: sec}, TimeCol: -1, Next: next}, "negative time column"},
		{AggregateConfig{Spec: Spec{Kind: Tumble, Size: sec}, Keys: []int{-2}, Next: next}, "negative key column"},
		{AggregateConfig{Spec: Spec{Kind: Tumble, Size: sec}, Calls: []agg.Call{{}}, Next: next}, "call 0 has no function"},
		{AggregateConfig{Spec: Spec{Kind: Tumble, Size: sec}, Keys: []int{1}, PartitionKeys: []int{1}, Next: next, Calls: calls},
			"TUMBLE windows take no partition keys"},
		{AggregateConfig{Spec: Spec{Kind: Session, Gap: sec}, Keys: []int{1}, PartitionKeys: []int{3}, Next: next, Calls: calls},
			"partition column 3 is not a grouping key"},
	} {
		_, err := NewAggregate(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("got %v, want %q", err, tt.err)
		}
	}
}

func TestNoKeys(t *testing.T) {
	h := newAgg(t, AggregateConfig{ID: "g", Spec: Spec{Kind: Cumulate, Size: 4 * sec, Step: 2 * sec},
		TimeCol: 0, Calls: countSumMax(t)})
	h.send(r(1*sec, "a", 1), r(3*sec, "b", 2), r(5*sec, "c", 4))
	h.finish()
	h.expect(
		"+I[1970-01-01 00:00, 1970-01-01 00:00:02, 1970-01-01 00:00:01.999, 1, 1, 1]",
		"+I[1970-01-01 00:00, 1970-01-01 00:00:04, 1970-01-01 00:00:03.999, 2, 3, 2]",
		"+I[1970-01-01 00:00:04, 1970-01-01 00:00:06, 1970-01-01 00:00:05.999, 1, 4, 4]",
		"+I[1970-01-01 00:00:04, 1970-01-01 00:00:08, 1970-01-01 00:00:07.999, 1, 4, 4]",
	)
}
