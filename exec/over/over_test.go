package over

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
)

// The input of the golden tests. Times are in seconds past midnight of
// 1970-01-01; the watermark releases rows in time order, rows at the same
// time are peers, and a row at the watermark is late.
func goldenInput(h *harness) {
	s := func(sec int64) int64 { return sec * 1000 }
	h.feed(row{"a", s(1), val(1), 1}, row{"a", s(3), val(2), 2}, row{"a", s(3), val(3), 3},
		row{"b", s(2), val(10), 4}, row{"a", s(2), val(4), 5}, row{"a", s(9), nil, 6})
	h.watermark(s(3))
	h.feed(row{"a", s(3), val(100), 7}, // late: at the watermark
		row{"a", s(6), val(5), 8})
	h.watermark(s(10))
}

// Columns: p, ts, v, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v).
func TestGoldenRange(t *testing.T) {
	h := newHarness(t, false, 2_000_000, false) // RANGE BETWEEN INTERVAL '2' SECOND PRECEDING
	goldenInput(h)
	want := []string{
		// watermark 3 s: partition a (due at 1 s), then b (due at 2 s)
		"+I[a, 1970-01-01 00:00:01.000, 1, 1, 1, 1, 1, 1, 1]",
		"+I[a, 1970-01-01 00:00:02.000, 4, 2, 2, 5, 1, 4, 2]",
		// peers at 3 s: both see [1 s, 3 s], each other included
		"+I[a, 1970-01-01 00:00:03.000, 2, 4, 4, 10, 1, 4, 2]",
		"+I[a, 1970-01-01 00:00:03.000, 3, 4, 4, 10, 1, 4, 2]",
		"+I[b, 1970-01-01 00:00:02.000, 10, 1, 1, 10, 10, 10, 10]",
		// watermark 10 s: 6 s sees [4 s, 6 s]; 9 s sees itself (v NULL) only
		"+I[a, 1970-01-01 00:00:06.000, 5, 1, 1, 5, 5, 5, 5]",
		"+I[a, 1970-01-01 00:00:09.000, NULL, 1, 0, NULL, NULL, NULL, NULL]",
	}
	if got := h.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows: %d, want 1", n)
	}
	if got := h.out.wms; len(got) != 2 || got[0] != 3_000_000 || got[1] != 10_000_000 {
		t.Fatalf("watermarks sent on: %v", got)
	}
	// The frame of a expires after 9 + 2 s; b's after 2 + 2 s: both dropped.
	h.watermark(11_001)
	if len(h.op.parts) != 0 {
		t.Fatalf("%d partitions kept after their frames expired", len(h.op.parts))
	}
}

func TestGoldenRows(t *testing.T) {
	h := newHarness(t, true, 1, false) // ROWS BETWEEN 1 PRECEDING AND CURRENT ROW
	goldenInput(h)
	want := []string{
		"+I[a, 1970-01-01 00:00:01.000, 1, 1, 1, 1, 1, 1, 1]",
		"+I[a, 1970-01-01 00:00:02.000, 4, 2, 2, 5, 1, 4, 2]",
		// peers count as rows, in arrival order
		"+I[a, 1970-01-01 00:00:03.000, 2, 2, 2, 6, 2, 4, 3]",
		"+I[a, 1970-01-01 00:00:03.000, 3, 2, 2, 5, 2, 3, 2]",
		"+I[b, 1970-01-01 00:00:02.000, 10, 1, 1, 10, 10, 10, 10]",
		"+I[a, 1970-01-01 00:00:06.000, 5, 2, 2, 8, 3, 5, 4]",
		"+I[a, 1970-01-01 00:00:09.000, NULL, 2, 1, 5, 5, 5, 5]",
	}
	if got := h.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// ROWS keeps the last row of each partition.
	if len(h.op.parts) != 2 {
		t.Fatalf("partitions: %d, want 2", len(h.op.parts))
	}
	for _, p := range h.op.parts {
		if p.frame.len() != 1 {
			t.Fatalf("partition %q keeps %d rows, want 1", p.key, p.frame.len())
		}
	}
}

