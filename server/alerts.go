package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/internal/suggest"
)

// Alerts: rules over the jobs' status and metrics, kept in
// DATA/alerts.json, evaluated every Config.AlertInterval by one
// goroutine. Each rule has a state per job it matches, which is
// transient (a restart starts every state at ok):
//
//	ok --condition true--> pending --true for `for`--> firing
//	pending --false--> ok;  firing --false--> resolved --true--> pending
//
// Entering firing and resolved posts a notification to the rule's
// webhook and writes it as a row into the rule's table, from a
// goroutine of its own (the notifications of one state in order), so
// that a slow webhook or table never delays the evaluation.

// Alert condition kinds.
const (
	condJobFailed   = "job_failed"
	condNoOutput    = "no_output"
	condMetricAbove = "metric_above"
	condMetricBelow = "metric_below"
)

// Alert states.
const (
	alertOK       = "ok"
	alertPending  = "pending"
	alertFiring   = "firing"
	alertResolved = "resolved"
)

// alertMetrics are the metrics a metric_above or metric_below condition
// can watch, with what they are.
var alertMetrics = map[string]string{
	"rows_in_rate":                "rows read from the sources per second",
	"rows_out_rate":               "rows written to the sinks per second",
	"late_rows_rate":              "rows dropped as late per second",
	"malformed_rate":              "malformed records skipped per second",
	"checkpoint_age_seconds":      "seconds since the last checkpoint (since the start before the first)",
	"checkpoint_duration_seconds": "how long the last checkpoint took, from its barriers to its commit",
	"consumer_lag":                "records not read yet by the source that lags most (each source: the sum over its partitions)",
	"watermark_lag_seconds":       "the wall clock minus the event-time watermark of the operator that lags most",
	"backpressure":                "the largest share of time (0 to 1) an operator's task spent blocked sending downstream, over the last 5 s",
	"state_bytes":                 "estimated bytes of the job's state in memory",
}

const alertsFile = "alerts.json"

// alertStatesFile keeps the rules' states that are not ok, so that a
// restart neither sends a firing alert again nor loses its resolution
// (as Prometheus restores the state of its alerts).
const alertStatesFile = "alert-states.json"

// alertRule is a rule as the API takes and shows it and alerts.json
// keeps it.
type alertRule struct {
	Name string `json:"name"`
	// Job selects the jobs: a job's name, labels (team=web, several
	// separated by commas, all required) or "*" (every job).
	Job       string         `json:"job"`
	Condition alertCondition `json:"condition"`
	// Webhook, if set, receives a POST at each firing and resolution.
	Webhook string `json:"webhook,omitempty"`
	// Table, if set, is a table of the server's catalog that gets a row
	// at each firing and resolution (see alertColumns).
	Table   string `json:"table,omitempty"`
	Enabled bool   `json:"enabled"`
}

type alertCondition struct {
	Kind      string   `json:"kind"`
	Metric    string   `json:"metric,omitempty"`
	Threshold *float64 `json:"threshold,omitempty"`
	// For is how long the condition holds before the alert fires (a Go
	// duration: 90s, 10m); for no_output, how long without output.
	For string `json:"for,omitempty"`
}

// alertRequest is the body of POST /v1/alerts: enabled defaults to true.
type alertRequest struct {
	Name      string         `json:"name"`
	Job       string         `json:"job"`
	Condition alertCondition `json:"condition"`
	Webhook   string         `json:"webhook"`
	Table     string         `json:"table"`
	Enabled   *bool          `json:"enabled"`
}

// rule is a checked rule with its states by job.
type rule struct {
	alertRule
	forDur time.Duration
	// Exactly one of: all, jobName, labels.
	all     bool
	jobName string
	labels  map[string]string
	states  map[string]*alertState
}

// alertState is the state of a rule for one job.
type alertState struct {
	state        string
	since        time.Time
	value        float64
	lastNotified time.Time
	lastError    string
	// unsent is the notification of the state entered, until it is
	// delivered (or given up): after a restart it is sent again.
	unsent *notification
	// sent is closed once the last notification queued for this state
	// is delivered or given up; the next one waits for it.
	sent chan struct{}
}

