package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
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

// testServer is a Server on a loopback port of its own.
type testServer struct {
	t     *testing.T
	s     *Server
	url   string
	token string
	log   *syncBuffer
	done  chan error
}

// syncBuffer is a bytes.Buffer safe for concurrent use: the log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServer starts a server over dir; with auth, token is a valid
// token.
func startServer(t *testing.T, dir string, auth bool, token string) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	s, err := New(Config{DataDir: dir, Auth: auth, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s, url: "http://" + ln.Addr().String(), token: token, log: logs, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(ln) }()
	t.Cleanup(ts.close)
	return ts
}

func (ts *testServer) close() {
	if ts.s == nil {
		return
	}
	if err := ts.s.Close(); err != nil {
		ts.t.Error(err)
	}
	if err := <-ts.done; err != nil {
		ts.t.Error(err)
	}
	ts.s = nil
}

// call sends a request with the server's token and returns the status
// and the body.
func (ts *testServer) call(method, path string, body any) (int, []byte) {
	ts.t.Helper()
	return ts.callWith(ts.token, method, path, body)
}

func (ts *testServer) callWith(token, method, path string, body any) (int, []byte) {
	ts.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			ts.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.url+path, r)
	if err != nil {
		ts.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// must sends a request, checks its status and decodes the answer into
// out (if not nil).
func (ts *testServer) must(method, path string, body any, status int, out any) {
	ts.t.Helper()
	got, b := ts.call(method, path, body)
	if got != status {
		ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			ts.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// apiErr is an error answer.
type apiErrBody struct {
	Error apiError `json:"error"`
}

// mustFail sends a request that must fail with status and code, and
// returns the error.
func (ts *testServer) mustFail(method, path string, body any, status int, code string) apiError {
	ts.t.Helper()
	var e apiErrBody
	ts.must(method, path, body, status, &e)
	if e.Error.Code != code {
		ts.t.Fatalf("%s %s: code %q, want %q: %+v", method, path, e.Error.Code, code, e.Error)
	}
	return e.Error
}

// waitJob waits until the job's status is status (a guard of a minute,
// not a measurement).
func (ts *testServer) waitJob(name, status string) jobJSON {
	ts.t.Helper()
	var j jobJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ts.must("GET", "/v1/jobs/"+name, nil, 200, &j)
		if j.Status == status {
			return j
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("job %s is %s, not %s: %+v", name, j.Status, status, j)
		}
	}
}

// outputIDs returns the ids in the committed output of dir (out.json, or
// part files; rows {"id":N}), with their counts.
func outputIDs(t *testing.T, dir string) map[int]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "[op]*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var row struct{ ID int }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", f, line, err)
			}
			out[row.ID]++
		}
	}
	return out
}

// waitOutput waits until dir holds n rows, then checks that they are the
// ids 0..n-1, each once.
func waitOutput(t *testing.T, dir string, n int) {
	t.Helper()
	var got map[int]int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		got = outputIDs(t, dir)
		total := 0
		for _, c := range got {
			total += c
		}
		if total >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows of %d in %s after a minute", total, n, dir)
		}
	}
	for id, c := range got {
		if c != 1 || id < 0 || id >= n {
			t.Errorf("id %d written %d times (want ids 0..%d once each)", id, c, n-1)
		}
	}
	if len(got) != n {
		t.Errorf("%d distinct ids, want %d", len(got), n)
	}
}

func produceIDs(t *testing.T, bs, topic string, from, to int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d}`, i)})
	}
	kafkatest.Produce(t, bs, topic, recs...)
}

// kafkaToFile is a job reading topic "in" into out/out.json, where each
// checkpoint's commit appends the rows it covers.
func kafkaToFile(bs, out string) string {
	return fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/out.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO out SELECT id FROM src;
`, bs, out)
}

const genToHole = `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM gen;
`

