package join

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/lsm"
	"github.com/sluicesql/sluice/types"
)

// windowed is (k INT, v STRING, ws BIGINT, we BIGINT): a row and its
// window's bounds (in µs; the operator reads them as integers whatever
// their type), the rows of both sides of the window join tests.
var windowed = []types.Type{types.Int, types.String, types.BigInt, types.BigInt}

// wcollect keeps what a window join emits, formatted.
type wcollect struct {
	collect
}

func (c *wcollect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		var vals []string
		for i, v := range r.Vals {
			vals = append(vals, types.FormatValue(v, windowed[i%4]))
		}
		c.rows = append(c.rows, r.Kind.String()+"["+strings.Join(vals, ", ")+"]")
	}
	return nil
}

func newWindowJoin(t *testing.T, kind Kind, residual func([]types.Value) (bool, error), ctx *exec.Context) (*Window, *wcollect) {
	t.Helper()
	return newWindowJoinMode(t, kind, residual, ctx, plainKeys)
}

func newWindowJoinMode(t *testing.T, kind Kind, residual func([]types.Value) (bool, error), ctx *exec.Context, m keyMode) (*Window, *wcollect) {
	t.Helper()
	out := &wcollect{}
	keys := []int{0}
	if m == nullAwareCorr {
		keys = []int{1, 0}
	}
	o, err := NewWindow(WindowConfig{Config: Config{ID: "wj", Kind: kind, LeftKeys: keys, RightKeys: keys,
		Left: windowed, Right: windowed, Residual: residual, NullSafe: m == nullSafeKeys, NullAware: m >= nullAwareKeys,
		Next: out}, LeftStart: 2, LeftEnd: 3, RightStart: 2, RightEnd: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return o, out
}

// win feeds one row to a side: key (NULL if < 0), payload, window start
// and end.
func win(t *testing.T, o *Window, side int, k int, v string, start, end, off int64) {
	t.Helper()
	b := types.NewBatch(1, 4)
	vals := b.AddRow(types.Insert, types.Origin{Part: int32(side), Offset: off}, 4)
	if k >= 0 {
		vals[0] = types.IntValue(types.KindInt, int64(k))
	}
	vals[1] = types.StringValue(v)
	vals[2] = types.IntValue(types.KindBigInt, start)
	vals[3] = types.IntValue(types.KindBigInt, end)
	if err := o.ProcessInput(side, b); err != nil {
		t.Fatal(err)
	}
}

// TestWindowJoinKinds pins the exact output of every kind of window join:
// nothing before the watermark passes a window's last instant, then the
// window's pairs (left rows in order, their matches in order), padded
// rows, and nothing for late rows.
func TestWindowJoinKinds(t *testing.T) {
	const (
		a1 = "1, a, 0, 10000"
		b2 = "2, b, 0, 10000"
		nl = "NULL, n, 0, 10000"
		c1 = "1, c, 10000, 20000"
		x1 = "1, x, 0, 10000"
		y1 = "1, y, 0, 10000"
		z3 = "3, z, 0, 10000"
		w4 = "4, w, 10000, 20000"
		pd = "NULL, NULL, NULL, NULL"
	)
	j := func(l, r string) string { return "+I[" + l + ", " + r + "]" }
	one := func(l string) string { return "+I[" + l + "]" }
	for _, tc := range []struct {
		kind  Kind
		first []string // at the first window's end
		rest  []string // at the end of input
	}{
		{Inner, []string{j(a1, x1), j(a1, y1)}, nil},
		{Left, []string{j(a1, x1), j(a1, y1), j(b2, pd), j(nl, pd)}, []string{j(c1, pd)}},
		{Right, []string{j(a1, x1), j(a1, y1), j(pd, z3)}, []string{j(pd, w4)}},
		{Full, []string{j(a1, x1), j(a1, y1), j(b2, pd), j(nl, pd), j(pd, z3)}, []string{j(c1, pd), j(pd, w4)}},
		{Semi, []string{one(a1)}, nil},
		{Anti, []string{one(b2), one(nl)}, []string{one(c1)}},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			m := &exec.Metrics{}
			o, out := newWindowJoin(t, tc.kind, nil, &exec.Context{Metrics: m})
			win(t, o, 0, 1, "a", 0, 10000, 1)
			win(t, o, 1, 1, "x", 0, 10000, 1)
			win(t, o, 0, 2, "b", 0, 10000, 2)
			win(t, o, 0, 1, "c", 10000, 20000, 3) // a later window: no match there
			win(t, o, 1, 3, "z", 0, 10000, 2)
			win(t, o, 0, -1, "n", 0, 10000, 4) // a NULL key matches nothing
			win(t, o, 1, 1, "y", 0, 10000, 3)
			win(t, o, 1, 4, "w", 10000, 20000, 4)
			if err := o.Watermark(8999); err != nil {
				t.Fatal(err)
			}
			if len(out.rows) != 0 {
				t.Fatalf("emitted before the window's end: %v", out.rows)
			}
			if err := o.Watermark(9000); err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Join(out.rows, " "), strings.Join(tc.first, " "); got != want {
				t.Fatalf("first window:\ngot  %s\nwant %s", got, want)
			}
			out.rows = nil
			win(t, o, 0, 1, "late", 0, 10000, 5)
			if n := m.LateRows.Load(); n != 1 {
				t.Fatalf("late rows: %d, want 1", n)
			}
			if err := o.Watermark(exec.MaxWatermark); err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Join(out.rows, " "), strings.Join(tc.rest, " "); got != want {
				t.Fatalf("second window:\ngot  %s\nwant %s", got, want)
			}
			if len(o.windows) != 0 {
				t.Fatalf("%d windows still held after the end", len(o.windows))
			}
		})
	}
}

