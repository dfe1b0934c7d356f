// Package server is Sluice's server mode: a REST API (api.go, described
// by openapi.json) over one engine, whose jobs are SQL scripts published
// to it, kept in a data directory (store.go) and run again after a
// restart from their last committed state.
//
// Invariants:
//   - Every job runs in a session of its own of the server's engine, with
//     'state.dir' = DATA/state and 'pipeline.name' = the job's name, set by
//     the server: a job's state belongs to its name, and a job run again
//     (resumed, or after a restart) resumes from it.
//   - A job record's status is what the job should be after a restart:
//     a running job is started again. Close stops the jobs with a final
//     checkpoint and leaves their records as they are.
//   - Mutations (jobs, catalog) are serialized by Server.ops; reads take
//     Server.mu only for a snapshot.
//   - The SQL a response or a log line shows has the secrets of its
//     tables' options masked; the store keeps it as given.
package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluicesql/sluice/internal/trim"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/metricstore"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
)

// Config configures a Server.
type Config struct {
	// DataDir holds the catalog, the jobs with their versions and state,
	// and the API tokens' hashes. Required.
	DataDir string
	// Auth requires a valid API token (see CreateToken) on every request
	// but GET /healthz. Without it, Serve refuses a listener that is not
	// on a loopback address.
	Auth bool
	// TLSCertFile and TLSKeyFile, if set, make Serve serve HTTPS.
	TLSCertFile, TLSKeyFile string
	// KeepVersions is how many versions of a job are kept; default 20.
	KeepVersions int
	// StopTimeout bounds how long Close waits for the jobs to stop with a
	// final checkpoint before it cancels them; default 10 s.
	StopTimeout time.Duration
	// Logger receives the server's and the engine's logs; default
	// slog.Default().
	Logger *slog.Logger
	// Stdout receives what print sinks write; default io.Discard.
	Stdout io.Writer
	// AlertInterval is how often the alert rules are evaluated; default
	// 1 s.
	AlertInterval time.Duration
	// AllowRemoteWebhooks lets alert rules post to webhooks on any host;
	// without it, only to a loopback address.
	AllowRemoteWebhooks bool
	// GatewayIdleTimeout closes a session of the Flink SQL gateway API
	// that has had no request for that long; default 10 min, as Flink's.
	GatewayIdleTimeout time.Duration
	// MetricStoreMemory bounds the memory of the metric store's values,
	// beyond which the least recently used spill to DataDir/metricstore;
	// default metricstore.DefaultMemoryBudget (256 MiB).
	MetricStoreMemory int64
}

// Server runs published jobs and serves the REST API.
type Server struct {
	cfg    Config
	log    *slog.Logger
	store  *store
	engine *sluice.Engine
	tokens *tokens
	audit  *auditLog
	alerts *alerting
	gw     *gateway
	// metrics holds the metric groups' committed values, read and
	// followed through the API; the engine commits to it.
	metrics *metricstore.Store
	// streams ends when the server closes: long-lived responses (the
	// metric store's subscriptions) end with it.
	streams    context.Context
	endStreams context.CancelFunc
	http       *http.Server
	router     http.Handler

	// ops serializes the mutations of jobs and of the catalog.
	ops sync.Mutex
	// mu guards jobs, the fields of each job and closing.
	mu      sync.Mutex
	jobs    map[string]*job
	closing bool
	// catSecrets are the secrets of the catalog's tables.
	catSecrets []string
}

// job is a published job.
type job struct {
	rec jobRecord
	// sql is the SQL of rec.Version, as published; shownSQL is it with
	// its secrets masked.
	sql, shownSQL string
	// plan is the EXPLAIN text of the version run last, masked ("" until
	// known).
	plan string
	// run is the running job (in a session of its own); nil when not
	// running. ended is closed once the run's end is recorded.
	run   *sluice.Job
	ended chan struct{}
	// stopping: the server asked the run to stop.
	stopping bool
	// metrics are the counters of the current or last run.
	metrics *exec.Metrics
	// saveMu serializes the writes of the record.
	saveMu sync.Mutex
}