// Every route of the API against a server with auth on, and every error
// class.
func TestAPI(t *testing.T) {
	dir := t.TempDir()
	token, err := CreateToken(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, true, token)

	// Auth: /healthz is open; everything else needs a valid token.
	if code, b := ts.callWith("", "GET", "/healthz", nil); code != 200 || !strings.Contains(string(b), `"ok"`) {
		t.Fatalf("/healthz without a token: %d %s", code, b)
	}
	for _, path := range []string{"/metrics", "/openapi.json", "/v1/jobs", "/v1/catalog", "/nowhere"} {
		for _, tok := range []string{"", "sluice_wrong", token + "x"} {
			code, b := ts.callWith(tok, "GET", path, nil)
			var e apiErrBody
			if code != 401 || json.Unmarshal(b, &e) != nil || e.Error.Code != "unauthorized" {
				t.Errorf("GET %s with token %q: %d %s", path, tok, code, b)
			}
		}
	}
	// A token created while the server runs works at once.
	token2, err := CreateToken(dir, "second")
	if err != nil {
		t.Fatal(err)
	}
	if code, b := ts.callWith(token2, "GET", "/v1/jobs", nil); code != 200 {
		t.Fatalf("a token created while the server runs: %d %s", code, b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, tokensFile)); bytes.Contains(b, []byte(token)) || bytes.Contains(b, []byte(token2)) {
		t.Fatalf("tokens.json holds a token itself:\n%s", b)
	}

	code, b := ts.call("GET", "/openapi.json", nil)
	if code != 200 || !json.Valid(b) {
		t.Fatalf("/openapi.json: %d", code)
	}

	// The catalog: a table every job sees.
	var cat catalogJSON
	ts.must("GET", "/v1/catalog", nil, 200, &cat)
	if len(cat.Tables) != 0 || len(cat.Views) != 0 {
		t.Fatalf("empty catalog: %+v", cat)
	}
	ts.must("POST", "/v1/catalog", map[string]string{"sql": `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
CREATE VIEW evens AS SELECT id FROM gen WHERE MOD(id, 2) = 0;
CREATE TABLE tmp (id BIGINT) WITH ('connector' = 'blackhole');
DROP TABLE tmp;`}, 200, &cat)
	if !slices.Equal(cat.Tables, []string{"gen", "hole"}) || !slices.Equal(cat.Views, []string{"evens"}) {
		t.Fatalf("catalog: %+v", cat)
	}
	// A ruleset, and a version of it.
	ts.must("POST", "/v1/catalog", map[string]string{"sql": `CREATE RULESET odd ON gen MATCH AT LEAST 50 PERCENT (RULE small WHEN id < 10 SEVERITY 'low', RULE odd WHEN MOD(id, 2) = 1 TAGS ('t'));
ALTER RULESET odd DISABLE RULE small;`}, 200, &cat)
	if !slices.Equal(cat.Views, []string{"evens"}) || len(cat.Rulesets) != 1 {
		t.Fatalf("catalog with a ruleset: %+v", cat)
	}
	if rs := cat.Rulesets[0]; rs.Name != "odd" || rs.Version != 2 || rs.Source != "gen" || rs.Match != "AT LEAST 50 PERCENT" || len(rs.Rules) != 2 ||
		rs.Rules[0].Enabled || rs.Rules[0].Severity != "low" || rs.Rules[1].When != "MOD(id, 2) = 1" || !slices.Equal(rs.Rules[1].Tags, []string{"t"}) || !rs.Rules[1].Enabled {
		t.Fatalf("ruleset: %+v", rs)
	}
	e := ts.mustFail("POST", "/v1/catalog", map[string]string{"sql": "ALTER RULESET odd DROP RULE smal;"}, 400, "bad_sql")
	if !strings.Contains(e.Message, "did you mean") {
		t.Errorf("catalog bad ALTER: %+v", e)
	}
	e = ts.mustFail("POST", "/v1/catalog", map[string]string{"sql": "CREATE TABLE t2 (id BIGINT) WITH ('connector' = 'blackhole');\nSET 'a' = 'b';"}, 400, "bad_sql")
	if e.Line != 2 || e.Column != 1 {
		t.Errorf("catalog SET: %+v", e)
	}
	e = ts.mustFail("POST", "/v1/catalog", map[string]string{"sql": "CREATE VIEW v2 AS SELECT idd FROM gen;"}, 400, "bad_sql")
	if e.Line != 1 || !strings.Contains(e.Message, "idd") {
		t.Errorf("catalog bad view: %+v", e)
	}

	// Validate and explain.
	var valid map[string]bool
	ts.must("POST", "/v1/validate", map[string]string{"sql": "INSERT INTO hole SELECT id FROM evens;"}, 200, &valid)
	if !valid["valid"] {
		t.Fatalf("validate: %v", valid)
	}
	e = ts.mustFail("POST", "/v1/validate", map[string]string{"sql": "INSERT INTO hole\nSELECT idd FROM gen;"}, 400, "bad_sql")
	if e.Line != 2 || e.Column != 8 || !strings.Contains(e.Message, "did you mean") {
		t.Errorf("validate bad column: %+v", e)
	}
	var plan map[string]string
	ts.must("POST", "/v1/explain", map[string]string{"sql": "SELECT id FROM evens;"}, 200, &plan)
	if !strings.Contains(plan["plan"], "TableSourceScan(table=[gen]") {
		t.Fatalf("explain: %q", plan["plan"])
	}
	ts.mustFail("POST", "/v1/explain", map[string]string{"sql": "SELEC 1"}, 400, "bad_sql")

	// Jobs.
	var j jobJSON
	ts.must("POST", "/v1/jobs", map[string]any{"name": "rule-1", "sql": "INSERT INTO hole SELECT id FROM evens;", "labels": map[string]string{"team": "a"}}, 201, &j)
	if j.Name != "rule-1" || j.Status != "running" || j.Version != 1 || j.Labels["team"] != "a" || j.Plan == "" || j.StartedAt.IsZero() {
		t.Fatalf("created: %+v", j)
	}
	ts.must("POST", "/v1/jobs", map[string]any{"name": "rule-2", "sql": genToHole, "labels": map[string]string{"team": "a", "tier": "1"}}, 201, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "other", "sql": "INSERT INTO hole SELECT id FROM gen;"}, 201, nil)
	ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "rule-1", "sql": genToHole}, 409, "conflict")
	ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "a/b", "sql": genToHole}, 400, "bad_request")
	ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "..", "sql": genToHole}, 400, "bad_request")
	ts.mustFail("POST", "/v1/jobs", "not an object", 400, "bad_request")
	e = ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "bad", "sql": "INSERT INTO hole\nSELECT idd FROM gen;"}, 400, "bad_sql")
	if e.Line != 2 || e.Column != 8 {
		t.Errorf("bad column: %+v", e)
	}
	e = ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "bad", "sql": "INSERT INTO hole SELECT id FROM gen;\n  INSERT INTO hole SELECT id FROM gen;"}, 400, "bad_sql")
	if e.Line != 2 || e.Column != 3 || !strings.Contains(e.Message, "line 1, column 1") {
		t.Errorf("second INSERT: %+v", e)
	}
	e = ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "bad", "sql": "SET 'pipeline.name' = 'x';\nINSERT INTO hole SELECT id FROM gen;"}, 400, "bad_sql")
	if e.Line != 1 || !strings.Contains(e.Message, "pipeline.name") {
		t.Errorf("SET pipeline.name: %+v", e)
	}
	e = ts.mustFail("POST", "/v1/jobs", map[string]any{"name": "bad", "sql": "CREATE TABLE x (id INT) WITH ('connector' = 'blackhole');"}, 400, "bad_sql")
	if !strings.Contains(e.Message, "starts no job") {
		t.Errorf("no INSERT: %+v", e)
	}
	ts.mustFail("GET", "/v1/jobs/bad", nil, 404, "not_found")
	if _, err := os.Stat(filepath.Join(dir, "jobs", "bad")); !os.IsNotExist(err) {
		t.Errorf("a refused job left its directory: %v", err)
	}

	e = ts.mustFail("GET", "/v1/jobs/rule-3", nil, 404, "not_found")
	if !strings.Contains(e.Message, "did you mean") {
		t.Errorf("unknown job: %+v", e)
	}
	j = ts.waitJob("rule-1", "running")
	if !strings.Contains(j.Plan, "Sink(table=[hole]") || j.SQL != "INSERT INTO hole SELECT id FROM evens;" {
		t.Fatalf("show: %+v", j)
	}
	var list struct{ Jobs []jobJSON }
	ts.must("GET", "/v1/jobs", nil, 200, &list)
	if len(list.Jobs) != 3 || list.Jobs[0].Name != "other" || list.Jobs[1].Name != "rule-1" || list.Jobs[0].Plan != "" {
		t.Fatalf("list: %+v", list)
	}
	ts.must("GET", "/v1/jobs?label=team=a&label=tier=1", nil, 200, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].Name != "rule-2" {
		t.Fatalf("list by labels: %+v", list)
	}
	ts.mustFail("GET", "/v1/jobs?label=team", nil, 400, "bad_request")

	var versions struct{ Versions []versionJSON }
	ts.must("GET", "/v1/jobs/rule-2/versions", nil, 200, &versions)
	if len(versions.Versions) != 1 || versions.Versions[0].Version != 1 || versions.Versions[0].SQL != genToHole {
		t.Fatalf("versions: %+v", versions)
	}
	ts.mustFail("GET", "/v1/jobs/nope/versions", nil, 404, "not_found")

	// Stop and resume, one by one and by label.
	ts.must("POST", "/v1/jobs/rule-1/stop", nil, 200, &j)
	if j.Status != "stopped" || j.StoppedAt.IsZero() || j.Metrics.Checkpoints == 0 {
		t.Fatalf("stopped: %+v", j)
	}
	ts.must("POST", "/v1/jobs/rule-1/stop", map[string]string{"mode": "now"}, 200, &j) // stopped already: as it is
	ts.mustFail("POST", "/v1/jobs/rule-1/stop", map[string]string{"mode": "later"}, 400, "bad_request")
	ts.mustFail("POST", "/v1/jobs/nope/stop", nil, 404, "not_found")
	ts.must("POST", "/v1/jobs/rule-1/resume", nil, 200, &j)
	if j.Status != "running" {
		t.Fatalf("resumed: %+v", j)
	}
	ts.mustFail("POST", "/v1/jobs/nope/resume", nil, 404, "not_found")
	var bulk bulkResponse
	ts.must("POST", "/v1/bulk/stop", map[string]any{"labels": map[string]string{"team": "a"}}, 200, &bulk)
	if !slices.Equal(bulk.Jobs, []string{"rule-1", "rule-2"}) {
		t.Fatalf("bulk stop: %+v", bulk)
	}
	ts.waitJob("other", "running")
	ts.waitJob("rule-2", "stopped")
	ts.mustFail("POST", "/v1/bulk/stop", map[string]any{"labels": map[string]string{}}, 400, "bad_request")
	ts.must("POST", "/v1/bulk/resume", map[string]any{"labels": map[string]string{"tier": "1"}}, 200, &bulk)
	if !slices.Equal(bulk.Jobs, []string{"rule-2"}) {
		t.Fatalf("bulk resume: %+v", bulk)
	}
	ts.waitJob("rule-2", "running")
	ts.waitJob("rule-1", "stopped")

	// Metrics: per job, with its status.
	code, b = ts.call("GET", "/metrics", nil)
	metrics := string(b)
	for _, want := range []string{`sluice_job_rows_in_total{job="rule-2"}`, `sluice_job_status{job="rule-1",status="stopped"} 1`,
		`sluice_job_status{job="rule-2",status="running"} 1`, `sluice_job_checkpoints_total{job="other"}`, "go_goroutines"} {
		if code != 200 || !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}

	// Delete: the job goes, with its directory.
	if code, b := ts.call("DELETE", "/v1/jobs/rule-2", nil); code != 204 || len(b) != 0 {
		t.Fatalf("delete: %d %s", code, b)
	}
	ts.mustFail("GET", "/v1/jobs/rule-2", nil, 404, "not_found")
	ts.mustFail("DELETE", "/v1/jobs/rule-2", nil, 404, "not_found")
	if _, err := os.Stat(filepath.Join(dir, "jobs", "rule-2")); !os.IsNotExist(err) {
		t.Errorf("the deleted job's directory: %v", err)
	}

	// Unknown routes and methods answer in JSON.
	ts.mustFail("GET", "/v2/jobs", nil, 404, "not_found")
	ts.mustFail("PATCH", "/v1/jobs", nil, 405, "bad_request")
	if strings.Contains(ts.log.String(), token) {
		t.Error("the log shows a token")
	}
}

