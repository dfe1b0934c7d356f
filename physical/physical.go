// Package physical translates logical plans into running graphs: it cuts a
// plan into stages wherever rows must be re-keyed (aggregations) or merged
// (unions, sinks, sorts), chains the operators of each stage, and compiles
// expressions once per task.
package physical

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/exec/filterset"
	"github.com/sluicesql/sluice/exec/groupagg"
	"github.com/sluicesql/sluice/exec/join"
	"github.com/sluicesql/sluice/exec/metricgroup"
	"github.com/sluicesql/sluice/exec/normalize"
	"github.com/sluicesql/sluice/exec/over"
	"github.com/sluicesql/sluice/exec/rank"
	"github.com/sluicesql/sluice/exec/suppress"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// TableError is an error in a table's declaration found when its connector
// was built (an unknown connector or option, a bad option value). Table
// names the table so that the error can be positioned in its DDL.
type TableError struct {
	Table string
	Err   error
	// HintAt holds the options an OPTIONS hint set, at the hint's key:
	// an error naming one of them is positioned there.
	HintAt map[string]token.Position
}

func (e *TableError) Error() string { return e.Err.Error() }

func (e *TableError) Unwrap() error { return e.Err }

// Env is what translation needs from the engine.
type Env struct {
	// Job names the job; operator IDs (and so state) derive from it.
	Job         string
	Connectors  *connector.Registry
	ConnEnv     connector.Env
	Expr        *expr.Env
	Parallelism int
	// StateTTL, if positive, lets unbounded state expire: a row a regular
	// join keeps, a GROUP BY key, a Top-N partition is dropped once it has
	// not been written for this long ('table.exec.state.ttl').
	StateTTL time.Duration
	// MiniBatch holds updating aggregates' output back, so that a hot key
	// emits one update per mini-batch ('table.exec.mini-batch.*').
	MiniBatch MiniBatch
	// DropNullRows makes a sink's NOT NULL check drop a row with a NULL in
	// such a column instead of failing the job
	// ('table.exec.sink.not-null-enforcer' = 'DROP').
	DropNullRows bool
	// Metrics receives the committed values of metric groups (the
	// engine's metric store); nil: they are not published.
	Metrics metricgroup.Publisher
	// Dims holds the engine's shared dimension tables, for lookup joins
	// over sources loaded in full. Nil: each job gets a registry of its
	// own.
	Dims *dim.Registry
	// NoSourceReuse reads a table once per scan of it even when a job
	// scans one table several times ('table.optimizer.reuse-source-enabled'
	// = 'false'). By default, the scans of one table definition in a job
	// share one source stage (see shareScans).
	NoSourceReuse bool
	// NoSharedFilters keeps the filters of the queries over a shared
	// source apart, each in its own Calc ('pipeline.shared-filters' =
	// 'false'); otherwise they are evaluated together (exec/filterset)
	// with caches held within FilterBudget (nil: no caches).
	NoSharedFilters bool
	FilterBudget    *filterset.Budget
	// NoMultiPattern evaluates the pattern conditions of a shared filter
	// one by one ('pipeline.filter-multi-pattern' = 'false').
	NoMultiPattern bool
	// ShareSource, if set, may replace the source built for a table by
	// one that reads it through a reader shared with other jobs (the
	// engine's connector/share registry); it gets the table as the
	// connector got it, and whether the scan is updating (a changelog,
	// which a job must read whole).
	ShareSource func(t connector.Table, src connector.Source, updating bool) (connector.Source, error)
	// Cluster, if set, builds the graph of one member of a cluster: the
	// sources read only the partitions assigned to this process, and
	// stages are cut at re-keying by shuffle topics instead of in-memory
	// exchanges.
	Cluster *Cluster
	// Sinks holds sinks the caller built for some of the plan's sinks
	// (a query whose rows it receives itself), used in place of their
	// tables' connectors.
	Sinks map[*plan.Sink]connector.Sink
}

// MiniBatch configures mini-batched updating aggregates.
type MiniBatch struct {
	// Latency, if positive, enables mini-batches: an update waits at most
	// this long.
	Latency time.Duration
	// Size, if positive, bounds the input rows of a mini-batch.
	Size int
}

// Cluster is what cluster mode needs from the engine.
type Cluster struct {
	// Parts returns the partitions of src, read by stage stageID, that
	// this process reads.
	Parts func(table, stageID string, src connector.Source) ([]int, error)
	// Shuffle returns the two ends of the shuffle topic of operator id: the
	// source the next stage reads, with the partitions this process reads,
	// and the writer of each upstream partition (writers in all, numbered
	// from 0), which sends a row to one of partitions by the hash of its
	// columns keys. Rows have the given types.
	Shuffle func(id string, schema []types.Type, partitions, writers int, bounded bool) (
		src connector.Source, parts []int, writer func(writer int, keys []int) (exec.Output, error), err error)
}

// opFactory builds one operator of a task's chain in front of next.
type opFactory func(task int, next exec.Operator) (exec.Operator, error)

// pipe is a stage under construction: the stage and the operators appended
// to its chain so far.
type pipe struct {
	stage    *exec.Stage
	ops      []opFactory
	assigner int // index in ops of the watermark assigner, or -1
	bounded  bool
	// parts, in cluster mode, are the pipes a union merges, not closed
	// yet: a shuffle takes each of them (with the union's operators) as
	// a writer of its own; anything else merges them in this stage when
	// it closes it.
	parts []*pipe
	// marks say which of ops belong to which operator of the plan, in
	// order, for the per-operator metrics (see exec.Meter).
	marks []mark
}

