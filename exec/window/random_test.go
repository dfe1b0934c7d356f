package window

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// The tests in this file drive window aggregates with random rows,
// watermarks and replays, and compare their output with a naive
// recomputation that keeps every row and evaluates each window directly.

type randRow struct {
	t      int64
	user   string
	page   string
	v      int64
	origin types.Origin
	wm     int64 // the watermark when the row arrived
	replay bool
}

type randEvent struct {
	rows []randRow // a batch, or nil for a watermark
	wm   int64
}

// genEvents returns a random sequence of batches and watermarks. Rows are at
// most disorder behind the newest time; each watermark is at most lag behind
// it (at least minLag), so rows can be late when lag > disorder.
func genEvents(rng *rand.Rand, n int, disorder, minLag, lag int64) []randEvent {
	var events []randEvent
	cur := (rng.Int64N(400) - 200) * sec
	wm := exec.MinWatermark
	offsets := [2]int64{}
	var sent []randRow
	for len(sent) < n {
		var batch []randRow
		for range 1 + rng.IntN(8) {
			if len(sent) > 0 && rng.IntN(20) == 0 {
				old := sent[rng.IntN(len(sent))]
				old.replay = true
				batch = append(batch, old)
				continue
			}
			part := rng.IntN(2)
			offsets[part]++
			row := randRow{
				t:      cur - rng.Int64N(disorder/ms+1)*ms,
				user:   fmt.Sprintf("u%d", rng.IntN(3)),
				page:   fmt.Sprintf("p%d", rng.IntN(3)),
				v:      rng.Int64N(101) - 50,
				origin: types.Origin{Part: int32(part), Offset: offsets[part]},
			}
			batch = append(batch, row)
			sent = append(sent, row)
			cur += rng.Int64N(1500) * ms
		}
		for i := range batch {
			batch[i].wm = wm
		}
		events = append(events, randEvent{rows: batch})
		if rng.IntN(3) == 0 {
			w := cur - minLag - rng.Int64N((lag-minLag)/ms+1)*ms
			if w > wm {
				wm = w
				events = append(events, randEvent{wm: wm})
			}
		}
	}
	return events
}

type winAcc struct {
	count, sum, max int64
}

func (a *winAcc) add(v int64) {
	if a.count == 0 || v > a.max {
		a.max = v
	}
	a.count++
	a.sum += v
}

type winKey struct {
	start, end int64
	key        string // printed key columns
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// naiveWindows lists the windows [start, end) of spec holding t.
func naiveWindows(spec Spec, t int64) [][2]int64 {
	var out [][2]int64
	switch spec.Kind {
	case Tumble:
		s := spec.Offset + floorDiv(t-spec.Offset, spec.Size)*spec.Size
		out = append(out, [2]int64{s, s + spec.Size})
	case Hop:
		for k := floorDiv(t-spec.Offset, spec.Slide); ; k-- {
			s := spec.Offset + k*spec.Slide
			if s+spec.Size <= t {
				break
			}
			out = append(out, [2]int64{s, s + spec.Size})
		}
	case Cumulate:
		s := spec.Offset + floorDiv(t-spec.Offset, spec.Size)*spec.Size
		for e := s + spec.Step; e <= s+spec.Size; e += spec.Step {
			if e > t {
				out = append(out, [2]int64{s, e})
			}
		}
	}
	return out
}

// admitted replays the offset bookkeeping: it returns the rows that are
// not replays.
func admitted(events []randEvent) []randRow {
	last := map[int32]int64{}
	var out []randRow
	for _, ev := range events {
		for _, r := range ev.rows {
			if off, ok := last[r.origin.Part]; ok && r.origin.Offset <= off {
				continue
			}
			last[r.origin.Part] = r.origin.Offset
			out = append(out, r)
		}
	}
	return out
}

// naiveSlicing computes the expected rows of a TUMBLE, HOP or CUMULATE
// aggregate keyed by user: a row counts in every window holding it that had
// not fired when the row arrived; a row counting nowhere is late.
func naiveSlicing(spec Spec, rows []randRow) (map[winKey]*winAcc, int) {
	out := map[winKey]*winAcc{}
	late := 0
	for _, r := range rows {
		counted := false
		for _, w := range naiveWindows(spec, r.t) {
			if w[1]-ms <= r.wm {
				continue
			}
			k := winKey{w[0], w[1], r.user}
			if out[k] == nil {
				out[k] = &winAcc{}
			}
			out[k].add(r.v)
			counted = true
		}
		if !counted {
			late++
		}
	}
	return out, late
}

// naiveSessions computes the expected rows of a SESSION aggregate: sessions
// per user, accumulators per (user, page) when byPage is set.
func naiveSessions(gap int64, rows []randRow, byPage bool) map[winKey]*winAcc {
	byUser := map[string][]randRow{}
	for _, r := range rows {
		byUser[r.user] = append(byUser[r.user], r)
	}
	out := map[winKey]*winAcc{}
	for user, rs := range byUser {
		slices.SortStableFunc(rs, func(a, b randRow) int { return cmp.Compare(a.t, b.t) })
		for i := 0; i < len(rs); {
			start, end := rs[i].t, rs[i].t+gap
			j := i + 1
			for j < len(rs) && rs[j].t <= end {
				end = max(end, rs[j].t+gap)
				j++
			}
			for _, r := range rs[i:j] {
				key := user
				if byPage {
					key += ", " + r.page
				}
				k := winKey{start, end, key}
				if out[k] == nil {
					out[k] = &winAcc{}
				}
				out[k].add(r.v)
			}
			i = j
		}
	}
	return out
}

func expectedRows(m map[winKey]*winAcc) []string {
	var out []string
	for k, a := range m {
		out = append(out, fmt.Sprintf("+I[%s, %s, %s, %s, %d, %d, %d]",
			k.key, fmtTS(k.start), fmtTS(k.end), fmtTS(k.end-ms), a.count, a.sum, a.max))
	}
	slices.Sort(out)
	return out
}

// runRandom drives an aggregate with events and checks its output against
// want, and that every window fired on the first watermark that reached
// its last instant, in (end, start, key) order.
func runRandom(t *testing.T, cfg AggregateConfig, events []randEvent, want []string, wantLate int) {
	t.Helper()
	h := newAgg(t, cfg)
	var sentWMs []int64
	for _, ev := range events {
		if ev.rows == nil {
			h.watermark(ev.wm)
			sentWMs = append(sentWMs, ev.wm)
			continue
		}
		b := types.NewBatch(len(ev.rows), 4)
		for _, r := range ev.rows {
			b.Append(types.Row{Kind: types.Insert, Origin: r.origin, Vals: r4(r.t, r.user, r.v, r.page)})
		}
		if err := h.op.Process(b); err != nil {
			t.Fatal(err)
		}
	}
	h.watermark(exec.MaxWatermark)
	sentWMs = append(sentWMs, exec.MaxWatermark)
	h.finish()

	nk := len(cfg.Keys)
	type fired struct {
		tag, end, start int64
		key             string
	}
	var prev *fired
	got := make([]string, 0, len(h.rec.rows))
	for i, row := range h.rec.rows {
		got = append(got, fmtRow(row))
		f := fired{tag: h.rec.tags[i], start: row.Vals[nk].Int(), end: row.Vals[nk+1].Int()}
		for _, v := range row.Vals[:nk] {
			f.key = string(types.AppendKey([]byte(f.key), v))
		}
		if f.end-ms > f.tag {
			t.Fatalf("%s fired early, at watermark %s", got[i], fmtWM(f.tag))
		}
		k, _ := slices.BinarySearch(sentWMs, f.tag)
		if k > 0 && f.end-ms <= sentWMs[k-1] {
			t.Fatalf("%s fired late, at watermark %s after %s", got[i], fmtWM(f.tag), fmtWM(sentWMs[k-1]))
		}
		if prev != nil && prev.tag == f.tag &&
			cmp.Or(cmp.Compare(prev.end, f.end), cmp.Compare(prev.start, f.start), strings.Compare(prev.key, f.key)) >= 0 {
			t.Fatalf("%s out of order", got[i])
		}
		prev = &f
	}
	slices.Sort(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d rows, want %d; first difference:\n%s", len(got), len(want), firstDiff(got, want))
	}
	if n := h.metrics.LateRows.Load(); n != int64(wantLate) {
		t.Fatalf("late rows %d, want %d", n, wantLate)
	}
	replays := 0
	for _, ev := range events {
		for _, r := range ev.rows {
			if r.replay {
				replays++
			}
		}
	}
	if n := h.metrics.ReplayRows.Load(); n != int64(replays) {
		t.Fatalf("replays %d, want %d", n, replays)
	}
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return "got  " + g + "\nwant " + w
		}
	}
	return ""
}

