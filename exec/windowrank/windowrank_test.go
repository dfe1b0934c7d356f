package windowrank

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/rank"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/lsm"
	"github.com/sluicesql/sluice/types"
)

// cols are (k INT, v INT, s STRING, window_start, window_end).
var cols = []types.Type{types.Int, types.Int, types.String, types.Timestamp(3), types.Timestamp(3)}

const sec = 1_000_000

// windowGap is what a window's last instant is below its end (1 ms).
const windowGap = 1000

type collect struct {
	rows []string
	wms  []int64
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		c.rows = append(c.rows, r.Kind.String()+format(r.Vals))
	}
	return nil
}
func (c *collect) Watermark(wm int64) error { c.wms = append(c.wms, wm); return nil }
func (c *collect) Finish() error            { return nil }
func (c *collect) Close() error             { return nil }

func format(vals []types.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		t := types.BigInt
		if i < len(cols) {
			t = cols[i]
		}
		parts[i] = types.FormatValue(v, t)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func newOp(t testing.TB, typ rank.Type, n int, laterFirst bool, st state.Backend, m *exec.Metrics) (*Operator, *collect) {
	t.Helper()
	out := &collect{}
	o, err := New(Config{ID: "wr", Start: 3, End: 4, Partition: []int{0}, Type: typ, Limit: n, LaterFirst: laterFirst,
		Order: []rank.SortKey{{Col: 1, Desc: true}}, Types: cols, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{State: st, Metrics: m}); err != nil {
		t.Fatal(err)
	}
	return o, out
}

func addRow(b *types.Batch, off int64, k, v int64, s string, start, end int64) {
	vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: off}, 5)
	vals[0], vals[1], vals[2] = types.IntValue(types.KindInt, k), types.IntValue(types.KindInt, v), types.StringValue(s)
	vals[3], vals[4] = types.TimestampValue(start), types.TimestampValue(end)
}

// TestTies pins the output of ROW_NUMBER, RANK and DENSE_RANK (Top-3 by v
// descending) over the same rows, with ties at equal values, a late row
// and two windows.
func TestTies(t *testing.T) {
	input := []struct {
		k, v  int64
		s     string
		start int64
	}{
		{1, 5, "a", 0}, {1, 7, "b", 0}, {1, 5, "c", 0}, {2, 1, "x", 0}, {1, 7, "d", 0},
		{1, 3, "e", 0}, {1, 5, "f", 0}, {1, 9, "g", 10 * sec}, {2, 2, "y", 0},
	}
	want := map[rank.Type]string{
		rank.RowNumber: "+I[1, 7, b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[1, 7, d, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 5, a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 3] " +
			"+I[2, 2, y, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[2, 1, x, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 9, g, 1970-01-01 00:00:10.000, 1970-01-01 00:00:20.000, 1]",
		rank.Standard: "+I[1, 7, b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[1, 7, d, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[1, 5, a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 3] " +
			"+I[1, 5, c, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 3] " +
			"+I[1, 5, f, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 3] " +
			"+I[2, 2, y, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[2, 1, x, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 9, g, 1970-01-01 00:00:10.000, 1970-01-01 00:00:20.000, 1]",
		rank.Dense: "+I[1, 7, b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[1, 7, d, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[1, 5, a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 5, c, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 5, f, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 3, e, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 3] " +
			"+I[2, 2, y, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
			"+I[2, 1, x, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2] " +
			"+I[1, 9, g, 1970-01-01 00:00:10.000, 1970-01-01 00:00:20.000, 1]",
	}
	for _, typ := range []rank.Type{rank.RowNumber, rank.Standard, rank.Dense} {
		t.Run(typ.String(), func(t *testing.T) {
			m := &exec.Metrics{}
			o, out := newOp(t, typ, 3, false, nil, m)
			b := types.NewBatch(16, 5)
			for i, r := range input {
				addRow(b, int64(i+1), r.k, r.v, r.s, r.start, r.start+10*sec)
			}
			if err := o.Process(b); err != nil {
				t.Fatal(err)
			}
			// The first window fires at its last instant, 9.999 s.
			if err := o.Watermark(10*sec - 1001); err != nil {
				t.Fatal(err)
			}
			if len(out.rows) != 0 {
				t.Fatalf("fired early: %v", out.rows)
			}
			if err := o.Watermark(10*sec - 1000); err != nil {
				t.Fatal(err)
			}
			// Late: its window fired. A replay of offset 3: dropped too.
			b.Reset()
			addRow(b, 100, 1, 99, "late", 0, 10*sec)
			addRow(b, 3, 1, 98, "replay", 10*sec, 20*sec)
			if err := o.Process(b); err != nil {
				t.Fatal(err)
			}
			if err := o.Finish(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(out.rows, " "); got != want[typ] {
				t.Fatalf("got  %s\nwant %s", got, want[typ])
			}
			if m.LateRows.Load() != 1 || m.ReplayRows.Load() != 1 {
				t.Fatalf("late %d, replays %d; want 1 and 1", m.LateRows.Load(), m.ReplayRows.Load())
			}
			if len(o.wins) != 0 || o.live != 0 {
				t.Fatalf("state left after every window fired: %d windows, %d partitions", len(o.wins), o.live)
			}
		})
	}
}

// TestKeepLast: with LaterFirst, of rows that tie the last one wins (keep
// the last row of a deduplication by time descending); without, the first.
func TestKeepLast(t *testing.T) {
	for _, later := range []bool{false, true} {
		o, out := newOp(t, rank.RowNumber, 1, later, nil, nil)
		b := types.NewBatch(4, 5)
		addRow(b, 1, 1, 5, "first", 0, 10*sec)
		addRow(b, 2, 1, 5, "second", 0, 10*sec)
		addRow(b, 3, 1, 4, "lower", 0, 10*sec)
		if err := o.Process(b); err != nil {
			t.Fatal(err)
		}
		if err := o.Watermark(exec.MaxWatermark); err != nil {
			t.Fatal(err)
		}
		want := "+I[1, 5, first, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1]"
		if later {
			want = "+I[1, 5, second, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1]"
		}
		if got := strings.Join(out.rows, " "); got != want {
			t.Fatalf("later first %v: got %s, want %s", later, got, want)
		}
	}
}

// TestInsertOnly: an update or a delete fails the operator.
func TestInsertOnly(t *testing.T) {
	o, _ := newOp(t, rank.RowNumber, 1, false, nil, nil)
	b := types.NewBatch(1, 5)
	vals := b.AddRow(types.Delete, types.NoOrigin, 5)
	vals[3], vals[4] = types.TimestampValue(0), types.TimestampValue(sec)
	if err := o.Process(b); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("got %v, want an insert-only error", err)
	}
}