// mark says that ops[from:to] of a pipe are the operator info of the
// plan (none, from == to, for a source read as it is).
type mark struct {
	from, to int
	info     *exec.OperatorInfo
}

type builder struct {
	env    Env
	stages []*exec.Stage
	nextID int
	// manifest lists the job's sources, stateful operators and sinks, by
	// the IDs that id gave them.
	manifest state.Manifest
	ids      map[string]bool
	// shared maps each scan that shares its source with others to its
	// group (see shareScans).
	shared map[*plan.Scan]*scanGroup
	// sinks are the sinks the graph writes, for Manifest to close.
	sinks []connector.Sink
	// operators counts the operators marked (see mark); kinds holds
	// their kinds.
	operators int
	kinds     map[string]string
}

// Build translates sinks (one INSERT, or a statement set) into a graph.
func Build(env Env, sinks ...*plan.Sink) (*exec.Graph, error) {
	b, err := build(env, sinks)
	if err != nil {
		return nil, err
	}
	return &exec.Graph{Stages: b.stages, Manifest: b.manifest}, nil
}

// build translates sinks into the stages of a graph. It returns the
// builder also on an error once sinks may have been built.
func build(env Env, sinks []*plan.Sink) (*builder, error) {
	if env.Parallelism < 1 {
		env.Parallelism = 1
	}
	if env.Parallelism > exec.MaxParallelism {
		return nil, fmt.Errorf("parallelism %d is above the maximum of %d", env.Parallelism, exec.MaxParallelism)
	}
	if env.Dims == nil {
		env.Dims = dim.NewRegistry(dim.Options{})
	}
	b := &builder{env: env, ids: map[string]bool{}}
	if env.Cluster == nil && !env.NoSourceReuse {
		b.shareScans(sinks)
	}
	for _, s := range sinks {
		if err := b.sink(s); err != nil {
			return b, err
		}
	}
	if err := b.checkOwnInput(); err != nil {
		return b, err
	}
	if err := b.shareFilters(); err != nil {
		return b, err
	}
	return b, nil
}

// Manifest returns the manifest of the job of sinks (the IDs its state
// would be kept under, see state.Manifest) as Build would make it, with
// no graph to run: the sinks built on the way are closed before it
// returns, having written nothing, and sources open nothing until they
// run. Connectors are still built, so a table Build would refuse (an
// unknown option, a Kafka topic that does not exist) is refused here
// too. env.ShareSource is not used: a shared reader has no part in the
// manifest, which names the table's source either way.
func Manifest(env Env, sinks ...*plan.Sink) (state.Manifest, error) {
	env.ShareSource = nil
	b, err := build(env, sinks)
	if b != nil {
		for _, s := range b.sinks {
			if cerr := s.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		return state.Manifest{}, err
	}
	return b.manifest, nil
}

// checkOwnInput refuses a job that writes what it reads (a filesystem
// sink whose path is one of its sources'): it would read its own output,
// or empty its input.
func (b *builder) checkOwnInput() error {
	reads := map[string]string{}
	for _, e := range b.manifest.Entries {
		if t, ok := strings.CutPrefix(e.Label, "source "); ok {
			reads[e.What] = t
		}
	}
	for _, e := range b.manifest.Entries {
		t, ok := strings.CutPrefix(e.Label, "sink ")
		if !ok {
			continue
		}
		if src, ok := reads[e.What]; ok {
			return &TableError{Table: t, Err: fmt.Errorf("table %s writes %s, which the same job reads (as table %s): "+
				"a job must not write its own input", t, e.What, src)}
		}
	}
	return nil
}

// seq returns a new ID for something that keeps no state (a stage that
// does not read a source): unique in the job, by its place in the plan.
func (b *builder) seq(kind string) string {
	b.nextID++
	return fmt.Sprintf("%s/%s-%d", b.env.Job, kind, b.nextID)
}

// id returns the ID of something that keeps state or positions (a
// source, a stateful operator, a sink with state), derived from what it
// reads or computes so that edits elsewhere in the plan do not move it,
// and lists it in the job's manifest under label. Two alike in one job (a
// table read twice) are told apart by their order.
func (b *builder) id(kind, label, what string) string {
	h := fnv.New64a()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(what))
	id := fmt.Sprintf("%s/%s-%08x", b.env.Job, kind, h.Sum64()>>32)
	for n := 2; b.ids[id]; n++ {
		id = fmt.Sprintf("%s/%s-%08x-%d", b.env.Job, kind, h.Sum64()>>32, n)
	}
	b.ids[id] = true
	b.manifest.Entries = append(b.manifest.Entries, state.ManifestEntry{ID: id, Label: label, What: what})
	return id
}

// computes describes what operator n computes, for its ID: its
// description and the types of its input columns (its state's layout).
// An input Expand is described too: the expand id that keys the groups of
// an aggregation means a grouping set only among the sets of that Expand.
func computes(n plan.Node) string {
	var b strings.Builder
	b.WriteString(n.Describe())
	for _, in := range n.Inputs() {
		b.WriteString(" <- (")
		for i, c := range in.Schema().Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Type.String())
		}
		b.WriteString(")")
		if e, ok := in.(*plan.Expand); ok {
			b.WriteString(" " + e.Describe())
		}
	}
	return b.String()
}

