package server

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/state"
)

// openAPI describes the routes of routeTable.
//
//go:embed openapi.json
var openAPI []byte

// route is one route of the API.
type route struct {
	method, path string
	handle       http.HandlerFunc
}

// routeTable lists the API's routes: Sluice's, then the SQL-session part
// of Flink's SQL gateway API (gateway.go).
func (s *Server) routeTable() []route {
	return append([]route{
		{"GET", "/healthz", s.health},
		{"GET", "/metrics", s.metricsHandler()},
		{"GET", "/openapi.json", s.openapi},
		{"GET", "/v1/jobs", s.listJobs},
		{"POST", "/v1/jobs", s.createJob},
		{"GET", "/v1/jobs/{name}", s.showJob},
		{"DELETE", "/v1/jobs/{name}", s.deleteJob},
		{"POST", "/v1/jobs/{name}/stop", s.stopJob},
		{"POST", "/v1/jobs/{name}/resume", s.resumeJob},
		{"GET", "/v1/jobs/{name}/versions", s.listVersions},
		{"PUT", "/v1/jobs/{name}", s.updateJob},
		{"POST", "/v1/jobs/{name}/rollback", s.rollbackJob},
		{"POST", "/v1/bulk/stop", s.bulkStop},
		{"POST", "/v1/bulk/resume", s.bulkResume},
		{"POST", "/v1/validate", s.validate},
		{"POST", "/v1/explain", s.explainSQL},
		{"POST", "/v1/preview", s.preview},
		{"GET", "/v1/catalog", s.getCatalog},
		{"POST", "/v1/catalog", s.postCatalog},
		{"GET", "/v1/rulesets", s.listRulesets},
		{"GET", "/v1/rulesets/{name}", s.showRuleset},
		{"GET", "/v1/rulesets/{name}/versions", s.listRulesetVersions},
		{"GET", "/v1/rulesets/{name}/versions/{version}", s.showRulesetVersion},
		{"GET", "/v1/metric-groups", s.listMetricGroups},
		{"GET", "/v1/metric-groups/{name}", s.showMetricGroup},
		{"GET", "/v1/metric-groups/{name}/versions", s.listMetricGroupVersions},
		{"GET", "/v1/audit", s.getAudit},
		{"GET", "/v1/alerts", s.listAlerts},
		{"POST", "/v1/alerts", s.createAlert},
		{"GET", "/v1/alerts/{name}", s.showAlert},
		{"DELETE", "/v1/alerts/{name}", s.deleteAlert},
		{"POST", "/v1/metric-groups/{name}/read", s.readMetrics},
		{"GET", "/v1/metric-groups/{name}/subscribe", s.subscribeMetrics},
	}, s.gatewayRoutes()...)
}

// routes returns the router: each path answers its methods, a 405 with
// Allow for the others, and an unknown path a 404, all in JSON.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	byPath := map[string]map[string]http.HandlerFunc{}
	for _, r := range s.routeTable() {
		if byPath[r.path] == nil {
			byPath[r.path] = map[string]http.HandlerFunc{}
		}
		byPath[r.path][r.method] = r.handle
	}
	for path, methods := range byPath {
		allow := strings.Join(slices.Sorted(maps.Keys(methods)), ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			h, ok := methods[r.Method]
			if !ok && r.Method == http.MethodHead {
				h, ok = methods[http.MethodGet]
			}
			if !ok {
				w.Header().Set("Allow", allow)
				routeError(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, allow))
				return
			}
			h(w, r)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		routeError(w, r, http.StatusNotFound, fmt.Sprintf("no route %s %s (see /openapi.json)", r.Method, r.URL.Path))
	})
	return mux
}

// routeError answers a request no route takes: in Flink's form under the
// gateway's paths.
func routeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if isGatewayPath(r.URL.Path) {
		gwError(w, status, msg)
		return
	}
	code := codeNotFound
	if status == http.StatusMethodNotAllowed {
		code = codeBadRequest
	}
	writeError(w, status, code, msg, nil)
}

// Error codes of the API.
const (
	codeBadSQL       = "bad_sql"
	codeBadRequest   = "bad_request"
	codeNotFound     = "not_found"
	codeConflict     = "conflict"
	codeUnauthorized = "unauthorized"
	codeInternal     = "internal"
	codeUnavailable  = "unavailable"
)

type errorBody struct {
	Error apiError `json:"error"`
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	// Update is the report of an update refused for the state it would
	// drop.
	Update *updateJSON `json:"update,omitempty"`
}

