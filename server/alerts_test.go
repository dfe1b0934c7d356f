package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

// startServerWith starts a server with cfg (its DataDir set) on a
// loopback port, evaluating the alerts every 50 ms unless cfg says.
func startServerWith(t *testing.T, cfg Config) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.AlertInterval == 0 {
		cfg.AlertInterval = 50 * time.Millisecond
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s, url: "http://" + ln.Addr().String(), log: logs, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(ln) }()
	t.Cleanup(ts.close)
	return ts
}

// hook is a webhook receiver on a loopback port: it answers the first
// failFirst requests 500, then records the notifications.
type hook struct {
	t         *testing.T
	url       string
	mu        sync.Mutex
	requests  int
	failFirst int
	got       []notification
}

func newHook(t *testing.T, failFirst int) *hook {
	h := &hook{t: t, failFirst: failFirst}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.requests++
		if h.requests <= h.failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var n notification
		if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &n) != nil {
			t.Errorf("webhook: %s %s %q", r.Method, r.Header.Get("Content-Type"), b)
		}
		h.got = append(h.got, n)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/alerts"
	return h
}

// wait waits until the notifications received satisfy ok (a guard of a
// minute, not a measurement) and returns them.
func (h *hook) wait(what string, ok func([]notification) bool) []notification {
	h.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		h.mu.Lock()
		got := append([]notification(nil), h.got...)
		h.mu.Unlock()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("webhook: no %s; received %+v", what, got)
		}
	}
}

// has reports whether ns holds a notification of alert for job in state.
func has(ns []notification, alert, job, state string) int {
	for i, n := range ns {
		if n.Alert == alert && n.Job == job && n.State == state {
			return i
		}
	}
	return -1
}

// waitAlert waits until the alert's state for job is state and returns
// the rule.
func (ts *testServer) waitAlert(name, job, state string) alertJSON {
	ts.t.Helper()
	var a alertJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ts.must("GET", "/v1/alerts/"+name, nil, 200, &a)
		for _, st := range a.States {
			if st.Job == job && st.State == state {
				return a
			}
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("alert %s: not %s for job %s: %+v", name, state, job, a)
		}
	}
}

// failingJob is a job that fails on its second row (a string where a
// number is expected, with parse errors not ignored).
func failingJob(t *testing.T) string {
	in, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(in, "a.json"), []byte("{\"id\": 1}\n{\"id\": \"x\"}\n"), 0o644)
	return fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/', 'format' = 'json', 'json.ignore-parse-errors' = 'false');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/', 'format' = 'json');
