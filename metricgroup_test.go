package sluice_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
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

// A metric group keeps its values in its state: run again over a grown
// input with a new version of the group, its unchanged metrics go on
// from where they were, a new metric starts from nothing, and a changed
// one (its window) starts again.
func TestMetricGroupStateAcrossVersions(t *testing.T) {
	evs, lines := mgEvents(7, 400, 5)
	dir := t.TempDir()
	ls := strings.SplitAfter(lines, "\n")
	writeFile(t, dir, "events.jsonl", strings.Join(ls[:200], ""))
	state := "SET 'state.dir' = '" + dir + "/state';\nSET 'execution.checkpointing.interval' = '50ms';\n"
	sel := "SELECT k, v, n_all, sum_all, n_1m, s_1m, sum_hop, max_hop, n_sess, sum_sess, n_30s, max_30s, big_30s FROM m;"
	out, err := runSQL(t, nil, dir, state+mgGroup+sel)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(strings.Split(strings.TrimSpace(out), "\n")) - 1; got != 200 {
		t.Fatalf("first run: %d rows, want 200", got)
	}
	writeFile(t, dir, "events.jsonl", lines)
	v2 := strings.Replace(mgGroup, "METRIC n_30s AS COUNT(*) WINDOW LAST(INTERVAL '30' SECOND)",
		"METRIC n_30s AS COUNT(*) WINDOW LAST(INTERVAL '40' SECOND),\n  METRIC n_new AS COUNT(*) FILTER (WHERE v >= 0)", 1)
	out, err = runSQL(t, nil, dir, state+v2+strings.Replace(sel, "big_30s", "big_30s, n_new", 1))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if len(got) != 200 {
		t.Fatalf("second run: %d rows, want 200:\n%s", len(got), out)
	}
	m := newMGModel()
	second := map[string][]mgEvent{}
	clock := map[string]int64{}
	for i, e := range evs {
		vals := m.add(e, 20)
		if i < 200 {
			continue
		}
		second[e.k] = append(second[e.k], e)
		if c, ok := clock[e.k]; !ok || e.t > c {
			clock[e.k] = e.t
		}
		// n_30s is now over 40 seconds, of the rows since the change.
		n40 := 0
		for _, x := range second[e.k] {
			if x.t >= clock[e.k]-40 && x.t >= m.clock[e.k]-40 {
				n40++
			}
		}
		vals[8] = fmt.Sprint(n40)
		want := fmt.Sprintf("+I[%s, %d, %s, %d]", e.k, e.v, strings.Join(vals, ", "), len(second[e.k]))
		if got[i-200] != want {
			t.Fatalf("row %d (%+v):\n got %s\nwant %s", i, e, got[i-200], want)
		}
	}
}

// A ruleset over a metric group sees each event's columns and its key's
// metrics, the event folded in: its alerts are what the model's values
// say.
func TestMetricGroupRuleset(t *testing.T) {
	evs, lines := mgEvents(3, 300, 4)
	dir := t.TempDir()
	writeFile(t, dir, "events.jsonl", lines)
	out, err := runSQL(t, nil, dir, mgGroup+`
CREATE RULESET r ON m MATCH ANY (
  RULE burst WHEN n_30s >= 4 SEVERITY 'high',
  RULE big WHEN v > 90 AND n_all > 5
);
SELECT k, v, matched_rules, alert_severity FROM r;`)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	m := newMGModel()
	for _, e := range evs {
		vals := m.add(e, 20)
		var rules []string
		var n30, nAll int
		fmt.Sscan(vals[8], &n30)
		fmt.Sscan(vals[0], &nAll)
		sev := "medium"
		if n30 >= 4 {
			rules, sev = append(rules, "burst"), "high"
		}
		if e.v > 90 && nAll > 5 {
			rules = append(rules, "big")
		}
		if len(rules) > 0 {
			want = append(want, fmt.Sprintf("+I[%s, %d, [%s], %s]", e.k, e.v, strings.Join(rules, ", "), sev))
		}
	}
	got := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if len(want) < 10 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d alerts:\n%s\nwant %d:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// Errors in a metric group name where and what, with suggestions.
func TestMetricGroupErrors(t *testing.T) {
	base := `CREATE TABLE events (k STRING, ts TIMESTAMP(3), v BIGINT, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/events.jsonl', 'format' = 'json');
`
	for _, c := range []struct{ sql, want string }{
		{"CREATE METRIC GROUP m ON events KEY BY (kk) (METRIC n AS COUNT(*));", "kk"},
		{"CREATE METRIC GROUP m ON evnts KEY BY (k) (METRIC n AS COUNT(*));", "events"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS v + 1);", "a metric is one aggregate call"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC v AS COUNT(*));", "has the name of a column"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*), METRIC N AS SUM(v));", "two metrics named"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*) WINDOW HOP(INTERVAL '7' SECOND, INTERVAL '10' SECOND));", "whole multiple of its slide"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*) WINDOW SLIDE(INTERVAL '7' SECOND));", "test.sql:3:73: expected TUMBLE, HOP, SESSION or LAST after WINDOW"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*) WINDOW TUMBLE(INTERVAL '0' SECOND));", "must be positive"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*) WINDOW LAST(INTERVAL '1' MONTH));", "days to seconds"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*));\nALTER METRIC GROUP m DROP METRIC nn;", `did you mean "n"`},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*));\nALTER METRIC GROUP mm ADD METRIC x AS SUM(v);", "unknown metric group 'mm'"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*));\nALTER METRIC GROUP m ADD METRIC n AS SUM(v);", "already has a metric 'n'"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*));\nALTER METRIC GROUP m ROLLBACK TO VERSION 3;", "has no version 3"},
		{"CREATE METRIC GROUP m ON events KEY BY (k) (METRIC n AS COUNT(*));\nDROP VIEW m;", "drop it with DROP METRIC GROUP"},
	} {
		_, err := runSQL(t, nil, t.TempDir(), base+c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n: got %v, want %q", c.sql, err, c.want)
		}
	}
}