// alertJSON is a rule with its states, as the API shows it.
type alertJSON struct {
	alertRule
	States []alertStateJSON `json:"states"`
}

type alertStateJSON struct {
	Job          string    `json:"job"`
	State        string    `json:"state"`
	Since        time.Time `json:"since"`
	Value        float64   `json:"value"`
	LastNotified time.Time `json:"last_notified,omitzero"`
	LastError    string    `json:"last_error,omitempty"`
}

// notification is what a webhook receives.
type notification struct {
	Alert   string    `json:"alert"`
	Job     string    `json:"job"`
	State   string    `json:"state"`
	Since   time.Time `json:"since"`
	Value   float64   `json:"value"`
	Message string    `json:"message"`
}

// jobSample is what the evaluator saw of a job at its last evaluation;
// rates are the counters' deltas over the time between two evaluations
// of the same run.
type jobSample struct {
	metrics *exec.Metrics
	at      time.Time
	// health is the run's metrics at the last evaluation.
	health exec.Health

	rowsIn, rowsOut, late, malformed int64
	// lastOutput is when rows_out last grew (or the run started).
	lastOutput time.Time
	// rates are valid once the run was seen twice.
	ratesValid                                 bool
	rowsInRate, rowsOutRate, lateRate, badRate float64
}

// jobSnap is a job as the evaluator reads it.
type jobSnap struct {
	name      string
	labels    map[string]string
	status    string
	metrics   *exec.Metrics
	startedAt time.Time
	lastError string
}

// alerting keeps the rules, evaluates them and sends the notifications.
type alerting struct {
	s           *Server
	path        string
	allowRemote bool
	client      *http.Client
	// backoff is the wait before the first retry of a notification,
	// doubled at each of the next.
	backoff time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards rules, their states and samples; it is taken after
	// Server.mu is released, never inside it.
	mu      sync.Mutex
	rules   map[string]*rule
	samples map[string]*jobSample
	// statesPath is DATA/alert-states.json; dirty says the states
	// changed since it was written.
	statesPath string
	dirty      bool
}

// Notifications: how long one attempt may take, and how many attempts.
const (
	webhookTimeout  = 5 * time.Second
	webhookAttempts = 4
)

// newAlerting reads the rules of DATA/alerts.json.
func newAlerting(s *Server, dir string, allowRemote bool) (*alerting, error) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &alerting{s: s, path: filepath.Join(dir, alertsFile), statesPath: filepath.Join(dir, alertStatesFile), allowRemote: allowRemote,
		client: &http.Client{Timeout: webhookTimeout}, backoff: 500 * time.Millisecond,
		ctx: ctx, cancel: cancel, rules: map[string]*rule{}, samples: map[string]*jobSample{}}
	b, err := os.ReadFile(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("server: cannot read the alert rules: %w", err)
	}
	var file struct {
		Alerts []alertRule `json:"alerts"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		cancel()
		return nil, fmt.Errorf("server: cannot read %s: %w", a.path, err)
	}
	for _, ar := range file.Alerts {
		// A rule kept is loaded even if its webhook is now refused:
		// its notifications then fail with that reason.
		r, err := checkRule(ar, true)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("server: %s: alert %q: %w", a.path, ar.Name, err)
		}
		a.rules[r.Name] = r
	}
	if err := a.loadStates(); err != nil {
		cancel()
		return nil, err
	}
	return a, nil
}

// savedState is a rule's state for a job as alert-states.json keeps it.
type savedState struct {
	Alert        string        `json:"alert"`
	Job          string        `json:"job"`
	State        string        `json:"state"`
	Since        time.Time     `json:"since"`
	Value        float64       `json:"value"`
	LastNotified time.Time     `json:"last_notified,omitzero"`
	LastError    string        `json:"last_error,omitempty"`
	Unsent       *notification `json:"unsent,omitempty"`
}

// loadStates restores the states alert-states.json keeps, for the rules
// that exist. A job that no longer exists loses its state at the first
// evaluation, as a deleted job does.
func (a *alerting) loadStates() error {
	b, err := os.ReadFile(a.statesPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("server: cannot read the alerts' states: %w", err)
	}
	var file struct {
		States []savedState `json:"states"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return fmt.Errorf("server: cannot read %s: %w", a.statesPath, err)
	}
	for _, ss := range file.States {
		r := a.rules[ss.Alert]
		switch ss.State {
		case alertPending, alertFiring, alertResolved:
		default:
			continue
		}
		if r == nil || ss.Job == "" {
			continue
		}
		r.states[ss.Job] = &alertState{state: ss.State, since: ss.Since, value: ss.Value,
			lastNotified: ss.LastNotified, lastError: ss.LastError, unsent: ss.Unsent}
	}
	return nil
}

