package http_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/enginetest"
)

var receivingOn = regexp.MustCompile(`http table '([^']+)': receiving on (https?://[^ \n]+)`)

// endpoint waits for the job's log to say where table receives and
// returns that URL.
func endpoint(t testing.TB, e *enginetest.Engine, table string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range receivingOn.FindAllStringSubmatch(e.Log.String(), -1) {
			if m[1] == table {
				return m[2]
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("table %s does not receive; log:\n%s", table, e.Log)
	return ""
}

// response is an answer to a push.
type response struct {
	status int
	body   string
	header http.Header
	err    error
}

func (r response) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	return fmt.Sprintf("%d %s", r.status, strings.TrimSpace(r.body))
}

// push sends body to url with the token (none if empty).
func push(url, token, body string) response {
	return do(http.MethodPost, url, token, body, nil)
}

func do(method, url, token, body string, header map[string]string) response {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return response{err: err}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// pushAsync sends body in a goroutine; the answer comes on the channel.
func pushAsync(url, token, body string) <-chan response {
	c := make(chan response, 1)
	go func() { c <- push(url, token, body) }()
	return c
}

const pushJob = `
CREATE TABLE hook (id INT, name STRING,
  h MAP<STRING, STRING> METADATA FROM 'headers' VIRTUAL,
  remote STRING METADATA FROM 'remote-address' VIRTUAL,
  p STRING METADATA FROM 'path' VIRTUAL,
  q STRING METADATA FROM 'query' VIRTUAL,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL
) WITH ('connector' = 'http', 'source.listen' = '127.0.0.1:0', 'source.path' = '/hooks/', 'source.token' = 's3cret-token' $OPTS);
CREATE TABLE out (id INT, name STRING, kind STRING, has_auth BOOLEAN, local BOOLEAN, p STRING, q STRING, recent BOOLEAN)
WITH ('connector' = 'print');
INSERT INTO out SELECT id, name, h['x-event-kind'], h['authorization'] IS NOT NULL, remote LIKE '127.0.0.1:%', p, q,
  ts > TIMESTAMP '2020-01-01 00:00:00' FROM hook;`

// TestPushLayoutsAndMetadata posts one object, an array and newline-
// delimited objects to a job without checkpoints: each request is
// answered 200 once the job has read it, and its rows carry the
// request's headers (without the credentials), remote address, path,
// query and time.
func TestPushLayoutsAndMetadata(t *testing.T) {
	e := enginetest.Open(t)
	j := e.Start(t, pushJob, "$OPTS", "")
	url := endpoint(t, e, "hook")
	if !strings.HasSuffix(url, "/hooks/") {
		t.Fatalf("endpoint %s", url)
	}
	r := do(http.MethodPost, url+"github?delivery=7", "s3cret-token", `{"id":1,"name":"one"}`, map[string]string{"X-Event-Kind": "push"})
	if r.status != 200 || strings.TrimSpace(r.body) != `{"accepted":1}` {
		t.Errorf("one object: %s", r)
	}
	if r := push(url+"a", "s3cret-token", ` [ {"id":2,"name":"two"} , {"id":3} ] `); r.status != 200 || strings.TrimSpace(r.body) != `{"accepted":2}` {
		t.Errorf("array: %s", r)
	}
	if r := push(url+"b", "s3cret-token", "{\"id\":4,\"name\":\"four\"}\n{\"id\":5,\n \"name\":\"five\"}\r\n\n"); r.status != 200 || strings.TrimSpace(r.body) != `{"accepted":2}` {
		t.Errorf("ndjson: %s", r)
	}
	if r := push(url+"c", "s3cret-token", `[]`); r.status != 200 || strings.TrimSpace(r.body) != `{"accepted":0}` {
		t.Errorf("empty array: %s", r)
	}
	got := e.Out.WaitLines(t, "+I", 5)
	enginetest.Stop(t, j)
	want := []string{
		"+I[1, one, push, FALSE, TRUE, /hooks/github, delivery=7, TRUE]",
		"+I[2, two, null, FALSE, TRUE, /hooks/a, null, TRUE]",
		"+I[3, null, null, FALSE, TRUE, /hooks/a, null, TRUE]",
		"+I[4, four, null, FALSE, TRUE, /hooks/b, null, TRUE]",
		"+I[5, five, null, FALSE, TRUE, /hooks/b, null, TRUE]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPushRefusals: a request without the right token, to another path,
// with another method, too large, or malformed is refused, and nothing
// of it reaches the job; a malformed one is kept in the dead-letter file
// with the reason, its position named.
func TestPushRefusals(t *testing.T) {
	e := enginetest.Open(t)
	dl := filepath.Join(t.TempDir(), "refused.jsonl")
	j := e.Start(t, pushJob, "$OPTS", ", 'source.max-body-size' = '200 b', 'dead-letter.path' = '"+dl+"'")
	url := endpoint(t, e, "hook")
	cases := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		status int
		want   string
	}{
		{"no token", "POST", "x", "", `{"id":100}`, 401, "missing or wrong token"},
		{"wrong token", "POST", "x", "s3cret-tokeN", `{"id":100}`, 401, "missing or wrong token"},
		{"other path", "POST", "../other", "s3cret-token", `{"id":100}`, 404, "no endpoint at /other"},
		{"GET", "GET", "x", "s3cret-token", "", 405, "GET is not allowed"},
		{"too large", "POST", "x", "s3cret-token", `[` + strings.Repeat(`{"id":100},`, 30) + `{"id":100}]`, 413, "larger than 'source.max-body-size' (200 bytes)"},
		{"bad record", "POST", "x", "s3cret-token", "[{\"id\":100},\n {\"id\":\"x\"}]", 400, "record 2 at line 2, column 2:"},
		{"bad syntax", "POST", "x", "s3cret-token", "{\"id\":100}\n{\"id\":101", 400, "invalid body at line 2, column 1 (byte 11): unexpected end of the body: the object that starts here is not closed"},
		{"not an object", "POST", "x", "s3cret-token", `{"id":100} 7`, 400, `invalid body at line 1, column 12 (byte 11): unexpected '7', expected a JSON object`},
		{"array not closed", "POST", "x", "s3cret-token", `[{"id":100} {"id":101}]`, 400, `line 1, column 13 (byte 12): unexpected '{', expected ',' or ']'`},
		{"empty", "POST", "x", "s3cret-token", ` `, 400, `the body is empty`},
	}
	for _, c := range cases {
		r := do(c.method, url+c.path, c.token, c.body, nil)
		if r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("%s: got %s, want %d with %q", c.name, r, c.status, c.want)
		}
		if c.status == 401 && r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", c.name)
		}
		if c.status == 405 && r.header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q", c.name, r.header.Get("Allow"))
		}
	}
	if r := push(url, "s3cret-token", `{"id":1}`); r.status != 200 {
		t.Errorf("a good request after them: %s", r)
	}
	got := e.Out.WaitLines(t, "+I", 1)
	enginetest.Stop(t, j)
	if len(got) != 1 || !strings.HasPrefix(got[0], "+I[1,") {
		t.Errorf("rows: %v (nothing of a refused request may reach the job)", got)
	}
	if h := j.Health(); h.Malformed != 5 {
		t.Errorf("skipped %d, want 5 (the malformed requests)", h.Malformed)
	}
	data, err := os.ReadFile(dl)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], `"error":"record 2 at line 2, column 2: `) ||
		!strings.Contains(lines[0], `"body":"[{\"id\":100},\n {\"id\":\"x\"}]"`) || !strings.Contains(lines[0], `"remote":"127.0.0.1:`) {
		t.Errorf("dead letters:\n%s", data)
	}
	if strings.Contains(e.Log.String(), "s3cret-token") {
		t.Errorf("the token shows in the log:\n%s", e.Log)
	}
}