// opLabel names a plan node for people: its description up to the first
// parenthesis.
func opLabel(n plan.Node) string {
	d := n.Describe()
	if i := strings.IndexByte(d, '('); i > 0 {
		return d[:i]
	}
	return d
}

// mark marks the ops of p from from on as the operator of the plan of
// the given kind (as EXPLAIN names it) and table (a source's or sink's).
func (b *builder) mark(p *pipe, from int, kind, table string) *exec.OperatorInfo {
	b.operators++
	// One copy of each kind: a label cut from a node's description
	// would keep the whole description alive.
	if k, ok := b.kinds[kind]; ok {
		kind = k
	} else {
		kind = strings.Clone(kind)
		if b.kinds == nil {
			b.kinds = map[string]string{}
		}
		b.kinds[kind] = kind
	}
	info := &exec.OperatorInfo{Index: b.operators, Kind: kind, Table: table}
	p.marks = append(p.marks, mark{from: from, to: len(p.ops), info: info})
	return info
}

// markNode marks the ops that building n appended to p, if any, as n's.
func (b *builder) markNode(p *pipe, n plan.Node) {
	from := 0
	if k := len(p.marks); k > 0 {
		from = p.marks[k-1].to
	}
	if len(p.ops) > from {
		b.mark(p, from, opLabel(n), "")
	}
}

// meterPoint is a place of a chain (in front of op at; len(ops) is in
// front of the edge) and the operators whose output and input pass there.
type meterPoint struct {
	at      int
	out, in []*exec.OperatorInfo
}

// meterPoints returns the places of a chain of the given marks where a
// meter goes, in order.
func meterPoints(marks []mark) []meterPoint {
	var points []meterPoint
	at := func(i int) *meterPoint {
		for k := range points {
			if points[k].at == i {
				return &points[k]
			}
		}
		points = append(points, meterPoint{at: i})
		return &points[len(points)-1]
	}
	for _, mk := range marks {
		pt := at(mk.from)
		pt.in = append(pt.in, mk.info)
		if !mk.info.Sink { // a sink's output is what it wrote: its input
			pt = at(mk.to)
			pt.out = append(pt.out, mk.info)
		}
	}
	return slices.Clip(points)
}

// close turns a pipe into a finished stage whose chain ends in the stage's
// output edge.
func (b *builder) close(p *pipe) *exec.Stage {
	for _, in := range p.parts {
		p.stage.Inputs = append(p.stage.Inputs, b.close(in))
	}
	p.parts = nil
	ops, asg := p.ops, p.assigner
	points := meterPoints(p.marks)
	meter := func(i int, next exec.Operator) exec.Operator {
		for _, pt := range points {
			if pt.at == i {
				return &exec.Meter{Next: next, Out: pt.out, In: pt.in}
			}
		}
		return next
	}
	p.stage.Build = func(task int, out exec.Output) (*exec.Chain, error) {
		next := meter(len(ops), out)
		c := &exec.Chain{Ops: make([]exec.Operator, len(ops))}
		for i := len(ops) - 1; i >= 0; i-- {
			op, err := ops[i](task, next)
			if err != nil {
				return nil, err
			}
			if i == asg {
				c.Assigner = op.(*exec.WatermarkAssigner)
			}
			c.Ops[i] = op
			next = meter(i, op)
		}
		c.Head = next
		return c, nil
	}
	b.stages = append(b.stages, p.stage)
	return p.stage
}

// exchange starts the stage that re-keys the rows of in by keys into par
// tasks: in one process, through an in-memory exchange; in cluster mode,
// through a shuffle topic, each of whose partitions is a task of the
// process it is assigned to.
func (b *builder) exchange(name string, par int, keys []int, input plan.Node, in *pipe) (*pipe, error) {
	if b.env.Cluster == nil {
		return b.newStage(name, par, keys, in), nil
	}
	ins, err := b.shuffleInputs(name, in)
	if err != nil {
		return nil, err
	}
	schema := input.Schema()
	typs := make([]types.Type, schema.Len())
	for i, c := range schema.Columns {
		typs[i] = c.Type
	}
	id := b.id("shuffle", "shuffle "+name, name+" by "+fmt.Sprint(keys)+" of "+computes(input))
	src, parts, writer, err := b.env.Cluster.Shuffle(id, typs, par, writers(ins), in.bounded)
	if err != nil {
		return nil, err
	}
	base := 0
	for _, in := range ins {
		first := base
		in.stage.Output = func(part int) (exec.Output, error) { return writer(first+part, keys) }
		base += in.stage.Source.Partitions()
		b.close(in)
	}
	st := &exec.Stage{Name: name, ID: id, Source: src, Parts: parts}
	return &pipe{stage: st, assigner: -1, bounded: in.bounded}, nil
}