// jsonBuf is an encoder that indents into a buffer of its own; writeJSON
// reuses them, buffers and the encoder's indenting scratch alike: a read
// of a job makes little garbage then, and the reads of many clients do not
// set the collector's pace.
type jsonBuf struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonBufs = sync.Pool{New: func() any {
	j := &jsonBuf{}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetIndent("", "  ")
	return j
}}

// maxPooledJSON is the largest buffer put back for reuse: a list of a
// thousand jobs is not kept for the reads of one.
const maxPooledJSON = 64 << 10

func writeJSON(w http.ResponseWriter, status int, v any) {
	j := jsonBufs.Get().(*jsonBuf)
	j.buf.Reset()
	err := j.enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	if err == nil {
		w.Header().Set("Content-Length", strconv.Itoa(j.buf.Len()))
	}
	w.WriteHeader(status)
	w.Write(j.buf.Bytes())
	if j.buf.Cap() <= maxPooledJSON {
		jsonBufs.Put(j)
	}
}

// writeError answers an error; pos, if valid, is where in the SQL.
func writeError(w http.ResponseWriter, status int, code, msg string, pos *token.Position) {
	e := apiError{Code: code, Message: msg}
	if pos != nil && pos.IsValid() {
		e.Line, e.Column = pos.Line, pos.Column
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
	}
	writeJSON(w, status, errorBody{e})
}

// writeSQLError answers an error of the engine about src: 400 bad_sql
// with the position of the first error when it has one, else 500.
func (s *Server) writeSQLError(w http.ResponseWriter, src string, err error) {
	var list token.ErrorList
	var one *token.Error
	switch {
	case errors.As(err, &list) && len(list) > 0:
		msg := list[0].Msg
		if len(list) > 1 {
			msg += fmt.Sprintf(" (and %d more errors)", len(list)-1)
		}
		writeError(w, http.StatusBadRequest, codeBadSQL, s.mask(src, msg), &list[0].Pos)
	case errors.As(err, &one):
		writeError(w, http.StatusBadRequest, codeBadSQL, s.mask(src, one.Msg), &one.Pos)
	default:
		s.log.Error("request failed", "error", s.mask(src, err.Error()))
		writeError(w, http.StatusInternalServerError, codeInternal, s.mask(src, err.Error()), nil)
	}
}

func (s *Server) internal(w http.ResponseWriter, err error) {
	s.log.Error("request failed", "error", err)
	writeError(w, http.StatusInternalServerError, codeInternal, err.Error(), nil)
}

// maxBody bounds a request's body.
const maxBody = 16 << 20

// decode reads the JSON body of r into v; an empty body leaves v as it
// is when emptyOK. It answers 400 itself and reports false on failure.
func decode(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) bool {
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v)
	if err == nil || emptyOK && errors.Is(err, io.EOF) {
		return true
	}
	writeError(w, http.StatusBadRequest, codeBadRequest, "cannot read the request's JSON body: "+err.Error(), nil)
	return false
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// validName reports whether name can name a job (or a token): it is a
// directory name in the data directory, so "." and ".." cannot.
func validName(name string) bool {
	return namePattern.MatchString(name) && name != "." && name != ".."
}