INSERT INTO out SELECT id FROM src;`, in, out)
}

// A job that fails fires job_failed: the webhook receives it (after a
// retry: its first answer is a 500), the state shows it, and so does
// /metrics. Deleting the job removes the state.
func TestAlertJobFailed(t *testing.T) {
	h := newHook(t, 1)
	ts := startServerWith(t, Config{DataDir: t.TempDir()})
	var created alertJSON
	ts.must("POST", "/v1/alerts", map[string]any{"name": "failed", "job": "*", "condition": map[string]any{"kind": "job_failed"}, "webhook": h.url}, 201, &created)
	if !created.Enabled || created.Job != "*" || len(created.States) != 0 {
		t.Fatalf("created: %+v", created)
	}
	ts.must("POST", "/v1/jobs", map[string]any{"name": "f", "sql": failingJob(t)}, 201, nil)
	ts.waitJob("f", "failed")

	got := h.wait("firing notification", func(ns []notification) bool { return has(ns, "failed", "f", "firing") >= 0 })
	n := got[has(got, "failed", "f", "firing")]
	if n.Value != 1 || n.Since.IsZero() || !strings.Contains(n.Message, "job f failed:") || !strings.Contains(n.Message, "x") {
		t.Errorf("notification: %+v", n)
	}
	h.mu.Lock()
	if h.requests != 2 {
		t.Errorf("webhook requests: %d, want 2 (a 500, then the retry)", h.requests)
	}
	h.mu.Unlock()

	// The delivery is recorded just after the webhook answers.
	var a alertJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ts.must("GET", "/v1/alerts/failed", nil, 200, &a)
		if len(a.States) == 1 && !a.States[0].LastNotified.IsZero() || time.Now().After(deadline) {
			break
		}
	}
	if len(a.States) != 1 || a.States[0].Job != "f" || a.States[0].State != "firing" || a.States[0].LastNotified.IsZero() || a.States[0].LastError != "" {
		t.Fatalf("alert: %+v", a)
	}
	var list struct{ Alerts []alertJSON }
	ts.must("GET", "/v1/alerts", nil, 200, &list)
	if len(list.Alerts) != 1 || list.Alerts[0].Name != "failed" || len(list.Alerts[0].States) != 1 {
		t.Fatalf("list: %+v", list)
	}
	_, metrics := ts.call("GET", "/metrics", nil)
	if !strings.Contains(string(metrics), `sluice_alert_firing{alert="failed",job="f"} 1`) {
		t.Errorf("/metrics has no firing gauge:\n%s", grepLines(string(metrics), "sluice_alert"))
	}
	if !strings.Contains(ts.log.String(), "alert firing") {
		t.Error("the log does not show the alert")
	}

	if code, b := ts.call("DELETE", "/v1/jobs/f", nil); code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ts.must("GET", "/v1/alerts/failed", nil, 200, &a)
		if len(a.States) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted job's state stays: %+v", a)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// An idle job fires no_output, which resolves when rows flow; rows_in
// above a rate fires when they flow and resolves when they stop. Rules
// select the job by label.
func TestAlertNoOutputAndRate(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	h := newHook(t, 0)
	ts := startServerWith(t, Config{DataDir: t.TempDir()})
	out := t.TempDir()
	ts.must("POST", "/v1/alerts", map[string]any{"name": "quiet", "job": "team=web",
		"condition": map[string]any{"kind": "no_output", "for": "300ms"}, "webhook": h.url}, 201, nil)
	ts.must("POST", "/v1/alerts", map[string]any{"name": "busy", "job": "team=web",
		"condition": map[string]any{"kind": "metric_above", "metric": "rows_in_rate", "threshold": 0}, "webhook": h.url}, 201, nil)
	ts.must("POST", "/v1/alerts", map[string]any{"name": "other-team", "job": "team=db",
		"condition": map[string]any{"kind": "no_output", "for": "1ms"}, "webhook": h.url}, 201, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "copy", "sql": kafkaToFile(bs, out), "labels": map[string]string{"team": "web"}}, 201, nil)

	h.wait("no_output firing", func(ns []notification) bool { return has(ns, "quiet", "copy", "firing") >= 0 })
	a := ts.waitAlert("quiet", "copy", "firing")
	if a.States[0].Value < 0.3 {
		t.Errorf("no_output fired after %v s without output, before its 300ms", a.States[0].Value)
	}
	produceIDs(t, bs, "in", 0, 20)
	waitOutput(t, out, 20)
	got := h.wait("no_output resolved, rows_in_rate firing and resolved", func(ns []notification) bool {
		return has(ns, "quiet", "copy", "resolved") >= 0 && has(ns, "busy", "copy", "resolved") >= 0
	})
	if f, r := has(got, "quiet", "copy", "firing"), has(got, "quiet", "copy", "resolved"); f > r {
		t.Errorf("no_output resolved before it fired: %+v", got)
	}
	f, r := has(got, "busy", "copy", "firing"), has(got, "busy", "copy", "resolved")
	if f < 0 || f > r || got[f].Value <= 0 {
		t.Errorf("rows_in_rate: %+v", got)
	}
	for _, n := range got {
		if n.Alert == "other-team" {
			t.Errorf("a rule for other labels fired: %+v", n)
		}
	}
	var other alertJSON
	ts.must("GET", "/v1/alerts/other-team", nil, 200, &other)
	if len(other.States) != 0 {
		t.Errorf("other-team: %+v", other)
	}
}

// The rules are kept in the data directory and survive a restart; a
// deleted rule stays deleted.
func TestAlertRulesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServerWith(t, Config{DataDir: dir})
	ts.must("POST", "/v1/alerts", map[string]any{"name": "lag", "job": "team=web,tier=1",
		"condition": map[string]any{"kind": "metric_above", "metric": "checkpoint_age_seconds", "threshold": 30, "for": "1m"},
		"webhook":   "http://127.0.0.1:1/hook"}, 201, nil)
	ts.must("POST", "/v1/alerts", map[string]any{"name": "off", "job": "x", "enabled": false,
		"condition": map[string]any{"kind": "metric_below", "metric": "rows_in_rate", "threshold": 1.5}}, 201, nil)
	ts.must("POST", "/v1/alerts", map[string]any{"name": "gone", "job": "*", "condition": map[string]any{"kind": "job_failed"}}, 201, nil)
	if code, b := ts.call("DELETE", "/v1/alerts/gone", nil); code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	var before struct{ Alerts []alertJSON }
	ts.must("GET", "/v1/alerts", nil, 200, &before)
	ts.close()
	if _, err := os.Stat(filepath.Join(dir, "alerts.json")); err != nil {
		t.Fatal(err)
	}

	ts = startServerWith(t, Config{DataDir: dir})
	var after struct{ Alerts []alertJSON }
	ts.must("GET", "/v1/alerts", nil, 200, &after)
	if len(after.Alerts) != 2 || after.Alerts[0].Name != "lag" || after.Alerts[1].Name != "off" {
		t.Fatalf("after the restart: %+v", after)
	}
	for i := range after.Alerts {
		a, b := after.Alerts[i].alertRule, before.Alerts[i].alertRule
		if a.Name != b.Name || a.Job != b.Job || a.Webhook != b.Webhook || a.Enabled != b.Enabled || a.Condition.Kind != b.Condition.Kind ||
			a.Condition.Metric != b.Condition.Metric || *a.Condition.Threshold != *b.Condition.Threshold || a.Condition.For != b.Condition.For {
			t.Errorf("rule %d: %+v after the restart, %+v before", i, a, b)
		}
	}
	if after.Alerts[1].Enabled || *after.Alerts[0].Condition.Threshold != 30 {
		t.Errorf("after the restart: %+v", after)
	}
	ts.mustFail("GET", "/v1/alerts/gone", nil, 404, "not_found")
}

// An alert's state survives a restart of the server, as Prometheus
// restores its alerts': a firing alert is not sent again, its
// resolution after the restart is sent, and a notification the first
// run could not deliver before it stopped is sent by the next.
func TestAlertStatesSurviveRestart(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	h := newHook(t, 1<<30) // refuses everything, until told otherwise
	dir, out := t.TempDir(), t.TempDir()
	ts := startServerWith(t, Config{DataDir: dir})
	ts.must("POST", "/v1/alerts", map[string]any{"name": "quiet", "job": "copy",
		"condition": map[string]any{"kind": "no_output", "for": "300ms"}, "webhook": h.url}, 201, nil)
	ts.must("POST", "/v1/jobs", map[string]any{"name": "copy", "sql": kafkaToFile(bs, out)}, 201, nil)
	ts.waitAlert("quiet", "copy", "firing")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		n := h.requests
		h.mu.Unlock()
		if n > 0 {
			break // the first attempt failed; the next waits its back-off
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook got no request")
		}
	}
	ts.close() // while the notification waits to be tried again
	h.mu.Lock()
	h.failFirst = 0
	h.mu.Unlock()

	ts = startServerWith(t, Config{DataDir: dir})
	var a alertJSON
	ts.must("GET", "/v1/alerts/quiet", nil, 200, &a)
	if len(a.States) != 1 || a.States[0].State != "firing" || a.States[0].Job != "copy" {
		t.Fatalf("after the restart: %+v", a)
	}
	h.wait("the firing notification, sent by the second run", func(ns []notification) bool { return has(ns, "quiet", "copy", "firing") >= 0 })
	time.Sleep(500 * time.Millisecond) // ten evaluations, the condition still holding
	produceIDs(t, bs, "in", 0, 5)
	waitOutput(t, out, 5)
	got := h.wait("the resolution", func(ns []notification) bool { return has(ns, "quiet", "copy", "resolved") >= 0 })
	// (Once quiet again for 300 ms, the job fires anew: only what
	// comes before the resolution counts.)
	firing := 0
	for _, n := range got[:has(got, "quiet", "copy", "resolved")] {
		if n.State == "firing" {
			firing++
		}
	}
	if firing != 1 {
		t.Fatalf("want one firing, then its resolution: %+v", got)
	}
}

// A bad rule is answered 400 with what is wrong; a taken name 409; an
// unknown one 404.
func TestAlertBadRules(t *testing.T) {
	ts := startServerWith(t, Config{DataDir: t.TempDir()})
	cond := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "job_dead")}, `condition.kind "job_dead"`},
		{map[string]any{"name": "a", "job": "*", "condition": cond()}, "condition.kind: use job_failed"},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "no_output", "for", "10 minutes")}, `condition.for "10 minutes"`},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "no_output", "for", "-1m")}, `condition.for "-1m"`},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "no_output")}, `no_output needs "for"`},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "metric_above", "metric", "rows_in_rate")}, "needs a threshold"},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "metric_above", "metric", "rows_in_rat", "threshold", 1)}, `did you mean "rows_in_rate"`},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "job_failed", "threshold", 1)}, "takes no metric"},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "metric_above", "metric", "rows_in_rate", "treshold", 1)}, `unknown field "treshold"`},
		{map[string]any{"name": "a", "job": "", "condition": cond("kind", "job_failed")}, "job: give a job's name"},
		{map[string]any{"name": "a", "job": "=web", "condition": cond("kind", "job_failed")}, "label selector"},
		{map[string]any{"name": "a/b", "job": "*", "condition": cond("kind", "job_failed")}, `alert name "a/b"`},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "job_failed"), "webhook": "ftp://127.0.0.1/x"}, "an http:// or https:// URL"},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "job_failed"), "webhook": "http://10.1.2.3/x"}, "not a loopback address"},
		{map[string]any{"name": "a", "job": "*", "condition": cond("kind", "job_failed"), "webhook": "http://alerts.example.com/x"}, "--allow-remote-webhooks"},
	} {
		e := ts.mustFail("POST", "/v1/alerts", c.body, 400, "bad_request")
		if !strings.Contains(e.Message, c.want) {
			t.Errorf("%v: %q, want it to say %q", c.body, e.Message, c.want)
		}
	}
	var list struct{ Alerts []alertJSON }
	ts.must("GET", "/v1/alerts", nil, 200, &list)
	if len(list.Alerts) != 0 {
		t.Fatalf("bad rules were kept: %+v", list)
	}
	ok := map[string]any{"name": "a", "job": "j", "condition": cond("kind", "job_failed"), "webhook": "http://[::1]:9/x"}
	ts.must("POST", "/v1/alerts", ok, 201, nil)
	ts.mustFail("POST", "/v1/alerts", ok, 409, "conflict")
	if e := ts.mustFail("GET", "/v1/alerts/b", nil, 404, "not_found"); !strings.Contains(e.Message, `did you mean "a"`) {
		t.Errorf("404: %q", e.Message)
	}
	ts.mustFail("DELETE", "/v1/alerts/b", nil, 404, "not_found")
}

// With AllowRemoteWebhooks a remote webhook is accepted. A server
// started without it keeps such a rule but does not post to it: the
// state says why. (No test contacts a non-loopback address.)
func TestAlertRemoteWebhook(t *testing.T) {
	dir := t.TempDir()
	ts := startServerWith(t, Config{DataDir: dir, AllowRemoteWebhooks: true})
	ts.must("POST", "/v1/alerts", map[string]any{"name": "remote", "job": "f", "condition": map[string]any{"kind": "job_failed"},
		"webhook": "http://192.0.2.1/alerts"}, 201, nil)
	ts.close()

	ts = startServerWith(t, Config{DataDir: dir})
	ts.must("POST", "/v1/jobs", map[string]any{"name": "f", "sql": failingJob(t)}, 201, nil)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		a := ts.waitAlert("remote", "f", "firing")
		if e := a.States[0].LastError; e != "" {
			if !strings.Contains(e, "not a loopback address") || !a.States[0].LastNotified.IsZero() {
				t.Fatalf("state: %+v", a.States[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no error recorded: %+v", a)
		}
	}
}
