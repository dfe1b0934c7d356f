package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// A new version of a ruleset reaches the running job that reads it: the
// job stops with a final checkpoint and runs again on the new version,
// while rows keep coming. Every alert is written once (exactly-once
// sink): the even ids (a rule of both versions) each once, the odd ones
// (a rule version 2 adds) none before the change and each once after
// it, and every alert names the version that raised it.
func TestRulesetSwap(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	ts.must("POST", "/v1/catalog", map[string]string{"sql": fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE RULESET rs ON src (RULE even WHEN MOD(id, 2) = 0);`, bs)}, 200, nil)
	job := fmt.Sprintf(`CREATE TABLE alerts (id BIGINT, v INT, rules ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = '%s/alerts.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO alerts SELECT id, ruleset_version, matched_rules FROM rs;
`, out)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "alerts", "sql": job}, 201, nil)
	produceIDs(t, bs, "in", 0, 100)
	waitRows := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			var j jobJSON
			ts.must("GET", "/v1/jobs/alerts", nil, 200, &j)
			if j.Metrics.RowsIn >= int64(n) && j.Metrics.Checkpoints > 2 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the job did not read %d rows: %+v", n, j)
			}
		}
	}
	waitRows(100)
	// Rows flow while the ruleset changes.
	var wg sync.WaitGroup
	var code int
	var body []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, body = ts.call("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET rs ADD RULE odd WHEN MOD(id, 2) = 1 SEVERITY 'high';"})
	}()
	for i := 100; i < 300; i += 20 {
		produceIDs(t, bs, "in", i, i+20)
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	var cat catalogJSON
	if err := json.Unmarshal(body, &cat); code != 200 || err != nil || cat.Rulesets[0].Version != 2 {
		t.Fatalf("ALTER RULESET: %d %s", code, body)
	}
	produceIDs(t, bs, "in", 300, 400)

	type alert struct {
		ID    int
		V     int
		Rules []string
	}
	var got map[int][]alert
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		got = map[int][]alert{}
		b, err := os.ReadFile(filepath.Join(out, "alerts.json"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var a alert
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got[a.ID] = append(got[a.ID], a)
		}
		if len(got[399]) > 0 && len(got[398]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts of the last rows not written: %d ids", len(got))
		}
	}
	for id := range 400 {
		as := got[id]
		if len(as) > 1 {
			t.Errorf("id %d: %d alerts: %+v", id, len(as), as)
			continue
		}
		switch {
		case id%2 == 0 && len(as) != 1:
			t.Errorf("even id %d: no alert", id)
		case id%2 == 1 && id < 100 && len(as) != 0:
			t.Errorf("odd id %d read before the change: %+v", id, as)
		case id%2 == 1 && id >= 300 && len(as) != 1:
			t.Errorf("odd id %d read after the change: no alert", id)
		}
		for _, a := range as {
			if id%2 == 1 && (a.V != 2 || len(a.Rules) != 1 || a.Rules[0] != "odd") {
				t.Errorf("odd id %d: %+v, want version 2's rule odd", id, a)
			}
			if id < 100 && a.V != 1 || id >= 300 && a.V != 2 {
				t.Errorf("id %d: %+v, raised by version %d", id, a, a.V)
			}
		}
	}
}

// A new version of a metric group reaches the running job that reads it
// (through a ruleset) and its unchanged metric keeps its values: the
// count of each key goes on across the change, each alert written once.
func TestMetricGroupSwap(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	ts.must("POST", "/v1/catalog", map[string]string{"sql": fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE VIEW ev AS SELECT id, MOD(id, 3) AS k FROM src;
CREATE METRIC GROUP m ON ev KEY BY (k) (METRIC n AS COUNT(*));
CREATE RULESET rs ON m (RULE every WHEN n > 0);`, bs)}, 200, nil)
	job := fmt.Sprintf(`CREATE TABLE alerts (id BIGINT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/alerts.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO alerts SELECT id, n FROM rs;
`, out)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "alerts", "sql": job}, 201, nil)
	produceIDs(t, bs, "in", 0, 100)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var j jobJSON
		ts.must("GET", "/v1/jobs/alerts", nil, 200, &j)
		if j.Metrics.RowsIn >= 100 && j.Metrics.Checkpoints > 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not read 100 rows: %+v", j)
		}
	}
	var wg sync.WaitGroup
	var code int
	var body []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		code, body = ts.call("POST", "/v1/catalog", map[string]string{"sql": "ALTER METRIC GROUP m ADD METRIC total AS SUM(id);"})
		t.Logf("ALTER METRIC GROUP, the job stopped and started again: %v", time.Since(start))
	}()
	for i := 100; i < 300; i += 20 {
		produceIDs(t, bs, "in", i, i+20)
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	var cat catalogJSON
	if err := json.Unmarshal(body, &cat); code != 200 || err != nil || len(cat.MetricGroups) != 1 || cat.MetricGroups[0].Version != 2 || len(cat.MetricGroups[0].Metrics) != 2 {
		t.Fatalf("ALTER METRIC GROUP: %d %s", code, body)
	}
	produceIDs(t, bs, "in", 300, 400)
	var j jobJSON
	ts.must("GET", "/v1/jobs/alerts", nil, 200, &j)
	if !strings.Contains(j.Plan, "MetricGroup(name=[m], version=[2]") {
		t.Errorf("the job does not run version 2 of the metric group:\n%s", j.Plan)
	}
	type alert struct{ ID, N int }
	var got map[int][]alert
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		got = map[int][]alert{}
		b, err := os.ReadFile(filepath.Join(out, "alerts.json"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var a alert
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got[a.ID] = append(got[a.ID], a)
		}
		if len(got) == 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 400 alerts written", len(got))
		}
	}
	for id := range 400 {
		if as := got[id]; len(as) != 1 || as[0].N != id/3+1 {
			t.Errorf("id %d: %+v, want one alert with n = %d", id, as, id/3+1)
		}
	}
}