// The state belongs to the job's name: a stopped job resumes from its
// positions; a job deleted and published again under its name starts
// from scratch.
func TestResumeAndDelete(t *testing.T) {
	bs := kafkatest.Start(t, 2, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	produceIDs(t, bs, "in", 0, 50)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "copy", "sql": kafkaToFile(bs, out)}, 201, nil)
	waitOutput(t, out, 50)
	ts.must("POST", "/v1/jobs/copy/stop", nil, 200, nil)
	produceIDs(t, bs, "in", 50, 80)
	ts.must("POST", "/v1/jobs/copy/resume", nil, 200, nil)
	waitOutput(t, out, 80)

	if code, b := ts.call("DELETE", "/v1/jobs/copy", nil); code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	out2 := t.TempDir()
	ts.must("POST", "/v1/jobs", map[string]any{"name": "copy", "sql": kafkaToFile(bs, out2)}, 201, nil)
	waitOutput(t, out2, 80) // from the start of the topic again
}

// Closing the server stops its jobs with a final checkpoint and leaves
// them running in the store: a server started again over the data
// directory runs them again from their state, and a stopped job stays
// stopped. The output of the exactly-once file sink has every row once.
func TestRestart(t *testing.T) {
	bs := kafkatest.Start(t, 2, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	ts.must("POST", "/v1/catalog", map[string]string{"sql": `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');`}, 200, nil)
	produceIDs(t, bs, "in", 0, 100)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "copy", "sql": kafkaToFile(bs, out), "labels": map[string]string{"k": "v"}}, 201, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "idle", "sql": "CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO hole SELECT id FROM gen;"}, 201, nil)
	ts.must("POST", "/v1/jobs/idle/stop", nil, 200, nil)
	waitOutput(t, out, 100)
	ts.close()
	var rec jobRecord
	b, err := os.ReadFile(filepath.Join(dir, "jobs", "copy", "job.json"))
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Status != "running" {
		t.Fatalf("job.json after the server closed: %v %s", err, b)
	}

	produceIDs(t, bs, "in", 100, 200)
	ts = startServer(t, dir, false, "")
	j := ts.waitJob("copy", "running")
	if j.Labels["k"] != "v" || j.Version != 1 {
		t.Fatalf("after the restart: %+v", j)
	}
	ts.waitJob("idle", "stopped")
	waitOutput(t, out, 200)
	var cat catalogJSON
	ts.must("GET", "/v1/catalog", nil, 200, &cat)
	if !slices.Equal(cat.Tables, []string{"gen"}) {
		t.Fatalf("catalog after the restart: %+v", cat)
	}
}