// A session's ALTER METRIC GROUP of its engine's group is the session's
// own: the engine's group stays at its version.
func TestMetricGroupSessionAlter(t *testing.T) {
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Exec(ctx, "cat.sql", []byte(`CREATE TABLE ev (k STRING, v BIGINT) WITH ('connector' = 'datagen');
CREATE METRIC GROUP m ON ev KEY BY (k) (METRIC n AS COUNT(*));`)); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	if _, err := s.Exec(ctx, "s.sql", []byte("ALTER METRIC GROUP m ADD METRIC total AS SUM(v);")); err != nil {
		t.Fatal(err)
	}
	if g := e.MetricGroups(); len(g) != 1 || g[0].Version != 1 || len(g[0].Metrics) != 1 {
		t.Errorf("the engine's group: %+v, want version 1 with one metric", g)
	}
	if g := s.MetricGroups(); len(g) != 1 || g[0].Version != 2 || len(g[0].Metrics) != 2 {
		t.Errorf("the session's group: %+v, want version 2 with two metrics", g)
	}
}

// A LAST frame whose every metric has a FILTER keeps only the rows some
// filter takes, and counts as a frame of every row would.
func TestMetricGroupFilteredFrame(t *testing.T) {
	evs, lines := mgEvents(11, 500, 3)
	dir := t.TempDir()
	writeFile(t, dir, "events.jsonl", lines)
	out, err := runSQL(t, nil, dir, `CREATE TABLE events (k STRING, ts TIMESTAMP(3), v BIGINT, s STRING, WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE)
WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
CREATE METRIC GROUP m ON events KEY BY (k) (
  METRIC big AS COUNT(*) FILTER (WHERE v > 50) WINDOW LAST(INTERVAL '20' SECOND),
  METRIC top AS MAX(v) FILTER (WHERE s = 's1') WINDOW LAST(INTERVAL '20' SECOND)
);
SELECT k, big, top FROM m;`)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")[1:]
	seen := map[string][]mgEvent{}
	clock := map[string]int64{}
	for i, e := range evs {
		seen[e.k] = append(seen[e.k], e)
		if c, ok := clock[e.k]; !ok || e.t > c {
			clock[e.k] = e.t
		}
		big, top := 0, "null"
		topv := int64(-1)
		for _, x := range seen[e.k] {
			if x.t < clock[e.k]-20 {
				continue
			}
			if x.v > 50 {
				big++
			}
			if x.s == "s1" && x.v > topv {
				topv, top = x.v, fmt.Sprint(x.v)
			}
		}
		if want := fmt.Sprintf("+I[%s, %d, %s]", e.k, big, top); got[i] != want {
			t.Fatalf("row %d (%+v): got %s, want %s", i, e, got[i], want)
		}
	}
}