// New opens the data directory, replays the catalog into the server's
// engine and starts every job whose record says running, each from its
// last committed state. A job that fails to start is marked failed, with
// the error.
func New(cfg Config) (*Server, error) {
	if cfg.KeepVersions <= 0 {
		cfg.KeepVersions = 20
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.AlertInterval <= 0 {
		cfg.AlertInterval = time.Second
	}
	if cfg.GatewayIdleTimeout <= 0 {
		cfg.GatewayIdleTimeout = defaultGatewayIdleTimeout
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return nil, errors.New("server: TLS needs both a certificate and a key file")
	}
	st, err := openStore(cfg.DataDir, cfg.KeepVersions)
	if err != nil {
		return nil, err
	}
	ms, err := metricstore.Open(metricstore.Options{Dir: filepath.Join(cfg.DataDir, metricStoreDir), MemoryBudget: cfg.MetricStoreMemory,
		Logf: func(format string, args ...any) { cfg.Logger.Warn(fmt.Sprintf(format, args...)) }})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	e, err := sluice.Open(sluice.Options{Stdout: cfg.Stdout, Log: &logWriter{log: cfg.Logger}})
	if err != nil {
		ms.Close()
		return nil, err
	}
	e.SetMetricStore(ms)
	s := &Server{cfg: cfg, log: cfg.Logger, store: st, engine: e, metrics: ms, jobs: map[string]*job{},
		tokens: &tokens{path: filepath.Join(cfg.DataDir, tokensFile)}, gw: newGateway(cfg.GatewayIdleTimeout, cfg.Logger),
		audit: &auditLog{path: filepath.Join(cfg.DataDir, auditFile)}}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	s.router = s.routes()
	fail := func(err error) (*Server, error) {
		s.endStreams()
		e.Close()
		ms.Close()
		return nil, err
	}
	if s.alerts, err = newAlerting(s, cfg.DataDir, cfg.AllowRemoteWebhooks); err != nil {
		return fail(err)
	}
	if err := s.replayCatalog(); err != nil {
		return fail(err)
	}
	recs, err := st.jobs()
	if err != nil {
		return fail(fmt.Errorf("server: cannot read the jobs: %w", err))
	}
	for _, r := range recs {
		j := &job{rec: r}
		sql, err := st.sql(r.Name, r.Version)
		if err != nil {
			return fail(fmt.Errorf("server: job %s: %w", r.Name, err))
		}
		s.setSQL(j, sql)
		s.jobs[r.Name] = j
	}
	for _, name := range slices.Sorted(maps.Keys(s.jobs)) {
		j := s.jobs[name]
		if j.rec.Status != statusRunning {
			continue
		}
		if err := s.start(j); err != nil {
			s.ended(j, err) // logged there
			continue
		}
		s.log.Info("job started again", "job", name, "version", j.rec.Version)
	}
	s.alerts.start(cfg.AlertInterval)
	s.gw.start()
	if cfg.Auth && s.tokens.count() == 0 {
		s.log.Warn("auth is on and there is no API token: every request but /healthz is refused; create one with: sluice token create --data-dir " + cfg.DataDir + " --name NAME")
	}
	return s, nil
}

// Handler returns the server's HTTP handler: the API, behind the token
// check when Config.Auth is set.
func (s *Server) Handler() http.Handler {
	h := s.router
	if s.cfg.Auth {
		h = s.tokens.requireToken(h)
	}
	return s.logRequests(h)
}

// Serve serves the API on ln until Close. Without Config.Auth, a
// listener that is not on a loopback address is refused.
func (s *Server) Serve(ln net.Listener) error {
	if !s.cfg.Auth && !loopback(ln.Addr()) {
		return fmt.Errorf("server: refusing to listen on %s with auth off: anyone who can reach it could run SQL; listen on 127.0.0.1 or turn auth on", ln.Addr())
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	srv := s.http
	s.mu.Unlock()
	var err error
	if s.cfg.TLSCertFile != "" {
		err = srv.ServeTLS(ln, s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// CheckListen refuses a listen address that is not a loopback one while
// auth is off, before anything listens on it.
func CheckListen(addr string, auth bool) error {
	if auth {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s with auth off: anyone who can reach it could run SQL; listen on 127.0.0.1 or turn auth on", addr)
}

func loopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return CheckListen(a.String(), false) == nil
}

// Close stops serving, stops the running jobs with a final checkpoint
// (cancelling those still running after Config.StopTimeout) and closes
// the engine. The jobs' records are left as they are: those running run
// again at the next start.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.http
	s.closing = true
	s.mu.Unlock()
	s.endStreams()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(ctx)
		cancel()
	}
	s.alerts.close()
	// The gateway's queries end before the engine closes: a query
	// waiting for its client would hold the engine's Close.
	s.gw.close()
	s.ops.Lock()
	defer s.ops.Unlock()
	s.mu.Lock()
	var runs []*sluice.Job
	var ended, recording []chan struct{}
	for _, j := range s.jobs {
		if j.run != nil {
			runs = append(runs, j.run)
			ended = append(ended, j.ended)
		} else if j.ended != nil {
			// A run that ended may still be recording its end.
			recording = append(recording, j.ended)
		}
	}
	s.mu.Unlock()
	for _, e := range recording {
		<-e
	}
	for _, r := range runs {
		r.Stop()
	}
	timeout := time.After(s.cfg.StopTimeout)
	for i, r := range runs {
		select {
		case <-r.Done():
		case <-timeout:
			s.log.Warn("jobs did not stop in time: cancelling them; they resume from their last checkpoint", "timeout", s.cfg.StopTimeout)
			for _, r := range runs[i:] {
				r.Cancel()
			}
		}
		<-ended[i]
	}
	err := s.engine.Close()
	if merr := s.metrics.Close(); err == nil && merr != nil {
		err = fmt.Errorf("server: cannot close the metric store: %w", merr)
	}
	return err
}

// replayCatalog executes catalog.sql in the engine's root catalog.
func (s *Server) replayCatalog() error {
	src, err := s.store.catalog()
	if err != nil {
		return fmt.Errorf("server: cannot read the catalog: %w", err)
	}
	s.catSecrets = scriptSecrets(src)
	if strings.TrimSpace(src) == "" {
		return nil
	}
	if _, err := s.engine.Exec(context.Background(), s.store.catalogFile(), []byte(src)); err != nil {
		return fmt.Errorf("server: cannot replay the catalog: %s", s.mask(src, sluice.FormatError(err, []byte(src))))
	}
	return nil
}

// prelude is what the server sets in a job's session before its script.
func (s *Server) prelude(name string) string {
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
	return fmt.Sprintf("SET '%s' = %s;\nSET '%s' = %s;\n",
		config.StateDir, quote(s.store.stateDir()), config.PipelineName, quote(name))
}

// serverOwned are the options the server sets in a job's session.
var serverOwned = map[string]string{
	config.StateDir:        "every job keeps its state in the server's data directory",
	config.PipelineName:    "a job's state belongs to its name",
	config.StateStartFresh: "delete the job and publish it again to start from scratch",
	config.StateAllowLoss:  "an update that drops state is applied with allow_state_loss (sluice job update --allow-state-loss)",
}

// checkScript checks that src is a job's script: DDL, SET and one INSERT
// or statement set, without the options the server sets.
func checkScript(filename string, src []byte) error {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return err
	}
	file := token.NewFile(filename, src)
	var first ast.Statement
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup, *ast.CreateFunction, *ast.Drop:
		case *ast.Set:
			if why, ok := serverOwned[st.Key]; ok {
				return token.NewError(file, st.Pos(), "the server sets '%s' for every job (%s): remove this SET", st.Key, why)
			}
		case *ast.Reset:
			if _, ok := serverOwned[st.Key]; ok || st.Key == "" {
				return token.NewError(file, st.Pos(), "the server sets '%s' and '%s' for every job: RESET only the options the script sets", config.StateDir, config.PipelineName)
			}
		case *ast.Insert, *ast.StatementSet:
			if first != nil {
				at := file.Position(first.Pos())
				return token.NewError(file, st.Pos(), "a job runs one INSERT or one statement set, and the one at line %d, column %d is this job's: "+
					"publish this one as a job of its own, or write both in EXECUTE STATEMENT SET BEGIN ... END", at.Line, at.Column)
			}
			first = st
		default:
			return token.NewError(file, st.Pos(), "a job's script holds DDL, SET and one INSERT or statement set: this statement has no place in it")
		}
	}
	if first == nil {
		return token.NewError(file, token.NoPos, "the script starts no job: end it with an INSERT INTO ... SELECT or an EXECUTE STATEMENT SET")
	}
	return nil
}