// TestPushIgnoreParseErrors: with 'json.ignore-parse-errors' a request's
// records that do not decode are skipped (and kept as dead letters), the
// others taken; a body that does not split into records is still
// refused whole.
func TestPushIgnoreParseErrors(t *testing.T) {
	e := enginetest.Open(t)
	dl := filepath.Join(t.TempDir(), "skipped.jsonl")
	j := e.Start(t, pushJob, "$OPTS", ", 'json.ignore-parse-errors' = 'true', 'dead-letter.path' = '"+dl+"'")
	url := endpoint(t, e, "hook")
	if r := push(url, "s3cret-token", `[{"id":1},{"id":"x"},{"id":3}]`); r.status != 200 || strings.TrimSpace(r.body) != `{"accepted":2,"skipped":1}` {
		t.Errorf("got %s", r)
	}
	if r := push(url, "s3cret-token", `[{"id":4},{"id":5}`); r.status != 400 {
		t.Errorf("broken body: got %s", r)
	}
	got := e.Out.WaitLines(t, "+I", 2)
	enginetest.Stop(t, j)
	if len(got) != 2 || !strings.HasPrefix(got[0], "+I[1,") || !strings.HasPrefix(got[1], "+I[3,") {
		t.Errorf("rows: %v", got)
	}
	data, _ := os.ReadFile(dl)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"record":2,"body":"{\"id\":\"x\"}"`) {
		t.Errorf("dead letters:\n%s", data)
	}
}

// heldJob takes checkpoints every $CP, with its state in $DIR.
const heldJob = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'held';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE hook (id INT) WITH ('connector' = 'http', 'source.listen' = '127.0.0.1:0', 'source.auth' = 'none' $OPTS);
CREATE TABLE out (id INT) WITH ('connector' = 'print');
INSERT INTO out SELECT id FROM hook;`

// TestPushHeldUntilCheckpoint: in a job with checkpoints, a request is
// answered only once a checkpoint holding its rows completed. With an
// hour between checkpoints, the rows are processed but the answer waits,
// until the job stops (its final commit) — or, cancelled, is 503.
func TestPushHeldUntilCheckpoint(t *testing.T) {
	dir := t.TempDir()
	e := enginetest.Open(t)
	j := e.Start(t, heldJob, "$DIR", dir, "$CP", "1 h", "$OPTS", "")
	url := endpoint(t, e, "hook")
	answer := pushAsync(url, "", `[{"id":1},{"id":2}]`)
	e.Out.WaitLines(t, "+I", 2)
	select {
	case r := <-answer:
		t.Fatalf("answered before any checkpoint: %s", r)
	default:
	}
	enginetest.Stop(t, j) // the final commit holds the rows
	if r := <-answer; r.status != 200 || strings.TrimSpace(r.body) != `{"accepted":2}` {
		t.Errorf("after the final commit: %s", r)
	}
	e.Close()

	// A job cancelled as a crash never makes them safe: 503, to send
	// again.
	e = enginetest.Open(t)
	j = e.Start(t, heldJob, "$DIR", dir, "$CP", "1 h", "$OPTS", "")
	url = endpoint(t, e, "hook")
	answer = pushAsync(url, "", `{"id":3}`)
	e.Out.WaitLines(t, "+I", 1)
	j.Cancel()
	<-j.Done()
	if r := <-answer; r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "send the request again") {
		t.Errorf("after a cancel: %s", r)
	}
}

