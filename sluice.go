// Package sluice is the embeddable streaming SQL engine: Open an Engine,
// feed it Flink SQL (DDL, SET, INSERT, SELECT, EXPLAIN), and it plans and
// runs the jobs in this process. The CLI and the server are thin shells
// over this package.
//
// Two engines in one process share nothing: each owns its catalog, its
// settings, its connector, format and function registries, and its jobs.
package sluice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/builtin"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/connector/share"
	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/exec/filterset"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/internal/kafkasecurity"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/internal/wasmudf"
	"github.com/sluicesql/sluice/metricstore"
	"github.com/sluicesql/sluice/physical"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/plan/optimizer"
	"github.com/sluicesql/sluice/planner"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/kafkalog"
	"github.com/sluicesql/sluice/state/lsm"
	"github.com/sluicesql/sluice/types"
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// Stdout receives print sinks, query results and, from Run, the text
	// of SHOW, DESCRIBE, EXPLAIN and SET; default os.Stdout. The engine
	// writes to it (and to Log) from several goroutines, one write at a
	// time: it need not be safe for concurrent use.
	Stdout io.Writer
	// Now is the processing-time clock; default time.Now.
	Now func() time.Time
	// Config holds initial SET options (e.g. "parallelism.default").
	Config map[string]string
	// State is the state backend; default in memory.
	State state.Backend
	// Log, if set, receives a one-line summary of every job that Run
	// waited for (rows read and written, late rows, skipped records;
	// lookups and their cache hits, for a job with lookup joins), a
	// line for every failed reload of a dimension table, and the
	// connectors' warnings (a Kafka broker that cannot be reached, a
	// partition that resumes elsewhere than its checkpoint says).
	Log io.Writer
	// Dimensions holds the dimension tables of lookup joins; engines
	// given the same registry share their tables. Default: one of the
	// engine's own.
	Dimensions *dim.Registry
	// DimensionSpillDir, if set, is a directory that the engine's own
	// dimension tables are memory-mapped from instead of held on the
	// heap, for tables larger than memory (Linux only; see
	// store.Config.SpillDir). Ignored when Dimensions is given.
	DimensionSpillDir string
}

// EnsureDefaults fills in unset options.
func (o *Options) EnsureDefaults() {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.State == nil {
		o.State = state.NewMemory()
	}
}

// Engine plans and runs SQL jobs.
type Engine struct {
	*core
	// A session's own (see NewSession): its tables and views, over the
	// engine's, and its SET options with where each was last set.
	catalog *catalog.Catalog
	config  map[string]string
	setAt   map[string]token.Position
	// names counts the jobs the session started under each name (see
	// claimName).
	names map[string]int
	// root is the engine a session belongs to; nil for the engine.
	root *Engine
	// logf writes a line to opts.Log from any goroutine, with the
	// secrets of the session's tables (and its engine's) masked; nil
	// without a log.
	logf func(format string, args ...any)
	// secretsMu guards the secrets of the catalog's tables as of its
	// generation secretsGen (see secrets).
	secretsMu   sync.Mutex
	secretsOK   bool
	secretsGen  uint64
	secretsList []string
}

// core is what the sessions of an engine share.
type core struct {
	opts       Options
	connectors *connector.Registry
	formats    *format.Registry
	funcs      *expr.Registry
	aggs       *agg.Registry
	// wasm runs the functions created with CREATE FUNCTION ... LANGUAGE
	// WASM; created names lists them, so that DROP FUNCTION removes those
	// and no function registered from Go.
	wasm    *wasmudf.Host
	created map[string]wasmudf.Kind

	// mu guards the fields below and the sessions' config, setAt and
	// names.
	mu sync.Mutex
	// jobs are the jobs running, of every session.
	jobs   []*Job
	nextID atomic.Int64
	// running holds the names of the jobs running, of every session
	// (see claimName).
	running map[string]bool
	// durable are the local state backends opened for 'state.dir' values.
	durable map[string]*lsm.Backend
	// dims are the dimension tables of lookup joins, shared by the jobs
	// that declare the same table.
	dims *dim.Registry
	// shares are the readers of unbounded sources shared by the jobs
	// that read the same table ('pipeline.shared-source').
	shares *share.Registry
	// filterBudget bounds the memory of the filter caches of all jobs
	// ('pipeline.filter-cache.size').
	filterBudget *filterset.Budget
	// watches are the jobs whose state size is watched, by one goroutine
	// while watching (see watchState).
	watches  map[*stateWatch]bool
	watching bool
	// optimizer applies the logical rewrite rules (see optimize).
	optimizer *optimizer.Optimizer
	// metricStore is where metric groups' committed values go (see
	// SetMetricStore); nil without one.
	metricStore atomic.Pointer[metricstore.Store]
}

// NewSession returns a session of the engine: an Engine of its own for
// the statements it executes, whose tables and views are its own over
// the engine's (a name it declares hides the engine's, as Flink's
// temporary tables hide catalog tables) and whose SET options start as a
// copy of the engine's. Everything else is the engine's and shared by
// its sessions: connectors, formats, functions, dimension tables, state
// directories, the filter caches' budget and the readers of shared
// sources (so jobs of separate sessions that read one table read it
// once). Two jobs running at once never share a name, whatever their
// sessions; a job of a new session may take the name of one that ended
// (and so its state: see claimName). Closing a session stops its jobs;
// closing the engine stops every session's.
func (e *Engine) NewSession() *Engine {
	root := e
	if e.root != nil {
		root = e.root
	}
	s := &Engine{core: e.core, catalog: catalog.NewChild(e.catalog), config: e.Config(), root: root}
	s.logf = logf(e.opts.Log, s.secrets)
	return s
}

// Open returns a new engine with the built-in connectors, formats and
// functions.
func Open(opts Options) (*Engine, error) {
	opts.EnsureDefaults()
	// Sinks of several jobs, and stages of one, write at once: the engine
	// serializes its writes to the caller's writers (a bytes.Buffer is not
	// safe for concurrent use, and lines must not interleave).
	opts.Stdout = lockWriter(opts.Stdout)
	if opts.Log != nil {
		opts.Log = lockWriter(opts.Log)
	}
	e := &Engine{core: &core{
		opts:       opts,
		connectors: connector.NewRegistry(),
		formats:    format.NewRegistry(),
		funcs:      expr.NewRegistry(),
		aggs:       agg.NewRegistry(),
		wasm:       wasmudf.NewHost(),
		created:    map[string]wasmudf.Kind{},

		filterBudget: filterset.NewBudget(config.DefaultFilterCacheSize),
	},
		catalog: catalog.New(),
		config:  map[string]string{},
	}
	e.optimizer = optimizer.New(expr.NewBuilder(e.funcs))
	e.logf = logf(opts.Log, e.secrets)
	e.dims = dimensions(opts, e.logf)
	e.shares = share.NewRegistry(share.Options{Logf: e.logf})
	for _, k := range slices.Sorted(maps.Keys(opts.Config)) {
		e.config[k] = opts.Config[k]
		if msg := config.Unknown(k, "sluice -D or Options.Config"); msg != "" {
			e.log("warning: %s", msg)
		}
	}
	for _, f := range builtin.Connectors() {
		if err := e.connectors.Register(f); err != nil {
			return nil, fmt.Errorf("sluice: %w", err)
		}
	}
	for _, f := range builtin.Formats() {
		if err := e.formats.Register(f); err != nil {
			return nil, fmt.Errorf("sluice: %w", err)
		}
	}
	return e, nil
}

// log writes a line to the engine's log, if it has one.
func (e *Engine) log(format string, args ...any) {
	if e.logf != nil {
		e.logf(format, args...)
	}
}

// dimensions returns the registry of dimension tables opts asks for, or a
// new one whose failed reloads opts.Log hears of.
func dimensions(opts Options, logf func(string, ...any)) *dim.Registry {
	if opts.Dimensions != nil {
		return opts.Dimensions
	}
	return dim.NewRegistry(dim.Options{SpillDir: opts.DimensionSpillDir, Logf: logf})
}

// logf returns a function writing lines to w from any goroutine (failed
// reloads, connectors' warnings), with the values secrets returns masked,
// or nil when w is.
// lockedWriter serializes the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lockWriter returns w with its writes serialized.
func lockWriter(w io.Writer) io.Writer {
	if _, ok := w.(*lockedWriter); ok {
		return w
	}
	return &lockedWriter{w: w}
}

func logf(w io.Writer, secrets func() []string) func(format string, args ...any) {
	if w == nil {
		return nil
	}
	var mu sync.Mutex
	return func(format string, args ...any) {
		line := redact.Text(fmt.Sprintf(format, args...), secrets()...)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, line)
	}
}

