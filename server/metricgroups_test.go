package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/metricstore"
	"github.com/sluicesql/sluice/types"
)

// pageViews is the group the tests define through the server's store,
// as the metric-group operator would.
func pageViews(t testing.TB, ms *metricstore.Store) {
	t.Helper()
	err := ms.Define(metricstore.Group{Name: "page_views", Version: 2,
		Keys: []types.Column{{Name: "user_id", Type: types.String}, {Name: "region", Type: types.Int}},
		Metrics: []metricstore.Metric{
			{Name: "views", Type: types.BigInt},
			{Name: "avg_ms", Type: types.Double},
			{Name: "last_url", Type: types.String},
		}})
	if err != nil {
		t.Fatal(err)
	}
}

func views(user string, region int32, n int64, at int64) metricstore.Change {
	return metricstore.Change{Key: []types.Value{types.StringValue(user), types.Int32Value(region)},
		Values: []types.Value{types.BigIntValue(n), types.DoubleValue(float64(n) / 4), types.StringValue("/p" + fmt.Sprint(n))}, EventTime: at}
}

type metricValues struct {
	Key        []any    `json:"key"`
	Values     []any    `json:"values"`
	Statuses   []string `json:"statuses"`
	Timestamps []any    `json:"event_timestamps"`
	Deleted    bool     `json:"deleted"`
}

type readResponse struct {
	Metadata struct {
		Group   string   `json:"group"`
		Version int      `json:"version"`
		Keys    []string `json:"keys"`
		Metrics []string `json:"metrics"`
		Token   string   `json:"token"`
	} `json:"metadata"`
	Results []metricValues `json:"results"`
}

func TestMetricGroupRead(t *testing.T) {
	ts := startServer(t, t.TempDir(), false, "")
	pageViews(t, ts.s.MetricStore())
	if err := ts.s.MetricStore().Commit("page_views", []metricstore.Change{views("ann", 1, 3, 1764669600000), views("bob", 2, 8, 1764669601500)}); err != nil {
		t.Fatal(err)
	}
	var res readResponse
	ts.must("POST", "/v1/metric-groups/page_views/read", map[string]any{
		"keys":    []any{[]any{"ann", 1}, map[string]any{"region": 2, "user_id": "bob"}, []any{"cid", 1}},
		"metrics": []string{"last_url", "views"},
	}, http.StatusOK, &res)
	if res.Metadata.Group != "page_views" || res.Metadata.Version != 2 || !slices.Equal(res.Metadata.Keys, []string{"user_id", "region"}) ||
		!slices.Equal(res.Metadata.Metrics, []string{"last_url", "views"}) || res.Metadata.Token == "" {
		t.Errorf("metadata %+v", res.Metadata)
	}
	got, _ := json.Marshal(res.Results)
	want := `[{"key":["ann",1],"values":["/p3",3],"statuses":["PRESENT","PRESENT"],"event_timestamps":["2025-12-02T10:00:00.000Z","2025-12-02T10:00:00.000Z"],"deleted":false},` +
		`{"key":["bob",2],"values":["/p8",8],"statuses":["PRESENT","PRESENT"],"event_timestamps":["2025-12-02T10:00:01.500Z","2025-12-02T10:00:01.500Z"],"deleted":false},` +
		`{"key":["cid",1],"values":[null,null],"statuses":["NOT_FOUND","NOT_FOUND"],"event_timestamps":[null,null],"deleted":false}]`
	if string(got) != want {
		t.Errorf("results\n%s\nwant\n%s", got, want)
	}

	for _, tc := range []struct {
		path   string
		body   any
		status int
		want   string
	}{
		{"/v1/metric-groups/page_view/read", map[string]any{"keys": []any{}}, 404, `no metric group named \"page_view\" (did you mean \"page_views\"?)`},
		{"/v1/metric-groups/page_views/read", map[string]any{"keys": []any{[]any{"a", 1}}, "metrics": []string{"view"}}, 400, `has no metric named \"view\" (did you mean \"views\"?)`},
		{"/v1/metric-groups/page_views/read", map[string]any{"keys": []any{[]any{"a", "x"}}}, 400, `key 0, column region (at byte 6): cannot read a STRING as INT`},
		{"/v1/metric-groups/page_views/read", map[string]any{"keys": []any{map[string]any{"usr_id": "a"}}}, 400, `has no key column named \"usr_id\" (did you mean \"user_id\"?)`},
		{"/v1/metric-groups/page_views/read", map[string]any{}, 400, `the request has no \"keys\"`},
		{"/v1/metric-groups/page_views/read", "[", 400, `cannot read the request's JSON body`},
	} {
		code, body := ts.call("POST", tc.path, tc.body)
		if code != tc.status || !strings.Contains(string(body), tc.want) || !strings.Contains(string(body), `"code"`) {
			t.Errorf("POST %s %v: %d %s, want %d %s", tc.path, tc.body, code, body, tc.status, tc.want)
		}
		if strings.Contains(string(body), "invalid request") {
			t.Errorf("the message carries the error's wrapping: %s", body)
		}
	}
}