// jobJSON is a job as the API shows it.
type jobJSON struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels"`
	Status    string            `json:"status"`
	Version   int               `json:"version"`
	SQL       string            `json:"sql"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	StartedAt time.Time         `json:"started_at,omitzero"`
	StoppedAt time.Time         `json:"stopped_at,omitzero"`
	Plan      string            `json:"plan,omitempty"`
	Metrics   metricsJSON       `json:"metrics"`
	// Operators are the metrics of each operator of the job's plan
	// (GET /v1/jobs/{name} only).
	Operators []operatorJSON `json:"operators,omitempty"`
	Errors    []jobError     `json:"errors"`

	// m and ops: the metrics withMetrics fills in, and whether with the
	// operators'.
	m   *exec.Metrics
	ops bool
}

type metricsJSON struct {
	RowsIn    int64 `json:"rows_in"`
	RowsOut   int64 `json:"rows_out"`
	LateRows  int64 `json:"late_rows"`
	Malformed int64 `json:"malformed"`
	// SuppressedAlerts are the alerts of rulesets that their SUPPRESS BY
	// suppressed.
	SuppressedAlerts int64 `json:"suppressed_alerts"`
	// Reconnects and SinkDropped: see exec.Metrics.
	Reconnects  int64 `json:"reconnects,omitempty"`
	SinkDropped int64 `json:"sink_dropped,omitempty"`
	// Checkpoints committed by the current (or last) run, when the last
	// was and how long it took (from its barriers to its commit).
	Checkpoints                int64     `json:"checkpoints"`
	LastCheckpoint             time.Time `json:"last_checkpoint,omitzero"`
	LastCheckpointDurationSecs *float64  `json:"last_checkpoint_duration_seconds,omitempty"`
	// StateKeys and StateBytes: the state in memory of the operators
	// whose state grows with their keys.
	StateKeys  int64 `json:"state_keys"`
	StateBytes int64 `json:"state_bytes"`
	// ConsumerLag is the sum of the sources' consumer lags (absent when
	// no source knows its own); WatermarkLagSecs and Backpressure are
	// the largest of the operators'.
	ConsumerLag      *int64   `json:"consumer_lag,omitempty"`
	WatermarkLagSecs *float64 `json:"watermark_lag_seconds,omitempty"`
	Backpressure     float64  `json:"backpressure"`
}

// operatorJSON is an operator of a job's plan with its metrics (see
// exec.OperatorHealth).
type operatorJSON struct {
	Name             string    `json:"name"`
	Kind             string    `json:"kind"`
	Table            string    `json:"table,omitempty"`
	Tasks            int       `json:"tasks"`
	RowsIn           int64     `json:"rows_in"`
	RowsOut          int64     `json:"rows_out"`
	Watermark        time.Time `json:"watermark,omitzero"`
	WatermarkLagSecs *float64  `json:"watermark_lag_seconds,omitempty"`
	Backpressure     float64   `json:"backpressure"`
	StateKeys        int64     `json:"state_keys"`
	StateBytes       int64     `json:"state_bytes"`
	ConsumerLag      *int64    `json:"consumer_lag,omitempty"`

	hasState bool // its state is measured (/metrics shows it)
}

// healthJSON returns the job-level figures of h and its operators, as
// the API shows them.
func healthJSON(h exec.Health) (metricsJSON, []operatorJSON) {
	m := metricsJSON{RowsIn: h.RowsIn, RowsOut: h.RowsOut, LateRows: h.LateRows, Malformed: h.Malformed, SuppressedAlerts: h.SuppressedAlerts,
		Reconnects: h.Reconnects, SinkDropped: h.SinkDropped,
		Checkpoints: h.Checkpoints, StateKeys: h.StateKeys, StateBytes: h.StateBytes, Backpressure: h.MaxBackPressure}
	if !h.LastCheckpoint.IsZero() {
		m.LastCheckpoint = h.LastCheckpoint.UTC()
		if h.LastCheckpointDuration > 0 {
			d := h.LastCheckpointDuration.Seconds()
			m.LastCheckpointDurationSecs = &d
		}
	}
	if h.HasConsumerLag {
		n := h.ConsumerLag
		m.ConsumerLag = &n
	}
	if h.HasWatermarkLag {
		d := h.MaxWatermarkLag.Seconds()
		m.WatermarkLagSecs = &d
	}
	ops := make([]operatorJSON, 0, len(h.Operators))
	for _, o := range h.Operators {
		v := operatorJSON{Name: o.Name, Kind: o.Kind, Table: o.Table, Tasks: o.Tasks, RowsIn: o.RowsIn, RowsOut: o.RowsOut,
			Backpressure: o.BackPressure, StateKeys: o.StateKeys, StateBytes: o.StateBytes, hasState: o.HasState}
		if o.HasWatermark && watermarkShown(o.Watermark) {
			v.Watermark = time.UnixMicro(o.Watermark).UTC()
			d := o.WatermarkLag.Seconds()
			v.WatermarkLagSecs = &d
		}
		if o.HasConsumerLag {
			n := o.ConsumerLag
			v.ConsumerLag = &n
		}
		ops = append(ops, v)
	}
	return m, ops
}

// watermarkShown reports whether a watermark (microseconds since the
// epoch) is a time JSON can carry: years 1 to 9999.
func watermarkShown(wm int64) bool {
	const lo, hi = -62135596800_000000, 253402300799_999999
	return wm >= lo && wm <= hi
}

// view returns j as the API shows it, but for its metrics, which
// withMetrics fills in once s.mu is released; s.mu must be held.
// withPlan adds the plan and the operators.
func (s *Server) view(j *job, withPlan bool) jobJSON {
	v := jobJSON{
		Name: j.rec.Name, Labels: maps.Clone(j.rec.Labels), Status: j.rec.Status, Version: j.rec.Version,
		SQL: j.shownSQL, CreatedAt: j.rec.CreatedAt, UpdatedAt: j.rec.UpdatedAt,
		StartedAt: j.rec.StartedAt, StoppedAt: j.rec.StoppedAt,
		Errors: slices.Clone(j.rec.Errors),
	}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	if v.Errors == nil {
		v.Errors = []jobError{}
	}
	if withPlan {
		v.Plan = j.plan
	}
	v.m, v.ops = j.metrics, withPlan
	return v
}

// withMetrics fills in the metrics of a view, without s.mu: a job's
// metrics have a lock of their own, and reading them takes a while that
// no other request should wait for (a list reads a thousand jobs').
func (v *jobJSON) withMetrics(now time.Time) {
	if v.m == nil {
		return
	}
	var ops []operatorJSON
	v.Metrics, ops = healthJSON(v.m.Health(now))
	if v.ops {
		v.Operators = ops
	}
}

// lookup returns the job named name, or answers 404 with the nearest
// name.
func (s *Server) lookup(w http.ResponseWriter, name string) *job {
	s.mu.Lock()
	j := s.jobs[name]
	var names []string
	if j == nil {
		// Only a miss lists the names, for the hint: a read of a job
		// costs the same however many jobs there are.
		names = slices.Collect(maps.Keys(s.jobs))
	}
	s.mu.Unlock()
	if j == nil {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no job named %q%s", name, suggest.Hint(name, names)), nil)
	}
	return j
}

func (s *Server) respondJob(w http.ResponseWriter, status int, j *job, withPlan bool) {
	s.mu.Lock()
	v := s.view(j, withPlan)
	s.mu.Unlock()
	v.withMetrics(time.Now())
	writeJSON(w, status, v)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}

// listJobs answers GET /v1/jobs[?label=k=v...]: the jobs with every label
// given, sorted by name.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	want := map[string]string{}
	for _, l := range r.URL.Query()["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("label %q: expected key=value", l), nil)
			return
		}
		want[k] = v
	}
	s.mu.Lock()
	out := []jobJSON{}
	for _, j := range s.jobs {
		if hasLabels(j.rec.Labels, want) {
			out = append(out, s.view(j, false))
		}
	}
	s.mu.Unlock()
	now := time.Now()
	for i := range out {
		out[i].withMetrics(now)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
}

func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

type createRequest struct {
	Name   string            `json:"name"`
	SQL    string            `json:"sql"`
	Labels map[string]string `json:"labels"`
}

// createJob answers POST /v1/jobs: the job is checked, recorded as
// version 1 and started.
func (s *Server) createJob(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !decode(w, r, &req, false) {
		return
	}
	if !validName(req.Name) {
		writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("job name %q: use 1 to 100 letters, digits, '_', '.' or '-'", req.Name), nil)
		return
	}
	for k := range req.Labels {
		if k == "" || strings.Contains(k, "=") {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("label key %q: a key is not empty and has no '='", k), nil)
			return
		}
	}
	j, err := s.publish(req.Name, req.SQL, req.Labels)
	var pe *publishError
	switch {
	case errors.As(err, &pe):
		writeError(w, pe.status, pe.code, pe.msg, nil)
		return
	case err != nil:
		s.writeSQLError(w, req.SQL, err)
		return
	}
	s.respondJob(w, http.StatusCreated, j, true)
}

// publishError is why publish refused a job, when the SQL is not why.
type publishError struct {
	status int
	code   string
	msg    string
}

func (e *publishError) Error() string { return e.msg }

// publish checks the script of a new job named name, records it as
// version 1 and starts it. A refusal for a reason other than the SQL
// (the name is taken, the server shuts down, the data directory cannot
// be written) is a *publishError; the others are the engine's errors
// about sql.
func (s *Server) publish(name, sql string, labels map[string]string) (*job, error) {
	filename := name + ".sql"
	if err := checkScript(filename, []byte(sql)); err != nil {
		return nil, err
	}
	s.ops.Lock()
	defer s.ops.Unlock()
	s.mu.Lock()
	_, exists := s.jobs[name]
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return nil, &publishError{http.StatusServiceUnavailable, codeInternal, "the server is shutting down"}
	}
	if exists {
		return nil, &publishError{http.StatusConflict, codeConflict, fmt.Sprintf("a job named %q exists already: delete it first, or choose another name", name)}
	}
	if _, err := s.explain(filename, sql); err != nil {
		return nil, err
	}
	internal := func(err error) error {
		s.log.Error("request failed", "error", err)
		return &publishError{http.StatusInternalServerError, codeInternal, err.Error()}
	}
	// State left under the name by a job deleted before (a deletion a
	// crash interrupted) is not this job's.
	if err := s.dropState(name, sql); err != nil {
		return nil, internal(err)
	}
	now := time.Now().UTC()
	j := &job{rec: jobRecord{Name: name, Labels: labels, Status: statusRunning, Version: 1, CreatedAt: now, UpdatedAt: now}}
	s.setSQL(j, sql)
	if err := s.store.saveVersion(name, 1, sql); err != nil {
		return nil, internal(err)
	}
	if err := s.save(j); err != nil {
		return nil, internal(err)
	}
	if err := s.start(j); err != nil {
		if derr := s.store.deleteJob(name); derr != nil {
			s.log.Error("cannot remove a job that failed to start", "job", name, "error", derr)
		}
		return nil, err
	}
	s.mu.Lock()
	s.jobs[name] = j
	s.mu.Unlock()
	s.log.Info("job created", "job", name, "labels", labels)
	return j, nil
}

// setSQL sets j's SQL and what the API shows of it.
func (s *Server) setSQL(j *job, sql string) {
	j.sql = sql
	j.shownSQL = s.mask(sql, sql)
}

func (s *Server) showJob(w http.ResponseWriter, r *http.Request) {
	j := s.lookup(w, r.PathValue("name"))
	if j == nil {
		return
	}
	s.mu.Lock()
	missing, name, sql := j.plan == "", j.rec.Name, j.sql
	s.mu.Unlock()
	if missing {
		// A job not run since the server started: its plan as it would
		// run now.
		if plan, err := s.explain(name+".sql", sql); err == nil {
			shown := s.mask(sql, plan)
			s.mu.Lock()
			if j.plan == "" {
				j.plan = shown
			}
			s.mu.Unlock()
		}
	}
	s.respondJob(w, http.StatusOK, j, true)
}

type stopRequest struct {
	Mode string `json:"mode"`
}

// stopMode reads a stop mode: checkpoint (default) or now.
func stopMode(w http.ResponseWriter, mode string) (now, ok bool) {
	switch mode {
	case "", "checkpoint":
		return false, true
	case "now":
		return true, true
	}
	writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("stop mode %q: use \"checkpoint\" (the default: a final checkpoint) or \"now\"", mode), nil)
	return false, false
}

// stopJob answers POST /v1/jobs/{name}/stop; a job not running is left
// as it is.
func (s *Server) stopJob(w http.ResponseWriter, r *http.Request) {
	var req stopRequest
	if !decode(w, r, &req, true) {
		return
	}
	now, ok := stopMode(w, req.Mode)
	if !ok {
		return
	}
	s.ops.Lock()
	defer s.ops.Unlock()
	j := s.lookup(w, r.PathValue("name"))
	if j == nil {
		return
	}
	if err := s.stop(j, now); err != nil {
		s.internal(w, err)
		return
	}
	s.respondJob(w, http.StatusOK, j, false)
}

// resumeJob answers POST /v1/jobs/{name}/resume: a job not running runs
// again from its state; a running one is left as it is.
func (s *Server) resumeJob(w http.ResponseWriter, r *http.Request) {
	s.ops.Lock()
	defer s.ops.Unlock()
	j := s.lookup(w, r.PathValue("name"))
	if j == nil {
		return
	}
	if err := s.resume(j); err != nil {
		s.writeSQLError(w, j.sql, err)
		return
	}
	s.respondJob(w, http.StatusOK, j, false)
}

// resume starts j if it is not running; a failure to start is recorded
// as the job's error. s.ops must be held.
func (s *Server) resume(j *job) error {
	s.mu.Lock()
	running, closing := j.run != nil, s.closing
	if !running && !closing {
		j.rec.UpdatedAt = time.Now().UTC()
	}
	s.mu.Unlock()
	if running {
		return nil
	}
	if closing {
		return errors.New("the server is shutting down")
	}
	if err := s.start(j); err != nil {
		s.ended(j, err)
		return err
	}
	s.log.Info("job resumed", "job", j.rec.Name)
	return nil
}

// deleteJob answers DELETE /v1/jobs/{name}: the job is stopped at once,
// its record and versions removed and its state discarded.
func (s *Server) deleteJob(w http.ResponseWriter, r *http.Request) {
	s.ops.Lock()
	defer s.ops.Unlock()
	j := s.lookup(w, r.PathValue("name"))
	if j == nil {
		return
	}
	if err := s.stop(j, true); err != nil {
		s.internal(w, err)
		return
	}
	name := j.rec.Name
	if err := s.store.deleteJob(name); err != nil {
		s.internal(w, err)
		return
	}
	s.mu.Lock()
	delete(s.jobs, name)
	s.mu.Unlock()
	if err := s.dropState(name, j.sql); err != nil {
		s.internal(w, fmt.Errorf("job %s was deleted, but its state could not be discarded (a job published under its name will discard it): %w", name, err))
		return
	}
	s.log.Info("job deleted", "job", name)
	w.WriteHeader(http.StatusNoContent)
}

type versionJSON struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	SQL       string    `json:"sql"`
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) {
	j := s.lookup(w, r.PathValue("name"))
	if j == nil {
		return
	}
	vs, err := s.store.versions(j.rec.Name)
	if err != nil {
		s.internal(w, err)
		return
	}
	out := []versionJSON{}
	for _, v := range vs {
		out = append(out, versionJSON{Version: v.Version, CreatedAt: v.CreatedAt, SQL: s.mask(v.SQL, v.SQL)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": out})
}

type bulkRequest struct {
	Labels map[string]string `json:"labels"`
	// Mode is the stop mode of a bulk stop.
	Mode string `json:"mode"`
}

type bulkError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// bulkJobs reads a bulk request and returns the jobs with its labels,
// sorted by name. s.ops must be held.
func (s *Server) bulkJobs(w http.ResponseWriter, r *http.Request) ([]*job, bulkRequest, bool) {
	var req bulkRequest
	if !decode(w, r, &req, false) {
		return nil, req, false
	}
	if len(req.Labels) == 0 {
		writeError(w, http.StatusBadRequest, codeBadRequest, "no labels: a bulk request names the labels of the jobs it acts on", nil)
		return nil, req, false
	}
	s.mu.Lock()
	var out []*job
	for _, j := range s.jobs {
		if hasLabels(j.rec.Labels, req.Labels) {
			out = append(out, j)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].rec.Name < out[b].rec.Name })
	return out, req, true
}

// bulkStop answers POST /v1/bulk/stop: every running job with the labels
// stops (together).
func (s *Server) bulkStop(w http.ResponseWriter, r *http.Request) {
	s.ops.Lock()
	defer s.ops.Unlock()
	jobs, req, ok := s.bulkJobs(w, r)
	if !ok {
		return
	}
	now, ok := stopMode(w, req.Mode)
	if !ok {
		return
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	stopped, failed := []string{}, []bulkError{}
	for _, j := range jobs {
		s.mu.Lock()
		running := j.run != nil
		s.mu.Unlock()
		if !running {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.stop(j, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, bulkError{j.rec.Name, err.Error()})
			} else {
				stopped = append(stopped, j.rec.Name)
			}
		}()
	}
	wg.Wait()
	slices.Sort(stopped)
	writeJSON(w, http.StatusOK, bulkResponse{Jobs: stopped, Errors: failed})
}

type bulkResponse struct {
	Jobs   []string    `json:"jobs"`
	Errors []bulkError `json:"errors,omitempty"`
}

// bulkResume answers POST /v1/bulk/resume: every stopped or failed job
// with the labels runs again.
func (s *Server) bulkResume(w http.ResponseWriter, r *http.Request) {
	s.ops.Lock()
	defer s.ops.Unlock()
	jobs, _, ok := s.bulkJobs(w, r)
	if !ok {
		return
	}
	resp := bulkResponse{Jobs: []string{}}
	for _, j := range jobs {
		s.mu.Lock()
		status := j.rec.Status
		if j.run != nil {
			status = statusRunning
		}
		s.mu.Unlock()
		if status != statusStopped && status != statusFailed {
			continue
		}
		if err := s.resume(j); err != nil {
			resp.Errors = append(resp.Errors, bulkError{j.rec.Name, s.mask(j.sql, err.Error())})
			continue
		}
		resp.Jobs = append(resp.Jobs, j.rec.Name)
	}
	writeJSON(w, http.StatusOK, resp)
}

type sqlRequest struct {
	SQL string `json:"sql"`
}

// validate answers POST /v1/validate: whether the SQL would be accepted
// as a job (parsed and planned, not run).
func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	var req sqlRequest
	if !decode(w, r, &req, false) {
		return
	}
	if err := checkScript("job.sql", []byte(req.SQL)); err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	if _, err := s.explain("job.sql", req.SQL); err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"valid": true})
}

// explainSQL answers POST /v1/explain: the plans of the INSERTs, statement
// sets and queries of the SQL.
func (s *Server) explainSQL(w http.ResponseWriter, r *http.Request) {
	var req sqlRequest
	if !decode(w, r, &req, false) {
		return
	}
	plan, err := s.explain("query.sql", req.SQL)
	if err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"plan": s.mask(req.SQL, plan)})
}

type catalogJSON struct {
	Tables       []string             `json:"tables"`
	Views        []string             `json:"views"`
	Rulesets     []sluice.Ruleset     `json:"rulesets"`
	MetricGroups []sluice.MetricGroup `json:"metric_groups"`
}

func (s *Server) catalogView() catalogJSON {
	c := catalogJSON{Tables: s.engine.Tables(), Views: []string{}, Rulesets: s.engine.Rulesets(), MetricGroups: s.engine.MetricGroups()}
	if c.Tables == nil {
		c.Tables = []string{}
	}
	if c.Rulesets == nil {
		c.Rulesets = []sluice.Ruleset{}
	}
	if c.MetricGroups == nil {
		c.MetricGroups = []sluice.MetricGroup{}
	}
	for _, v := range s.engine.Views() {
		if !slices.ContainsFunc(c.Rulesets, func(r sluice.Ruleset) bool { return r.Name == v }) &&
			!slices.ContainsFunc(c.MetricGroups, func(g sluice.MetricGroup) bool { return g.Name == v }) {
			c.Views = append(c.Views, v)
		}
	}
	return c
}

func (s *Server) getCatalog(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.catalogView())
}

// postCatalog answers POST /v1/catalog: CREATE TABLE, VIEW, RULESET and
// METRIC GROUP, ALTER RULESET and METRIC GROUP, and DROP statements,
// executed in order in the server's catalog (which every job sees),
// recorded in catalog.sql and in the audit log. At an error, the
// statements before it stay applied.
func (s *Server) postCatalog(w http.ResponseWriter, r *http.Request) {
	var req sqlRequest
	if !decode(w, r, &req, false) {
		return
	}
	src := []byte(req.SQL)
	stmts, err := parser.ParseFile("catalog.sql", src)
	if err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	file := token.NewFile("catalog.sql", src)
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup:
			continue
		case *ast.Drop:
			if st.What != "FUNCTION" {
				continue
			}
		}
		s.writeSQLError(w, req.SQL, token.NewError(file, st.Pos(), "the catalog takes CREATE TABLE, VIEW, RULESET and METRIC GROUP, ALTER RULESET and METRIC GROUP, and DROP TABLE, VIEW, RULESET or METRIC GROUP statements; SET and the statements that start jobs belong to a job's script"))
		return
	}
	if len(stmts) == 0 {
		writeError(w, http.StatusBadRequest, codeBadRequest, "no statement", nil)
		return
	}
	if err := s.changeCatalog(requester(r), "catalog.sql", src, stmts); err != nil {
		var se *storeError
		if errors.As(err, &se) {
			s.internal(w, se.err)
			return
		}
		s.writeSQLError(w, req.SQL, err)
		return
	}
	writeJSON(w, http.StatusOK, s.catalogView())
}

// storeError is a failure to record a change of the catalog that was
// applied.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }

// rulesetChange is a change of a ruleset or a metric group, for
// swapRulesets: prefix is its plan nodes' ("Ruleset(name=[r]," or
// "MetricGroup(name=[g],"); a ruleset's shadow's table before and after
// ("" when none).
type rulesetChange struct {
	prefix            string
	shadowBefore, now string
}

// changeCatalog executes the catalog statements stmts of src (a file
// named filename) one by one in the server's engine, as who's, records
// those applied in catalog.sql and in the audit log, and runs the jobs
// that read a ruleset changed on its new definition. It returns the
// error of the first statement that failed (those before it stay
// applied), or a *storeError.
func (s *Server) changeCatalog(who, filename string, src []byte, stmts []ast.Statement) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	file := token.NewFile(filename, src)
	var applied []string
	var entries []auditEntry
	var changed []rulesetChange
	var err error
	for _, st := range stmts {
		kind, object, action := auditObject(st)
		before, _ := s.engine.RulesetInfo(object)
		versionBefore := objectVersion(s.engine, kind, object)
		text := string(src[st.Pos().Offset():st.End().Offset()])
		// The statement alone, at its line and column.
		at := file.Position(st.Pos())
		alone := strings.Repeat("\n", at.Line-1) + strings.Repeat(" ", at.Column-1) + text
		if _, err = s.engine.Exec(context.Background(), filename, []byte(alone)); err != nil {
			break
		}
		after, _ := s.engine.RulesetInfo(object)
		applied = append(applied, text)
		e := auditEntry{Time: time.Now().UTC(), Who: who, Scope: "catalog", Kind: kind, Object: object, Action: action,
			Statement: s.mask(string(src), text)}
		e.VersionBefore, e.VersionAfter = versionBefore, objectVersion(s.engine, kind, object)
		switch {
		case kind == "ruleset" && action == "alter":
			changed = append(changed, rulesetChange{prefix: "Ruleset(name=[" + after.Name + "],", shadowBefore: shadowTable(before), now: shadowTable(after)})
		case kind == "metric group" && action == "alter":
			changed = append(changed, rulesetChange{prefix: "MetricGroup(name=[" + object + "],"})
		}
		entries = append(entries, e)
	}
	if len(applied) > 0 {
		if serr := s.store.appendCatalog(applied); serr != nil {
			return &storeError{serr}
		}
		cat, _ := s.store.catalog()
		s.mu.Lock()
		s.catSecrets = scriptSecrets(cat)
		s.mu.Unlock()
		s.log.Info("catalog changed", "statements", len(applied), "by", who)
		if aerr := s.audit.append(entries); aerr != nil {
			s.log.Error("cannot record catalog changes in the audit log", "error", aerr)
			return &storeError{aerr}
		}
	}
	s.swapRulesets(changed)
	return err
}

// objectVersion is the version of a ruleset or a metric group named
// object that engine e sees, 0 for any other object or none.
func objectVersion(e *sluice.Engine, kind, object string) int {
	switch kind {
	case "ruleset":
		rs, _ := e.RulesetInfo(object)
		return rs.Version
	case "metric group":
		for _, g := range e.MetricGroups() {
			if g.Name == object {
				return g.Version
			}
		}
	}
	return 0
}

// shadowTable is the table ruleset rs's shadow writes, or "".
func shadowTable(rs sluice.Ruleset) string {
	if rs.Shadow == nil {
		return ""
	}
	return rs.Shadow.Into
}

// swapRulesets runs the running jobs that read one of the rulesets or
// metric groups changed (a new version of each, or a ruleset's other
// shadow) again: each stops with a final checkpoint and starts from it,
// planned with the new definitions (a metric group's unchanged metrics
// keep their state). A ruleset's own state (its suppression, its
// shadow's sink) may come or go with the change: the restart drops what
// of it the new definition no longer has, and nothing else. The caller
// holds s.ops.
func (s *Server) swapRulesets(changes []rulesetChange) {
	if len(changes) == 0 {
		return
	}
	s.mu.Lock()
	var running []*job
	for _, j := range s.jobs {
		if j.run != nil {
			running = append(running, j)
		}
	}
	s.mu.Unlock()
	var names []string
	owned := map[string]bool{"Suppress": true}
	for _, c := range changes {
		names = append(names, c.prefix)
		for _, t := range []string{c.shadowBefore, c.now} {
			if t != "" {
				owned["sink "+t] = true
			}
		}
	}
	for _, j := range running {
		s.mu.Lock()
		name, sql := j.rec.Name, j.sql
		s.mu.Unlock()
		plan, err := s.explain(name+".sql", sql)
		if err != nil || !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(plan, n) }) {
			continue
		}
		if err := s.stop(j, false); err != nil {
			s.log.Error("cannot stop a job to run a ruleset's new version", "job", name, "error", err)
			continue
		}
		if r, err := s.compare(name, sql, sql); err == nil && r.Verdict != state.Compatible {
			allow := true
			for _, c := range r.Dropped() {
				allow = allow && owned[c.Label]
			}
			if allow {
				s.mu.Lock()
				j.rec.AllowLossOnce = true
				s.mu.Unlock()
				for _, c := range r.Changes {
					if c.Change != state.Kept {
						s.log.Info("a ruleset's change changes a job's state", "job", name, "operator", c.Label, "change", string(c.Change), "reason", c.Reason)
					}
				}
			}
		}
		if err := s.start(j); err != nil {
			s.ended(j, fmt.Errorf("cannot run again with a ruleset's new version: %w", err))
			s.log.Error("a job failed to start again with a ruleset's new version", "job", name, "error", err)
			continue
		}
		s.log.Info("job runs a ruleset's new version", "job", name, "rulesets", strings.Join(names, ","))
	}
}

// logRequests logs every request: at debug level, and at warning level
// those answered 5xx.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		level := slog.LevelDebug
		if sw.status >= 500 {
			level = slog.LevelWarn
		}
		if !s.log.Enabled(r.Context(), level) {
			return // the arguments would be boxed for nothing
		}
		s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration", time.Since(start), "remote", r.RemoteAddr)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

// Unwrap lets http.ResponseController reach the connection's writer (to
// flush a stream).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}