// event is one step of a random input: a row or a watermark.
type event struct {
	wm         int64 // a watermark if row is nil
	row        []types.Value
	off        int64
	start, end int64
}

// reference computes what a window Top-N must emit for events: windows
// fire when the watermark reaches their last instant, rows whose window
// fired are late, and each window's partitions are sorted (stably, in
// arrival order, or reversed with laterFirst), numbered and cut at n.
func reference(events []event, typ rank.Type, n int, laterFirst bool, order []rank.SortKey) []string {
	type wk struct{ start, end int64 }
	wins := map[wk]map[string][][]types.Value{}
	wm := exec.MinWatermark
	var out []string
	fire := func(upTo int64) {
		var keys []wk
		for k := range wins {
			if k.end-windowGap <= upTo {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(x, y wk) int {
			if x.end != y.end {
				return int(x.end - y.end)
			}
			return int(x.start - y.start)
		})
		for _, k := range keys {
			parts := wins[k]
			var pkeys []string
			for pk := range parts {
				pkeys = append(pkeys, pk)
			}
			slices.Sort(pkeys)
			for _, pk := range pkeys {
				rows := slices.Clone(parts[pk])
				if laterFirst {
					slices.Reverse(rows)
				}
				slices.SortStableFunc(rows, func(a, b []types.Value) int { return rank.Compare(order, a, b) })
				num := 0
				for i, r := range rows {
					switch {
					case typ == rank.RowNumber:
						num = i + 1
					case i > 0 && rank.Compare(order, r, rows[i-1]) == 0:
					case typ == rank.Standard:
						num = i + 1
					default:
						num++
					}
					if num > n {
						break
					}
					out = append(out, "+I"+format(append(slices.Clone(r), types.BigIntValue(int64(num)))))
				}
			}
			delete(wins, k)
		}
	}
	for _, e := range events {
		if e.row == nil {
			if e.wm > wm {
				wm = e.wm
				fire(wm)
			}
			continue
		}
		if e.end-windowGap <= wm {
			continue
		}
		k := wk{e.start, e.end}
		if wins[k] == nil {
			wins[k] = map[string][][]types.Value{}
		}
		pk := string(types.AppendKey(nil, e.row[0]))
		wins[k][pk] = append(wins[k][pk], e.row)
	}
	fire(exec.MaxWatermark)
	return out
}

// TestAgainstSorting feeds random rows of random (overlapping) windows and
// random watermarks into a window Top-N and compares its output, row for
// row, with sorting each window's rows. Half of the runs take a checkpoint
// midway, go on for a while (output that a crash would lose), and then
// restart from the checkpoint in a new operator, which is fed again from a
// point before the checkpoint: the rows it already holds are replays.
func TestAgainstSorting(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 11))
		typ := rank.Type(seed % 3)
		n := 1 + rng.IntN(3)
		laterFirst := seed%7 == 0
		restore := seed%2 == 1
		t.Run(fmt.Sprintf("seed%d-%s-n%d", seed, typ, n), func(t *testing.T) {
			var events []event
			var t0, off int64
			for range 400 {
				if rng.IntN(10) == 0 {
					events = append(events, event{wm: t0 - int64(rng.IntN(3))*sec})
					continue
				}
				t0 += int64(rng.IntN(300)) * 1000
				at := t0 - int64(rng.IntN(4))*sec // out of order, some late
				size := int64(2 * sec)
				if rng.IntN(3) == 0 {
					size = 3 * sec // another window spec, overlapping
				}
				start := at - ((at%size)+size)%size
				off++
				row := make([]types.Value, 5)
				row[0] = types.IntValue(types.KindInt, int64(rng.IntN(3)))
				if rng.IntN(8) > 0 {
					row[1] = types.IntValue(types.KindInt, int64(rng.IntN(5)))
				}
				row[2] = types.StringValue(fmt.Sprint(off))
				row[3], row[4] = types.TimestampValue(start), types.TimestampValue(start+size)
				events = append(events, event{row: row, off: off, start: start, end: start + size})
			}
			want := reference(events, typ, n, laterFirst, []rank.SortKey{{Col: 1, Desc: true}})

			var st state.Backend = state.NewMemory()
			dir := t.TempDir()
			if restore {
				st = openLSM(t, dir)
			}
			o, out := newOp(t, typ, n, laterFirst, st, nil)
			feed := func(o *Operator, from, to int) {
				for _, e := range events[from:to] {
					var err error
					if e.row == nil {
						err = o.Watermark(e.wm)
					} else {
						b := types.NewBatch(1, 5)
						vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: e.off}, 5)
						copy(vals, e.row)
						err = o.Process(b)
					}
					if err != nil {
						t.Fatal(err)
					}
					checkInvariants(t, o)
				}
			}
			var got []string
			if restore {
				// Incremental checkpoints, then a crash some time after
				// the last one.
				cps := []int{50 + rng.IntN(50), 100 + rng.IntN(50), 150 + rng.IntN(150)}
				from := 0
				for _, cp := range cps {
					feed(o, from, cp)
					from = cp
					if err := o.Checkpoint(); err != nil {
						t.Fatal(err)
					}
					if err := st.Commit("", map[string]int64{}); err != nil {
						t.Fatal(err)
					}
				}
				got = append(got, out.rows...)
				cp := cps[len(cps)-1]
				feed(o, cp, min(cp+50, len(events))) // lost in the crash
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				st = openLSM(t, dir)
				defer st.Close()
				o, out = newOp(t, typ, n, laterFirst, st, nil)
				feed(o, cp-30, len(events)) // replays before the checkpoint's position
			} else {
				feed(o, 0, len(events))
			}
			if err := o.Finish(); err != nil {
				t.Fatal(err)
			}
			got = append(got, out.rows...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("output differs from sorting per window:\n--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func openLSM(t testing.TB, dir string) *lsm.Backend {
	t.Helper()
	b, err := lsm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkInvariants checks the bookkeeping of o's partitions against their
// rows.
func checkInvariants(t *testing.T, o *Operator) {
	t.Helper()
	live := 0
	for k, w := range o.wins {
		for key, p := range w.parts {
			live++
			if p.key != key || p.win != k || len(p.vals) != p.n*o.width || p.n == 0 {
				t.Fatalf("partition %q of window %v: key %q, window %v, %d values for %d rows", key, k, p.key, p.win, len(p.vals), p.n)
			}
			if o.cfg.Type == rank.Dense && p.groups != o.groups(p, p.n) {
				t.Fatalf("partition %q: %d groups recorded, %d in its rows", key, p.groups, o.groups(p, p.n))
			}
		}
	}
	if live != o.live {
		t.Fatalf("%d partitions live, %d counted", live, o.live)
	}
}

// TestStopKeepsWindows: a Finish during a stop fires nothing; the open
// windows go into the checkpoint and fire in the run that restores it.
// A checkpoint then refuses to restore into another ranking.
func TestStopKeepsWindows(t *testing.T) {
	dir := t.TempDir()
	st := openLSM(t, dir)
	out := &collect{}
	o, err := New(Config{ID: "wr", Start: 3, End: 4, Partition: []int{0}, Limit: 2, Types: cols,
		Order: []rank.SortKey{{Col: 1, Desc: true}}, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	stopping := true
	if err := o.Open(&exec.Context{State: st, Stopping: func() bool { return stopping }}); err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(4, 5)
	addRow(b, 1, 1, 5, "a", 0, 10*sec)
	addRow(b, 2, 1, 6, "b", 0, 10*sec)
	addRow(b, 3, 1, 4, "c", 0, 10*sec)
	if err := o.Process(b); err != nil {
		t.Fatal(err)
	}
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := o.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 0 {
		t.Fatalf("a stop fired windows: %v", out.rows)
	}
	if err := st.Commit("", map[string]int64{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openLSM(t, dir)
	defer st.Close()

	o2, out2 := newOp(t, rank.RowNumber, 2, false, st, nil)
	b.Reset()
	addRow(b, 3, 1, 9, "replayed", 0, 10*sec)
	addRow(b, 4, 1, 7, "d", 0, 10*sec)
	if err := o2.Process(b); err != nil {
		t.Fatal(err)
	}
	if err := o2.Finish(); err != nil {
		t.Fatal(err)
	}
	want := "+I[1, 7, d, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 1] " +
		"+I[1, 6, b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, 2]"
	if got := strings.Join(out2.rows, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	other, err := New(Config{ID: "wr", Start: 3, End: 4, Partition: []int{0}, Limit: 3, Types: cols,
		Order: []rank.SortKey{{Col: 1, Desc: true}}, Next: &collect{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Open(&exec.Context{State: st}); err == nil || !strings.Contains(err.Error(), "another window Top-N") {
		t.Fatalf("got %v, want a refusal of another Top-N's state", err)
	}
}

// TestZone: window bounds of a TIMESTAMP_LTZ time attribute are
// wall-clock times in the session time zone, and the watermark is an
// instant: a window fires when the watermark reaches the instant of its
// last millisecond there, as in Flink. In Los Angeles (UTC-7 in April)
// the window [00:00, 01:00) ends at 08:00Z: a watermark at 07:30Z fires
// nothing, and a later row of that window is not late.
func TestZone(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	wall := func(s string) int64 {
		v, err := types.ParseTimestamp(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	m := &exec.Metrics{}
	out := &collect{}
	o, err := New(Config{ID: "wr", Start: 3, End: 4, Partition: []int{0}, Type: rank.RowNumber, Limit: 1,
		Order: []rank.SortKey{{Col: 1, Desc: true}}, Types: cols, Next: out, Zone: la})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	start, end := wall("2021-04-15 00:00:00"), wall("2021-04-15 01:00:00")
	b := types.NewBatch(1, 5)
	addRow(b, 1, 1, 5, "a", start, end)
	if err := o.Process(b); err != nil {
		t.Fatal(err)
	}
	if err := o.Watermark(wall("2021-04-15 07:30:00")); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 0 {
		t.Fatalf("emitted before the window's end in Los Angeles: %v", out.rows)
	}
	b.Reset()
	addRow(b, 2, 1, 7, "b", start, end)
	if err := o.Process(b); err != nil {
		t.Fatal(err)
	}
	if n := m.LateRows.Load(); n != 0 {
		t.Fatalf("%d late rows, want none", n)
	}
	if err := o.Watermark(wall("2021-04-15 07:59:59.999")); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 1 || !strings.Contains(out.rows[0], "b") {
		t.Fatalf("got %v, want the window's top row b at 07:59:59.999Z", out.rows)
	}
}