// shuffleInputs returns the pipes whose tasks write a shuffle fed by in,
// in cluster mode: in itself, a stage over a source (Kafka partitions or
// an earlier shuffle); or, for a union, each of its inputs, with the
// operators that follow the union appended.
func (b *builder) shuffleInputs(name string, in *pipe) ([]*pipe, error) {
	if in.parts == nil {
		if in.stage.Source == nil {
			return nil, fmt.Errorf("%s: in cluster mode, the output of a sort cannot be re-keyed", name)
		}
		return []*pipe{in}, nil
	}
	if in.assigner >= 0 {
		return nil, fmt.Errorf("%s: in cluster mode, a watermark after a union cannot be re-keyed yet", name)
	}
	ins := in.parts
	in.parts = nil
	for _, p := range ins {
		if p.stage.Source == nil {
			return nil, fmt.Errorf("%s: in cluster mode, a union's input that is not read from a source cannot be re-keyed", name)
		}
		at := len(p.ops)
		p.ops = append(p.ops, in.ops...)
		for _, mk := range in.marks {
			p.marks = append(p.marks, mark{from: at + mk.from, to: at + mk.to, info: mk.info})
		}
	}
	return ins, nil
}

// writers returns the number of shuffle writers of ins: one per source
// partition.
func writers(ins []*pipe) int {
	n := 0
	for _, in := range ins {
		n += in.stage.Source.Partitions()
	}
	return n
}

// newStage starts a stage fed by the given pipes.
func (b *builder) newStage(name string, parallelism int, keys []int, inputs ...*pipe) *pipe {
	st := &exec.Stage{Name: name, ID: b.seq("stage"), Parallelism: parallelism, KeyBy: keys}
	bounded := true
	for _, in := range inputs {
		st.Inputs = append(st.Inputs, b.close(in))
		bounded = bounded && in.bounded
	}
	return &pipe{stage: st, assigner: -1, bounded: bounded}
}

func (b *builder) sink(s *plan.Sink) error {
	in := s.Input
	var enforcer *plan.ConstraintEnforcer
	if ce, ok := in.(*plan.ConstraintEnforcer); ok {
		// Checked in the sink's own stage, after the merge into one
		// writer.
		enforcer, in = ce, ce.Input
	}
	p, err := b.build(in)
	if err != nil {
		return err
	}
	sink, ok := b.env.Sinks[s]
	if !ok {
		sink, err = b.env.Connectors.Sink(s.Table, b.env.ConnEnv)
		if err != nil {
			return &TableError{Table: s.Table.Name, Err: err, HintAt: s.HintAt}
		}
	}
	b.sinks = append(b.sinks, sink)
	// One writer per sink: merge the upstream tasks into one. A branch of
	// a source read by one task is one already: its sink runs in that
	// task, as many rules' sinks do, without a stage (a goroutine and an
	// inbox) each.
	if p.stage.Source != nil || (p.stage.Trunk != nil && !b.oneTask(p.stage.Trunk)) || p.stage.Parallelism > 1 {
		p = b.newStage("sink "+s.Table.Name, 1, nil, p)
	}
	name := s.Table.Name
	first := len(p.ops)
	if enforcer != nil {
		var lengths []exec.LengthColumn
		for _, lc := range append(append([]plan.LengthColumn(nil), enforcer.Chars...), enforcer.Binaries...) {
			lengths = append(lengths, exec.LengthColumn{Col: lc.Col, Name: lc.Name, Type: lc.Type})
		}
		cols, names, drop, trim := enforcer.NotNull, enforcer.Names, b.env.DropNullRows, enforcer.Length == plan.LengthTrimPad
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			return &exec.ConstraintEnforcer{Table: name, NotNull: cols, Names: names, Drop: drop,
				Lengths: lengths, Trim: trim, Next: next}, nil
		})
	}
	var id string
	if _, ok := sink.(connector.StatefulSink); ok {
		id = b.id("sink", "sink "+name, connector.SourceIdentity(s.Table, sink))
	}
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		return &exec.SinkOperator{Table: name, Sink: sink, ID: id}, nil
	})
	b.mark(p, first, "Sink", name).Sink = true
	b.close(p)
	return nil
}

// oneTask reports whether source stage s runs in one task.
func (b *builder) oneTask(s *exec.Stage) bool {
	if b.env.Cluster != nil {
		return false
	}
	return s.Source.Partitions() == 1
}

func (b *builder) compile(n expr.Node) (exec.RowFunc, error) {
	ev, err := expr.Compile(n, b.env.Expr)
	if err != nil {
		return nil, err
	}
	return exec.RowFunc(ev), nil
}

// build builds n and its inputs, and marks the operators it appended as
// n's.
func (b *builder) build(n plan.Node) (*pipe, error) {
	p, err := b.buildNode(n)
	if err != nil {
		return nil, err
	}
	b.markNode(p, n)
	return p, nil
}