// saveStates writes the states that are not ok to alert-states.json;
// a.mu is held. A failure is logged: the states stay in memory, and the
// next change tries again.
func (a *alerting) saveStates() {
	var file struct {
		States []savedState `json:"states"`
	}
	file.States = []savedState{}
	for _, name := range slices.Sorted(maps.Keys(a.rules)) {
		r := a.rules[name]
		for _, job := range slices.Sorted(maps.Keys(r.states)) {
			st := r.states[job]
			if st.state == alertOK {
				continue
			}
			file.States = append(file.States, savedState{Alert: name, Job: job, State: st.state, Since: st.since, Value: st.value,
				LastNotified: st.lastNotified, LastError: st.lastError, Unsent: st.unsent})
		}
	}
	b, err := json.MarshalIndent(file, "", "  ")
	if err == nil {
		err = writeFile(a.statesPath, append(b, '\n'))
	}
	if err != nil {
		a.s.log.Error("cannot keep the alerts' states", "file", a.statesPath, "error", err)
		return
	}
	a.dirty = false
}

// start runs the evaluator every interval until close.
func (a *alerting) start(interval time.Duration) {
	// The notifications an earlier run queued and did not deliver go
	// out first (at least once: the receiver may have had one).
	a.mu.Lock()
	for _, name := range slices.Sorted(maps.Keys(a.rules)) {
		r := a.rules[name]
		for _, job := range slices.Sorted(maps.Keys(r.states)) {
			if st := r.states[job]; st.unsent != nil {
				a.notify(r, st, *st.unsent)
			}
		}
	}
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-a.ctx.Done():
				return
			case now := <-t.C:
				a.evaluate(now)
			}
		}
	}()
}

// close stops the evaluator and the notifications still retrying.
func (a *alerting) close() {
	a.cancel()
	a.wg.Wait()
}

// checkRule checks a rule and parses its duration and selector; with
// remoteOK, any http(s) webhook is accepted.
func checkRule(ar alertRule, remoteOK bool) (*rule, error) {
	r := &rule{alertRule: ar, states: map[string]*alertState{}}
	if !validName(ar.Name) {
		return nil, fmt.Errorf("alert name %q: use 1 to 100 letters, digits, '_', '.' or '-'", ar.Name)
	}
	switch sel := strings.TrimSpace(ar.Job); {
	case sel == "":
		return nil, errors.New(`job: give a job's name, labels (team=web) or "*" for every job`)
	case sel == "*":
		r.all = true
	case strings.Contains(sel, "="):
		r.labels = map[string]string{}
		for _, kv := range strings.Split(sel, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			if k == "" {
				return nil, fmt.Errorf("job %q: a label selector is key=value[,key=value...]", ar.Job)
			}
			r.labels[k] = v
		}
	case validName(sel):
		r.jobName = sel
	default:
		return nil, fmt.Errorf(`job %q: give a job's name, labels (team=web) or "*" for every job`, ar.Job)
	}
	c := ar.Condition
	if c.For != "" {
		d, err := time.ParseDuration(c.For)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("condition.for %q: a duration such as 30s, 10m or 1h30m", c.For)
		}
		r.forDur = d
	}
	switch c.Kind {
	case condJobFailed:
		if c.Metric != "" || c.Threshold != nil {
			return nil, errors.New("condition job_failed takes no metric or threshold")
		}
	case condNoOutput:
		if c.Metric != "" || c.Threshold != nil {
			return nil, errors.New("condition no_output takes no metric or threshold, only for")
		}
		if r.forDur <= 0 {
			return nil, errors.New(`condition no_output needs "for": how long without output (10m, say)`)
		}
	case condMetricAbove, condMetricBelow:
		if _, ok := alertMetrics[c.Metric]; !ok {
			return nil, fmt.Errorf("condition %s: metric %q: use one of %s%s", c.Kind, c.Metric,
				strings.Join(slices.Sorted(maps.Keys(alertMetrics)), ", "), suggest.Hint(c.Metric, slices.Collect(maps.Keys(alertMetrics))))
		}
		if c.Threshold == nil {
			return nil, fmt.Errorf("condition %s needs a threshold", c.Kind)
		}
	case "":
		return nil, errors.New("condition.kind: use job_failed, no_output, metric_above or metric_below")
	default:
		return nil, fmt.Errorf("condition.kind %q: use job_failed, no_output, metric_above or metric_below", c.Kind)
	}
	if ar.Webhook != "" {
		if err := checkWebhook(ar.Webhook, remoteOK); err != nil {
			return nil, err
		}
	}
	if ar.Table != "" && !tableName.MatchString(ar.Table) {
		return nil, fmt.Errorf("table %q: the name of a table of the catalog (name, or db.name, or catalog.db.name)", ar.Table)
	}
	return r, nil
}