// Close stops every running job (of a session: the session's) and waits
// for them.
func (e *Engine) Close() error {
	e.mu.Lock()
	var jobs []*Job
	for _, j := range e.jobs {
		if e.root == nil || j.session == e {
			jobs = append(jobs, j)
		}
	}
	e.mu.Unlock()
	for _, j := range jobs {
		j.Cancel()
	}
	for _, j := range jobs {
		j.Wait()
	}
	if e.root != nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for dir, b := range e.durable {
		if err := b.Close(); err != nil {
			return fmt.Errorf("sluice: cannot close state directory %s: %w", dir, err)
		}
	}
	if err := e.wasm.Close(); err != nil {
		return fmt.Errorf("sluice: cannot close the WebAssembly runtime: %w", err)
	}
	return e.opts.State.Close()
}

// trackJob adds j to the running jobs.
func (e *Engine) trackJob(j *Job) {
	e.mu.Lock()
	e.jobs = append(e.jobs, j)
	e.mu.Unlock()
}

// untrackJob removes j, which ended: a long-running engine must not hold
// every job it ran.
func (e *Engine) untrackJob(j *Job) {
	e.mu.Lock()
	if i := slices.Index(e.jobs, j); i >= 0 {
		e.jobs = slices.Delete(e.jobs, i, i+1)
	}
	e.mu.Unlock()
}

// Jobs returns the jobs running (of a session: the session's).
func (e *Engine) Jobs() []*Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Job
	for _, j := range e.jobs {
		if e.root == nil || j.session == e {
			out = append(out, j)
		}
	}
	return out
}

// stateKafka returns the brokers of the engine's own Kafka clients ('state.kafka.bootstrap.servers')
// and their security ('state.kafka.properties.*': TLS, SASL).
func stateKafka(cfg map[string]string) ([]string, kafkasecurity.Security, error) {
	bs := cfg[config.StateKafkaBootstrapServers]
	if bs == "" {
		return nil, kafkasecurity.Security{}, errors.New("'state.backend' = 'kafka' needs 'state.kafka.bootstrap.servers'")
	}
	sec, err := kafkasecurity.Parse(config.KafkaProperties(cfg), config.StateKafkaProperties)
	return strings.Split(bs, ","), sec, err
}

// jobBackend returns the state backend of a job and how to release it:
// with 'state.backend' = 'kafka', a changelog in Kafka of the job's own
// (closed with the job); with 'state.dir', the local LSM store in that
// directory (shared by the engine's jobs); else the engine's State.
func (e *Engine) jobBackend(ctx context.Context, job string, cfg map[string]string) (state.Backend, func() error, error) {
	nop := func() error { return nil }
	switch kind := cfg[config.StateBackend]; kind {
	case "", "memory", "local":
	case "kafka":
		brokers, sec, err := stateKafka(cfg)
		if err != nil {
			return nil, nil, err
		}
		o := kafkalog.Options{
			Bootstrap:       brokers,
			Topic:           cmpOr(cfg[config.StateKafkaTopic], "sluice-state-"+job),
			TransactionalID: cmpOr(cfg[config.StateKafkaTransactionalID], "sluice-"+job),
			ClientOpts:      sec.Opts,
			Logf:            e.logf,
		}
		b, err := kafkalog.Open(ctx, o)
		if err != nil {
			return nil, nil, sec.Classify(err)
		}
		return b, b.Close, nil
	default:
		return nil, nil, fmt.Errorf("'state.backend' = '%s' is not supported: use memory, local (with 'state.dir') or kafka", kind)
	}
	b, err := e.localBackend(cfg)
	return b, nop, err
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// localBackend returns the local LSM store in the session's 'state.dir' if
// set, else the engine's State.
func (e *Engine) localBackend(cfg map[string]string) (state.Backend, error) {
	dir := cfg[config.StateDir]
	if dir == "" {
		return e.opts.State, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.durable[dir]; ok {
		if b.Err() == nil {
			return b, nil
		}
		// A store that met a storage fault is of no further use (the job
		// that met it failed with the fault): the next job opens the
		// directory again, once the fault is dealt with.
		b.Close()
		delete(e.durable, dir)
	}
	b, err := lsm.Open(dir)
	if err != nil {
		return nil, err
	}
	if e.durable == nil {
		e.durable = map[string]*lsm.Backend{}
	}
	e.durable[dir] = b
	return b, nil
}

// RegisterConnector adds a connector factory.
func (e *Engine) RegisterConnector(f connector.Factory) error { return e.connectors.Register(f) }

// RegisterFormat adds a format factory.
func (e *Engine) RegisterFormat(f format.Factory) error { return e.formats.Register(f) }

// RegisterFunction adds a user-defined scalar function, callable by name.
func (e *Engine) RegisterFunction(f expr.ScalarFunction) error { return e.funcs.Register(f) }

// RegisterTableFunction adds a user-defined table function, called with
// LATERAL TABLE(name(args)).
func (e *Engine) RegisterTableFunction(f expr.TableFunction) error { return e.funcs.RegisterTable(f) }

// RegisterAggregate adds a user-defined aggregate function (see
// agg.NewUserFunc).
func (e *Engine) RegisterAggregate(f agg.Func) error { return e.aggs.Register(f) }

// Tables lists the tables the session sees (its own and the engine's),
// sorted.
func (e *Engine) Tables() []string { return e.catalog.Tables() }

// Views lists the views the session sees (its own and the engine's),
// sorted.
func (e *Engine) Views() []string { return e.catalog.Views() }

// Ruleset describes a ruleset of the catalog at one version, as its
// DDL says it: the conditions as SQL.
type Ruleset struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	Source  string `json:"source"`
	RulesetDefinition
	Comment string `json:"comment,omitempty"`
	// Shadow is the ruleset's shadow, if it has one (current version
	// only).
	Shadow *RulesetShadow `json:"shadow,omitempty"`
}

// RulesetDefinition is what a version of a ruleset (or its shadow)
// evaluates.
type RulesetDefinition struct {
	// Match is the policy as written after MATCH: "ANY", "ALL",
	// "FIRST", "AT LEAST n" or "AT LEAST n PERCENT".
	Match string `json:"match"`
	// Except is the EXCEPT WHEN condition, as SQL ("": none).
	Except string `json:"except,omitempty"`
	// Suppress is the SUPPRESS BY clause, if any.
	Suppress *RulesetSuppress `json:"suppress,omitempty"`
	Rules    []Rule           `json:"rules"`
}

// RulesetSuppress describes SUPPRESS BY (keys) FOR interval.
type RulesetSuppress struct {
	Keys []string `json:"keys"`
	// Interval is the interval as SQL: "INTERVAL '10' MINUTE".
	Interval string `json:"interval"`
}

// RulesetShadow describes the shadow of a ruleset.
type RulesetShadow struct {
	// Version is the version its alerts carry: an earlier one (SHADOW
	// VERSION n), or the one PROMOTE SHADOW would make.
	Version int `json:"version"`
	// OfVersion: the shadow is the earlier version Version.
	OfVersion bool   `json:"of_version"`
	Into      string `json:"into"`
	RulesetDefinition
}

// Rule describes a rule of a ruleset.
type Rule struct {
	Name     string   `json:"name"`
	When     string   `json:"when"`
	Severity string   `json:"severity"`
	Priority int64    `json:"priority"`
	Tags     []string `json:"tags"`
	Enabled  bool     `json:"enabled"`
}

// Rulesets returns the rulesets of the catalog, by name, each at its
// current version.
func (e *Engine) Rulesets() []Ruleset {
	var out []Ruleset
	for _, name := range e.catalog.Rulesets() {
		if rs, ok := e.RulesetInfo(name); ok {
			out = append(out, rs)
		}
	}
	return out
}

// Declares reports whether the session itself declares a table, view
// or ruleset name (not the engine it is a session of).
func (e *Engine) Declares(name string) bool { return e.catalog.Declares(name) }

// RulesetInfo returns ruleset name at its current version.
func (e *Engine) RulesetInfo(name string) (Ruleset, bool) {
	_, v, err := e.catalog.Lookup(name)
	if err != nil || v == nil || v.Ruleset == nil {
		return Ruleset{}, false
	}
	rs := describeRuleset(v)
	if v.Shadow != nil {
		rs.Shadow = &RulesetShadow{Version: v.ShadowVersion(), OfVersion: v.Shadow.Version != 0, Into: v.ShadowInto,
			RulesetDefinition: rulesetDefinition(v.Shadow.Ruleset)}
	}
	return rs, true
}

// RulesetVersions returns the versions ruleset name keeps (see ALTER
// RULESET ... ROLLBACK), oldest first, the current one last; false if
// there is no such ruleset.
func (e *Engine) RulesetVersions(name string) ([]Ruleset, bool) {
	_, v, err := e.catalog.Lookup(name)
	if err != nil || v == nil || v.Ruleset == nil {
		return nil, false
	}
	var out []Ruleset
	for ; v != nil; v = v.Previous {
		out = append(out, describeRuleset(v))
	}
	slices.Reverse(out)
	return out, true
}

// describeRuleset describes version v of a ruleset, without its shadow.
func describeRuleset(v *catalog.View) Ruleset {
	def := v.Ruleset
	return Ruleset{Name: v.Name, Version: v.Version, Source: def.Source.String(), RulesetDefinition: rulesetDefinition(def), Comment: def.Comment}
}

// rulesetDefinition describes what def evaluates.
func rulesetDefinition(def *ast.CreateRuleset) RulesetDefinition {
	d := RulesetDefinition{Match: def.Match.Kind, Rules: []Rule{}}
	if def.Except != nil {
		d.Except = ast.Format(def.Except)
	}
	switch d.Match {
	case "":
		d.Match = "ANY"
	case "AT LEAST":
		d.Match = fmt.Sprintf("AT LEAST %d", def.Match.N)
	case "AT LEAST PERCENT":
		d.Match = fmt.Sprintf("AT LEAST %d PERCENT", def.Match.N)
	}
	if s := def.Suppress; s != nil {
		d.Suppress = &RulesetSuppress{Keys: []string{}, Interval: ast.Format(s.Interval)}
		for _, k := range s.Keys {
			d.Suppress.Keys = append(d.Suppress.Keys, k.Name)
		}
	}
	for _, r := range def.Rules {
		sev := strings.ToLower(r.Severity)
		if sev == "" {
			sev = "medium"
		}
		tags := r.Tags
		if tags == nil {
			tags = []string{}
		}
		d.Rules = append(d.Rules, Rule{Name: r.Name.Name, When: ast.Format(r.When), Severity: sev, Priority: r.Priority, Tags: tags, Enabled: !r.Disabled})
	}
	return d
}

// MetricGroup describes a metric group of the catalog.
type MetricGroup struct {
	Name    string   `json:"name"`
	Version int      `json:"version"`
	Source  string   `json:"source"`
	Keys    []string `json:"keys"`
	Metrics []Metric `json:"metrics"`
	Comment string   `json:"comment,omitempty"`
}

// Metric describes a metric of a metric group.
type Metric struct {
	Name string `json:"name"`
	// Aggregate is the metric's aggregate call, as SQL.
	Aggregate string `json:"aggregate"`
	// Window is the window as SQL writes it ("TUMBLE(INTERVAL '1'
	// HOUR)"), "" for every row of the key.
	Window string `json:"window,omitempty"`
}

// MetricGroups returns the metric groups of the catalog, by name, each at
// its current version.
func (e *Engine) MetricGroups() []MetricGroup {
	var out []MetricGroup
	for _, name := range e.catalog.MetricGroups() {
		_, v, err := e.catalog.Lookup(name)
		if err != nil || v == nil || v.MetricGroup == nil {
			continue
		}
		out = append(out, describeMetricGroup(v))
	}
	return out
}

// MetricGroupVersions returns the versions metric group name keeps (see
// ALTER METRIC GROUP ... ROLLBACK), oldest first, the current one last;
// false if there is no such group.
func (e *Engine) MetricGroupVersions(name string) ([]MetricGroup, bool) {
	_, v, err := e.catalog.Lookup(name)
	if err != nil || v == nil || v.MetricGroup == nil {
		return nil, false
	}
	var out []MetricGroup
	for ; v != nil; v = v.Previous {
		out = append(out, describeMetricGroup(v))
	}
	slices.Reverse(out)
	return out, true
}

// describeMetricGroup describes version v of a metric group.
func describeMetricGroup(v *catalog.View) MetricGroup {
	def := v.MetricGroup
	g := MetricGroup{Name: v.Name, Version: v.Version, Source: def.Source.String(), Comment: def.Comment}
	for _, k := range def.Keys {
		g.Keys = append(g.Keys, k.Name)
	}
	for _, m := range def.Metrics {
		mt := Metric{Name: m.Name.Name, Aggregate: ast.Format(m.Agg)}
		if w := m.Window; w.Kind != "" {
			mt.Window = w.Kind + "("
			if w.Slide != nil {
				mt.Window += ast.Format(w.Slide) + ", "
			}
			mt.Window += ast.Format(w.Size) + ")"
		}
		g.Metrics = append(g.Metrics, mt)
	}
	return g
}

// Config returns a copy of the session's SET options.
func (e *Engine) Config() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]string, len(e.config))
	for k, v := range e.config {
		out[k] = v
	}
	return out
}

