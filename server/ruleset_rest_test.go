package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

const restRulesetDDL = `CREATE TABLE ev (id BIGINT, host STRING, n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
CREATE TABLE sh (id BIGINT, host STRING, n INT, ruleset_name STRING, ruleset_version INT, matched_rules ARRAY<STRING>,
  alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT) WITH ('connector' = 'blackhole');
CREATE RULESET rs ON ev MATCH AT LEAST 2 EXCEPT WHEN host = 'lab' SUPPRESS BY (host) FOR INTERVAL '10' MINUTE COMMENT 'c' (
  RULE big WHEN n > 100 SEVERITY 'high' PRIORITY 2 TAGS ('t1'),
  RULE odd WHEN MOD(n, 2) = 1 DISABLED
);
ALTER RULESET rs ALTER RULE big WHEN n > 1000 SEVERITY 'critical';
ALTER RULESET rs SHADOW MATCH ANY (RULE big WHEN n > 10) INTO sh;`

// The rulesets read as JSON mirror their DDL: every version, the
// shadow; unknown names and versions are 404s that suggest.
func TestRulesetREST(t *testing.T) {
	ts := startServer(t, t.TempDir(), false, "")
	ts.must("POST", "/v1/catalog", map[string]string{"sql": restRulesetDDL}, 200, nil)

	var list struct{ Rulesets []sluice.Ruleset }
	ts.must("GET", "/v1/rulesets", nil, 200, &list)
	if len(list.Rulesets) != 1 || list.Rulesets[0].Name != "rs" {
		t.Fatalf("list: %+v", list)
	}
	code, body := ts.call("GET", "/v1/rulesets/rs", nil)
	if code != 200 {
		t.Fatalf("GET /v1/rulesets/rs: %d %s", code, body)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "rs", "version": 2.0, "source": "ev", "match": "AT LEAST 2", "except": "host = 'lab'", "comment": "c",
		"suppress": map[string]any{"keys": []any{"host"}, "interval": "INTERVAL '10' MINUTE"},
		"rules": []any{
			map[string]any{"name": "big", "when": "n > 1000", "severity": "critical", "priority": 0.0, "tags": []any{}, "enabled": true},
			map[string]any{"name": "odd", "when": "MOD(n, 2) = 1", "severity": "medium", "priority": 0.0, "tags": []any{}, "enabled": false},
		},
		"shadow": map[string]any{"version": 3.0, "of_version": false, "into": "sh", "match": "ANY", "except": "host = 'lab'",
			"suppress": map[string]any{"keys": []any{"host"}, "interval": "INTERVAL '10' MINUTE"},
			"rules":    []any{map[string]any{"name": "big", "when": "n > 10", "severity": "medium", "priority": 0.0, "tags": []any{}, "enabled": true}}},
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("GET /v1/rulesets/rs:\n got %s\nwant %s", g, w)
	}

	var vs struct{ Versions []sluice.Ruleset }
	ts.must("GET", "/v1/rulesets/rs/versions", nil, 200, &vs)
	if len(vs.Versions) != 2 || vs.Versions[0].Version != 1 || vs.Versions[1].Version != 2 || vs.Versions[0].Rules[0].When != "n > 100" || vs.Versions[0].Shadow != nil {
		t.Errorf("versions: %+v", vs)
	}
	var v1 sluice.Ruleset
	ts.must("GET", "/v1/rulesets/rs/versions/1", nil, 200, &v1)
	if v1.Version != 1 || v1.Rules[0].Severity != "high" || v1.Rules[0].Priority != 2 || !slices.Equal(v1.Rules[0].Tags, []string{"t1"}) {
		t.Errorf("version 1: %+v", v1)
	}
	for _, c := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/v1/rulesets/rx", 404, `no ruleset named "rx" (did you mean "rs"?)`},
		{"/v1/rulesets/ev", 404, `no ruleset named "ev"`},
		{"/v1/rulesets/rx/versions", 404, `no ruleset named "rx"`},
		{"/v1/rulesets/rs/versions/7", 404, "ruleset rs has no version 7: it keeps versions 1 to 2"},
		{"/v1/rulesets/rs/versions/x", 400, `version "x" is not a number`},
	} {
		code, b := ts.call("GET", c.path, nil)
		var e apiErrBody
		if code != c.status || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("GET %s: %d %s, want %d %q", c.path, code, b, c.status, c.msg)
		}
	}
	// A promotion is a new version; the catalog's JSON is the same.
	ts.must("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET rs PROMOTE SHADOW;"}, 200, nil)
	var cat catalogJSON
	ts.must("GET", "/v1/catalog", nil, 200, &cat)
	if len(cat.Rulesets) != 1 || cat.Rulesets[0].Version != 3 || cat.Rulesets[0].Shadow != nil || cat.Rulesets[0].Match != "ANY" || cat.Rulesets[0].Rules[0].When != "n > 10" {
		t.Errorf("after the promotion: %+v", cat.Rulesets)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every change of the catalog is audited: when, by which token, the
// statement with its secrets masked, the object and its versions; a
// gateway session's DDL too, and its ALTER RULESET of a catalog ruleset
// changes the catalog. The log survives a restart, and a line a crash
// cut short.
func TestAudit(t *testing.T) {
	dir := t.TempDir()
	alice, err := CreateToken(dir, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := CreateToken(dir, "bob")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, true, alice)
	start := time.Now().UTC().Add(-time.Second)
	ts.must("POST", "/v1/catalog", map[string]string{"sql": restRulesetDDL + "\nCREATE TABLE secret (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'x', 'properties.sasl.jaas.config' = 'password=\"hunter2\"', 'format' = 'json');"}, 200, nil)
	ts.token = bob
	ts.must("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET rs DISABLE RULE big;\nALTER RULESET rs DROP SHADOW;"}, 200, nil)
	// A failed statement is not audited; those before it are.
	if code, _ := ts.call("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET rs ENABLE RULE big;\nALTER RULESET rs DROP RULE nope;"}); code != 400 {
		t.Fatalf("a failing ALTER: %d", code)
	}
	// The gateway: a session's own ruleset, and the catalog's.
	sh := ts.openSession("v1", nil)
	ts.fetchAll(ts.execute("v1", sh, "CREATE RULESET mine ON ev (RULE a WHEN n = 1)"), "JSON")
	ts.fetchAll(ts.execute("v1", sh, "ALTER RULESET rs SET MATCH ALL"), "JSON")

	var got struct{ Entries []auditEntry }
	ts.must("GET", "/v1/audit?object=rs", nil, 200, &got)
	want := []struct {
		who, scope, stmt string
		before, after    int
	}{
		{"bob", "catalog", "ALTER RULESET rs SET MATCH ALL", 4, 5},
		{"bob", "catalog", "ALTER RULESET rs ENABLE RULE big", 3, 4},
		// A shadow set or dropped keeps the version.
		{"bob", "catalog", "ALTER RULESET rs DROP SHADOW", 3, 3},
		{"bob", "catalog", "ALTER RULESET rs DISABLE RULE big", 2, 3},
		{"alice", "catalog", "ALTER RULESET rs SHADOW MATCH ANY (RULE big WHEN n > 10) INTO sh", 2, 2},
	}
	if len(got.Entries) != 7 {
		t.Fatalf("%d entries of rs: %+v", len(got.Entries), got.Entries)
	}
	for i, w := range want {
		e := got.Entries[i]
		if e.Who != w.who || e.Scope != w.scope || e.Statement != w.stmt || e.VersionBefore != w.before || e.VersionAfter != w.after ||
			e.Kind != "ruleset" || e.Object != "rs" || e.Time.Before(start) || e.Time.After(time.Now()) {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if e := got.Entries[6]; e.Action != "create" || e.VersionBefore != 0 || e.VersionAfter != 1 || !strings.HasPrefix(e.Statement, "CREATE RULESET rs ON ev") {
		t.Errorf("the creation: %+v", e)
	}
	var all struct{ Entries []auditEntry }
	ts.must("GET", "/v1/audit?limit=3", nil, 200, &all)
	if len(all.Entries) != 3 || all.Entries[1].Scope != "session "+sh || all.Entries[1].Object != "mine" || all.Entries[1].VersionAfter != 1 || all.Entries[1].Who != "bob" {
		t.Errorf("the newest 3: %+v", all.Entries)
	}
	all.Entries = nil
	ts.must("GET", "/v1/audit?object=secret", nil, 200, &all)
	if len(all.Entries) != 1 || all.Entries[0].Kind != "table" || strings.Contains(all.Entries[0].Statement, "hunter2") {
		t.Errorf("the table with a secret: %+v", all.Entries)
	}
	if code, _ := ts.call("GET", "/v1/audit?limit=0", nil); code != 400 {
		t.Errorf("limit=0: %d", code)
	}
	var cat catalogJSON
	ts.must("GET", "/v1/catalog", nil, 200, &cat)
	if cat.Rulesets[0].Match != "ALL" {
		t.Errorf("the gateway's ALTER RULESET did not change the catalog: %+v", cat.Rulesets[0])
	}
	ts.close()

	// A crash in the middle of an append leaves a torn line: it is
	// dropped, and the log goes on after the last whole one.
	f, err := os.OpenFile(filepath.Join(dir, auditFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","who":"tor`)
	f.Close()
	ts = startServer(t, dir, true, alice)
	var again struct{ Entries []auditEntry }
	ts.must("GET", "/v1/audit?object=rs&limit=10000", nil, 200, &again)
	if mustJSON(t, again.Entries) != mustJSON(t, got.Entries) {
		t.Errorf("after a restart:\n%+v\nwant\n%+v", again.Entries, got.Entries)
	}
	var cat2 catalogJSON
	ts.must("GET", "/v1/catalog", nil, 200, &cat2)
	if cat2.Rulesets[0].Version != 5 || cat2.Rulesets[0].Match != "ALL" {
		t.Errorf("the catalog after a restart: %+v", cat2.Rulesets[0])
	}
	ts.must("POST", "/v1/catalog", map[string]string{"sql": "DROP RULESET rs;"}, 200, nil)
	var dropped struct{ Entries []auditEntry }
	ts.must("GET", "/v1/audit?object=rs&limit=1", nil, 200, &dropped)
	if e := dropped.Entries[0]; e.Action != "drop" || e.Who != "alice" || e.VersionBefore != 5 || e.VersionAfter != 0 {
		t.Errorf("the drop: %+v", e)
	}
	b, _ := os.ReadFile(filepath.Join(dir, auditFile))
	if strings.Contains(string(b), `"who":"tor`) {
		t.Errorf("the torn line is still in the log:\n%s", b)
	}

	// Auth off: anonymous.
	dir2 := t.TempDir()
	ts2 := startServer(t, dir2, false, "")
	ts2.must("POST", "/v1/catalog", map[string]string{"sql": "CREATE TABLE t (a INT) WITH ('connector' = 'blackhole');"}, 200, nil)
	var anon struct{ Entries []auditEntry }
	ts2.must("GET", "/v1/audit", nil, 200, &anon)
	if len(anon.Entries) != 1 || anon.Entries[0].Who != "anonymous" || anon.Entries[0].Kind != "table" || anon.Entries[0].Object != "t" {
		t.Errorf("auth off: %+v", anon.Entries)
	}

	// A metric group's changes, with its versions.
	ts2.must("POST", "/v1/catalog", map[string]string{"sql": `CREATE TABLE lg (user_id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
CREATE METRIC GROUP g ON lg KEY BY (user_id) (METRIC n AS COUNT(*));
ALTER METRIC GROUP g ADD METRIC m AS MAX(user_id);`}, 200, nil)
	var mg struct{ Entries []auditEntry }
	ts2.must("GET", "/v1/audit?object=g", nil, 200, &mg)
	if len(mg.Entries) != 2 || mg.Entries[0].Kind != "metric group" || mg.Entries[0].Action != "alter" || mg.Entries[0].VersionBefore != 1 || mg.Entries[0].VersionAfter != 2 ||
		mg.Entries[1].Action != "create" || mg.Entries[1].VersionAfter != 1 {
		t.Errorf("the metric group's entries: %+v", mg.Entries)
	}
}

// Setting a shadow, a suppression, and promoting the shadow reach the
// running job that reads the ruleset, without a lost or repeated live
// alert: the shadow's alerts go to their table from the change on, and
// its state (the shadow's sink, the suppression) comes and goes with
// the ruleset's definition.
func TestRulesetShadowSwap(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	ts.must("POST", "/v1/catalog", map[string]string{"sql": fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE shadow_alerts (id BIGINT, ruleset_name STRING, ruleset_version INT, matched_rules ARRAY<STRING>,
  alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/shadow.json', 'format' = 'json');
CREATE RULESET rs ON src (RULE even WHEN MOD(id, 2) = 0);`, bs, out)}, 200, nil)
	job := fmt.Sprintf(`CREATE TABLE alerts (id BIGINT, v INT, rules ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = '%s/alerts.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO alerts SELECT id, ruleset_version, matched_rules FROM rs;
`, out)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "alerts", "sql": job}, 201, nil)
	type alert struct {
		ID    int
		V     int
		Rules []string
		// The shadow's columns.
		RulesetVersion  int      `json:"ruleset_version"`
		MatchedRules    []string `json:"matched_rules"`
		SuppressedCount int      `json:"suppressed_count"`
	}
	read := func(name string) map[int][]alert {
		got := map[int][]alert{}
		b, err := os.ReadFile(filepath.Join(out, name))
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
		return got
	}
	waitFor := func(name string, id int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); len(read(name)[id]) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no alert of id %d in %s\n%s", id, name, ts.log.String())
			}
		}
	}
	produceIDs(t, bs, "in", 0, 100)
	waitFor("alerts.json", 98)
	// A shadow of a rule of its own, and later a suppression of the
	// live rules' alerts by their rule list (one alert an hour).
	ts.must("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET rs SHADOW (RULE threes WHEN MOD(id, 3) = 0) INTO shadow_alerts;"}, 200, nil)
	produceIDs(t, bs, "in", 100, 200)
	waitFor("alerts.json", 198)
	waitFor("shadow.json", 198)
	ts.must("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET rs PROMOTE SHADOW;\nALTER RULESET rs SET SUPPRESS BY (ruleset_name) FOR INTERVAL '1' HOUR;"}, 200, nil)
	produceIDs(t, bs, "in", 200, 300)
	var j jobJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		ts.must("GET", "/v1/jobs/alerts", nil, 200, &j)
		if j.Status != statusRunning {
			t.Fatalf("the job is %s: %+v", j.Status, j.Errors)
		}
		if j.Metrics.RowsIn >= 100 && j.Metrics.SuppressedAlerts >= 32 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the suppression did not run: %+v", j.Metrics)
		}
	}
	waitFor("alerts.json", 201)
	live, shadow := read("alerts.json"), read("shadow.json")
	for id := range 300 {
		as := live[id]
		switch {
		case id < 200 && id%2 == 0 && len(as) != 1:
			t.Errorf("live id %d: %+v, want one alert", id, as)
		case id < 200 && id%2 == 1 && len(as) != 0:
			t.Errorf("live id %d: %+v, want none", id, as)
		case id >= 200 && len(as) > 1:
			t.Errorf("live id %d: %+v: more than one alert", id, as)
		}
		for _, a := range as {
			if id < 200 && a.V != 1 {
				t.Errorf("live id %d raised by version %d", id, a.V)
			}
		}
		if len(shadow[id]) > 1 {
			t.Errorf("shadow id %d: %d alerts", id, len(shadow[id]))
		}
		if (id < 100 || id >= 200) && len(shadow[id]) > 0 {
			t.Errorf("shadow id %d, read before the shadow was set or after it was promoted: %+v", id, shadow[id])
		}
		if id >= 100 && id < 200 && (id%3 == 0) != (len(shadow[id]) == 1) {
			t.Errorf("shadow id %d: %+v", id, shadow[id])
		}
		for _, a := range shadow[id] {
			if a.RulesetVersion != 2 || len(a.MatchedRules) != 1 || a.MatchedRules[0] != "threes" || a.SuppressedCount != 0 {
				t.Errorf("shadow id %d: %+v, want version 2's rule threes", id, a)
			}
		}
	}
	// After the promotion and the suppression (versions 2 and 3, the
	// job swapped once, to 3): the first alert of the promoted rule, the
	// others suppressed.
	var after []alert
	for id := 200; id < 300; id++ {
		after = append(after, live[id]...)
	}
	if len(after) != 1 || after[0].ID != 201 || after[0].V != 3 || after[0].Rules[0] != "threes" {
		t.Errorf("live alerts after the suppression: %+v, want id 201's of version 3 alone", after)
	}
}