// tableName matches the name of a table an alert writes to.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}$`)

// alertColumns are the columns an alert's table takes, in the order
// alertInsert writes them: the rule's name, the job's, the state
// entered (firing or resolved), the value of the condition, the message
// and when (UTC). The table may have others (left NULL), and its
// column types may be any the values cast to.
const alertColumns = "`alert` STRING, `job` STRING, `state` STRING, `value` DOUBLE, `message` STRING, `ts` TIMESTAMP(3)"

// alertInsert returns the statement that writes n into table: a bounded
// INSERT ... VALUES, run as a job of its own.
func alertInsert(table string, n notification) string {
	parts := strings.Split(table, ".")
	for i, p := range parts {
		parts[i] = "`" + p + "`"
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	value := strconv.FormatFloat(n.Value, 'f', -1, 64)
	if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
		value = "NULL"
	}
	return fmt.Sprintf("SET 'pipeline.name' = %s;\n"+
		"INSERT INTO %s (`alert`, `job`, `state`, `value`, `message`, `ts`)\n"+
		"VALUES (%s, %s, %s, CAST(%s AS DOUBLE), %s, TIMESTAMP %s);\n",
		quote("alert-"+n.Alert), strings.Join(parts, "."), quote(n.Alert), quote(n.Job), quote(n.State), value, quote(n.Message),
		quote(n.Since.UTC().Format("2006-01-02 15:04:05.000")))
}

// checkWebhook accepts an http or https URL whose host is a loopback
// address (127.0.0.0/8, ::1, localhost), or any host with remoteOK.
func checkWebhook(raw string, remoteOK bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook %q: an http:// or https:// URL", raw)
	}
	if remoteOK {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("webhook %q: the host is not a loopback address; the server posts only to 127.0.0.1, ::1 or localhost unless started with --allow-remote-webhooks", raw)
}

// matches reports whether r applies to the job.
func (r *rule) matches(j jobSnap) bool {
	switch {
	case r.all:
		return true
	case r.labels != nil:
		return hasLabels(j.labels, r.labels)
	}
	return r.jobName == j.name
}