func TestGoldenUnbounded(t *testing.T) {
	for _, rows := range []bool{false, true} {
		h := newHarness(t, rows, Unbounded, false)
		goldenInput(h)
		want := []string{
			"+I[a, 1970-01-01 00:00:01.000, 1, 1, 1, 1, 1, 1, 1]",
			"+I[a, 1970-01-01 00:00:02.000, 4, 2, 2, 5, 1, 4, 2]",
			"+I[a, 1970-01-01 00:00:03.000, 2, 4, 4, 10, 1, 4, 2]",
			"+I[a, 1970-01-01 00:00:03.000, 3, 4, 4, 10, 1, 4, 2]",
			"+I[b, 1970-01-01 00:00:02.000, 10, 1, 1, 10, 10, 10, 10]",
			"+I[a, 1970-01-01 00:00:06.000, 5, 5, 5, 15, 1, 5, 3]",
			"+I[a, 1970-01-01 00:00:09.000, NULL, 6, 5, 15, 1, 5, 3]",
		}
		if rows { // the first peer does not see the second
			want[2] = "+I[a, 1970-01-01 00:00:03.000, 2, 3, 3, 7, 1, 4, 2]"
		}
		if got := h.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("rows=%v: got\n%s\nwant\n%s", rows, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestProcTime: rows are emitted as they arrive, over the rows before them.
func TestProcTime(t *testing.T) {
	h := newHarness(t, false, 2_000_000, true)
	h.feed(row{"a", 1000, val(1), 1}, row{"a", 2000, val(2), 2})
	if got := h.take(); len(got) != 2 || got[1] != "+I[a, 1970-01-01 00:00:02.000, 2, 2, 2, 3, 1, 2, 1]" {
		t.Fatalf("got %q", got)
	}
	h.feed(row{"a", 4500, val(3), 3})
	if got := h.take(); len(got) != 1 || got[0] != "+I[a, 1970-01-01 00:00:04.500, 3, 1, 1, 3, 3, 3, 3]" {
		t.Fatalf("got %q", got)
	}
	h.watermark(7000)
	if len(h.op.parts) != 0 {
		t.Fatal("the expired partition is kept")
	}
}

// TestStopKeepsPending: a stop (Finish while stopping) emits nothing; the
// next run restores the pending rows and emits them.
func TestStopKeepsPending(t *testing.T) {
	h := newHarness(t, true, 2, false)
	h.feed(row{"a", 1000, val(1), 1}, row{"a", 2000, val(2), 2})
	h.watermark(1000)
	if got := h.take(); len(got) != 1 {
		t.Fatalf("got %q", got)
	}
	h.op.stopped = func() bool { return true }
	if err := h.op.Finish(); err != nil {
		t.Fatal(err)
	}
	if got := h.take(); len(got) != 0 {
		t.Fatalf("a stop emitted %q", got)
	}
	h.checkpoint()
	h.open()
	h.feed(row{"a", 1000, val(50), 3}) // late: the watermark was restored
	h.feed(row{"a", 2000, val(2), 2})  // a replay
	h.watermark(exec.MaxWatermark)
	want := "+I[a, 1970-01-01 00:00:02.000, 2, 2, 2, 3, 1, 2, 1]"
	if got := h.take(); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if h.metrics.LateRows.Load() != 1 || h.metrics.ReplayRows.Load() != 1 {
		t.Fatalf("late %d, replays %d", h.metrics.LateRows.Load(), h.metrics.ReplayRows.Load())
	}
}

// TestRunAgainAfterEnd: a job that ended (MaxWatermark) and runs again
// over a grown input goes on from its frames; rows up to the newest time
// it emitted are late.
func TestRunAgainAfterEnd(t *testing.T) {
	h := newHarness(t, false, 5_000_000, false) // RANGE 5 s
	h.durable()
	h.feed(row{"a", 1000, val(1), 1}, row{"a", 3000, val(2), 2})
	h.watermark(exec.MaxWatermark)
	if err := h.op.Finish(); err != nil {
		t.Fatal(err)
	}
	h.checkpoint()
	h.take()
	h.crash()
	h.feed(row{"a", 3000, val(50), 3}, // late: at the newest time emitted
		row{"a", 6000, val(4), 4}) // its frame [1 s, 6 s] reaches back into the first run
	h.watermark(exec.MaxWatermark)
	want := "+I[a, 1970-01-01 00:00:06.000, 4, 3, 3, 7, 1, 4, 2]"
	if got := h.take(); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Fatalf("late rows: %d, want 1", n)
	}
}