// explain returns the plan of a script, from a session of its own.
func (s *Server) explain(filename, src string) (string, error) {
	sess := s.engine.NewSession()
	defer sess.Close()
	return sess.Explain(filename, []byte(src))
}

// start runs the job's current version in a new session.
func (s *Server) start(j *job) error {
	name := j.rec.Name
	plan, err := s.explain(name+".sql", j.sql)
	if err != nil {
		return err
	}
	sess := s.engine.NewSession()
	prelude := s.prelude(name)
	s.mu.Lock()
	allowLoss := j.rec.AllowLossOnce
	s.mu.Unlock()
	if allowLoss {
		// An update accepted with allow_state_loss: this start drops the
		// state the new version has no use for.
		prelude += fmt.Sprintf("SET '%s' = 'true';\n", config.StateAllowLoss)
	}
	if _, err := sess.Exec(context.Background(), "server", []byte(prelude)); err != nil {
		sess.Close()
		return fmt.Errorf("cannot set the job's options: %w", err)
	}
	res, err := sess.Exec(context.Background(), name+".sql", []byte(j.sql))
	if err != nil {
		sess.Close() // stops what the script started before the error
		return err
	}
	var run *sluice.Job
	for _, r := range res {
		if r.Job != nil {
			run = r.Job
		}
	}
	if run == nil {
		sess.Close()
		return errors.New("the script started no job")
	}
	ended := make(chan struct{})
	s.mu.Lock()
	j.run, j.ended, j.stopping, j.metrics = run, ended, false, run.Metrics
	j.rec.Status = statusRunning
	j.rec.AllowLossOnce = false
	j.rec.StartedAt = time.Now().UTC()
	j.rec.StoppedAt = time.Time{}
	j.plan = s.maskLocked(j.sql, plan)
	s.mu.Unlock()
	if err := s.save(j); err != nil {
		s.log.Error("cannot record the job's start", "job", name, "error", err)
	}
	run.OnDone(func(err error) { s.runEnded(j, err, sess, ended) })
	// Planning and starting a job ran code (and grew stacks) that its
	// run will not: let its pages go from the resident set.
	trim.Soon()
	return nil
}