func (b *builder) buildNode(n plan.Node) (*pipe, error) {
	switch n := n.(type) {
	case *plan.Scan:
		return b.scan(n)
	case *plan.Values:
		if b.env.Cluster != nil {
			return nil, fmt.Errorf("VALUES is not supported in cluster mode: every process would insert the rows")
		}
		src := memory.NewBounded(valuesRows(n.Rows))
		st := &exec.Stage{Name: "values", ID: b.id("values", "VALUES", n.Describe()), Source: src}
		p := &pipe{stage: st, assigner: -1, bounded: true}
		b.mark(p, 0, opLabel(n), "").Source = true
		return p, nil
	case *plan.Calc:
		p, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		filter, projs := n.Filter, n.Projs
		if scan, ok := b.ruleScan(n); ok && p.stage.Trunk != nil && len(p.ops) == 0 {
			// A rule over a shared source: its filter is evaluated with
			// the others' (see shareFilters), its branch gets only the
			// rows it keeps.
			g := b.shared[scan]
			g.conds = append(g.conds, filter)
			g.schema = scan.Schema()
			p.stage.Rule = len(g.conds)
			filter = nil
		}
		env := b.env.Expr
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			prog, err := expr.CompileProgram(filter, projs, env)
			if err != nil {
				return nil, err
			}
			c := &exec.Calc{Next: next, Cols: columnRefs(projs), NextRow: prog.NextRow}
			if prog.Filter != nil {
				c.Filter = exec.RowPredicate(prog.Filter)
			}
			for _, ev := range prog.Projs {
				c.Projs = append(c.Projs, exec.RowFunc(ev))
			}
			return c, nil
		})
		return p, nil
	case *plan.Ruleset:
		return b.ruleset(n)
	case *plan.Suppress:
		return b.suppress(n)
	case *plan.Correlate:
		p, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		call, left, width, env := n.Call, n.Left, n.Call.Out.Len(), b.env.Expr
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			f, err := expr.CompileTable(call, env)
			if err != nil {
				return nil, err
			}
			return &exec.Correlate{Func: f, Width: width, Left: left, Next: next}, nil
		})
		return p, nil
	case *plan.Expand:
		// Stateless: chained into its input's stage, before the exchange
		// of the aggregation it feeds.
		p, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		projects, ids, idCol := n.Projects, n.IDs, n.IDCol
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			return &exec.Expand{Projects: projects, IDs: ids, IDCol: idCol, Next: next}, nil
		})
		return p, nil
	case *plan.WindowTVF:
		p, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		if n.Spec.Kind == window.Session {
			// Sessions are per partition key: bring each key's rows together.
			par := 1
			if len(n.PartitionKeys) > 0 {
				par = b.env.Parallelism
			}
			if p, err = b.exchange("session", par, n.PartitionKeys, n.Input, p); err != nil {
				return nil, err
			}
		}
		cfg := window.AssignConfig{Spec: n.Spec, TimeCol: n.TimeCol, PartitionKeys: n.PartitionKeys, ID: b.id("window", opLabel(n), computes(n)),
			Zone: b.env.Expr.Location}
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			c := cfg
			c.ID = fmt.Sprintf("%s/%d", cfg.ID, task)
			c.Next = next
			return window.NewAssign(c)
		})
		return p, nil
	case *plan.WindowAggregate:
		p, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		par := 1
		if len(n.Keys) > 0 {
			par = b.env.Parallelism
		}
		if p, err = b.exchange("window-agg", par, n.Keys, n.Input, p); err != nil {
			return nil, err
		}
		// Window aggregates take append-only input: their accumulators
		// need keep no history for retraction.
		calls := append([]agg.Call(nil), n.Calls...)
		for i := range calls {
			calls[i].AppendOnly = true
		}
		cfg := window.AggregateConfig{ID: b.id("window-agg", opLabel(n), computes(n)), Spec: n.Spec, TimeCol: n.TimeCol,
			Attached: n.Attached, StartCol: n.StartCol, EndCol: n.EndCol, Keys: n.Keys, PartitionKeys: n.PartitionKeys, Calls: calls,
			Zone: b.env.Expr.Location}
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			c := cfg
			c.ID = fmt.Sprintf("%s/%d", cfg.ID, task)
			c.Next = next
			var err error
			if c.Calls, err = agg.Bind(cfg.Calls); err != nil {
				return nil, err
			}
			return window.NewAggregate(c)
		})
		return p, nil
	case *plan.GroupAggregate:
		cfg := groupagg.Config{Keys: n.Keys, Calls: n.Calls, AppendOnlyInput: !n.Input.Updating(),
			MiniBatchLatency: b.env.MiniBatch.Latency, MiniBatchSize: b.env.MiniBatch.Size, TTL: b.env.StateTTL}
		return b.keyed("group-agg", n, n.Keys, n.Input, func(id string, next exec.Operator) (exec.Operator, error) {
			c := cfg
			c.ID, c.Next = id, next
			var err error
			if c.Calls, err = agg.Bind(cfg.Calls); err != nil {
				return nil, err
			}
			return groupagg.New(c)
		})
	case *plan.Rank:
		return b.rank(n)
	case *plan.ChangelogNormalize:
		return b.normalize(n)
	case *plan.WindowRank:
		return b.windowRank(n)
	case *plan.OverAggregate:
		return b.over(n)
	case *plan.MetricGroup:
		return b.metricGroup(n)
	case *plan.Join:
		return b.join(n, nil)
	case *plan.IntervalJoin:
		return b.join(&n.Join, n)
	case *plan.TemporalJoin:
		return b.join(&n.Join, n)
	case *plan.WindowJoin:
		return b.windowJoin(n)
	case *plan.LookupJoin:
		return b.lookup(n)
	case *plan.Union:
		var ins []*pipe
		for _, in := range n.Ins {
			p, err := b.build(in)
			if err != nil {
				return nil, err
			}
			ins = append(ins, p)
		}
		if b.env.Cluster == nil {
			return b.newStage("union", 1, nil, ins...), nil
		}
		// Kept apart until what follows says whether a shuffle takes
		// the inputs one by one or this stage merges them.
		p := b.newStage("union", 1, nil)
		for _, in := range ins {
			if in.parts != nil && len(in.ops) == 0 && in.assigner < 0 {
				p.parts = append(p.parts, in.parts...) // a union of a union
				in.parts = nil
			} else {
				p.parts = append(p.parts, in)
			}
			p.bounded = p.bounded && in.bounded
		}
		return p, nil
	case *plan.Sort:
		p, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		if b.env.Cluster != nil {
			return nil, fmt.Errorf("ORDER BY and LIMIT are not supported in cluster mode: each process would sort only its share of the rows")
		}
		if len(n.Keys) > 0 && !p.bounded {
			return nil, fmt.Errorf("ORDER BY on an unbounded input is not supported: Flink allows it only on a time attribute, which is not supported yet; use a bounded source or drop ORDER BY")
		}
		p = b.newStage("sort", 1, nil, p)
		keys, off, lim := n.Keys, n.Offset, n.Limit
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			return exec.NewSortLimit(sortKeys(keys), off, lim, next), nil
		})
		return p, nil
	}
	return nil, fmt.Errorf("cannot execute plan node %T", n)
}