// A running job's metric group publishes its values to the server's
// metric store once each checkpoint completes: a batch read gives each
// key's count of the rows read, and the group's new version after an
// ALTER keeps the counts and adds the new metric.
func TestMetricGroupStoreEndToEnd(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	dir := t.TempDir()
	ts := startServer(t, dir, false, "")
	ts.must("POST", "/v1/catalog", map[string]string{"sql": fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE VIEW ev AS SELECT id, MOD(id, 3) AS k FROM src;
CREATE METRIC GROUP m ON ev KEY BY (k) (METRIC n AS COUNT(*), METRIC top AS MAX(id));
CREATE TABLE nowhere (id BIGINT) WITH ('connector' = 'blackhole');`, bs)}, 200, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "metrics", "sql": "SET 'execution.checkpointing.interval' = '100ms';\nINSERT INTO nowhere SELECT id FROM m;\n"}, 201, nil)
	produceIDs(t, bs, "in", 0, 100)
	type result struct {
		Key      []int64  `json:"key"`
		Values   []*int64 `json:"values"`
		Statuses []string `json:"statuses"`
	}
	read := func(metrics ...string) (int, []result) {
		var res struct {
			Metadata struct {
				Version int `json:"version"`
			} `json:"metadata"`
			Results []result `json:"results"`
		}
		ts.must("POST", "/v1/metric-groups/m/read", map[string]any{"keys": []any{[]any{0}, []any{1}, []any{2}, []any{3}}, "metrics": metrics}, 200, &res)
		return res.Metadata.Version, res.Results
	}
	wait := func(want func([]result) bool, metrics ...string) []result {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			code, _ := ts.call("POST", "/v1/metric-groups/m/read", map[string]any{"keys": []any{}})
			if code == 200 {
				if _, rs := read(metrics...); want(rs) {
					return rs
				}
			}
			if time.Now().After(deadline) {
				_, rs := read(metrics...)
				t.Fatalf("the store does not show the values: %+v", rs)
			}
		}
	}
	counts := func(n0, n1, n2 int64) func([]result) bool {
		return func(rs []result) bool {
			return len(rs) == 4 && rs[0].Values[0] != nil && *rs[0].Values[0] == n0 && rs[1].Values[0] != nil && *rs[1].Values[0] == n1 &&
				rs[2].Values[0] != nil && *rs[2].Values[0] == n2 && rs[3].Statuses[0] == "NOT_FOUND"
		}
	}
	rs := wait(counts(34, 33, 33), "n", "top")
	if *rs[0].Values[1] != 99 || *rs[1].Values[1] != 97 || *rs[2].Values[1] != 98 {
		t.Errorf("top: %+v", rs)
	}
	ts.must("POST", "/v1/catalog", map[string]string{"sql": "ALTER METRIC GROUP m ADD METRIC total AS SUM(id);"}, 200, nil)
	produceIDs(t, bs, "in", 100, 103)
	rs = wait(func(rs []result) bool {
		return counts(35, 34, 34)(rs) && rs[0].Values[1] != nil
	}, "n", "total")
	// The sum counts only the rows since the change: 102, 100, 101.
	if *rs[0].Values[1] != 102 || *rs[1].Values[1] != 100 || *rs[2].Values[1] != 101 {
		t.Errorf("total: %+v", rs)
	}
	if v, _ := read("n"); v != 2 {
		t.Errorf("the store's version of m: %d, want 2", v)
	}
	// The group as JSON: its versions, the current one, the list.
	var vs struct{ Versions []sluice.MetricGroup }
	ts.must("GET", "/v1/metric-groups/m/versions", nil, 200, &vs)
	if len(vs.Versions) != 2 || vs.Versions[0].Version != 1 || len(vs.Versions[0].Metrics) != 2 || len(vs.Versions[1].Metrics) != 3 ||
		vs.Versions[1].Metrics[2].Aggregate != "SUM(id)" || vs.Versions[1].Keys[0] != "k" {
		t.Errorf("versions: %+v", vs)
	}
	var g sluice.MetricGroup
	ts.must("GET", "/v1/metric-groups/m", nil, 200, &g)
	if g.Version != 2 || g.Source != "ev" {
		t.Errorf("GET /v1/metric-groups/m: %+v", g)
	}
	var list struct {
		MetricGroups []sluice.MetricGroup `json:"metric_groups"`
	}
	ts.must("GET", "/v1/metric-groups", nil, 200, &list)
	if len(list.MetricGroups) != 1 || list.MetricGroups[0].Name != "m" {
		t.Errorf("GET /v1/metric-groups: %+v", list)
	}
	if code, body := ts.call("GET", "/v1/metric-groups/mm", nil); code != 404 || !strings.Contains(string(body), `did you mean \"m\"`) {
		t.Errorf("GET /v1/metric-groups/mm: %d %s", code, body)
	}
}