// TestPushAnsweredAtCheckpoint: with frequent checkpoints, requests are
// answered as checkpoints complete, while the job runs.
func TestPushAnsweredAtCheckpoint(t *testing.T) {
	e := enginetest.Open(t)
	j := e.Start(t, heldJob, "$DIR", t.TempDir(), "$CP", "50 ms", "$OPTS", "")
	url := endpoint(t, e, "hook")
	for i := range 20 {
		if r := push(url, "", fmt.Sprintf(`{"id":%d}`, i)); r.status != 200 {
			t.Fatalf("request %d: %s", i, r)
		}
	}
	got := e.Out.WaitLines(t, "+I", 20)
	enginetest.Stop(t, j)
	if len(got) != 20 {
		t.Errorf("%d rows", len(got))
	}
}

// TestPushTooManyOpen: beyond 'source.max-open-requests' requests
// waiting for their checkpoint, a request is answered 503 with a
// Retry-After.
func TestPushTooManyOpen(t *testing.T) {
	e := enginetest.Open(t)
	j := e.Start(t, heldJob, "$DIR", t.TempDir(), "$CP", "1 h", "$OPTS", ", 'source.max-open-requests' = '1'")
	url := endpoint(t, e, "hook")
	held := pushAsync(url, "", `{"id":1}`)
	e.Out.WaitLines(t, "+I", 1)
	r := push(url, "", `{"id":2}`)
	if r.status != 503 || r.header.Get("Retry-After") != "1" || !strings.Contains(r.body, "'source.max-open-requests' = 1") {
		t.Errorf("second request: %s", r)
	}
	enginetest.Stop(t, j)
	if r := <-held; r.status != 200 {
		t.Errorf("held request: %s", r)
	}
	if got := e.Out.Lines("+I"); len(got) != 1 {
		t.Errorf("rows %v", got)
	}
}