// join builds a regular join: both inputs re-keyed into one stage whose
// tasks each hold the rows of their keys (in cluster mode, through one
// shuffle topic: clusterJoin).
func (b *builder) join(n *plan.Join, special plan.Node) (*pipe, error) {
	left, err := b.build(n.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.build(n.Right)
	if err != nil {
		return nil, err
	}
	// A null-aware join is partitioned by its other keys; without any,
	// one task holds every row (as Flink's single distribution).
	lk, rk := n.PartitionKeys()
	par := b.env.Parallelism
	if len(lk) == 0 {
		par = 1
	}
	var p *pipe
	if b.env.Cluster != nil {
		p, err = b.clusterJoin("join", par, lk, rk,
			columnTypes(n.Left.Schema()), columnTypes(n.Right.Schema()), left, right)
		if err != nil {
			return nil, err
		}
	} else {
		p = b.newStage("join", par, nil, left, right)
		p.stage.InputKeys = [][]int{lk, rk}
	}
	kind := "join"
	switch special.(type) {
	case *plan.IntervalJoin:
		kind = "interval-join"
	case *plan.TemporalJoin:
		kind = "temporal-join"
	}
	var what plan.Node = n
	if special != nil {
		what = special
	}
	cfg := join.Config{ID: b.id(kind, opLabel(what), computes(what)), Kind: join.Kind(n.Kind), LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		NullSafe: n.NullSafe, NullAware: n.NullAware,
		Left: columnTypes(n.Left.Schema()), Right: columnTypes(n.Right.Schema()), TTL: b.env.StateTTL}
	residual, env := n.Residual, b.env.Expr
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID = fmt.Sprintf("%s/%d", cfg.ID, task)
		c.Next = next
		if residual != nil {
			pred, err := expr.CompilePredicate(residual, env)
			if err != nil {
				return nil, err
			}
			c.Residual = pred
		}
		switch s := special.(type) {
		case *plan.IntervalJoin:
			return join.NewInterval(join.IntervalConfig{Config: c, LeftTime: s.LeftTime,
				RightTime: s.RightTime, Lower: s.Lower, Upper: s.Upper})
		case *plan.TemporalJoin:
			return join.NewTemporal(join.TemporalConfig{Config: c, LeftTime: s.LeftTime, RightTime: s.RightTime})
		}
		return join.New(c)
	})
	return p, nil
}

// normalize builds a ChangelogNormalize: the upsert stream re-keyed by its
// primary key.
func (b *builder) normalize(n *plan.ChangelogNormalize) (*pipe, error) {
	cfg := normalize.Config{Keys: n.Keys, Types: columnTypes(n.Input.Schema())}
	return b.keyed("changelog-normalize", n, n.Keys, n.Input, func(id string, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID, c.Next = id, next
		return normalize.New(c)
	})
}