// evaluate reads the jobs, updates their samples and moves every
// enabled rule's states.
func (a *alerting) evaluate(now time.Time) {
	s := a.s
	s.mu.Lock()
	jobs := make([]jobSnap, 0, len(s.jobs))
	for _, j := range s.jobs {
		js := jobSnap{name: j.rec.Name, labels: maps.Clone(j.rec.Labels), status: j.rec.Status, metrics: j.metrics, startedAt: j.rec.StartedAt}
		if n := len(j.rec.Errors); n > 0 {
			js.lastError = j.rec.Errors[n-1].Message
		}
		jobs = append(jobs, js)
	}
	s.mu.Unlock()
	slices.SortFunc(jobs, func(x, y jobSnap) int { return strings.Compare(x.name, y.name) })

	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[string]bool{}
	for _, j := range jobs {
		seen[j.name] = true
		a.sample(j, now)
	}
	for name := range a.samples {
		if !seen[name] {
			delete(a.samples, name)
		}
	}
	for _, r := range a.rules {
		if !r.Enabled {
			continue
		}
		matched := map[string]bool{}
		for _, j := range jobs {
			if !r.matches(j) {
				continue
			}
			matched[j.name] = true
			st := r.states[j.name]
			if st == nil {
				st = &alertState{state: alertOK, since: now.UTC()}
				r.states[j.name] = st
			}
			known, active, value, activeSince := a.condition(r, j, now)
			if !known {
				continue
			}
			st.value = value
			a.step(r, j, st, active, activeSince, now)
		}
		// A job deleted, or whose labels no longer match, leaves the
		// rule without a notification.
		for name, st := range r.states {
			if !matched[name] {
				delete(r.states, name)
				if st.state != alertOK {
					a.dirty = true
				}
			}
		}
	}
	if a.dirty {
		a.saveStates()
	}
}

// sample records what the evaluator sees of j now.
func (a *alerting) sample(j jobSnap, now time.Time) {
	m := j.metrics
	if m == nil {
		delete(a.samples, j.name)
		return
	}
	h := m.Health(now)
	in, out, late, bad := h.RowsIn, h.RowsOut, h.LateRows, h.Malformed
	p := a.samples[j.name]
	if p == nil || p.metrics != m {
		// A new run: its counters start from zero.
		last := now
		if out == 0 && !j.startedAt.IsZero() {
			last = j.startedAt
		}
		a.samples[j.name] = &jobSample{metrics: m, at: now, health: h, rowsIn: in, rowsOut: out, late: late, malformed: bad, lastOutput: last}
		return
	}
	p.health = h
	dt := now.Sub(p.at).Seconds()
	if dt <= 0 {
		return
	}
	p.ratesValid = true
	p.rowsInRate = float64(in-p.rowsIn) / dt
	p.rowsOutRate = float64(out-p.rowsOut) / dt
	p.lateRate = float64(late-p.late) / dt
	p.badRate = float64(bad-p.malformed) / dt
	if out > p.rowsOut {
		p.lastOutput = now
	}
	p.at, p.rowsIn, p.rowsOut, p.late, p.malformed = now, in, out, late, bad
}

// condition evaluates r's condition for j: known is false when it cannot
// be told yet (a rate needs two samples of a run); activeSince, if set,
// is since when it has held.
func (a *alerting) condition(r *rule, j jobSnap, now time.Time) (known, active bool, value float64, activeSince time.Time) {
	running := j.status == statusRunning
	if r.Condition.Kind == condJobFailed {
		if j.status == statusFailed {
			return true, true, 1, time.Time{}
		}
		return true, false, 0, time.Time{}
	}
	p := a.samples[j.name]
	if !running || p == nil {
		// Only a running job's output and metrics are watched.
		return true, false, 0, time.Time{}
	}
	if r.Condition.Kind == condNoOutput {
		idle := now.Sub(p.lastOutput)
		return true, p.lastOutput.Before(now), idle.Seconds(), p.lastOutput
	}
	v, ok := a.metric(r.Condition.Metric, j, p, now)
	if !ok {
		return false, false, 0, time.Time{}
	}
	if r.Condition.Kind == condMetricAbove {
		return true, v > *r.Condition.Threshold, v, time.Time{}
	}
	return true, v < *r.Condition.Threshold, v, time.Time{}
}