// TestPushOptionErrors: options that cannot work are refused when the
// job starts.
func TestPushOptionErrors(t *testing.T) {
	e := enginetest.Open(t)
	for i, c := range []struct{ opts, want string }{
		{`'source.listen' = '127.0.0.1:0'`, "missing required option 'source.token'"},
		{`'source.listen' = '0.0.0.0:0', 'source.auth' = 'none'`, "option 'source.auth' = 'none' is for a loopback address only"},
		{`'source.token' = 'abcd'`, "missing required option 'source.listen'"},
		{`'source.listen' = 'nowhere', 'source.token' = 'abcd'`, "is not host:port"},
		{`'source.listen' = '127.0.0.1:0', 'source.token' = 'abcd', 'url' = 'http://x'`, "a scanned http table is a push source"},
		{`'source.listen' = '127.0.0.1:0', 'source.token' = 'abcd', 'source.tls.cert-file' = 'x.pem'`, "go together"},
		{`'source.listen' = '127.0.0.1:0', 'source.token' = 'abcd', 'format' = 'csv'`, "unsupported value 'csv'"},
	} {
		src := fmt.Sprintf(`CREATE TABLE s%d (id INT) WITH ('connector' = 'http', %s);
CREATE TABLE o%d (id INT) WITH ('connector' = 'blackhole');
INSERT INTO o%d SELECT * FROM s%d;`, i, c.opts, i, i, i)
		err := e.ExecErr(src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.opts, err, c.want)
		}
	}
}

// collector is an HTTP server that keeps the bodies it gets and answers
// them with status.
type collector struct {
	url    string
	mu     sync.Mutex
	bodies []string
	status int
}

func newCollector(t *testing.T, status int) *collector {
	c := &collector{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies = append(c.bodies, string(b))
		st := c.status
		c.mu.Unlock()
		w.WriteHeader(st)
		if st >= 400 {
			io.WriteString(w, "no thanks")
		}
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

// TestSinkJob: a bounded job writes its rows in batches and ends once
// they are delivered.
func TestSinkJob(t *testing.T) {
	c := newCollector(t, 200)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '10');
CREATE TABLE out (n INT, sq INT) WITH ('connector' = 'http', 'url' = '$URL/rows', 'sink.buffer-flush.max-rows' = '4');
INSERT INTO out SELECT n, n * n FROM g;`, "$URL", c.url)
	if err := enginetest.WaitErr(t, j); err != nil {
		t.Fatal(err)
	}
	got := c.got()
	want := []string{`[{"n":1,"sq":1},{"n":2,"sq":4},{"n":3,"sq":9},{"n":4,"sq":16}]`,
		`[{"n":5,"sq":25},{"n":6,"sq":36},{"n":7,"sq":49},{"n":8,"sq":64}]`, `[{"n":9,"sq":81},{"n":10,"sq":100}]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSinkJobFails: an endpoint that refuses the rows fails the job,
// with the status and the start of the response.
func TestSinkJobFails(t *testing.T) {
	c := newCollector(t, 400)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE out (n INT) WITH ('connector' = 'http', 'url' = '$URL/rows', 'http.header.Authorization' = 'Bearer tok-tok-tok');
INSERT INTO out SELECT n FROM g;`, "$URL", c.url)
	err := enginetest.WaitErr(t, j)
	want := "http table 'out': POST " + c.url + "/rows: 400 Bad Request: no thanks"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestPushToSink runs a push source into an http sink with checkpoints:
// when a request is answered 200, its rows have reached the sink's
// endpoint (the checkpoint that made them safe flushed the sink first).
func TestPushToSink(t *testing.T) {
	c := newCollector(t, 200)
	e := enginetest.Open(t)
	j := e.Start(t, `
SET 'state.dir' = '$DIR';
SET 'execution.checkpointing.interval' = '20 ms';
CREATE TABLE hook (id INT, kind STRING) WITH ('connector' = 'http', 'source.listen' = '127.0.0.1:0', 'source.token' = 'tkn-1234');
CREATE TABLE fwd (id INT, kind STRING) WITH ('connector' = 'http', 'url' = '$URL', 'sink.batch.mode' = 'ndjson',
  'sink.buffer-flush.interval' = '1 h');
INSERT INTO fwd SELECT id, UPPER(kind) FROM hook WHERE kind <> 'noise';`, "$DIR", t.TempDir(), "$URL", c.url)
	url := endpoint(t, e, "hook")
	for i := range 10 {
		r := push(url, "tkn-1234", fmt.Sprintf(`[{"id":%d,"kind":"alert"},{"id":%d,"kind":"noise"}]`, i, i))
		if r.status != 200 {
			t.Fatalf("request %d: %s", i, r)
		}
		all := strings.Join(c.got(), "")
		if !strings.Contains(all, fmt.Sprintf(`{"id":%d,"kind":"ALERT"}`, i)) {
			t.Fatalf("request %d answered before its row reached the sink's endpoint: %q", i, all)
		}
	}
	enginetest.Stop(t, j)
	if n := strings.Count(strings.Join(c.got(), ""), "\n"); n != 10 {
		t.Errorf("%d rows forwarded, want 10", n)
	}
}