// TestWindowJoinAgainstNestedLoops runs random sequences of rows (in
// random tumbling windows around the watermark, some late) and
// watermarks through every kind of window join, with and without a
// residual condition, and compares the output with nested loops per
// window over the rows that were not late. Half of the runs checkpoint
// midway, go on a little (output lost, as in a crash), then restore from
// the checkpoint and replay the input from before it: the replays must be
// dropped and the output must be the same.
func TestWindowJoinAgainstNestedLoops(t *testing.T) {
	for seed := range uint64(60) {
		windowJoinAgainstNestedLoops(t, seed, Kind(seed%6), plainKeys)
	}
}

// TestWindowJoinNullKeysAgainstNestedLoops does the same with the keys of
// INTERSECT and EXCEPT and those of NOT IN (see
// TestNullKeysAgainstNestedLoops).
func TestWindowJoinNullKeysAgainstNestedLoops(t *testing.T) {
	for seed := range uint64(12) {
		windowJoinAgainstNestedLoops(t, seed, Kind(seed%6), nullSafeKeys)
		windowJoinAgainstNestedLoops(t, seed, Anti, nullAwareKeys)
		windowJoinAgainstNestedLoops(t, seed, Anti, nullAwareCorr)
	}
}

func windowJoinAgainstNestedLoops(t *testing.T, seed uint64, kind Kind, mode keyMode) {
	const size = 10000
	{
		rng := rand.New(rand.NewPCG(seed, 13))
		var residual func([]types.Value) (bool, error)
		if seed%12 >= 6 {
			residual = func(r []types.Value) (bool, error) { return r[1].Str() <= r[5].Str(), nil }
		}
		t.Run(fmt.Sprintf("%s-%s-%d", mode, kind, seed), func(t *testing.T) {
			type row struct {
				k          int
				v          string
				start, end int64
				off        int64
			}
			type event struct {
				side int
				r    row
				wm   int64 // a watermark when side < 0
			}
			// The input.
			var events []event
			var off [2]int64
			wm := int64(0)
			for range 400 {
				if rng.IntN(8) == 0 {
					wm += int64(rng.IntN(size))
					events = append(events, event{side: -1, wm: wm})
					continue
				}
				s := rng.IntN(2)
				off[s]++
				// A window around the watermark: mostly open, sometimes
				// already fired.
				start := (wm/size + int64(rng.IntN(4)) - 1) * size
				r := row{k: rng.IntN(5) - 1, v: string(rune('a' + rng.IntN(4))), start: start, end: start + size, off: off[s]}
				events = append(events, event{side: s, r: r})
			}
			events = append(events, event{side: -1, wm: exec.MaxWatermark})

			// Nested loops per window over the rows that are not late.
			var kept [2][]row
			cur := exec.MinWatermark
			for _, e := range events {
				switch {
				case e.side < 0:
					cur = max(cur, e.wm)
				case e.r.end-1000 > cur:
					kept[e.side] = append(kept[e.side], e.r)
				}
			}
			str := func(r row) string {
				k := "NULL"
				if r.k >= 0 {
					k = fmt.Sprint(r.k)
				}
				return fmt.Sprintf("%s, %s, %d, %d", k, r.v, r.start, r.end)
			}
			want := map[string]int{}
			matched := [2]map[int]bool{{}, {}}
			for i, l := range kept[0] {
				for j, r := range kept[1] {
					if !mode.matches(l.k, l.v, r.k, r.v) || l.start != r.start || residual != nil && !(l.v <= r.v) {
						continue
					}
					matched[0][i], matched[1][j] = true, true
					if kind != Semi && kind != Anti {
						want["+I["+str(l)+", "+str(r)+"]"]++
					}
				}
			}
			for i, l := range kept[0] {
				switch {
				case kind == Semi && matched[0][i], kind == Anti && !matched[0][i]:
					want["+I["+str(l)+"]"]++
				case (kind == Left || kind == Full) && !matched[0][i]:
					want["+I["+str(l)+", NULL, NULL, NULL, NULL]"]++
				}
			}
			for j, r := range kept[1] {
				if (kind == Right || kind == Full) && !matched[1][j] {
					want["+I[NULL, NULL, NULL, NULL, "+str(r)+"]"]++
				}
			}

			// The operator.
			dir := t.TempDir()
			var st state.Backend
			st, err := lsm.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { st.Close() }()
			m := &exec.Metrics{}
			o, out := newWindowJoinMode(t, kind, residual, &exec.Context{State: st, Metrics: m}, mode)
			feed := func(o *Window, e event) {
				if e.side < 0 {
					if err := o.Watermark(e.wm); err != nil {
						t.Fatal(err)
					}
					return
				}
				win(t, o, e.side, e.r.k, e.r.v, e.r.start, e.r.end, e.r.off)
			}
			var got []string
			cp := len(events) / 2
			for i := 0; i < len(events); i++ {
				if i == cp && seed%2 == 0 {
					if err := o.Checkpoint(); err != nil {
						t.Fatal(err)
					}
					if err := st.Commit("", nil); err != nil {
						t.Fatal(err)
					}
					got = append(got, out.rows...)
					// Go on a little, then lose it all (a crash).
					for _, e := range events[i : i+20] {
						feed(o, e)
					}
					if err := st.Close(); err != nil {
						t.Fatal(err)
					}
					if st, err = lsm.Open(dir); err != nil {
						t.Fatal(err)
					}
					m = &exec.Metrics{}
					o, out = newWindowJoinMode(t, kind, residual, &exec.Context{State: st, Metrics: m}, mode)
					// Replay from before the checkpoint.
					for _, e := range events[i-30 : i] {
						feed(o, e)
					}
					if m.ReplayRows.Load() == 0 {
						t.Fatal("no replayed row dropped")
					}
				}
				feed(o, events[i])
			}
			got = append(got, out.rows...)
			have := map[string]int{}
			for _, r := range got {
				have[r]++
			}
			var diff []string
			for k, n := range want {
				if have[k] != n {
					diff = append(diff, fmt.Sprintf("%s: got %d, want %d", k, have[k], n))
				}
			}
			for k, n := range have {
				if _, ok := want[k]; !ok {
					diff = append(diff, fmt.Sprintf("%s: got %d, want 0", k, n))
				}
			}
			sort.Strings(diff)
			if len(diff) > 0 {
				t.Fatalf("output differs from nested loops per window:\n%s", strings.Join(diff, "\n"))
			}
			if len(o.windows) != 0 {
				t.Fatalf("%d windows still held after the end", len(o.windows))
			}
			// Fired windows leave nothing in the store.
			if err := o.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			left := 0
			if err := o.store.Scan([]byte("r"), func(k, v []byte) bool { left++; return true }); err != nil {
				t.Fatal(err)
			}
			if left != 0 {
				t.Fatalf("%d records of fired windows left in the store", left)
			}
		})
	}
}