// A job that fails is marked failed with its error and time; it is not
// run again at a restart, and runs again when resumed.
func TestFailedJob(t *testing.T) {
	dir, in, out := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(in, "a.json"), []byte("{\"id\": 1}\n{\"id\": \"x\"}\n"), 0o644)
	ts := startServer(t, dir, false, "")
	sql := fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/', 'format' = 'json', 'json.ignore-parse-errors' = 'false');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/', 'format' = 'json');
INSERT INTO out SELECT id FROM src;`, in, out)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "f", "sql": sql}, 201, nil)
	j := ts.waitJob("f", "failed")
	if len(j.Errors) != 1 || j.Errors[0].Time.IsZero() || j.Errors[0].Message == "" {
		t.Fatalf("failed job: %+v", j)
	}
	ts.close()
	ts = startServer(t, dir, false, "")
	j = ts.waitJob("f", "failed")
	if len(j.Errors) != 1 {
		t.Fatalf("after a restart: %+v", j)
	}
	ts.must("POST", "/v1/jobs/f/resume", nil, 200, nil)
	j = ts.waitJob("f", "failed")
	if len(j.Errors) != 2 {
		t.Fatalf("resumed, failed again: %+v", j)
	}
}

// A bounded job finishes; its status says so.
func TestFinishedJob(t *testing.T) {
	dir, in, out := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(in, "a.json"), []byte("{\"id\": 0}\n{\"id\": 1}\n"), 0o644)
	ts := startServer(t, dir, false, "")
	sql := fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/', 'format' = 'json');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/', 'format' = 'json');
INSERT INTO out SELECT id FROM src;`, in, out)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "once", "sql": sql}, 201, nil)
	j := ts.waitJob("once", "finished")
	if j.Metrics.RowsOut != 2 || j.StoppedAt.IsZero() {
		t.Fatalf("finished: %+v", j)
	}
	waitOutput(t, out, 2)
}

