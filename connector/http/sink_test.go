package http

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/logtest"
	"github.com/sluicesql/sluice/types"
)

var sinkSchema = types.NewSchema(types.Column{Name: "id", Type: types.BigInt}, types.Column{Name: "name", Type: types.String})

// received is a request a receiver got.
type received struct {
	method, path string
	header       http.Header
	body         string
}

// receiver is an HTTP server that records the requests it gets and
// answers them as script says (200 when script is nil).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	script func(n int) (status int, header map[string]string, body string)
}

func newReceiver(t *testing.T, script func(n int) (int, map[string]string, string)) *receiver {
	r := &receiver{script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		b, _ := io.ReadAll(q.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, received{q.Method, q.URL.Path, q.Header.Clone(), string(b)})
		r.mu.Unlock()
		if r.script == nil {
			return
		}
		status, h, body := r.script(n)
		for k, v := range h {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func newTestSink(t *testing.T, opts connector.Options) (*Sink, *logtest.Lines, *atomic.Int64) {
	t.Helper()
	o := connector.Options{"connector": "http", "sink.retry.initial-backoff": "1 ms", "sink.retry.max-backoff": "5 ms"}
	for k, v := range opts {
		o[k] = v
	}
	lg := &logtest.Lines{}
	var dropped atomic.Int64
	e := env()
	e.Logf, e.Dropped = lg.Logf, &dropped
	s, err := New().CreateSink(connector.Table{Name: "out", Schema: sinkSchema, Options: o}, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*Sink), lg, &dropped
}

func rows(from, to int) *types.Batch {
	var b types.Batch
	for i := from; i < to; i++ {
		b.Append(types.Row{Kind: types.Insert, Vals: []types.Value{types.BigIntValue(int64(i)), types.StringValue(fmt.Sprintf("n%d", i))}})
	}
	return &b
}

// TestSinkBatchModes sends 7 rows in batches of 3 in each mode.
func TestSinkBatchModes(t *testing.T) {
	for _, c := range []struct {
		mode, ctype string
		want        []string
	}{
		{"array", "application/json", []string{
			`[{"id":0,"name":"n0"},{"id":1,"name":"n1"},{"id":2,"name":"n2"}]`,
			`[{"id":3,"name":"n3"},{"id":4,"name":"n4"},{"id":5,"name":"n5"}]`,
			`[{"id":6,"name":"n6"}]`}},
		{"ndjson", "application/x-ndjson", []string{
			"{\"id\":0,\"name\":\"n0\"}\n{\"id\":1,\"name\":\"n1\"}\n{\"id\":2,\"name\":\"n2\"}\n",
			"{\"id\":3,\"name\":\"n3\"}\n{\"id\":4,\"name\":\"n4\"}\n{\"id\":5,\"name\":\"n5\"}\n",
			"{\"id\":6,\"name\":\"n6\"}\n"}},
		{"single", "application/json", []string{`{"id":0,"name":"n0"}`, `{"id":1,"name":"n1"}`, `{"id":2,"name":"n2"}`,
			`{"id":3,"name":"n3"}`, `{"id":4,"name":"n4"}`, `{"id":5,"name":"n5"}`, `{"id":6,"name":"n6"}`}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			rc := newReceiver(t, nil)
			s, _, _ := newTestSink(t, connector.Options{"url": rc.URL + "/in", "sink.batch.mode": c.mode,
				"sink.buffer-flush.max-rows": "3", "sink.buffer-flush.interval": "1 h", "sink.method": "put",
				"http.header.Authorization": "Bearer abc-123", "http.header.X-Source": "sluice"})
			if err := s.Write(context.Background(), rows(0, 4)); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(context.Background(), rows(4, 7)); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := rc.requests()
			if len(got) != len(c.want) {
				t.Fatalf("%d requests, want %d: %v", len(got), len(c.want), got)
			}
			for i, r := range got {
				if r.body != c.want[i] {
					t.Errorf("request %d: %q, want %q", i, r.body, c.want[i])
				}
				if r.method != "PUT" || r.path != "/in" || r.header.Get("Content-Type") != c.ctype ||
					r.header.Get("Authorization") != "Bearer abc-123" || r.header.Get("X-Source") != "sluice" {
					t.Errorf("request %d: %s %s %v", i, r.method, r.path, r.header)
				}
			}
		})
	}
}

// TestSinkInterval: rows go out 'sink.buffer-flush.interval' after the
// first of a batch, without a flush.
func TestSinkInterval(t *testing.T) {
	rc := newReceiver(t, nil)
	s, _, _ := newTestSink(t, connector.Options{"url": rc.URL, "sink.buffer-flush.interval": "10 ms"})
	if err := s.Write(context.Background(), rows(0, 2)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := rc.requests(); len(got) != 1 || got[0].body != `[{"id":0,"name":"n0"},{"id":1,"name":"n1"}]` {
		t.Errorf("got %v", got)
	}
}

// TestSinkRetries: 503, 429 and 500 are retried; the batch then goes
// through once.
func TestSinkRetries(t *testing.T) {
	rc := newReceiver(t, func(n int) (int, map[string]string, string) {
		return []int{503, 429, 500, 200}[n], map[string]string{"Retry-After": "0"}, ""
	})
	s, lg, _ := newTestSink(t, connector.Options{"url": rc.URL})
	s.Write(context.Background(), rows(0, 2))
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 4 || got[0].body != got[3].body {
		t.Errorf("%d requests", len(got))
	}
	if log := lg.String(); !strings.Contains(log, "503 Service Unavailable; retrying in 1ms (at most 3 times)") ||
		!strings.Contains(log, "succeeded at attempt 4") {
		t.Errorf("log:\n%s", log)
	}
}

// TestSinkRetryAfter: a Retry-After longer than the back-off is waited
// (within 'sink.retry.max-backoff').
func TestSinkRetryAfter(t *testing.T) {
	rc := newReceiver(t, func(n int) (int, map[string]string, string) {
		if n == 0 {
			return 503, map[string]string{"Retry-After": "1"}, "busy"
		}
		return 204, nil, ""
	})
	s, lg, _ := newTestSink(t, connector.Options{"url": rc.URL, "sink.retry.max-backoff": "1 min"})
	s.Write(context.Background(), rows(0, 1))
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if log := lg.String(); !strings.Contains(log, "503 Service Unavailable: busy; retrying in 1s") {
		t.Errorf("log:\n%s", log)
	}
}

// TestSinkExhausted: a batch that still fails after 'sink.max-retries'
// fails the sink, naming the status and the response; with
// 'sink.dead-letter.path' its rows go there instead, with the reason.
func TestSinkExhausted(t *testing.T) {
	always := func(int) (int, map[string]string, string) { return 503, nil, "overloaded\n" }
	t.Run("fail", func(t *testing.T) {
		rc := newReceiver(t, always)
		s, _, _ := newTestSink(t, connector.Options{"url": rc.URL + "/x", "sink.max-retries": "2"})
		s.Write(context.Background(), rows(0, 2))
		err := s.Flush(context.Background())
		want := "http table 'out': POST " + rc.URL + "/x: 503 Service Unavailable: overloaded (after 3 attempts)"
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
		if n := len(rc.requests()); n != 3 {
			t.Errorf("%d requests", n)
		}
		if err := s.Write(context.Background(), rows(2, 3)); err == nil || err.Error() != want {
			t.Errorf("a write after: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("close repeats the failure: %v", err)
		}
	})
	t.Run("dead-letter", func(t *testing.T) {
		rc := newReceiver(t, always)
		dl := filepath.Join(t.TempDir(), "dead.jsonl")
		s, lg, dropped := newTestSink(t, connector.Options{"url": rc.URL, "sink.max-retries": "1", "sink.dead-letter.path": dl,
			"sink.buffer-flush.max-rows": "2"})
		s.Write(context.Background(), rows(0, 3))
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(dl)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], `"error":"POST `+rc.URL+`: 503 Service Unavailable: overloaded (after 2 attempts)","row":{"id":0,"name":"n0"}}`) ||
			!strings.Contains(lines[2], `"row":{"id":2,"name":"n2"}}`) {
			t.Errorf("dead letters:\n%s", data)
		}
		if s.Dropped() != 3 || dropped.Load() != 3 {
			t.Errorf("dropped %d, counted %d", s.Dropped(), dropped.Load())
		}
		if !strings.Contains(lg.String(), "2 rows written to the dead-letter file") {
			t.Errorf("log:\n%s", lg)
		}
	})
}

// TestSinkPermanent: a 4xx other than 408 and 429 is not retried. The
// rows' failure (400) goes to the dead letters; the endpoint's (401, a
// redirect) fails the sink even with a dead-letter file.
func TestSinkPermanent(t *testing.T) {
	for _, c := range []struct {
		status     int
		header     map[string]string
		deadLetter bool
		want       string
	}{
		{400, nil, false, "400 Bad Request: field 'name' is too long"},
		{400, nil, true, ""},
		{422, nil, true, ""},
		{401, nil, true, "401 Unauthorized: field 'name' is too long"},
		{302, map[string]string{"Location": "http://elsewhere/in"}, true, "302 Found (redirect to http://elsewhere/in: the sink does not follow redirects"},
	} {
		t.Run(fmt.Sprint(c.status, c.deadLetter), func(t *testing.T) {
			rc := newReceiver(t, func(int) (int, map[string]string, string) { return c.status, c.header, "field 'name' is too long" })
			opts := connector.Options{"url": rc.URL}
			dl := filepath.Join(t.TempDir(), "dead.jsonl")
			if c.deadLetter {
				opts["sink.dead-letter.path"] = dl
			}
			s, _, _ := newTestSink(t, opts)
			s.Write(context.Background(), rows(0, 1))
			err := s.Flush(context.Background())
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v, want %q", err, c.want)
			}
			if n := len(rc.requests()); n != 1 {
				t.Errorf("%d requests", n)
			}
			if data, _ := os.ReadFile(dl); c.deadLetter && c.want == "" && !strings.Contains(string(data), `"row":{"id":0,"name":"n0"}`) {
				t.Errorf("dead letters: %q", data)
			}
		})
	}
}

// TestSinkUnreachable: a refused connection is retried, then fails the
// sink, saying so.
func TestSinkUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, _, _ := newTestSink(t, connector.Options{"url": "http://" + addr + "/in", "sink.max-retries": "1"})
	s.Write(context.Background(), rows(0, 1))
	err = s.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "POST http://"+addr+"/in: dial tcp "+addr+": connect: connection refused (after 2 attempts)") {
		t.Errorf("got %v", err)
	}
}

