package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

// gate is a writer that blocks every write while it is shut: the
// server's print sinks write into it, and a job's sink held there holds
// the job back, as a slow system would.
type gate struct {
	mu      sync.Mutex
	open    chan struct{}
	waiting int
	once    sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{open: make(chan struct{})}
	t.Cleanup(g.release)
	return g
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.waiting++
	g.mu.Unlock()
	<-g.open
	g.mu.Lock()
	g.waiting--
	g.mu.Unlock()
	return len(p), nil
}

func (g *gate) blocked() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting > 0
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// alertRow is a row of an alert table, as its json format writes it.
type alertRow struct {
	Alert, Job, State, Message string
	Value                      float64
	TS                         string
}

// alertRows reads the rows the alerts wrote into the filesystem table
// at dir.
func alertRows(t *testing.T, dir string) []alertRow {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rows []alertRow
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var r alertRow
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), line, err)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

const alertTable = "CREATE TABLE alerts_sink (`alert` STRING, `job` STRING, `state` STRING, `value` DOUBLE, `message` STRING, `ts` TIMESTAMP(3)) " +
	"WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')"

// A job over Kafka whose print sink is held back lags behind its topic:
// GET /v1/jobs/{name} and /metrics show its source's consumer lag and its
// tasks' back pressure, and an alert over consumer_lag fires, posting to
// its webhook and writing a row into its table. Once the sink is let go,
// the job catches up, the lag is 0, and the alert resolves (a second
// post, a second row).
func TestConsumerLagAlert(t *testing.T) {
	const n = 20_000
	bs := kafkatest.Start(t, 1, "in")
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d}`, i)})
	}
	kafkatest.Produce(t, bs, "in", recs...)
	g := newGate(t)
	h := newHook(t, 0)
	ts := startServerWith(t, Config{DataDir: t.TempDir(), Stdout: g})
	alerts := t.TempDir()
	ts.must("POST", "/v1/catalog", map[string]any{"sql": fmt.Sprintf(alertTable, alerts)}, 200, nil)
	ts.must("POST", "/v1/alerts", map[string]any{"name": "lagging", "job": "lag",
		"condition": map[string]any{"kind": "metric_above", "metric": "consumer_lag", "threshold": 0},
		"webhook":   h.url, "table": "alerts_sink"}, 201, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "lag", "sql": fmt.Sprintf(`
CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'print');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO out SELECT id FROM src WHERE id >= 0;
`, bs)}, 201, nil)

	h.wait("firing", func(ns []notification) bool { return has(ns, "lagging", "lag", "firing") >= 0 })
	for deadline := time.Now().Add(time.Minute); !g.blocked(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the print sink never wrote")
		}
	}
	// Held back: the source lags by what it has not read.
	var j jobJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ts.must("GET", "/v1/jobs/lag", nil, 200, &j)
		if j.Metrics.Backpressure > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no back pressure: %+v", j)
		}
	}
	if len(j.Operators) < 3 {
		t.Fatalf("operators: %+v", j.Operators)
	}
	src, sink := j.Operators[0], j.Operators[len(j.Operators)-1]
	if src.Kind != "TableSourceScan" || src.Table != "src" || sink.Kind != "Sink" || sink.Table != "out" {
		t.Fatalf("operators: %+v", j.Operators)
	}
	if src.ConsumerLag == nil || *src.ConsumerLag <= 0 || src.RowsOut+*src.ConsumerLag != n {
		t.Fatalf("source: %d rows read, consumer lag %v; want the %d others", src.RowsOut, src.ConsumerLag, n-src.RowsOut)
	}
	if j.Metrics.ConsumerLag == nil || *j.Metrics.ConsumerLag != *src.ConsumerLag {
		t.Fatalf("job's consumer lag %v, want the source's %d", j.Metrics.ConsumerLag, *src.ConsumerLag)
	}
	_, body := ts.call("GET", "/metrics", nil)
	metrics := string(body)
	for _, want := range []string{
		fmt.Sprintf(`sluice_source_consumer_lag_records{job="lag",operator=%q,table="src"} `, src.Name),
		fmt.Sprintf(`sluice_operator_rows_in_total{job="lag",operator=%q} `, sink.Name),
		fmt.Sprintf(`sluice_operator_backpressure_ratio{job="lag",operator=%q} `, src.Name),
		`sluice_alert_firing{alert="lagging",job="lag"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s:\n%s", want, grepLines(metrics, `job="lag"`))
		}
	}

	g.release()
	got := h.wait("resolved", func(ns []notification) bool { return has(ns, "lagging", "lag", "resolved") >= 0 })
	if f, r := has(got, "lagging", "lag", "firing"), has(got, "lagging", "lag", "resolved"); f > r || got[f].Value <= 0 || got[r].Value != 0 {
		t.Errorf("notifications: %+v", got)
	}
	ts.must("GET", "/v1/jobs/lag", nil, 200, &j)
	if j.Metrics.ConsumerLag == nil || *j.Metrics.ConsumerLag != 0 || j.Metrics.RowsIn != n {
		t.Errorf("caught up: %+v", j.Metrics)
	}
	for i := 1; i < len(j.Operators); i++ {
		if prev, o := j.Operators[i-1], j.Operators[i]; o.RowsIn > prev.RowsOut || o.RowsIn > n {
			t.Errorf("%s took %d rows, %s put out %d", o.Name, o.RowsIn, prev.Name, prev.RowsOut)
		}
	}

	// Each notification is a row of the table, in order.
	var rows []alertRow
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if rows = alertRows(t, alerts); len(rows) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(rows) != 2 {
		t.Fatalf("alert rows: %+v", rows)
	}
	slices.SortFunc(rows, func(x, y alertRow) int { return strings.Compare(x.State, y.State) })
	for i, state := range []string{"firing", "resolved"} {
		if r := rows[i]; r.Alert != "lagging" || r.Job != "lag" || r.State != state || !strings.Contains(r.Message, "consumer_lag") || r.TS == "" {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if rows[0].Value <= 0 || rows[1].Value != 0 || rows[0].TS > rows[1].TS {
		t.Errorf("rows: %+v", rows)
	}
	a := ts.waitAlert("lagging", "lag", "resolved")
	if st := a.States[0]; st.LastError != "" {
		t.Errorf("alert state: %+v", st)
	}
}

// A table that cannot take an alert's rows is refused when the rule is
// created; one that fails later (dropped) shows in the state's
// last_error, and the server goes on.
func TestAlertTableErrors(t *testing.T) {
	ts := startServerWith(t, Config{DataDir: t.TempDir()})
	ts.s.alerts.backoff = time.Millisecond
	dir := t.TempDir()
	ts.must("POST", "/v1/catalog", map[string]any{"sql": fmt.Sprintf(alertTable, dir) + ";\n" +
		fmt.Sprintf("CREATE TABLE narrow (`alert` STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json')", t.TempDir())}, 200, nil)
	for _, table := range []string{"narrow", "missing", "a b"} {
		e := ts.mustFail("POST", "/v1/alerts", map[string]any{"name": "x", "job": "*",
			"condition": map[string]any{"kind": "job_failed"}, "table": table}, 400, codeBadRequest)
		if !strings.Contains(e.Message, "table") {
			t.Errorf("table %s: %s", table, e.Message)
		}
	}
	ts.must("POST", "/v1/alerts", map[string]any{"name": "failed", "job": "*",
		"condition": map[string]any{"kind": "job_failed"}, "table": "alerts_sink"}, 201, nil)
	ts.must("POST", "/v1/catalog", map[string]any{"sql": "DROP TABLE alerts_sink"}, 200, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "f", "sql": failingJob(t)}, 201, nil)
	ts.waitJob("f", "failed")
	var a alertJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ts.must("GET", "/v1/alerts/failed", nil, 200, &a)
		if len(a.States) == 1 && a.States[0].LastError != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no error shown: %+v", a)
		}
	}
	if st := a.States[0]; st.State != "firing" || !strings.Contains(st.LastError, "alerts_sink") || !st.LastNotified.IsZero() {
		t.Errorf("state: %+v", st)
	}
	if rows := alertRows(t, dir); len(rows) != 0 {
		t.Errorf("rows written into the dropped table's directory: %+v", rows)
	}
	ts.must("GET", "/v1/jobs/f", nil, 200, nil) // the server answers on
}

// A notification's text goes into the table as it is: quotes, a
// backslash, a line break.
func TestAlertTableQuoting(t *testing.T) {
	ts := startServerWith(t, Config{DataDir: t.TempDir()})
	dir := t.TempDir()
	ts.must("POST", "/v1/catalog", map[string]any{"sql": fmt.Sprintf(alertTable, dir)}, 200, nil)
	n := notification{Alert: "a-1", Job: "j.1", State: alertFiring, Since: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC),
		Value: 1.5e-7, Message: "it's \\ 'quoted'\n-- and on"}
	if err := ts.s.alerts.write("alerts_sink", n); err != nil {
		t.Fatal(err)
	}
	rows := alertRows(t, dir)
	want := alertRow{Alert: "a-1", Job: "j.1", State: "firing", Message: n.Message, Value: 1.5e-7, TS: "2026-01-02 03:04:05.006"}
	if len(rows) != 1 || rows[0] != want {
		t.Fatalf("rows %+v, want %+v", rows, want)
	}
}