// rank builds a Top-N: the input re-keyed by the partition columns.
func (b *builder) rank(n *plan.Rank) (*pipe, error) {
	if n.Limit <= 0 {
		return nil, positioned(n.At, "%s() needs a bound on the row number in the enclosing query (WHERE rownum <= N, rownum = 1 or rownum BETWEEN M AND N): an unbounded row number is not supported", n.Type)
	}
	if n.Limit > maxTopN {
		return nil, positioned(n.At, "Top-N with N = %d: at most %d rows per partition are supported", n.Limit, maxTopN)
	}
	cfg := rank.Config{Partition: n.Partition, Limit: int(n.Limit), First: int(n.First), KeepAll: n.Input.Updating(),
		NoNumbers: n.NoNumbers, TTL: b.env.StateTTL, Type: rankType(n.Type), Types: columnTypes(n.Input.Schema())}
	for _, k := range n.Order {
		cfg.Order = append(cfg.Order, rank.SortKey{Col: k.Col, Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	return b.keyed("rank", n, n.Partition, n.Input, func(id string, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID, c.Next = id, next
		return rank.New(c)
	})
}

// over builds an OVER aggregation: the input re-keyed by the partition
// columns.
func (b *builder) over(n *plan.OverAggregate) (*pipe, error) {
	in := n.Input.Schema()
	cfg := over.Config{Partition: n.Partition, TimeCol: n.TimeCol,
		ProcTime: in.Columns[n.TimeCol].Type.TimeAttr == types.ProcTime, Rows: n.Rows, Preceding: n.Preceding,
		Calls: n.Calls, Types: columnTypes(in)}
	return b.keyed("over-agg", n, n.Partition, n.Input, func(id string, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID, c.Next = id, next
		var err error
		if c.Calls, err = agg.Bind(cfg.Calls); err != nil {
			return nil, err
		}
		return over.New(c)
	})
}

// metricGroup builds a metric group's operator, keyed by its keys. Its
// state is the group's (its name, keys and their types), whatever its
// version: each metric's state inside is matched by what it computes.
func (b *builder) metricGroup(n *plan.MetricGroup) (*pipe, error) {
	in := n.Input.Schema()
	var what strings.Builder
	fmt.Fprintf(&what, "MetricGroup(name=[%s], keys=[", n.Name)
	for i, k := range n.Keys {
		if i > 0 {
			what.WriteString(", ")
		}
		fmt.Fprintf(&what, "%s %s", in.Columns[k].Name, in.Columns[k].Type.WithoutTimeAttr())
	}
	what.WriteString("])")
	cfg := metricgroup.Config{Group: n.Name, Version: n.Version, Keys: n.Keys, TimeCol: n.TimeCol,
		Types: columnTypes(in), Publisher: b.env.Metrics}
	for _, k := range n.Keys {
		cfg.KeyNames = append(cfg.KeyNames, in.Columns[k].Name)
	}
	for _, m := range n.Metrics {
		cfg.Metrics = append(cfg.Metrics, metricgroup.Metric{Name: m.Name, Call: m.Call, Computes: m.Computes,
			Window: metricgroup.Window{Kind: m.Window.Kind, Size: m.Window.Size, Slide: m.Window.Slide}})
	}
	p, err := b.keyedAs("metric-group", n, what.String(), n.Keys, n.Input, func(id string, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID, c.Next = id, next
		var err error
		if c.Calls, err = agg.Bind(n.Calls); err != nil {
			return nil, err
		}
		return metricgroup.New(c)
	})
	if err != nil {
		return nil, err
	}
	// Its state's parts are its metrics, each matched by what it
	// computes: a hot update reports which start from zero.
	e := &b.manifest.Entries[len(b.manifest.Entries)-1]
	for _, m := range n.Metrics {
		if !slices.Contains(e.Parts, m.Computes) {
			e.Parts = append(e.Parts, m.Computes)
		}
	}
	return p, nil
}

// keyed builds an operator over input re-keyed by keys (into one task
// when there are none): mk makes it for each task, given the task's
// operator ID (the name of its state).
func (b *builder) keyed(name string, n plan.Node, keys []int, input plan.Node, mk func(id string, next exec.Operator) (exec.Operator, error)) (*pipe, error) {
	return b.keyedAs(name, n, computes(n), keys, input, mk)
}

// keyedAs is keyed for an operator whose state identity is what.
func (b *builder) keyedAs(name string, n plan.Node, what string, keys []int, input plan.Node, mk func(id string, next exec.Operator) (exec.Operator, error)) (*pipe, error) {
	p, err := b.build(input)
	if err != nil {
		return nil, err
	}
	par := 1
	if len(keys) > 0 {
		par = b.env.Parallelism
	}
	if p, err = b.exchange(name, par, keys, input, p); err != nil {
		return nil, err
	}
	id := b.id(name, opLabel(n), what)
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		return mk(fmt.Sprintf("%s/%d", id, task), next)
	})
	return p, nil
}

// columnRefs says, for each of exprs, which input column it reads as it
// is, or -1 when it computes something: exec.Calc copies those columns.
func columnRefs(exprs []expr.Node) []int {
	out := make([]int, len(exprs))
	for i, e := range exprs {
		out[i] = -1
		if c, ok := e.(*expr.Column); ok {
			out[i] = c.Index
		}
	}
	return out
}

// columnTypes lists the types of a schema's columns.
func columnTypes(s types.Schema) []types.Type {
	out := make([]types.Type, s.Len())
	for i, c := range s.Columns {
		out[i] = c.Type
	}
	return out
}

func sortKeys(keys []plan.SortKey) []exec.SortKey {
	out := make([]exec.SortKey, len(keys))
	for i, k := range keys {
		out[i] = exec.SortKey{Col: k.Col, Desc: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out
}

func valuesRows(rows [][]types.Value) []types.Row {
	out := make([]types.Row, len(rows))
	for i, r := range rows {
		out[i] = types.Row{Vals: r}
	}
	return out
}

// scan starts the pipe of a scan: a source stage of its own, or a branch
// of the source stage its group shares, made by the group's first scan.
func (b *builder) scan(n *plan.Scan) (*pipe, error) {
	g := b.shared[n]
	if g == nil {
		return b.source(n)
	}
	if g.trunk == nil {
		// One source for all: it reads and computes the columns any of
		// them uses.
		s := *n
		s.Used, s.Table.Read = g.used, g.read
		p, err := b.source(&s)
		if err != nil {
			return nil, err
		}
		g.bounded = p.bounded
		g.trunk = b.close(p)
	}
	g.branches++
	st := &exec.Stage{Name: n.Table.Name, ID: g.trunk.ID + "/branch-" + strconv.Itoa(g.branches), Trunk: g.trunk}
	return &pipe{stage: st, assigner: -1, bounded: g.bounded}, nil
}

// source starts a source stage reading n's table, with the computed
// columns and the watermark assigner chained after it.
func (b *builder) source(n *plan.Scan) (*pipe, error) {
	src, err := b.env.Connectors.Source(n.Table, b.env.ConnEnv)
	if err == nil && b.env.ShareSource != nil && b.env.Cluster == nil {
		src, err = b.env.ShareSource(n.Table, src, n.Updating())
	}
	if err != nil {
		return nil, &TableError{Table: n.Table.Name, Err: err, HintAt: n.HintAt}
	}
	st := &exec.Stage{Name: n.Table.Name, ID: b.id("source", "source "+n.Table.Name, connector.SourceIdentity(n.Table, src)), Source: src,
		IdleTimeout: time.Duration(n.IdleTimeoutMillis) * time.Millisecond}
	if b.env.Cluster != nil {
		if st.Parts, err = b.env.Cluster.Parts(n.Table.Name, st.ID, src); err != nil {
			return nil, &TableError{Table: n.Table.Name, Err: err, HintAt: n.HintAt}
		}
	}
	p := &pipe{stage: st, assigner: -1, bounded: src.Bounded()}
	// Physical row → full row, when there are computed columns.
	identity := len(n.Computed) == n.Table.Schema.Len()
	for i, c := range n.Computed {
		col, ok := c.(*expr.Column)
		identity = identity && ok && col.Index == i
	}
	if !identity {
		computed := n.Computed
		if n.Used != nil {
			// Columns the query does not read are NULL, not computed.
			computed = slices.Clone(computed)
			for i, u := range n.Used {
				if !u {
					computed[i] = &expr.Literal{T: computed[i].Type()}
				}
			}
		}
		env := b.env.Expr
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			c := &exec.Calc{Next: next, Cols: columnRefs(computed)}
			for _, e := range computed {
				ev, err := expr.Compile(e, env)
				if err != nil {
					return nil, err
				}
				c.Projs = append(c.Projs, exec.RowFunc(ev))
			}
			return c, nil
		})
	}
	switch {
	case n.Watermark != nil:
		wm, env, now := n.Watermark, b.env.Expr, b.env.Expr.Now
		p.assigner = len(p.ops)
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			ev, err := expr.Compile(wm, env)
			if err != nil {
				return nil, err
			}
			return &exec.WatermarkAssigner{Expr: exec.RowFunc(ev), Now: now, Next: next}, nil
		})
	case n.ProctimeCol >= 0:
		now := b.env.Expr.Now
		p.assigner = len(p.ops)
		p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
			return &exec.WatermarkAssigner{ProcTime: true, Now: now, Next: next}, nil
		})
	}
	// The scan, its computed columns and its watermark are one operator,
	// as EXPLAIN shows them.
	b.mark(p, 0, opLabel(n), n.Table.Name).Source = true
	return p, nil
}

