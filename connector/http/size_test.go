package http

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluicesql/sluice/connector"
)

// A response larger than 'max-response-size' fails the load with an
// error naming the option, once the limit is passed: an endless response
// is not read until the timeout.
func TestMaxResponseSize(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/endless":
			fmt.Fprint(w, "[")
			chunk := []byte(strings.Repeat(`{"id":1,"name":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},`, 100))
			for {
				n, err := w.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		case "/declared":
			w.Header().Set("Content-Length", "10737418240")
			w.WriteHeader(http.StatusOK)
		case "/small":
			fmt.Fprint(w, `[{"id":1},{"id":2}]`)
		}
	}))
	defer srv.Close()

	s, err := create(t, connector.Options{"url": srv.URL + "/endless", "max-response-size": "1 mb", "timeout": "1 min"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = load(s)
	want := "http table dim: GET " + srv.URL + "/endless: the response is larger than 'max-response-size' (1 MiB)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("endless response: got %v, want %q", err, want)
	}
	s.Close()
	srv.CloseClientConnections()
	// What the server could write is the limit and what the connection
	// buffers, not the gigabytes a minute's timeout lets through.
	if n := written.Load(); n > 64<<20 {
		t.Errorf("the server wrote %d bytes before the client gave up", n)
	}

	s, err = create(t, connector.Options{"url": srv.URL + "/declared"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = load(s)
	want = "http table dim: GET " + srv.URL + "/declared: the response is 10737418240 bytes, larger than 'max-response-size' (256 MiB)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("declared length: got %v, want %q", err, want)
	}

	s, err = create(t, connector.Options{"url": srv.URL + "/small", "max-response-size": "19"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := load(s); err != nil || got != "1|NULL|NULL|NULL\n2|NULL|NULL|NULL" {
		t.Fatalf("a response of exactly the limit: %q, %v", got, err)
	}

	for v, want := range map[string]string{
		"0":           "option 'max-response-size' must be a positive size (e.g. '256 mb'), got '0'",
		"lots":        "option 'max-response-size': cannot parse \"lots\" as a size",
		"10000000 tb": "option 'max-response-size': size \"10000000 tb\" is too large",
	} {
		if _, err := create(t, connector.Options{"url": srv.URL + "/small", "max-response-size": v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("max-response-size = %s: got %v, want %q", v, err, want)
		}
	}
}