func randomSpec(rng *rand.Rand, kind Kind) Spec {
	s := Spec{Kind: kind}
	switch kind {
	case Tumble:
		s.Size = (1 + rng.Int64N(20)) * sec
		s.Offset = (rng.Int64N(2*s.Size/sec-1) - s.Size/sec + 1) * sec
	case Hop:
		s.Slide = (1 + rng.Int64N(5)) * sec
		s.Size = s.Slide * (1 + rng.Int64N(5))
		s.Offset = (rng.Int64N(21) - 10) * sec
	case Cumulate:
		s.Step = (1 + rng.Int64N(5)) * sec
		s.Size = s.Step * (1 + rng.Int64N(6))
		s.Offset = (rng.Int64N(21) - 10) * sec
	case Session:
		s.Gap = (1 + rng.Int64N(10)) * sec
	}
	return s
}

func TestRandomAgainstNaive(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 5
	}
	for _, kind := range []Kind{Tumble, Hop, Cumulate} {
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(kind)))
			spec := randomSpec(rng, kind)
			t.Run(fmt.Sprintf("%s/%d", spec, seed), func(t *testing.T) {
				// The watermark lags 0-20 s; rows are up to 10 s out of
				// order: some rows are late for some or all windows.
				events := genEvents(rng, 1500, 10*sec, 0, 20*sec)
				want, late := naiveSlicing(spec, admitted(events))
				cfg := AggregateConfig{ID: "rand", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)}
				runRandom(t, cfg, events, expectedRows(want), late)
			})
		}
	}
	for _, byPage := range []bool{false, true} {
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 99))
			spec := randomSpec(rng, Session)
			t.Run(fmt.Sprintf("%s/page=%v/%d", spec, byPage, seed), func(t *testing.T) {
				// The watermark stays 2 ms behind the oldest row that
				// can still come: no late rows, and a row never
				// reaches a session that fired, so a batch
				// computation over all rows is the reference.
				events := genEvents(rng, 1500, 10*sec, 10*sec+2*ms, 20*sec)
				want := naiveSessions(spec.Gap, admitted(events), byPage)
				cfg := AggregateConfig{ID: "rand", Spec: spec, TimeCol: 0, Keys: []int{1}, Calls: countSumMax(t)}
				if byPage {
					cfg.Keys, cfg.PartitionKeys = []int{1, 3}, []int{1}
				}
				runRandom(t, cfg, events, expectedRows(want), 0)
			})
		}
	}
}