// metric returns the value of the alert metric of j now, from its last
// sample p; ok is false when it is not known (yet).
func (a *alerting) metric(metric string, j jobSnap, p *jobSample, now time.Time) (v float64, ok bool) {
	h := p.health
	switch metric {
	case "checkpoint_age_seconds":
		from := j.startedAt
		if at := p.metrics.LastCheckpoint.Load(); at > 0 {
			from = time.UnixMicro(at)
		}
		if from.IsZero() {
			return 0, false
		}
		return now.Sub(from).Seconds(), true
	case "checkpoint_duration_seconds":
		if h.Checkpoints == 0 || h.LastCheckpointDuration <= 0 {
			return 0, false
		}
		return h.LastCheckpointDuration.Seconds(), true
	case "consumer_lag":
		for _, o := range h.Operators {
			if o.HasConsumerLag {
				v, ok = max(v, float64(o.ConsumerLag)), true
			}
		}
		return v, ok
	case "watermark_lag_seconds":
		return h.MaxWatermarkLag.Seconds(), h.HasWatermarkLag
	case "backpressure":
		return h.MaxBackPressure, true
	case "state_bytes":
		return float64(h.StateBytes), true
	}
	if !p.ratesValid {
		return 0, false
	}
	switch metric {
	case "rows_in_rate":
		return p.rowsInRate, true
	case "rows_out_rate":
		return p.rowsOutRate, true
	case "late_rows_rate":
		return p.lateRate, true
	case "malformed_rate":
		return p.badRate, true
	}
	return 0, false
}

// step moves st by whether the condition holds now.
func (a *alerting) step(r *rule, j jobSnap, st *alertState, active bool, activeSince, now time.Time) {
	now = now.UTC()
	was := st.state
	defer func() {
		// Kept: what entering or leaving firing and resolved changes
		// (not the flapping between ok and pending of a value near
		// its threshold, which would write at every evaluation).
		if st.state != was && (st.state == alertFiring || st.state == alertResolved || was == alertFiring || was == alertResolved) {
			a.dirty = true
		}
	}()
	switch st.state {
	case alertOK, alertResolved:
		if !active {
			return
		}
		st.state, st.since = alertPending, now
		if !activeSince.IsZero() {
			st.since = activeSince.UTC()
		}
		fallthrough
	case alertPending:
		if !active {
			st.state, st.since = alertOK, now
			return
		}
		if now.Sub(st.since) >= r.forDur {
			st.state, st.since = alertFiring, now
			a.notify(r, st, notification{Alert: r.Name, Job: j.name, State: alertFiring, Since: now, Value: st.value, Message: r.message(j, st.value, true)})
		}
	case alertFiring:
		if !active {
			st.state, st.since = alertResolved, now
			a.notify(r, st, notification{Alert: r.Name, Job: j.name, State: alertResolved, Since: now, Value: st.value, Message: r.message(j, st.value, false)})
		}
	}
}

// message says what fired or resolved.
func (r *rule) message(j jobSnap, value float64, firing bool) string {
	c := r.Condition
	switch {
	case c.Kind == condJobFailed && firing:
		return fmt.Sprintf("job %s failed: %s", j.name, j.lastError)
	case c.Kind == condJobFailed:
		return fmt.Sprintf("job %s is %s again", j.name, j.status)
	case c.Kind == condNoOutput && firing:
		return fmt.Sprintf("job %s has written no rows for %s (alert after %s)", j.name, time.Duration(value*float64(time.Second)).Round(time.Second), c.For)
	case c.Kind == condNoOutput:
		return fmt.Sprintf("job %s writes rows again (or is %s)", j.name, j.status)
	}
	rel := "above"
	if c.Kind == condMetricBelow {
		rel = "below"
	}
	if firing {
		return fmt.Sprintf("job %s: %s is %.4g, %s %g for %s", j.name, c.Metric, value, rel, *c.Threshold, r.forDur)
	}
	if j.status != statusRunning {
		return fmt.Sprintf("job %s: %s no longer watched: the job is %s", j.name, c.Metric, j.status)
	}
	return fmt.Sprintf("job %s: %s is %.4g, no longer %s %g", j.name, c.Metric, value, rel, *c.Threshold)
}