func (e *Engine) planner(file *token.File) *planner.Planner {
	p := planner.New(e.catalog, e.funcs, e.aggs, e.Config(), file)
	p.SourceChangelog = e.sourceChangelog
	p.SourceUpserts = e.sourceUpserts
	p.SourceLookup = e.sourceLookup
	p.LookupConnectors = e.lookupConnectors
	p.Notify = func(at token.Position, msg string) { e.log("%s: warning: %s", at, msg) }
	return p
}

// sourceLookup reports whether t's connector can be the dimension side of
// a lookup join.
func (e *Engine) sourceLookup(t connector.Table) bool {
	f, err := e.connectors.Lookup(t.Options["connector"])
	if err != nil {
		return false
	}
	_, ok := f.(connector.LookupFactory)
	return ok
}

// lookupConnectors lists the connectors that can be looked up.
func (e *Engine) lookupConnectors() []string {
	var out []string
	for _, n := range e.connectors.Names() {
		if f, err := e.connectors.Lookup(n); err == nil {
			if _, ok := f.(connector.LookupFactory); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// connEnv is the connector environment for planning-time questions
// (the format registry); jobs get theirs with processing time and more.
func (e *Engine) connEnv() connector.Env {
	return connector.Env{Formats: e.formats, Stdout: e.opts.Stdout, Logf: e.logf}
}

// sourceChangelog reports whether reading t gives a changelog: its
// connector says so (e.g. its format is debezium-json).
func (e *Engine) sourceChangelog(t connector.Table) bool {
	f, err := e.connectors.Lookup(t.Options["connector"])
	if err != nil {
		return false
	}
	c, ok := f.(connector.ChangelogSource)
	return ok && c.ProducesChangelog(t, e.connEnv())
}

// sourceUpserts reports whether t's changelog is an upsert stream keyed
// by its primary key (upsert-kafka).
func (e *Engine) sourceUpserts(t connector.Table) bool {
	f, err := e.connectors.Lookup(t.Options["connector"])
	if err != nil {
		return false
	}
	u, ok := f.(connector.UpsertSource)
	return ok && u.ProducesUpserts(t)
}

// Job is a running INSERT (or statement set, or printed SELECT).
type Job struct {
	ID   string
	Name string
	// Metrics are the job's counters.
	Metrics *exec.Metrics
	// Bounded: every source of the job ends, so the job ends by itself.
	Bounded bool

	session *Engine
	cancel  context.CancelFunc
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}
	err     error

	// mu guards ended and onDone.
	mu     sync.Mutex
	ended  bool
	onDone []func(error)
}

// Wait blocks until the job ends and returns its error (nil when it ended
// normally or was stopped).
func (j *Job) Wait() error { <-j.done; return j.err }

// Done is closed when the job ends.
func (j *Job) Done() <-chan struct{} { return j.done }

// OnDone arranges for f to be called once the job has ended, with the
// error Wait returns: on the job's own goroutine as it ends (f must not
// wait for the job's other callbacks), or at once, on the caller's, if
// it has ended already. A service that runs many jobs learns of their
// ends without a goroutine waiting for each.
func (j *Job) OnDone(f func(err error)) {
	j.mu.Lock()
	if !j.ended {
		j.onDone = append(j.onDone, f)
		j.mu.Unlock()
		return
	}
	j.mu.Unlock()
	f(j.err)
}

// end marks the job ended (j.err set): Done is closed, then the OnDone
// callbacks are called.
func (j *Job) end() {
	close(j.done)
	j.mu.Lock()
	j.ended = true
	fs := j.onDone
	j.onDone = nil
	j.mu.Unlock()
	for _, f := range fs {
		f(j.err)
	}
}

// Stop stops the job gracefully: sources stop reading, sinks flush.
func (j *Job) Stop() { j.once.Do(func() { close(j.stop) }) }

// Health returns a snapshot of the job's metrics: its counters and
// checkpoints, and for each operator of its plan the rows in and out,
// its watermark and how far it lags the wall clock, its back pressure,
// its state and, for a source, its consumer lag (see exec.Health).
func (j *Job) Health() exec.Health { return j.Metrics.Health(time.Now()) }

// Cancel stops the job at once.
func (j *Job) Cancel() { j.cancel() }

// Result is what executing one statement produced.
type Result struct {
	// Message is what a terminal shows for the statement: "[INFO] ...",
	// an EXPLAIN plan, a table listing.
	Message string
	// Job is set for INSERT, statement sets and SELECT.
	Job *Job
}

// Exec parses and executes the statements of src. DDL and SET take effect
// at once; every INSERT, statement set or SELECT starts a job, returned in
// the results. Exec does not wait for jobs. Errors are *token.Error or
// token.ErrorList values positioned in src (use FormatError to render them).
// Once ctx is done, no further statement is executed (ctx.Err() is
// returned); cancelling ctx cancels the jobs started.
func (e *Engine) Exec(ctx context.Context, filename string, src []byte) ([]Result, error) {
	results, stopped, err := e.exec(ctx, ctx, filename, src)
	if stopped && err == nil {
		err = ctx.Err()
	}
	return results, err
}

// exec executes the statements of src, with jobs under ctx, until stop is
// done: it then executes no further statement and reports that it
// stopped.
func (e *Engine) exec(ctx, stop context.Context, filename string, src []byte) (results []Result, stopped bool, err error) {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return nil, false, err
	}
	file := token.NewFile(filename, src)
	for i, st := range stmts {
		if stop.Err() != nil {
			return results, true, nil
		}
		stmts[i] = nil // see Run
		r, err := e.execStmt(ctx, file, st)
		if err != nil {
			return results, false, err
		}
		results = append(results, r)
	}
	return results, false, nil
}

// FormatError renders an error from Exec with the offending source line and
// a caret under the column. Secrets in the message and the line (a URL's
// password or token, a 'password' option's value) are masked.
func FormatError(err error, src []byte) string {
	return token.FormatMasked(err, src, func(s string) string { return redact.Text(s) })
}

func (e *Engine) execStmt(ctx context.Context, file *token.File, st ast.Statement) (Result, error) {
	p := e.planner(file)
	switch s := st.(type) {
	case *ast.CreateTable:
		t, err := p.TableFromDDL(s)
		if err != nil {
			return Result{}, err
		}
		f, err := e.connectors.Lookup(t.Options["connector"])
		if err != nil {
			return Result{}, e.positionTableErrorIn(t, fmt.Errorf("table %s: %w", t.Name, err))
		}
		if pf, ok := f.(connector.PartitionedFactory); len(s.PartitionedBy) > 0 && !(ok && pf.SupportsPartitions()) {
			return Result{}, token.NewError(file, s.PartitionedBy[0].Pos(),
				"table %s is PARTITIONED BY, but connector '%s' does not lay data out by partition (the filesystem connector does)", t.Name, f.Name())
		}
		if err := e.catalog.AddTable(t, s.IfNotExists); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.CreateView:
		v, err := p.ViewFromDDL(s)
		if err != nil {
			return Result{}, err
		}
		if err := e.catalog.AddView(v, s.IfNotExists); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.CreateRuleset:
		v, err := p.RulesetFromDDL(s)
		if err != nil {
			return Result{}, err
		}
		if err := e.catalog.AddView(v, s.IfNotExists); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.AlterRuleset:
		name, err := p.ObjectName(s.Name)
		if err != nil {
			return Result{}, err
		}
		_, v, err := e.catalog.Lookup(name)
		if err != nil || v == nil || v.Ruleset == nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "unknown ruleset '%s'%s", name, suggest.Hint(name, e.catalog.Rulesets()))
		}
		next, err := p.AlterRuleset(v, s)
		if err != nil {
			return Result{}, err
		}
		// A session's change of its engine's ruleset is its own: the new
		// version hides the engine's, as a name the session declares does.
		replace := e.catalog.ReplaceView
		if !e.catalog.Declares(next.Name) {
			replace = func(v *catalog.View) error { return e.catalog.AddView(v, false) }
		}
		if err := replace(next); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		msg := fmt.Sprintf("[INFO] Execute statement succeeded: ruleset %s is at version %d", next.Name, next.Version)
		if next.Shadow != nil {
			msg += fmt.Sprintf("; its shadow (version %d) writes into %s", next.ShadowVersion(), next.ShadowInto)
		}
		return Result{Message: msg + "."}, nil
	case *ast.CreateMetricGroup:
		v, err := p.MetricGroupFromDDL(s)
		if err != nil {
			return Result{}, err
		}
		if err := e.catalog.AddView(v, s.IfNotExists); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.AlterMetricGroup:
		name, err := p.ObjectName(s.Name)
		if err != nil {
			return Result{}, err
		}
		_, v, err := e.catalog.Lookup(name)
		if err != nil || v == nil || v.MetricGroup == nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "unknown metric group '%s'%s", name, suggest.Hint(name, e.catalog.MetricGroups()))
		}
		next, err := p.AlterMetricGroup(v, s)
		if err != nil {
			return Result{}, err
		}
		// As for a ruleset: a session's change of its engine's metric group
		// is its own.
		replace := e.catalog.ReplaceView
		if !e.catalog.Declares(next.Name) {
			replace = func(v *catalog.View) error { return e.catalog.AddView(v, false) }
		}
		if err := replace(next); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		return Result{Message: fmt.Sprintf("[INFO] Execute statement succeeded: metric group %s is at version %d.", next.Name, next.Version)}, nil
	case *ast.Drop:
		if s.What == "FUNCTION" {
			return e.dropFunction(file, s)
		}
		name, err := p.ObjectName(s.Name)
		if err != nil {
			return Result{}, err
		}
		if err := e.catalog.Drop(s.What, name, s.IfExists); err != nil {
			return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
		}
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.CreateFunction:
		if s.Language == "WASM" || s.Signature != nil {
			return e.createWasmFunction(ctx, p, file, s)
		}
		if _, err := e.funcs.Lookup(strings.ToUpper(s.Name.Last().Name)); err == nil {
			return Result{Message: "[INFO] Execute statement succeeded."}, nil
		}
		if e.aggs.Has(s.Name.Last().Name) {
			return Result{Message: "[INFO] Execute statement succeeded."}, nil
		}
		return Result{}, token.NewError(file, s.Name.Pos(),
			"function '%s' (class '%s') is not registered: Sluice runs functions registered from Go with Engine.RegisterFunction, and WebAssembly modules with CREATE FUNCTION %s(arg TYPE, ...) RETURNS TYPE AS 'export' LANGUAGE WASM USING JAR 'file.wasm'", s.Name, s.Class, s.Name)
	case *ast.Set:
		if s.Key == "" {
			return Result{Message: e.formatConfig()}, nil
		}
		if err := config.Check(s.Key, s.Value); err != nil {
			return Result{}, token.NewError(file, s.Pos(), "%s", err.Error())
		}
		// Flink passes keys it does not know through; a misspelt one
		// would then change nothing without a word.
		if msg := config.Unknown(s.Key, ""); msg != "" {
			e.log("%s: warning: %s", file.Position(s.Pos()), msg)
		}
		e.mu.Lock()
		e.config[s.Key] = s.Value
		if e.setAt == nil {
			e.setAt = map[string]token.Position{}
		}
		e.setAt[s.Key] = file.Position(s.Pos())
		e.mu.Unlock()
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.Reset:
		e.mu.Lock()
		if s.Key == "" {
			e.config = map[string]string{}
			e.setAt = nil
		} else {
			delete(e.config, s.Key)
			delete(e.setAt, s.Key)
		}
		e.mu.Unlock()
		return Result{Message: "[INFO] Execute statement succeeded."}, nil
	case *ast.Show:
		switch s.What {
		case "TABLES":
			return Result{Message: listing("table name", e.catalog.Tables())}, nil
		case "VIEWS":
			return Result{Message: listing("view name", e.catalog.Views())}, nil
		case "FUNCTIONS":
			names := append(e.funcs.Names(), e.aggs.Names()...)
			sort.Strings(names)
			return Result{Message: listing("function name", names)}, nil
		}
		return Result{}, token.NewError(file, s.Pos(), "SHOW %s is not supported; SHOW TABLES, VIEWS or FUNCTIONS is", s.What)
	case *ast.Describe:
		return e.describe(file, s)
	case *ast.Explain:
		text, err := e.explain(p, s.Stmt)
		if err != nil {
			return Result{}, err
		}
		return Result{Message: text}, nil
	case *ast.Insert, *ast.StatementSet:
		name, sinks, err := e.jobSinks(p, st)
		if err != nil {
			return Result{}, err
		}
		j, err := e.start(ctx, name, startHooks{}, sinks...)
		return Result{Job: j}, startError(file, st, err)
	case *ast.QueryStmt:
		name, sinks, err := e.jobSinks(p, st)
		if err != nil {
			return Result{}, err
		}
		header := func() { fmt.Fprintln(e.opts.Stdout, strings.Join(sinks[0].Input.Schema().Names(), ", ")) }
		j, err := e.start(ctx, name, startHooks{before: header}, sinks...)
		return Result{Job: j}, startError(file, s, err)
	}
	return Result{}, token.NewError(file, st.Pos(), "unsupported statement %T", st)
}