// TestSinkSecretsMasked: credentials in the URL and in headers never
// show in errors, even when the endpoint echoes them.
func TestSinkSecretsMasked(t *testing.T) {
	rc := newReceiver(t, nil)
	rc.script = func(n int) (int, map[string]string, string) {
		r := rc.requests()[n]
		return 400, nil, "you sent " + r.header.Get("Authorization") + " and " + r.header.Get("X-Api-Key")
	}
	u := strings.Replace(rc.URL, "http://", "http://user:pa55word@", 1) + "/in?token=qs-secret-1"
	s, _, _ := newTestSink(t, connector.Options{"url": u, "http.header.Authorization": "Bearer hdr-secret-1", "http.header.X-Api-Key": "key-secret-1"})
	s.Write(context.Background(), rows(0, 1))
	err := s.Flush(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	for _, secret := range []string{"pa55word", "qs-secret-1", "hdr-secret-1", "key-secret-1"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q shows in %v", secret, err)
		}
	}
}

// TestSinkBackPressure: while a batch is being sent and the next is
// full, Write waits.
func TestSinkBackPressure(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(int) (int, map[string]string, string) { <-release; return 200, nil, "" })
	s, _, _ := newTestSink(t, connector.Options{"url": rc.URL, "sink.buffer-flush.max-rows": "2", "sink.buffer-flush.interval": "1 h"})
	wrote := make(chan error, 1)
	go func() { wrote <- s.Write(context.Background(), rows(0, 5)) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	pending := s.pending.len()
	s.mu.Unlock()
	select {
	case err := <-wrote:
		t.Fatalf("Write returned (%v) with a batch in flight and %d rows pending", err, pending)
	default:
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.requests()); n != 3 {
		t.Errorf("%d requests", n)
	}
}