// notify logs n and, if the rule has a webhook or a table, posts it and
// writes it from a goroutine of its own, after the state's earlier
// notifications. a.mu is held.
func (a *alerting) notify(r *rule, st *alertState, n notification) {
	log := a.s.log.Info
	if n.State == alertFiring {
		log = a.s.log.Warn
	}
	log("alert "+n.State, "alert", n.Alert, "job", n.Job, "value", n.Value, "message", n.Message)
	if r.Webhook == "" && r.Table == "" {
		return
	}
	st.unsent = &n
	a.dirty = true
	prev, done := st.sent, make(chan struct{})
	st.sent = done
	hook, table := r.Webhook, r.Table
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(done)
		if prev != nil {
			select {
			case <-prev:
			case <-a.ctx.Done():
				return
			}
		}
		var errs []string
		if hook != "" {
			if err := a.post(hook, n); err != nil {
				errs = append(errs, err.Error())
				a.s.log.Error("cannot notify an alert's webhook", "alert", n.Alert, "job", n.Job, "state", n.State, "error", err)
			}
		}
		if table != "" {
			if err := a.write(table, n); err != nil {
				errs = append(errs, err.Error())
				a.s.log.Error("cannot write an alert into its table", "alert", n.Alert, "job", n.Job, "state", n.State, "table", table, "error", err)
			}
		}
		a.mu.Lock()
		if errs == nil {
			st.lastNotified, st.lastError = time.Now().UTC(), ""
		} else {
			st.lastError = strings.Join(errs, "; ")
		}
		if st.unsent != nil && *st.unsent == n && a.ctx.Err() == nil {
			st.unsent = nil // delivered, or given up after its retries (not cut short by a shutdown)
		}
		a.saveStates()
		a.mu.Unlock()
	}()
}

// write writes n as a row into table, with an INSERT ... VALUES run in
// a session of the server's engine, retried as a webhook's post is. A
// failure is returned, never a panic: a job that cannot write fails
// alone.
func (a *alerting) write(table string, n notification) error {
	err := a.retry(func() error {
		sess := a.s.engine.NewSession()
		defer sess.Close()
		src := alertInsert(table, n)
		res, err := sess.Exec(a.ctx, "alert.sql", []byte(src))
		if err != nil {
			return errors.New(sluice.FormatError(err, []byte(src)))
		}
		for _, r := range res {
			if r.Job != nil {
				if err := r.Job.Wait(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("table %s: %w", table, err)
	}
	return nil
}

// retry calls f until it succeeds, webhookAttempts times at most, with
// a doubling back-off, or until the server closes.
func (a *alerting) retry(f func() error) error {
	wait := a.backoff
	var err error
	for attempt := 1; ; attempt++ {
		err = f()
		if err == nil || attempt == webhookAttempts || a.ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(wait):
		case <-a.ctx.Done():
			return fmt.Errorf("%w (the server closed before a retry)", err)
		}
		wait *= 2
	}
	if err != nil {
		return fmt.Errorf("%w (after %d attempts)", err, webhookAttempts)
	}
	return nil
}

// post sends n to hook, retrying with a doubling back-off, until it is
// accepted (2xx), the attempts are spent or the server closes.
func (a *alerting) post(hook string, n notification) error {
	if err := checkWebhook(hook, a.allowRemote); err != nil {
		return err
	}
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return a.retry(func() error { return a.postOnce(hook, body) })
}

func (a *alerting) postOnce(hook string, body []byte) error {
	req, err := http.NewRequestWithContext(a.ctx, http.MethodPost, hook, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}

// save writes the rules to alerts.json; a.mu is held.
func (a *alerting) save() error {
	var file struct {
		Alerts []alertRule `json:"alerts"`
	}
	file.Alerts = []alertRule{}
	for _, name := range slices.Sorted(maps.Keys(a.rules)) {
		file.Alerts = append(file.Alerts, a.rules[name].alertRule)
	}
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(a.path, append(b, '\n'))
}

// view returns r with its states, sorted by job; a.mu is held.
func (r *rule) view() alertJSON {
	v := alertJSON{alertRule: r.alertRule, States: []alertStateJSON{}}
	for _, name := range slices.Sorted(maps.Keys(r.states)) {
		st := r.states[name]
		v.States = append(v.States, alertStateJSON{Job: name, State: st.state, Since: st.since, Value: st.value,
			LastNotified: st.lastNotified, LastError: st.lastError})
	}
	return v
}

var descAlertFiring = prometheus.NewDesc("sluice_alert_firing",
	"1 while the alert fires for the job, 0 otherwise.", []string{"alert", "job"}, nil)

// collect sends sluice_alert_firing for every state of the enabled
// rules.
func (a *alerting) collect(ch chan<- prometheus.Metric) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.rules {
		for job, st := range r.states {
			v := 0.0
			if st.state == alertFiring {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descAlertFiring, prometheus.GaugeValue, v, r.Name, job)
		}
	}
}

// listAlerts answers GET /v1/alerts: the rules, sorted by name, with
// their states.
func (s *Server) listAlerts(w http.ResponseWriter, r *http.Request) {
	a := s.alerts
	a.mu.Lock()
	out := []alertJSON{}
	for _, name := range slices.Sorted(maps.Keys(a.rules)) {
		out = append(out, a.rules[name].view())
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"alerts": out})
}

// createAlert answers POST /v1/alerts.
func (s *Server) createAlert(w http.ResponseWriter, r *http.Request) {
	var req alertRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, "cannot read the alert rule: "+err.Error(), nil)
		return
	}
	ar := alertRule{Name: req.Name, Job: req.Job, Condition: req.Condition, Webhook: req.Webhook, Table: req.Table,
		Enabled: req.Enabled == nil || *req.Enabled}
	a := s.alerts
	rl, err := checkRule(ar, a.allowRemote)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, err.Error(), nil)
		return
	}
	if ar.Table != "" {
		// The table must take the rows: planned, not run.
		sample := notification{Alert: ar.Name, Job: "job", State: alertFiring, Since: time.Now(), Message: "m"}
		if _, err := s.explain("alert.sql", alertInsert(ar.Table, sample)); err != nil {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("table %s cannot take the alert's rows (%s): %v",
				ar.Table, alertColumns, err), nil)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.rules[ar.Name]; ok {
		writeError(w, http.StatusConflict, codeConflict, fmt.Sprintf("an alert named %q exists already: delete it first, or choose another name", ar.Name), nil)
		return
	}
	a.rules[ar.Name] = rl
	if err := a.save(); err != nil {
		delete(a.rules, ar.Name)
		s.internal(w, err)
		return
	}
	s.log.Info("alert created", "alert", ar.Name, "job", ar.Job, "condition", ar.Condition.Kind)
	writeJSON(w, http.StatusCreated, rl.view())
}