// sse reads a stream of server-sent events.
type sse struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

type streamEvent struct {
	id, event, data string
}

func (ts *testServer) subscribe(path string, header map[string]string) *sse {
	ts.t.Helper()
	req, err := http.NewRequest("GET", ts.url+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		ts.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		ts.t.Fatalf("content type %q", ct)
	}
	return &sse{t: ts.t, resp: resp, r: bufio.NewReader(resp.Body)}
}

// next returns the next event other than a heartbeat; io.EOF at the
// stream's end.
func (s *sse) next() (streamEvent, error) {
	var ev streamEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.event == "heartbeat" {
				ev = streamEvent{}
				continue
			}
			if ev.event != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		default:
			s.t.Fatalf("unexpected line %q", line)
		}
	}
}

func (s *sse) must() streamEvent {
	s.t.Helper()
	ev, err := s.next()
	if err != nil {
		s.t.Fatal(err)
	}
	return ev
}

// results returns an event's keys and values as "user,region:
// v1 v2 ...".
func results(t *testing.T, ev streamEvent) (token string, reset bool, out []string) {
	t.Helper()
	var d struct {
		Kind    string         `json:"kind"`
		Reset   bool           `json:"reset"`
		Token   string         `json:"token"`
		Results []metricValues `json:"results"`
	}
	if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
		t.Fatalf("%v: %s", err, ev.data)
	}
	if d.Kind != ev.event || d.Token != ev.id {
		t.Errorf("event %s id %s carries kind %s token %s", ev.event, ev.id, d.Kind, d.Token)
	}
	for _, r := range d.Results {
		line := fmt.Sprintf("%v,%v:", r.Key[0], r.Key[1])
		if r.Deleted {
			line += " deleted"
		}
		for _, v := range r.Values {
			line += fmt.Sprintf(" %v", v)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return d.Token, d.Reset, out
}

func TestMetricGroupSubscribe(t *testing.T) {
	ts := startServer(t, t.TempDir(), false, "")
	ms := ts.s.MetricStore()
	pageViews(t, ms)
	commit := func(changes ...metricstore.Change) {
		t.Helper()
		if err := ms.Commit("page_views", changes); err != nil {
			t.Fatal(err)
		}
	}
	commit(views("ann", 1, 1, 1000), views("bob", 1, 2, 1000))
	all := ts.subscribe("/v1/metric-groups/page_views/subscribe?snapshot=true", nil)
	some := ts.subscribe("/v1/metric-groups/page_views/subscribe?metrics=views&keys="+url.QueryEscape(`[["bob",1],{"user_id":"cid","region":1}]`), nil)
	ev := all.must()
	tok, reset, got := results(t, ev)
	if ev.event != "snapshot" || !reset || tok == "" || !slices.Equal(got, []string{"ann,1: 1 0.25 /p1", "bob,1: 2 0.5 /p2"}) {
		t.Fatalf("first event %+v", ev)
	}
	commit(views("ann", 1, 5, 2000))
	commit(views("cid", 1, 7, 3000), metricstore.Change{Key: []types.Value{types.StringValue("bob"), types.Int32Value(1)}, Delete: true})
	ev = all.must()
	tok1, reset, got := results(t, ev)
	if ev.event != "changes" || reset || !slices.Equal(got, []string{"ann,1: 5 1.25 /p5"}) {
		t.Errorf("second event %+v", ev)
	}
	ev = all.must()
	if _, _, got := results(t, ev); !slices.Equal(got, []string{"bob,1: deleted", "cid,1: 7 1.75 /p7"}) {
		t.Errorf("third event %+v", ev)
	}
	ev = some.must()
	if _, _, got := results(t, ev); ev.event != "changes" || !slices.Equal(got, []string{"bob,1: deleted", "cid,1: 7"}) {
		t.Errorf("the filtered subscription's first event %+v", ev)
	}

	// Reconnecting after the second event, as an EventSource does, gets
	// the third; from=the read's token, what follows the read.
	resumed := ts.subscribe("/v1/metric-groups/page_views/subscribe?from=whatever", map[string]string{"Last-Event-ID": tok1})
	ev = resumed.must()
	if _, _, got := results(t, ev); ev.id == tok1 || !slices.Equal(got, []string{"bob,1: deleted", "cid,1: 7 1.75 /p7"}) {
		t.Errorf("resumed: %+v", ev)
	}
	var res readResponse
	ts.must("POST", "/v1/metric-groups/page_views/read", map[string]any{"keys": []any{[]any{"ann", 1}}}, http.StatusOK, &res)
	fromRead := ts.subscribe("/v1/metric-groups/page_views/subscribe?from="+url.QueryEscape(res.Metadata.Token), nil)
	commit(views("ann", 1, 6, 4000))
	for _, s := range []*sse{all, resumed, fromRead} {
		ev = s.must()
		if _, _, got := results(t, ev); !slices.Equal(got, []string{"ann,1: 6 1.5 /p6"}) {
			t.Errorf("the last commit: %+v", ev)
		}
	}

	// A token of another incarnation of the group: a snapshot.
	if err := ms.Drop("page_views"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sse{all, some} {
		ev = s.must()
		if ev.event != "error" || !strings.Contains(ev.data, `"code":"not_found"`) || !strings.Contains(ev.data, "page_views") {
			t.Errorf("after a drop: %+v", ev)
		}
		if _, err := s.next(); err != io.EOF {
			t.Errorf("the stream goes on after its error: %v", err)
		}
	}
	pageViews(t, ms)
	commit(views("dan", 1, 1, 1))
	ev = ts.subscribe("/v1/metric-groups/page_views/subscribe", map[string]string{"Last-Event-ID": tok}).must()
	if _, reset, got := results(t, ev); ev.event != "snapshot" || !reset || !slices.Equal(got, []string{"dan,1: 1 0.25 /p1"}) {
		t.Errorf("from a token of a dropped group: %+v", ev)
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/v1/metric-groups/nope/subscribe", 404, `no metric group named \"nope\"`},
		{"/v1/metric-groups/page_views/subscribe?from=abc", 400, `\"abc\" is not a metric store token`},
		{"/v1/metric-groups/page_views/subscribe?metrics=views,avg_m", 400, `no metric named \"avg_m\" (did you mean \"avg_ms\"?)`},
		{"/v1/metric-groups/page_views/subscribe?keys=" + url.QueryEscape(`[["a"]]`), 400, "key 0 has 1 values"},
		{"/v1/metric-groups/page_views/subscribe?snapshot=maybe", 400, `snapshot=\"maybe\": use true or false`},
	} {
		code, body := ts.call("GET", tc.path, nil)
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, code, body, tc.code, tc.want)
		}
	}
}