// jobSinks plans the job that statement st (an INSERT, a statement set
// or a SELECT) starts: its sinks, and its name unless 'pipeline.name'
// gives one.
func (e *Engine) jobSinks(p *planner.Planner, st ast.Statement) (name string, sinks []*plan.Sink, err error) {
	switch s := st.(type) {
	case *ast.Insert:
		sink, err := e.planInsert(p, s)
		if err != nil {
			return "", nil, err
		}
		sinks, err := e.withShadows(p, st, []*plan.Sink{sink})
		if err != nil {
			return "", nil, err
		}
		return "insert-into-" + sink.Table.Name, sinks, nil
	case *ast.StatementSet:
		writers := map[string]*ast.Insert{}
		for i, ins := range s.Inserts {
			sink, err := e.planInsert(p, ins)
			if err != nil {
				return "", nil, err
			}
			// The statement was parsed here (Exec, Run) and its INSERTs
			// are not needed once planned: a rule set's are thousands,
			// not to be held while the others are planned.
			s.Inserts[i] = nil
			// One output file takes one writer: two INSERTs into it
			// would each append their own commits over the other's.
			if target, ok := e.connectors.SingleWriterTarget(sink.Table); ok {
				if first, dup := writers[target]; dup {
					at := p.File.Position(first.Pos())
					return "", nil, token.NewError(p.File, ins.Table.Pos(),
						"table '%s' writes the file %s, which the INSERT at line %d, column %d of this statement set writes too; "+
							"one output file takes one writer: make the table's path a directory (a path ending in /), "+
							"where each INSERT writes part files of its own, or write one INSERT of a UNION ALL",
						sink.Table.Name, target, at.Line, at.Column)
				}
				writers[target] = ins
			}
			sinks = append(sinks, sink)
		}
		sinks, err := e.withShadows(p, st, sinks)
		if err != nil {
			return "", nil, err
		}
		return "statement-set", sinks, nil
	case *ast.QueryStmt:
		sink, err := e.planSelect(p, s.Query)
		if err != nil {
			return "", nil, err
		}
		return "select", []*plan.Sink{sink}, nil
	}
	return "", nil, token.NewError(p.File, st.Pos(), "%T starts no job", st)
}