// runEnded records the end of a run, on the run's goroutine as it ends:
// stopped when the server stopped it, failed with its error, or finished
// (its inputs ended). While the server closes, the record stays as it is.
func (s *Server) runEnded(j *job, err error, sess *sluice.Engine, ended chan struct{}) {
	defer close(ended)
	sess.Close()
	s.mu.Lock()
	closing := s.closing
	if closing {
		j.run = nil
	}
	s.mu.Unlock()
	if !closing {
		s.ended(j, err)
	}
}

// ended records that j's run (or its start) ended with err.
func (s *Server) ended(j *job, err error) {
	s.mu.Lock()
	j.run = nil
	j.rec.StoppedAt = time.Now().UTC()
	switch {
	case err != nil:
		j.rec.Status = statusFailed
		msg := s.maskLocked(j.sql, sluice.FormatError(err, []byte(j.sql)))
		j.rec.Errors = append(j.rec.Errors, jobError{Time: j.rec.StoppedAt, Message: msg})
		if n := len(j.rec.Errors); n > maxErrors {
			j.rec.Errors = slices.Clone(j.rec.Errors[n-maxErrors:])
		}
	case j.stopping:
		j.rec.Status = statusStopped
	default:
		j.rec.Status = statusFinished
	}
	rec := j.rec
	s.mu.Unlock()
	switch rec.Status {
	case statusFailed:
		s.log.Error("job failed", "job", rec.Name, "error", rec.Errors[len(rec.Errors)-1].Message)
	default:
		s.log.Info("job "+rec.Status, "job", rec.Name)
	}
	if err := s.save(j); err != nil {
		s.log.Error("cannot record the job's end", "job", rec.Name, "error", err)
	}
}