// lookupAlert returns the rule named name, or answers 404 with the
// nearest name; a.mu is held.
func (s *Server) lookupAlert(w http.ResponseWriter, name string) *rule {
	rl := s.alerts.rules[name]
	if rl == nil {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no alert named %q%s", name, suggest.Hint(name, slices.Collect(maps.Keys(s.alerts.rules)))), nil)
	}
	return rl
}

// showAlert answers GET /v1/alerts/{name}.
func (s *Server) showAlert(w http.ResponseWriter, r *http.Request) {
	s.alerts.mu.Lock()
	rl := s.lookupAlert(w, r.PathValue("name"))
	var v alertJSON
	if rl != nil {
		v = rl.view()
	}
	s.alerts.mu.Unlock()
	if rl != nil {
		writeJSON(w, http.StatusOK, v)
	}
}

// deleteAlert answers DELETE /v1/alerts/{name}: the rule and its states
// are removed, without a notification.
func (s *Server) deleteAlert(w http.ResponseWriter, r *http.Request) {
	a := s.alerts
	a.mu.Lock()
	defer a.mu.Unlock()
	rl := s.lookupAlert(w, r.PathValue("name"))
	if rl == nil {
		return
	}
	delete(a.rules, rl.Name)
	if err := a.save(); err != nil {
		a.rules[rl.Name] = rl
		s.internal(w, err)
		return
	}
	if len(rl.states) > 0 {
		a.saveStates() // a rule made again with this name starts at ok
	}
	s.log.Info("alert deleted", "alert", rl.Name)
	w.WriteHeader(http.StatusNoContent)
}
