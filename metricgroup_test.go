package sluice_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// mgEvent is an event of the metric group tests.
type mgEvent struct {
	k  string
	t  int64 // seconds
	v  int64
	s  string
	ts string
}

// mgModel computes, naively from the list of a key's events, the value
// a metric of the documented semantics has after each event (see
// exec/metricgroup): a reference for the operator.
type mgModel struct {
	events map[string][]mgEvent
	clock  map[string]int64
	// session state per key: start, end and the events since the reset.
	sess map[string]*mgSession
}

type mgSession struct {
	has        bool
	start, end int64
	in         []mgEvent
}

func newMGModel() *mgModel {
	return &mgModel{events: map[string][]mgEvent{}, clock: map[string]int64{}, sess: map[string]*mgSession{}}
}

// add folds e in, and returns the metrics' values after it, as printed.
func (m *mgModel) add(e mgEvent, gap int64) []string {
	evs := append(m.events[e.k], e)
	m.events[e.k] = evs
	clock, ok := m.clock[e.k]
	if !ok || e.t > clock {
		clock = e.t
	}
	m.clock[e.k] = clock
	s := m.sess[e.k]
	if s == nil {
		s = &mgSession{}
		m.sess[e.k] = s
	}
	switch {
	case !s.has || e.t >= s.end+gap:
		s.has, s.start, s.end, s.in = true, e.t, e.t, []mgEvent{e}
	case e.t <= s.start-gap:
	default:
		s.start, s.end, s.in = min(s.start, e.t), max(s.end, e.t), append(s.in, e)
	}
	floor := func(a, b int64) int64 {
		q := a / b
		if a%b != 0 && a < 0 {
			q--
		}
		return q
	}
	var tumble, hop, last []mgEvent
	for _, x := range evs {
		if floor(x.t, 60) == floor(clock, 60) {
			tumble = append(tumble, x)
		}
		if floor(x.t, 10) > floor(clock, 10)-3 {
			hop = append(hop, x)
		}
		if x.t >= clock-30 {
			last = append(last, x)
		}
	}
	count := func(xs []mgEvent) string { return fmt.Sprint(len(xs)) }
	sum := func(xs []mgEvent) string {
		if len(xs) == 0 {
			return "NULL"
		}
		n := int64(0)
		for _, x := range xs {
			n += x.v
		}
		return fmt.Sprint(n)
	}
	maxv := func(xs []mgEvent) string {
		if len(xs) == 0 {
			return "NULL"
		}
		n := xs[0].v
		for _, x := range xs {
			n = max(n, x.v)
		}
		return fmt.Sprint(n)
	}
	distinct := func(xs []mgEvent) string {
		seen := map[string]bool{}
		for _, x := range xs {
			seen[x.s] = true
		}
		return fmt.Sprint(len(seen))
	}
	big := func(xs []mgEvent) string {
		n := 0
		for _, x := range xs {
			if x.v > 50 {
				n++
			}
		}
		return fmt.Sprint(n)
	}
	return []string{count(evs), sum(evs), count(tumble), distinct(tumble), sum(hop), maxv(hop),
		count(s.in), sum(s.in), count(last), maxv(last), big(last)}
}

const mgGroup = `
CREATE TABLE events (k STRING, ts TIMESTAMP(3), v BIGINT, s STRING, WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE)
WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
CREATE METRIC GROUP m ON events KEY BY (k) (
  METRIC n_all AS COUNT(*),
  METRIC sum_all AS SUM(v),
  METRIC n_1m AS COUNT(*) WINDOW TUMBLE(INTERVAL '1' MINUTE),
  METRIC s_1m AS COUNT(DISTINCT s) WINDOW TUMBLE(INTERVAL '1' MINUTE),
  METRIC sum_hop AS SUM(v) WINDOW HOP(INTERVAL '10' SECOND, INTERVAL '30' SECOND),
  METRIC max_hop AS MAX(v) WINDOW HOP(INTERVAL '10' SECOND, INTERVAL '30' SECOND),
  METRIC n_sess AS COUNT(*) WINDOW SESSION(INTERVAL '20' SECOND),
  METRIC sum_sess AS SUM(v) WINDOW SESSION(INTERVAL '20' SECOND),
  METRIC n_30s AS COUNT(*) WINDOW LAST(INTERVAL '30' SECOND),
  METRIC max_30s AS MAX(v) WINDOW LAST(INTERVAL '30' SECOND),
  METRIC big_30s AS COUNT(*) FILTER (WHERE v > 50) WINDOW LAST(INTERVAL '30' SECOND)
);
`

// mgEvents returns n random events over keys, times mostly rising with
// some out of order (some late for a window), and the JSON lines.
func mgEvents(seed uint64, n, keys int) ([]mgEvent, string) {
	r := rand.New(rand.NewPCG(seed, 1))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var evs []mgEvent
	var b strings.Builder
	t := int64(0)
	for range n {
		t += r.Int64N(6)
		et := t
		if r.IntN(5) == 0 {
			et -= r.Int64N(70) // out of order, now and then beyond a window
		}
		e := mgEvent{k: fmt.Sprintf("k%d", r.IntN(keys)), t: et, v: r.Int64N(100), s: fmt.Sprintf("s%d", r.IntN(4))}
		e.ts = base.Add(time.Duration(et) * time.Second).Format("2006-01-02 15:04:05")
		evs = append(evs, e)
		fmt.Fprintf(&b, "{\"k\":%q,\"ts\":%q,\"v\":%d,\"s\":%q}\n", e.k, e.ts, e.v, e.s)
	}
	return evs, b.String()
}

// Every window kind gives, row by row, what the documented semantics
// give: the operator against a naive model over random events with keys,
// out-of-order and late rows.
func TestMetricGroupWindows(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		evs, lines := mgEvents(seed, 400, 5)
		dir := t.TempDir()
		writeFile(t, dir, "events.jsonl", lines)
		out, err := runSQL(t, nil, dir, mgGroup+"SELECT k, v, n_all, sum_all, n_1m, s_1m, sum_hop, max_hop, n_sess, sum_sess, n_30s, max_30s, big_30s FROM m;")
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSpace(out), "\n")[1:]
		if len(got) != len(evs) {
			t.Fatalf("seed %d: %d rows, want %d:\n%s", seed, len(got), len(evs), out)
		}
		m := newMGModel()
		for i, e := range evs {
			want := fmt.Sprintf("+I[%s, %d, %s]", e.k, e.v, strings.Join(m.add(e, 20), ", "))
			if got[i] != want {
				t.Fatalf("seed %d, row %d (%+v):\n got %s\nwant %s", seed, i, e, got[i], want)
			}
		}
	}
}