// withShadows returns sinks and the sinks of the shadows of the
// rulesets they read (see planner.ShadowSinks), which statement st
// plans.
func (e *Engine) withShadows(p *planner.Planner, st ast.Statement, sinks []*plan.Sink) ([]*plan.Sink, error) {
	shadows, err := p.ShadowSinks(sinks, e.acceptsUpdates)
	if err != nil {
		return nil, token.NewError(p.File, st.Pos(), "%s", err.Error())
	}
	for _, s := range shadows {
		sinks = append(sinks, e.optimize(s).(*plan.Sink))
	}
	return sinks, nil
}

// startError positions an error from starting the job of statement st
// at st, unless it has a position already (an option of a CREATE TABLE,
// a numbering function).
func startError(file *token.File, st ast.Statement, err error) error {
	if err == nil {
		return nil
	}
	var one *token.Error
	var list token.ErrorList
	if errors.As(err, &one) || errors.As(err, &list) {
		return err
	}
	return token.NewError(file, st.Pos(), "cannot start the job: %s", err.Error())
}

// setWhere says where a session option was SET: " (file:line:col)", or
// "" when it was not SET by a statement (Options.Config, --set).
func (e *Engine) setWhere(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.setAt[key]; ok && p.IsValid() {
		return " (" + p.String() + ")"
	}
	return ""
}

// optimize applies the logical rewrite rules.
func (e *Engine) optimize(n plan.Node) plan.Node {
	n = e.optimizer.Optimize(n)
	optimizer.PruneScans(n)
	return n
}

func (e *Engine) planInsert(p *planner.Planner, ins *ast.Insert) (*plan.Sink, error) {
	sink, err := p.PlanInsert(ins, e.acceptsUpdates)
	if err != nil {
		return nil, err
	}
	return e.optimize(sink).(*plan.Sink), nil
}

// planSelect plans a query whose rows are printed to the engine's output.
func (e *Engine) planSelect(p *planner.Planner, q *ast.Query) (*plan.Sink, error) {
	n, err := p.PlanQuery(q)
	if err != nil {
		return nil, err
	}
	n = e.optimize(n)
	t := connector.Table{Name: "$result", Schema: n.Schema(), Options: connector.Options{"connector": "print"}}
	// Strip time attributes: the result is plain data.
	t.Schema = types.Schema{Columns: append([]types.Column(nil), t.Schema.Columns...)}
	for i := range t.Schema.Columns {
		t.Schema.Columns[i].Type = t.Schema.Columns[i].Type.WithoutTimeAttr()
	}
	return &plan.Sink{Input: n, Table: t}, nil
}

func (e *Engine) acceptsUpdates(t connector.Table) bool {
	switch t.Options["connector"] {
	case "print", "blackhole":
		return true
	}
	f, err := e.connectors.Lookup(t.Options["connector"])
	if err != nil {
		return false
	}
	u, ok := f.(connector.ChangelogSink)
	return ok && u.AcceptsChangelog(t, e.connEnv())
}

func (e *Engine) explain(p *planner.Planner, st ast.Statement) (string, error) {
	var root plan.Node
	switch s := st.(type) {
	case *ast.Insert:
		sink, err := e.planInsert(p, s)
		if err != nil {
			return "", err
		}
		sinks, err := e.withShadows(p, st, []*plan.Sink{sink})
		if err != nil {
			return "", err
		}
		if len(sinks) == 1 {
			return plan.Format(sink), nil
		}
		var b strings.Builder
		for _, s := range sinks {
			b.WriteString(plan.Format(s))
		}
		return b.String(), nil
	case *ast.QueryStmt:
		n, err := p.PlanQuery(s.Query)
		if err != nil {
			return "", err
		}
		root = e.optimize(n)
	case *ast.StatementSet:
		var b strings.Builder
		var sinks []*plan.Sink
		for _, ins := range s.Inserts {
			sink, err := e.planInsert(p, ins)
			if err != nil {
				return "", err
			}
			b.WriteString(plan.Format(sink))
			sinks = append(sinks, sink)
		}
		all, err := e.withShadows(p, st, sinks)
		if err != nil {
			return "", err
		}
		for _, s := range all[len(sinks):] {
			b.WriteString(plan.Format(s))
		}
		sinks = all
		filters, err := e.explainFilters(sinks)
		if err != nil {
			return "", err
		}
		b.WriteString(filters)
		return b.String(), nil
	default:
		return "", token.NewError(p.File, st.Pos(), "EXPLAIN supports INSERT, statement sets and queries")
	}
	return plan.Format(root), nil
}

// explainFilters describes the shared filters of the job of sinks, as
// the session's options would make them.
func (e *Engine) explainFilters(sinks []*plan.Sink) (string, error) {
	cfg := e.Config()
	if cfg[config.ClusterGroupID] != "" {
		return "", nil
	}
	reuse, err := config.ReuseSource(cfg)
	if err != nil {
		return "", err
	}
	share, err := config.ShareFilters(cfg)
	if err != nil {
		return "", err
	}
	now := func() int64 { return e.opts.Now().UnixMicro() }
	env := physical.Env{NoSourceReuse: !reuse, NoSharedFilters: !share, Expr: &expr.Env{Now: now, Location: time.UTC}}
	return physical.ExplainFilters(env, sinks...)
}

