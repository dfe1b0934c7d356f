package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// discardWriter is an http.ResponseWriter that keeps the status and
// drops the body: what a read of the API allocates, without a recorder's.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

func (w *discardWriter) WriteHeader(status int) { w.status = status }

// BenchmarkJobRead measures one read of a running job (GET
// /v1/jobs/{name}) through the server's handler, without the network:
// its time and what it allocates (the garbage that, from many clients,
// sets the collector's pace).
//
//	go test ./server -run '^$' -bench JobRead -benchmem
func BenchmarkJobRead(b *testing.B) {
	s, err := New(Config{DataDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	call := func(method, path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(w, r)
		return w
	}
	if w := call("POST", "/v1/catalog", `{"sql": "CREATE TABLE events (host STRING, command_line STRING) WITH ('connector' = 'procgen', 'rows-per-second' = '100');"}`); w.Code >= 300 {
		b.Fatalf("catalog: %d %s", w.Code, w.Body)
	}
	if w := call("POST", "/v1/jobs", `{"name": "rule0", "sql": "CREATE TABLE alert (host STRING, command_line STRING) WITH ('connector' = 'blackhole');\nINSERT INTO alert SELECT host, command_line FROM events WHERE command_line LIKE '%tool0%';"}`); w.Code >= 300 {
		b.Fatalf("job: %d %s", w.Code, w.Body)
	}
	// A checkpoint and some rows, so that every metric has a value.
	time.Sleep(1500 * time.Millisecond)
	req := httptest.NewRequest("GET", "/v1/jobs/rule0", nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		w.status, w.n = 0, 0
		h.ServeHTTP(w, req)
	}
	if w.status != http.StatusOK {
		b.Fatalf("read: %d", w.status)
	}
	b.ReportMetric(float64(w.n), "body-B")
}
