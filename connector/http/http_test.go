package http

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/types"
)

var schema = types.NewSchema(
	types.Column{Name: "id", Type: types.BigInt},
	types.Column{Name: "name", Type: types.String},
	types.Column{Name: "price", Type: types.Decimal(10, 2)},
	types.Column{Name: "since", Type: types.Timestamp(3)},
)

func env() connector.Env {
	f := format.NewRegistry()
	f.Register(json.New())
	return connector.Env{Formats: f}
}

func create(t *testing.T, opts connector.Options) (*Source, error) {
	t.Helper()
	o := connector.Options{"connector": "http"}
	for k, v := range opts {
		o[k] = v
	}
	src, err := New().CreateLookup(connector.Table{Name: "dim", Schema: schema, Options: o}, env())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { src.Close() })
	return src.(*Source), nil
}

func load(s *Source) (string, error) {
	var out []string
	err := s.Load(context.Background(), func(row []types.Value) error {
		parts := make([]string, len(row))
		for i, v := range row {
			parts[i] = types.FormatValue(v, schema.Columns[i].Type)
		}
		out = append(out, strings.Join(parts, "|"))
		return nil
	})
	return strings.Join(out, "\n"), err
}

func TestLoad(t *testing.T) {
	var body atomic.Value
	body.Store(`[{"id":1,"name":"one","price":1.5,"since":"2024-01-02 03:04:05.5","extra":[1,2]},
		{"id":2,"name":null},
		{"name":"no id","price":"2.25"}]`)
	var gotAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		if r.Method != http.MethodGet || r.URL.Path != "/dim" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, body.Load())
	}))
	defer srv.Close()
	s, err := create(t, connector.Options{"url": srv.URL + "/dim", "http.header.Authorization": "Bearer t0ken",
		"lookup.full-cache.reload-interval": "5 min"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := load(s)
	want := "1|one|1.50|2024-01-02 03:04:05.500\n2|NULL|NULL|NULL\nNULL|no id|2.25|NULL"
	if err != nil || got != want {
		t.Fatalf("loaded:\n%s\nwant:\n%s\n(%v)", got, want, err)
	}
	if gotAuth.Load() != "Bearer t0ken" {
		t.Errorf("header %v", gotAuth.Load())
	}
	if s.ReloadInterval() != 5*time.Minute {
		t.Errorf("reload interval %v", s.ReloadInterval())
	}
	if id := s.Identity(); strings.Contains(id, "t0ken") || !strings.Contains(id, srv.URL+"/dim") || !strings.Contains(id, "Authorization=") {
		t.Errorf("identity %q", id)
	}
	// A reload sees the new data.
	body.Store(`[]`)
	if got, err := load(s); err != nil || got != "" {
		t.Errorf("empty array: %q %v", got, err)
	}
	body.Store(`[{"id":1}, {"id":"x"}]`)
	if _, err := load(s); err == nil || !strings.Contains(err.Error(), "element 1") {
		t.Errorf("malformed element: %v", err)
	}
	body.Store(`{"id":1}`)
	if _, err := load(s); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Errorf("an object: %v", err)
	}
	body.Store(`[{"id":1}, {"id":2}`)
	if _, err := load(s); err == nil {
		t.Error("a truncated array: no error")
	}
	// With a dead-letter file the malformed element is skipped and kept.
	dl := filepath.Join(t.TempDir(), "bad.jsonl")
	s2, err := create(t, connector.Options{"url": srv.URL + "/dim", "dead-letter.path": dl})
	if err != nil {
		t.Fatal(err)
	}
	body.Store(`[{"id":1}, {"id":"x"}, {"id":3}]`)
	if got, err := load(s2); err != nil || got != "1|NULL|NULL|NULL\n3|NULL|NULL|NULL" || s2.Skipped() != 1 {
		t.Errorf("skipping: %q %v %d", got, err, s2.Skipped())
	}
	s2.Close()
	if data, _ := os.ReadFile(dl); string(data) != `{"id":"x"}`+"\n" {
		t.Errorf("dead letters %q", data)
	}
}

func TestErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			time.Sleep(300 * time.Millisecond)
			fmt.Fprint(w, "[]")
		default:
			http.Error(w, "no such table", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	s, err := create(t, connector.Options{"url": srv.URL + "/missing"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load(s); err == nil || !strings.Contains(err.Error(), "404 Not Found: no such table") {
		t.Errorf("404: %v", err)
	}
	s, err = create(t, connector.Options{"url": srv.URL + "/slow", "timeout": "50 ms"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load(s); err == nil {
		t.Error("timeout: no error")
	}
	for _, c := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{}, "missing required option 'url'"},
		{connector.Options{"url": "ftp://127.0.0.1/x"}, "not an http:// or https:// URL"},
		{connector.Options{"url": srv.URL, "format": "csv"}, "unsupported value 'csv'"},
		{connector.Options{"url": srv.URL, "lookup.cache": "PARTIAL"}, "is not supported"},
		{connector.Options{"url": srv.URL, "json.fail-on-missing": "true"}, "unsupported option 'json.fail-on-missing'"},
		{connector.Options{"url": srv.URL, "refresh-interval": "often"}, "refresh-interval"},
		{connector.Options{"url": srv.URL, "timeot": "1s"}, "unsupported option 'timeot'"},
	} {
		if _, err := create(t, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.opts, err, c.want)
		}
	}
}

// TestSecretsMasked: errors quote the URL without its token or password,
// and not the credentials of a header, even when the server echoes them.
func TestSecretsMasked(t *testing.T) {
	const token, bearer = "tok-0123456789", "bearer-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo": // a server that repeats what it was given
			http.Error(w, "refused "+r.URL.RawQuery+" "+r.Header.Get("Authorization"), http.StatusUnauthorized)
		default:
			fmt.Fprint(w, `{"not": "an array"}`)
		}
	}))
	defer srv.Close()
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
		} else if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), bearer) {
			t.Errorf("%s: the error quotes a secret: %v", what, err)
		}
	}
	auth := connector.Options{"http.header.Authorization": "Bearer " + bearer}
	for _, path := range []string{"/echo", "/object"} {
		opts := connector.Options{"url": srv.URL + path + "?id=7&token=" + token}
		for k, v := range auth {
			opts[k] = v
		}
		s, err := create(t, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = load(s)
		check(path, err)
		if strings.Contains(s.Identity(), token) || strings.Contains(s.Identity(), bearer) {
			t.Errorf("identity %q", s.Identity())
		}
	}
	// The client cannot connect: its message quotes the URL.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	s, err := create(t, connector.Options{"url": "http://user:" + token + "@" + down.Listener.Addr().String() + "/x?access_token=" + token})
	if err != nil {
		t.Fatal(err)
	}
	_, err = load(s)
	check("server down", err)
	_, err = create(t, connector.Options{"url": "ftp://user:" + token + "@h/x"})
	check("not http", err)
}