// Secrets of table options never show in answers or in the log.
func TestSecretsMasked(t *testing.T) {
	const secret = "hunter2-very-secret"
	dir := t.TempDir()
	ts := startServer(t, dir, false, "")
	sql := `CREATE TABLE users (id BIGINT, name STRING) WITH ('connector' = 'jdbc',
  'url' = 'jdbc:postgresql://127.0.0.1:1/db', 'table-name' = 'users', 'username' = 'u', 'password' = '` + secret + `');
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM gen;`
	var answers []string
	record := func(method, path string, body any) {
		_, b := ts.call(method, path, body)
		answers = append(answers, string(b))
	}
	record("POST", "/v1/jobs", map[string]any{"name": "s", "sql": sql})
	record("GET", "/v1/jobs/s", nil)
	record("GET", "/v1/jobs", nil)
	record("GET", "/v1/jobs/s/versions", nil)
	record("POST", "/v1/explain", map[string]any{"sql": sql})
	record("POST", "/v1/validate", map[string]any{"sql": strings.Replace(sql, "SELECT id", "SELECT idd", 1)})
	record("POST", "/v1/catalog", map[string]any{"sql": strings.Split(sql, ";")[0] + ";"})
	record("POST", "/v1/catalog", map[string]any{"sql": strings.Split(sql, ";")[0] + ";"}) // exists already: an error quoting it?
	all := strings.Join(answers, "\n")
	if !strings.Contains(all, `'password' = 'xxxxx'`) {
		t.Errorf("the SQL shown is not masked as expected:\n%s", all)
	}
	if strings.Contains(all, secret) {
		t.Errorf("an answer shows the secret:\n%s", all)
	}
	ts.close()
	if strings.Contains(ts.log.String(), secret) {
		t.Errorf("the log shows the secret:\n%s", ts.log.String())
	}
	// The store keeps the SQL as given: the job runs from it.
	if b, _ := os.ReadFile(filepath.Join(dir, "jobs", "s", "versions", "1.sql")); !bytes.Contains(b, []byte(secret)) {
		t.Errorf("the stored version lost its password:\n%s", b)
	}
}

// Without auth, the server serves only on a loopback address.
func TestNoAuthOnlyLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8081": true, "localhost:8081": true, "[::1]:8081": true,
		"0.0.0.0:8081": false, ":8081": false, "10.1.2.3:8081": false, "example.com:8081": false} {
		if err := CheckListen(addr, false); (err == nil) != ok {
			t.Errorf("CheckListen(%s, auth off): %v", addr, err)
		}
		if err := CheckListen(addr, true); err != nil {
			t.Errorf("CheckListen(%s, auth on): %v", addr, err)
		}
	}
	s, err := New(Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := s.Serve(ln); err == nil || !strings.Contains(err.Error(), "auth off") {
		t.Fatalf("Serve on %s with auth off: %v", ln.Addr(), err)
	}
}

// With a certificate and a key, the server serves HTTPS.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)

	s, err := New(Config{DataDir: filepath.Join(dir, "data"), TLSCertFile: certFile, TLSKeyFile: keyFile,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		s.Close()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /healthz over TLS: %d", resp.StatusCode)
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain HTTP answered 200")
	}
	if _, err := New(Config{DataDir: filepath.Join(dir, "data2"), TLSCertFile: certFile}); err == nil {
		t.Fatal("a certificate without a key was accepted")
	}
}