// Explain returns the plans of the INSERT and SELECT statements of src, as
// `sluice explain` prints them. DDL in src is executed (so that the plans
// can name its tables); no job is started.
func (e *Engine) Explain(filename string, src []byte) (string, error) {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return "", err
	}
	file := token.NewFile(filename, src)
	var b strings.Builder
	for _, st := range stmts {
		switch s := st.(type) {
		case *ast.Insert, *ast.QueryStmt, *ast.StatementSet:
			text, err := e.explain(e.planner(file), s)
			if err != nil {
				return "", err
			}
			b.WriteString(text)
		case *ast.Explain:
			text, err := e.explain(e.planner(file), s.Stmt)
			if err != nil {
				return "", err
			}
			b.WriteString(text)
		default:
			if _, err := e.execStmt(context.Background(), file, st); err != nil {
				return "", err
			}
		}
	}
	return b.String(), nil
}

// startHooks change how start starts a job.
type startHooks struct {
	// before, if set, runs once the graph is built and before any row
	// flows.
	before func()
	// sinks holds sinks built by the caller for some of the job's, in
	// place of their tables' connectors (see Query).
	sinks map[*plan.Sink]connector.Sink
	// state, if set, is the job's state backend, whatever the session's
	// options say; the job closes it at its end.
	state state.Backend
}

// start builds the graph of sinks and runs it in the background.
func (e *Engine) start(ctx context.Context, name string, hooks startHooks, sinks ...*plan.Sink) (*Job, error) {
	before := hooks.before
	id := strconv.FormatInt(e.nextID.Add(1), 10)
	cfg := e.Config()
	if n := cfg[config.PipelineName]; n != "" {
		name = n
	}
	name = e.claimName(name)
	started := false
	defer func() {
		if !started {
			e.releaseName(name)
		}
	}()
	env, err := e.jobEnv(cfg, name)
	if err != nil {
		return nil, err
	}
	warnAt, err := config.WarnSize(cfg)
	if err != nil {
		return nil, err
	}
	cacheSize, err := config.FilterCache(cfg)
	if err != nil {
		return nil, err
	}
	if cacheSize > 0 {
		env.FilterBudget = e.filterBudget
		env.FilterBudget.SetLimit(cacheSize)
	}
	env.Sinks = hooks.sinks
	if cfg[config.ClusterGroupID] != "" {
		if len(hooks.sinks) > 0 || hooks.state != nil {
			return nil, fmt.Errorf("a query whose rows the caller receives runs in this process: unset '%s'", config.ClusterGroupID)
		}
		interval, err := config.CheckpointInterval(cfg, time.Second)
		if err != nil {
			return nil, err
		}
		j, err := e.startCluster(ctx, id, name, env, cfg, interval, before, sinks)
		if err == nil {
			started = true
			j.OnDone(func(error) { e.releaseName(name) })
		}
		return j, err
	}
	shared, err := config.SharedSource(cfg)
	if err != nil {
		return nil, err
	}
	if shared {
		env.ShareSource = func(t connector.Table, src connector.Source, updating bool) (connector.Source, error) {
			return e.shares.Wrap(name, t, src, updating)
		}
	}
	backend, closeBackend := hooks.state, func() error { return hooks.state.Close() }
	if backend == nil {
		backend, closeBackend, err = e.jobBackend(ctx, name, cfg)
	}
	if err != nil {
		return nil, err
	}
	if kb, ok := backend.(*kafkalog.Backend); ok {
		env.ConnEnv.KafkaTxn, env.ConnEnv.KafkaTxnGate = kb.Txn(), kb.TxnGate()
	}
	_, env.ConnEnv.DurableState = backend.(*lsm.Backend)
	metrics := &exec.Metrics{}
	env.ConnEnv.Reconnects, env.ConnEnv.Dropped = &metrics.Reconnects, &metrics.SinkDropped
	g, err := physical.Build(env, sinks...)
	if err != nil {
		closeBackend()
		return nil, e.positionTableError(err)
	}
	if before != nil {
		before()
	}
	var def time.Duration
	if _, ok := backend.(*kafkalog.Backend); ok || cfg[config.StateDir] != "" {
		// Durable state is only worth its name with checkpoints: without
		// them nothing would be committed, and a job run again would
		// start over (and double what a sink received).
		def = config.DefaultCheckpointInterval
	}
	interval, err := config.CheckpointInterval(cfg, def)
	if err != nil {
		closeBackend()
		return nil, err
	}
	fresh, err := config.StartFresh(cfg)
	if err != nil {
		closeBackend()
		return nil, err
	}
	allowLoss, err := config.AllowStateLoss(cfg)
	if err != nil {
		closeBackend()
		return nil, err
	}
	jctx, cancel := context.WithCancel(ctx)
	j := &Job{ID: id, Name: name, Metrics: metrics, Bounded: g.Bounded(), session: e, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	e.trackJob(j)
	started = true
	go func() {
		defer j.end()
		defer cancel()
		defer e.untrackJob(j)
		defer e.releaseName(name)
		unwatch := e.watchState(j, warnAt)
		err := g.Run(jctx, exec.RunOptions{Job: name, State: backend, Metrics: j.Metrics, Now: env.ConnEnv.Now, Stop: j.stop,
			CheckpointInterval: interval, StartFresh: fresh, AllowStateLoss: allowLoss, Logf: e.logf})
		unwatch()
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		err = e.explainMismatch(err, cfg)
		if cerr := closeBackend(); cerr != nil && err == nil {
			err = cerr
		}
		j.err = redact.Error(err, e.secrets()...)
	}()
	return j, nil
}

// claimName returns the name of a job to be named name, and holds it
// until releaseName: name itself, unless the session started a job of
// that name before, or a job running now holds it; then name-2, name-3,
// and so on. Jobs never share a name while they run, and so operator IDs
// and state; a script run again names its jobs as it did, in the order
// they start (its second SELECT is "select-2" again, and resumes what
// that one saved); and a job of a new session takes the name of a job
// that has ended (a new version of it, started in a session of its own,
// resumes its state).
func (e *Engine) claimName(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.names == nil {
		e.names = map[string]int{}
	}
	if e.running == nil {
		e.running = map[string]bool{}
	}
	for {
		e.names[name]++
		got := name
		if n := e.names[name]; n > 1 {
			got = fmt.Sprintf("%s-%d", name, n)
		}
		if !e.running[got] {
			e.running[got] = true
			return got
		}
	}
}

// releaseName lets another job take name, whose job has ended or never
// started.
func (e *Engine) releaseName(name string) {
	e.mu.Lock()
	delete(e.running, name)
	e.mu.Unlock()
}

// jobEnv returns what translating the job name needs, as the session
// options cfg set it: everything but the filter caches' budget, the
// readers of shared sources and what the state backend lends.
func (e *Engine) jobEnv(cfg map[string]string, name string) (physical.Env, error) {
	var env physical.Env
	par := 1
	if v, ok := cfg[config.ParallelismDefault]; ok {
		n, err := config.Parallelism(v)
		if err != nil {
			return env, err
		}
		par = n
	}
	now := func() int64 { return e.opts.Now().UnixMicro() }
	ttl, err := config.Duration(cfg, config.StateTTL)
	if err != nil {
		return env, err
	}
	miniBatch, err := miniBatchOptions(cfg, e.setWhere)
	if err != nil {
		return env, err
	}
	dropNulls, err := config.DropNullRows(cfg)
	if err != nil {
		return env, err
	}
	reuse, err := config.ReuseSource(cfg)
	if err != nil {
		return env, err
	}
	shareFilters, err := config.ShareFilters(cfg)
	if err != nil {
		return env, err
	}
	multiPattern, err := config.MultiPattern(cfg)
	if err != nil {
		return env, err
	}
	env = physical.Env{
		NoSourceReuse:   !reuse,
		NoSharedFilters: !shareFilters,
		NoMultiPattern:  !multiPattern,
		StateTTL:        ttl,
		MiniBatch:       miniBatch,
		DropNullRows:    dropNulls,
		Job:             name,
		Connectors:      e.connectors,
		ConnEnv:         connector.Env{Formats: e.formats, Stdout: e.opts.Stdout, Now: now, Logf: e.logf, Job: name, StateDir: cfg[config.StateDir]},
		Expr:            &expr.Env{Now: now, Location: time.UTC},
		Parallelism:     par,
		Dims:            e.dims,
		Metrics:         e.metricPublisher(),
	}
	if tz, ok := cfg[config.LocalTimeZone]; ok {
		loc, err := config.Location(tz)
		if err != nil {
			return env, err
		}
		env.Expr.Location = loc
		env.ConnEnv.Location = loc
	}
	return env, nil
}

// DropState discards the state saved under the job name in the session's
// state backend ('state.dir', or Kafka with 'state.backend' = 'kafka'),
// as 'state.start-fresh' does when a job starts, and commits the
// discarding, so that a job started later under that name starts from
// scratch: for a server that deletes a job with its state. It fails
// while a job of that name runs.
func (e *Engine) DropState(ctx context.Context, job string) error {
	e.mu.Lock()
	if e.running[job] {
		e.mu.Unlock()
		return fmt.Errorf("sluice: cannot discard the state of job %s: the job is running", job)
	}
	if e.running == nil {
		e.running = map[string]bool{}
	}
	e.running[job] = true // no job of that name starts meanwhile
	e.mu.Unlock()
	defer e.releaseName(job)
	b, closeBackend, err := e.jobBackend(ctx, job, e.Config())
	if err != nil {
		return fmt.Errorf("sluice: cannot discard the state of job %s: %w", job, err)
	}
	err = b.Drop(job)
	if err == nil {
		err = b.Commit(job, nil)
	}
	if cerr := closeBackend(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sluice: cannot discard the state of job %s: %w", job, err)
	}
	return nil
}

// SharedSource is an unbounded source that the engine reads once for
// the jobs attached to it (see 'pipeline.shared-source'): its table, the
// jobs, the partitions they attached, the readers open, the readers
// opened and the rows read once.
type SharedSource = share.Info

// SharedSources lists the sources read once for several jobs (or for a
// job alone, which others may join), by table.
func (e *Engine) SharedSources() []SharedSource { return e.shares.Sources() }

// explainMismatch adds to a job refused over another job's state where
// that state is and what to do.
func (e *Engine) explainMismatch(err error, cfg map[string]string) error {
	var me *state.MismatchError
	if !errors.As(err, &me) {
		return err
	}
	where := "the engine's state"
	switch {
	case cfg[config.StateBackend] == "kafka":
		where = "the state in Kafka"
	case cfg[config.StateDir] != "":
		where = fmt.Sprintf("state.dir '%s'", cfg[config.StateDir])
	}
	return fmt.Errorf("%w\nThe state in %s was saved under the same job name (%s). "+
		"Give this job a name of its own with SET 'pipeline.name' = '...', "+
		"keep the state of what did not change and drop the rest with SET 'state.allow-loss' = 'true', "+
		"or discard the saved state and start from scratch with SET 'state.start-fresh' = 'true'", err, where, me.Job)
}

// watchState warns, once, when the state of j's unbounded operators
// passes warnAt bytes: the engine looks at its jobs' state every second
// (one goroutine for all of them, while any is watched), and once more
// at a job's end, when the returned function is called.
func (e *Engine) watchState(j *Job, warnAt int64) (unwatch func()) {
	if e.logf == nil || warnAt <= 0 {
		return func() {}
	}
	w := &stateWatch{j: j, warnAt: warnAt}
	e.mu.Lock()
	if e.watches == nil {
		e.watches = map[*stateWatch]bool{}
	}
	e.watches[w] = true
	if !e.watching {
		e.watching = true
		go e.watchLoop()
	}
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		delete(e.watches, w)
		e.mu.Unlock()
		e.checkState(w)
	}
}