// TestSinkOptionErrors: bad options are refused when the sink is made.
func TestSinkOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{}, "missing required option 'url'"},
		{connector.Options{"url": "ftp://x/"}, "is not an http:// or https:// URL"},
		{connector.Options{"url": "http://x/", "sink.method": "GET"}, "must be 'POST', 'PUT' or 'PATCH'"},
		{connector.Options{"url": "http://x/", "sink.batch.mode": "csv"}, "must be 'array', 'ndjson' or 'single'"},
		{connector.Options{"url": "http://x/", "sink.buffer-flush.max-rows": "0"}, "between 1 and"},
		{connector.Options{"url": "http://x/", "sink.max-retries": "-1"}, "between 0 and 1000"},
		{connector.Options{"url": "http://x/", "sink.retry.initial-backoff": "1 min", "sink.retry.max-backoff": "1 s"}, "the first no larger"},
		{connector.Options{"url": "http://x/", "sink.dead-letter.path": ""}, "must not be empty"},
		{connector.Options{"url": "http://x/", "source.listen": "127.0.0.1:1"}, "unsupported option 'source.listen'"},
		{connector.Options{"url": "http://x/", "format": "csv"}, "unsupported value 'csv'"},
	} {
		o := connector.Options{"connector": "http"}
		for k, v := range c.opts {
			o[k] = v
		}
		_, err := New().CreateSink(connector.Table{Name: "out", Schema: sinkSchema, Options: o}, env())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.opts, err, c.want)
		}
	}
}