// suppress builds the suppression of a ruleset's alerts: re-keyed by
// the key set. Its state is named by what it means (plan.Suppress's
// Identity), so that a new version of the ruleset's rules, or another
// interval, keeps it.
func (b *builder) suppress(n *plan.Suppress) (*pipe, error) {
	p, err := b.build(n.Input)
	if err != nil {
		return nil, err
	}
	if p, err = b.exchange("suppress", b.env.Parallelism, n.Keys, n.Input, p); err != nil {
		return nil, err
	}
	id := b.id("suppress", opLabel(n), n.Identity())
	cfg := suppress.Config{Keys: n.Keys, Interval: n.Interval, TimeCol: n.TimeCol, CountCol: n.CountCol, TTL: b.env.StateTTL}
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID, c.Next = fmt.Sprintf("%s/%d", id, task), next
		return suppress.New(c)
	})
	return p, nil
}

// ruleset builds a ruleset's operator, chained after its input: its
// rules' conditions are evaluated together (filterset), once a row.
func (b *builder) ruleset(n *plan.Ruleset) (*pipe, error) {
	p, err := b.build(n.Input)
	if err != nil {
		return nil, err
	}
	var fp *filterset.Plan
	if len(n.Rules) > 0 {
		conds := make([]expr.Node, len(n.Rules))
		for i, r := range n.Rules {
			conds[i] = r.Cond
		}
		if fp, err = filterset.NewPlan(conds, n.Input.Schema(), b.env.Expr); err != nil {
			return nil, err
		}
		fp.Budget, fp.Name, fp.NoMultiPattern = b.env.FilterBudget, "ruleset "+n.Name, b.env.NoMultiPattern
	}
	rules := make([]filterset.RulesetRule, len(n.Rules))
	for i, r := range n.Rules {
		rules[i] = filterset.RulesetRule{Name: types.StringValue(r.Name), Severity: slices.Index(plan.Severities, r.Severity), Tags: r.Tags}
	}
	name, version, needed, first, except, env := n.Name, n.Version, n.Needed(), n.Match == "FIRST", n.Except, b.env.Expr
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		op := &filterset.Ruleset{Plan: fp, Name: name, Version: version, Needed: needed, First: first, Rules: rules, Next: next}
		if except != nil {
			pred, err := expr.CompilePredicate(except, env)
			if err != nil {
				return nil, err
			}
			op.Except = exec.RowPredicate(pred)
		}
		return op, nil
	})
	return p, nil
}