// stateWatch is a job whose state size is watched.
type stateWatch struct {
	j      *Job
	warnAt int64
	warned atomic.Bool
}

// watchLoop checks the watched jobs every second until none is left.
func (e *Engine) watchLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range t.C {
		e.mu.Lock()
		if len(e.watches) == 0 {
			e.watching = false
			e.mu.Unlock()
			return
		}
		ws := make([]*stateWatch, 0, len(e.watches))
		for w := range e.watches {
			ws = append(ws, w)
		}
		e.mu.Unlock()
		for _, w := range ws {
			e.checkState(w)
		}
	}
}

// checkState warns if w's job's state passed its threshold, once.
func (e *Engine) checkState(w *stateWatch) {
	j := w.j
	keys, bytes := j.Metrics.State()
	if w.warned.Load() || bytes < w.warnAt || !w.warned.CompareAndSwap(false, true) {
		return
	}
	byKind := j.Metrics.StateByKind()
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		if s := byKind[k]; s[0] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d keys", k, s[0]))
		}
	}
	e.logf("job %s: warning: its state holds %d keys (%s), about %s, past 'table.exec.state.warn-size' (%s); "+
		"it grows with every new key: set 'table.exec.state.ttl' to let keys not updated for that long expire, "+
		"or raise the threshold ('0' turns this warning off)",
		j.Name, keys, strings.Join(parts, ", "), formatBytes(bytes), formatBytes(w.warnAt))
}

// formatBytes renders a size in bytes in binary units: whole when exact
// ("10 KiB"), else with a decimal ("1.3 MiB").
func formatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	u, f := 0, float64(n)/(1<<10)
	for u+1 < len(units) && f >= 1<<10 {
		u++
		f /= 1 << 10
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// positionTableError turns a connector error about a declared table into an
// error positioned in that table's CREATE TABLE: at the option it names,
// or at the table's name.
func (e *Engine) positionTableError(err error) error {
	var te *physical.TableError
	if !errors.As(err, &te) {
		return err
	}
	// An option an OPTIONS hint set is positioned at the hint.
	keys := slices.Sorted(maps.Keys(te.HintAt))
	for _, k := range keys {
		msg := te.Err.Error()
		if strings.Contains(msg, "'"+k+"'") && k != "connector" ||
			k == "connector" && strings.Contains(msg, "connector '") {
			if t, _, lerr := e.catalog.Lookup(te.Table); lerr == nil && t != nil {
				msg = redact.Text(msg, redact.Secrets(t.Options)...)
			}
			return &token.Error{Pos: te.HintAt[k], Msg: redact.Text(msg)}
		}
	}
	t, _, lerr := e.catalog.Lookup(te.Table)
	if lerr != nil || t == nil || t.Decl == nil {
		return err
	}
	return e.positionTableErrorIn(t, te.Err)
}

// positionTableErrorIn positions err in t's CREATE TABLE, with the secrets
// of t's options masked in its message.
func (e *Engine) positionTableErrorIn(t *catalog.Table, err error) error {
	pos := t.Decl.Name.Pos()
	msg := redact.Text(err.Error(), redact.Secrets(t.Options)...)
	for _, o := range t.Decl.Options {
		if strings.Contains(msg, "'"+o.Key+"'") && o.Key != "connector" ||
			o.Key == "connector" && strings.Contains(msg, "connector '"+o.Value+"'") {
			pos = o.Pos()
			break
		}
		// A legacy option, named in the message as the option it was
		// read as.
		for now, legacy := range t.Legacy {
			if legacy == o.Key && (strings.Contains(msg, "'"+now+"'") && now != "connector" ||
				now == "connector" && strings.Contains(msg, "connector '"+o.Value+"'")) {
				pos = o.Pos()
			}
		}
		if pos != t.Decl.Name.Pos() {
			break
		}
	}
	return token.NewError(t.File, pos, "%s", msg)
}

// secrets returns the secret values of the declared tables' options, for
// masking in messages that a connector did not mask itself. Every log line
// masks them: they are gathered again only when the tables have changed
// (a rule set declares thousands, and its job logs a line per filter). The
// slice returned is shared: callers must not change it.
func (e *Engine) secrets() []string {
	gen := e.catalog.Generation()
	e.secretsMu.Lock()
	defer e.secretsMu.Unlock()
	if e.secretsOK && e.secretsGen == gen {
		return e.secretsList
	}
	// Tables added while these are gathered make the next call gather
	// again: gen is older than what they reflect.
	e.secretsList, e.secretsGen, e.secretsOK = e.tableSecrets(), gen, true
	return e.secretsList
}

// tableSecrets gathers the secret values of the declared tables' options.
func (e *Engine) tableSecrets() []string {
	var out []string
	for _, name := range e.catalog.Tables() {
		if t, _, err := e.catalog.Lookup(name); err == nil && t != nil {
			out = append(out, redact.Secrets(t.Options)...)
		}
	}
	return out
}

// Run executes the statements of src in order, as `sluice run` does, and
// waits for the jobs they start to end:
//
//   - DDL and SET take effect; the text that SHOW, DESCRIBE, EXPLAIN and
//     SET without a key show is written to Options.Stdout.
//   - An INSERT or a statement set starts a job, and the next statement
//     runs at once (as in Flink's SQL client).
//   - A SELECT prints its rows to Options.Stdout. One whose inputs are all
//     bounded runs to its end before the next statement runs, so that the
//     outputs of two statements never mix, as in Flink's SQL client. One
//     over an unbounded input runs until the run is stopped: the
//     statements after it that print nothing (DDL, SET, INSERT) run at
//     once, but the next one that prints (a SELECT, SHOW, ...) waits for
//     it, which is to say until the run is stopped, and then does not run
//     (Options.Log says so when it happens). Put such a SELECT last.
//
// A syntax error anywhere in src is reported before anything runs; an
// error in a statement cancels the jobs started before it. Cancelling ctx
// stops the jobs gracefully (sources stop reading, sinks flush) and runs
// no further statement.
func (e *Engine) Run(ctx context.Context, filename string, src []byte) error {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return err
	}
	file := token.NewFile(filename, src)
	var (
		mu      sync.Mutex
		jobs    []*Job
		stopped bool
	)
	// A stop (ctx) stops every job started so far, and any started after.
	add := func(j *Job) {
		mu.Lock()
		defer mu.Unlock()
		jobs = append(jobs, j)
		if stopped {
			j.Stop()
		}
	}
	watch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			mu.Lock()
			stopped = true
			for _, j := range jobs {
				j.Stop()
			}
			mu.Unlock()
		case <-watch:
		}
	}()
	defer close(watch)

	// printing is the SELECT whose rows are being printed, if it is
	// unbounded (a bounded one is waited for at once).
	var printing *Job
	var printingAt token.Position
	for i, st := range stmts {
		if ctx.Err() != nil {
			break
		}
		// A statement's tree is let go once executed: what it declared
		// keeps what it needs (a table its name, options and columns), and
		// a rule set's 20,000 trees need not all be held while it is
		// planned.
		stmts[i] = nil
		if printing != nil && printsOutput(st) {
			if e.logf != nil {
				e.logf("%s: waits for the SELECT at %s, which reads an unbounded input, to end",
					file.Position(st.Pos()), printingAt)
			}
			printing.Wait()
			printing = nil
			if ctx.Err() != nil {
				break
			}
		}
		r, err := e.execStmt(context.WithoutCancel(ctx), file, st)
		if r.Job != nil {
			add(r.Job)
		}
		if err != nil {
			mu.Lock()
			started := append([]*Job(nil), jobs...)
			mu.Unlock()
			for _, j := range started {
				j.Cancel()
				j.Wait()
			}
			return err
		}
		if printsMessage(st) {
			fmt.Fprint(e.opts.Stdout, r.Message)
		}
		if _, ok := st.(*ast.QueryStmt); ok && r.Job != nil {
			if !r.Job.Bounded {
				printing, printingAt = r.Job, file.Position(st.Pos())
				continue
			}
			if err := r.Job.Wait(); err != nil {
				break // reported below, with the others
			}
		}
	}
	mu.Lock()
	started := append([]*Job(nil), jobs...)
	mu.Unlock()
	return e.waitJobs(started)
}