// The server's Close ends the streams (they do not hold it up), each
// with an error event.
func TestMetricGroupStreamsEndAtClose(t *testing.T) {
	ts := startServer(t, t.TempDir(), false, "")
	pageViews(t, ts.s.MetricStore())
	s := ts.subscribe("/v1/metric-groups/page_views/subscribe", nil)
	ts.close()
	ev := s.must()
	if ev.event != "error" || !strings.Contains(ev.data, `"code":"unavailable"`) {
		t.Errorf("at close: %+v", ev)
	}
	if _, err := s.next(); err != io.EOF {
		t.Errorf("after the error: %v", err)
	}
}

func TestMetricGroupAuth(t *testing.T) {
	dir := t.TempDir()
	token, err := CreateToken(dir, "reader")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, true, token)
	pageViews(t, ts.s.MetricStore())
	body := map[string]any{"keys": []any{[]any{"ann", 1}}}
	for _, r := range []struct{ method, path string }{
		{"POST", "/v1/metric-groups/page_views/read"},
		{"GET", "/v1/metric-groups/page_views/subscribe"},
	} {
		for _, tok := range []string{"", "sluice_wrong"} {
			code, b := ts.callWith(tok, r.method, r.path, body)
			if code != http.StatusUnauthorized || !strings.Contains(string(b), `"code": "unauthorized"`) {
				t.Errorf("%s %s with token %q: %d %s", r.method, r.path, tok, code, b)
			}
		}
	}
	ts.must("POST", "/v1/metric-groups/page_views/read", body, http.StatusOK, nil)
	ts.subscribe("/v1/metric-groups/page_views/subscribe", nil)
	if err := ts.s.MetricStore().Commit("page_views", []metricstore.Change{views("ann", 1, 3, 1)}); err != nil {
		t.Fatal(err)
	}
	code, b := ts.call("GET", "/metrics", nil)
	for _, want := range []string{`sluice_metric_store_keys{where="memory"} 1`, `sluice_metric_store_keys{where="spill"} 0`,
		"sluice_metric_store_subscribers 1", "sluice_metric_store_memory_bytes ", "sluice_metric_store_change_log_bytes "} {
		if code != 200 || !strings.Contains(string(b), want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
}