// save writes j's record as it is now. Saves of a job are serialized, so
// that the file ends with the latest record.
func (s *Server) save(j *job) error {
	j.saveMu.Lock()
	defer j.saveMu.Unlock()
	s.mu.Lock()
	rec := j.rec
	rec.Labels = maps.Clone(rec.Labels)
	rec.Errors = slices.Clone(rec.Errors)
	s.mu.Unlock()
	return s.store.saveJob(rec)
}

// stop stops j's run, if it runs, and waits for its end to be recorded:
// with a final checkpoint, or at once (now).
func (s *Server) stop(j *job, now bool) error {
	s.mu.Lock()
	run, ended := j.run, j.ended
	if run == nil {
		s.mu.Unlock()
		return nil
	}
	j.stopping = true
	j.rec.Status = statusStopped
	j.rec.UpdatedAt = time.Now().UTC()
	s.mu.Unlock()
	// Recorded first: a crash while the job stops must not run it again.
	if err := s.save(j); err != nil {
		return err
	}
	if now {
		run.Cancel()
	} else {
		run.Stop()
	}
	<-ended
	return nil
}

// dropState discards the state saved under a job's name, in a session
// set up as the job's (its script's SETs may choose another backend).
func (s *Server) dropState(name, sql string) error {
	sess := s.engine.NewSession()
	defer sess.Close()
	if _, err := sess.Exec(context.Background(), "server", []byte(s.prelude(name))); err != nil {
		return err
	}
	sess.Explain(name+".sql", []byte(sql)) // applies the script's SETs; its errors do not matter here
	return sess.DropState(context.Background(), name)
}

// mask masks in text the secrets of the tables that src and the catalog
// declare.
func (s *Server) mask(src, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maskLocked(src, text)
}

// maskLocked is mask with s.mu held.
func (s *Server) maskLocked(src, text string) string {
	return redact.Text(text, append(scriptSecrets(src), s.catSecrets...)...)
}

// scriptSecrets returns the secret values of the options of the tables
// src creates.
func scriptSecrets(src string) []string {
	stmts, _ := parser.ParseFile("", []byte(src))
	var out []string
	for _, st := range stmts {
		if ct, ok := st.(*ast.CreateTable); ok {
			opts := map[string]string{}
			for _, o := range ct.Options {
				opts[o.Key] = o.Value
			}
			out = append(out, redact.Secrets(opts)...)
		}
	}
	return out
}

// logWriter turns the engine's log lines into log records.
type logWriter struct {
	log *slog.Logger
}

func (w *logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if strings.Contains(line, "warning: ") {
			w.log.Warn(line, "source", "engine")
		} else {
			w.log.Info(line, "source", "engine")
		}
	}
	return len(p), nil
}