// printsMessage reports whether Run prints a statement's Result.Message:
// a listing, a plan or a description, not an acknowledgement.
func printsMessage(st ast.Statement) bool {
	switch s := st.(type) {
	case *ast.Show, *ast.Describe, *ast.Explain:
		return true
	case *ast.Set:
		return s.Key == ""
	}
	return false
}

// printsOutput reports whether a statement writes to Options.Stdout when
// Run runs it.
func printsOutput(st ast.Statement) bool {
	_, query := st.(*ast.QueryStmt)
	return query || printsMessage(st)
}

// waitJobs waits for jobs to end, in order, logs their summaries, and
// returns the first failure (which cancels the jobs still running).
func (e *Engine) waitJobs(jobs []*Job) error {
	var first error
	for _, j := range jobs {
		err := j.Wait()
		if e.logf != nil {
			m := j.Metrics
			var state string
			if keys, bytes := m.State(); keys > 0 || bytes > 0 {
				state = fmt.Sprintf("; state: %d keys, about %s", keys, formatBytes(bytes))
			}
			e.logf("job %s: %d rows read, %d rows written, %d late rows dropped, %d malformed records skipped%s",
				j.Name, m.RowsIn.Load(), m.RowsOut.Load(), m.LateRows.Load(), m.SkippedRecs.Load(), state)
			if n := m.Reconnects.Load(); n > 0 {
				e.logf("job %s: %d connections made again after a loss", j.Name, n)
			}
			if n := m.SinkDropped.Load(); n > 0 {
				e.logf("job %s: %d messages dropped by sinks whose store-and-forward buffer was full ('sink.buffer.overflow' = 'drop-oldest')", j.Name, n)
			}
			if n := m.NullRowsDropped.Load(); n > 0 {
				e.logf("job %s: %d rows dropped for a NULL in a NOT NULL column of a sink ('table.exec.sink.not-null-enforcer' = 'DROP')", j.Name, n)
			}
			if n := m.Lookups.Load(); n > 0 {
				// The cache and the round trips are those of on-demand
				// tables; a job whose tables are all loaded in full has
				// neither.
				var ondemand string
				if h, mi, f := m.LookupCacheHits.Load(), m.LookupCacheMisses.Load(), m.LookupFetches.Load(); h+mi+f > 0 {
					ondemand = fmt.Sprintf("; cache: %d hits, %d misses; %d round trips", h, mi, f)
				}
				e.logf("job %s: %d keys looked up in dimension tables, %d found%s", j.Name, n, m.LookupHits.Load(), ondemand)
			}
			for _, g := range m.FilterGroups() {
				var off string
				if n := g.Uncached.Load(); n > 0 {
					off = fmt.Sprintf(", %d rows uncached (low hit rate)", n)
				}
				e.logf("job %s: shared filters of %s.%s: %d cache hits, %d misses, %d evicted, %s held%s",
					j.Name, g.Source, g.Column, g.Hits.Load(), g.Misses.Load(), g.Evictions.Load(), formatBytes(g.Bytes.Load()), off)
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("job %s failed: %w", j.Name, err)
			for _, o := range jobs {
				o.Cancel()
			}
		}
	}
	return first
}

func (e *Engine) describe(file *token.File, s *ast.Describe) (Result, error) {
	name, err := e.planner(file).ObjectName(s.Name)
	if err != nil {
		return Result{}, err
	}
	_, v, err := e.catalog.Lookup(name)
	if err != nil {
		return Result{}, token.NewError(file, s.Name.Pos(), "%s", err.Error())
	}
	var schema types.Schema
	if v != nil {
		n, err := e.planner(v.File).PlanQuery(v.Query)
		if err != nil {
			return Result{}, err
		}
		schema = n.Schema()
	} else {
		n, err := e.planner(file).PlanQuery(&ast.Query{Body: &ast.Select{
			Items: []*ast.SelectItem{{Star: true}},
			From:  &ast.TableName{Name: s.Name},
		}})
		if err != nil {
			return Result{}, err
		}
		schema = n.Schema()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s %-30s %s\n", "name", "type", "null")
	for _, c := range schema.Columns {
		nullable := "TRUE"
		if c.Type.NotNull {
			nullable = "FALSE"
		}
		t := c.Type
		t.NotNull = false
		fmt.Fprintf(&b, "%-20s %-30s %s\n", c.Name, t, nullable)
	}
	return Result{Message: b.String()}, nil
}

func (e *Engine) formatConfig() string {
	cfg := e.Config()
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "'%s' = '%s'\n", k, redact.Option(k, cfg[k]))
	}
	return b.String()
}

func listing(header string, names []string) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteByte('\n')
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.String()
}

// miniBatchOptions reads 'table.exec.mini-batch.*'. As in Flink, an
// enabled mini-batch needs a positive allow-latency. where says where an
// option was set, for messages.
func miniBatchOptions(cfg map[string]string, where func(key string) string) (physical.MiniBatch, error) {
	var mb physical.MiniBatch
	on, _ := strconv.ParseBool(cfg[config.MiniBatchEnabled])
	if !on {
		return mb, nil
	}
	v, ok := cfg[config.MiniBatchAllowLatency]
	if !ok {
		return mb, fmt.Errorf("%s is true%s: set '%s' too (e.g. '1 s')",
			config.MiniBatchEnabled, where(config.MiniBatchEnabled), config.MiniBatchAllowLatency)
	}
	d, err := connector.ParseDuration(v)
	if err != nil {
		return mb, fmt.Errorf("%s%s: %w", config.MiniBatchAllowLatency, where(config.MiniBatchAllowLatency), err)
	}
	if d <= 0 {
		return mb, fmt.Errorf("%s%s must be positive, got '%s'", config.MiniBatchAllowLatency, where(config.MiniBatchAllowLatency), v)
	}
	mb.Latency = d
	if v, ok := cfg[config.MiniBatchSize]; ok {
		n, err := config.MiniBatchRows(v)
		if err != nil {
			return mb, err
		}
		if n > 0 {
			mb.Size = int(min(n, 1<<30))
		}
	}
	return mb, nil
}