// TestWindowJoinZone: the bounds of windows over a TIMESTAMP_LTZ time
// attribute are wall-clock times in the session time zone, and the
// watermark is an instant: a window fires when the watermark reaches the
// instant of its last millisecond there, as in Flink. In Los Angeles
// (UTC-7 in April) the window [00:00, 01:00) ends at 08:00Z, so a
// watermark at 07:30Z fires nothing and a row of that window is not late.
func TestWindowJoinZone(t *testing.T) {
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
	out := &wcollect{}
	o, err := NewWindow(WindowConfig{Config: Config{ID: "wj", Kind: Inner, LeftKeys: []int{0}, RightKeys: []int{0},
		Left: windowed, Right: windowed, Next: out}, LeftStart: 2, LeftEnd: 3, RightStart: 2, RightEnd: 3, Zone: la})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	start, end := wall("2021-04-15 00:00:00"), wall("2021-04-15 01:00:00")
	win(t, o, 0, 1, "a", start, end, 1)
	win(t, o, 1, 1, "x", start, end, 1)
	if err := o.Watermark(wall("2021-04-15 07:30:00")); err != nil { // an instant: 00:30 in Los Angeles
		t.Fatal(err)
	}
	if len(out.rows) != 0 {
		t.Fatalf("emitted before the window's end in Los Angeles: %v", out.rows)
	}
	win(t, o, 1, 1, "y", start, end, 2)
	if n := m.LateRows.Load(); n != 0 {
		t.Fatalf("%d late rows, want none", n)
	}
	if err := o.Watermark(wall("2021-04-15 07:59:59.999")); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 2 {
		t.Fatalf("got %v, want the window's two pairs at 07:59:59.999Z", out.rows)
	}
}
