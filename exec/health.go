package exec

import (
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// Per-operator metrics.
//
// The operators of a job's plan (its nodes, as EXPLAIN prints them) are
// measured at the points of each task's chain between them: a Meter,
// which physical puts in front of the first exec operator of every plan
// node and behind its last, counts the rows and keeps the last watermark
// that pass it. The rows that pass the point in front of a node are its
// rows in, those that pass the point behind it its rows out (the next
// node's in, within one chain). A meter adds to its counter once per
// batch; nothing is counted per row and no lock is taken on the way.
// Readers (Metrics.Health) sum the meters of an operator's tasks.
//
// A task's back pressure is the time its sends into a full inbox of the
// next stage blocked; the send tries first without blocking, so only a
// send that waits reads the clock.

// OperatorInfo names an operator of a job's plan for its metrics. One
// value is shared by the meters of all the operator's tasks.
type OperatorInfo struct {
	// Index numbers the job's operators in the order the plan was built
	// in (sources first), from 1; Health lists them in that order.
	Index int
	// Kind is the plan node as EXPLAIN names it: TableSourceScan, Calc,
	// WindowAggregate, GroupAggregate, Join, Sink...
	Kind string
	// Table is a source's or a sink's table.
	Table string
	// Source marks the scan of a source: its watermark is the one it
	// generates (the one that passes behind it), and its consumer lag is
	// its readers'.
	Source bool
	// Sink marks a sink: its rows out are the rows it wrote, its rows in.
	Sink bool
}

// Name returns the operator's name, unique in its job: its kind and its
// index, as "WindowAggregate[3]".
func (o *OperatorInfo) Name() string { return o.Kind + "[" + strconv.Itoa(o.Index) + "]" }

// flow is what passed one point of one task's chain.
type flow struct {
	rows atomic.Int64
	wm   atomic.Int64 // the last watermark; MinWatermark before any
}

// Meter is a point of a task's chain between two operators of the plan:
// it counts the rows and keeps the last watermark that pass it, as the
// output of the operators Out and the input of the operators In (more
// than one of each where a node has no exec operator of its own, as a
// source without computed columns), and passes everything on to Next.
type Meter struct {
	Next    Operator
	Out, In []*OperatorInfo

	f flow
}

// Open implements Operator: the meter joins the job's metrics, and the
// operators downstream open knowing the operator of the plan they belong
// to (for the state they report: see Context.StateGauge).
func (m *Meter) Open(ctx *Context) error {
	m.f.wm.Store(MinWatermark)
	if ctx == nil || ctx.Metrics == nil {
		return m.Next.Open(ctx)
	}
	op := ctx.Metrics.attachFlow(&m.f, m.Out, m.In, ctx.task)
	if op == nil {
		return m.Next.Open(ctx)
	}
	// The operators of one task open one after the other on one
	// goroutine, each meter naming the operator behind it while those
	// open (a copy of the context each would cost memory per rule).
	prev := ctx.op
	ctx.op = op
	err := m.Next.Open(ctx)
	ctx.op = prev
	return err
}

// count counts n rows that pass the meter without its Process (a tee
// that hands a Calc's rows past it).
func (m *Meter) count(n int) {
	if n > 0 {
		m.f.rows.Add(int64(n))
	}
}

// Process implements Operator.
func (m *Meter) Process(b *types.Batch) error {
	if n := len(b.Rows); n > 0 {
		m.f.rows.Add(int64(n))
	}
	return m.Next.Process(b)
}

// ProcessInput implements MultiInput: a meter in front of a join passes
// the input's number on.
func (m *Meter) ProcessInput(input int, b *types.Batch) error {
	if n := len(b.Rows); n > 0 {
		m.f.rows.Add(int64(n))
	}
	if mi, ok := m.Next.(MultiInput); ok {
		return mi.ProcessInput(input, b)
	}
	return m.Next.Process(b)
}

// Watermark implements Operator.
func (m *Meter) Watermark(wm int64) error {
	m.f.wm.Store(wm)
	return m.Next.Watermark(wm)
}

// Finish implements Operator.
func (m *Meter) Finish() error { return m.Next.Finish() }

// Close implements Operator.
func (m *Meter) Close() error { return m.Next.Close() }

// SetIdle implements Output, so that a meter can stand in front of a
// chain's edge.
func (m *Meter) SetIdle(idle bool) error {
	if o, ok := m.Next.(Output); ok {
		return o.SetIdle(idle)
	}
	return nil
}

// taskStats is what a task tells of itself: how long its sends blocked
// on a full inbox downstream (back pressure), and its source reader's
// backlog.
type taskStats struct {
	// blocked is the time the task's sends blocked, in nanoseconds;
	// blockedSince when the send blocked now began (Unix nanoseconds; 0:
	// none blocks).
	blocked, blockedSince atomic.Int64
	// idle: the task told the next stage that it is idle, whose
	// watermark then leaves it out.
	idle atomic.Bool

	// Guarded by Metrics.mu.
	start     time.Time
	reader    connector.Backlog // set while a source task reads
	sampledAt time.Time
	sampled   int64 // blocked at sampledAt
	ratio     float64
	haveRatio bool
	ended     bool
}

// BackPressureWindow is the interval over which a task's back pressure
// is measured: the share of the last interval of at least this long (of
// the time since the task started, before the first) that the task spent
// blocked sending into a full inbox downstream.
const BackPressureWindow = 5 * time.Second

// backPressure returns the task's back pressure at now; Metrics.mu is
// held.
func (t *taskStats) backPressure(now time.Time) float64 {
	if t.ended {
		return 0
	}
	blocked := t.blocked.Load()
	if since := t.blockedSince.Load(); since > 0 {
		blocked += max(now.UnixNano()-since, 0)
	}
	if t.sampledAt.IsZero() {
		t.sampledAt = t.start
	}
	d := now.Sub(t.sampledAt)
	if d >= BackPressureWindow || !t.haveRatio && d > 0 {
		r := float64(blocked-t.sampled) / float64(d)
		r = min(max(r, 0), 1)
		if d >= BackPressureWindow {
			t.sampledAt, t.sampled = now, blocked
			t.haveRatio = true
		}
		t.ratio = r
	}
	return t.ratio
}

// meterEntry says that a flow of task t is the input (or the output)
// of operator info. The job's Metrics keep one per role of a flow in a
// flat list, which costs less memory than a structure per operator (a
// statement set of rules has thousands of operators).
type meterEntry struct {
	f    *flow
	t    *taskStats
	info *OperatorInfo
	out  bool
}

// taskFlow is a flow and the task it belongs to (nil if unknown).
type taskFlow struct {
	f *flow
	t *taskStats
}

// gaugeEntry is a StateGauge of a task of operator info.
type gaugeEntry struct {
	g    *StateGauge
	info *OperatorInfo
}

// attachFlow registers f as the output of the operators out and the
// input of in, run by task t, and returns the operator whose input it is
// (the last of in), nil if none.
func (m *Metrics) attachFlow(f *flow, out, in []*OperatorInfo, t *taskStats) *OperatorInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, info := range out {
		m.meters = append(m.meters, meterEntry{f: f, t: t, info: info, out: true})
	}
	var last *OperatorInfo
	for _, info := range in {
		m.meters = append(m.meters, meterEntry{f: f, t: t, info: info})
		if info.Sink {
			m.meters = append(m.meters, meterEntry{f: f, t: t, info: info, out: true})
		}
		last = info
	}
	return last
}

// newTask returns the stats of a new task of the graph's run; m may be
// nil.
func (m *Metrics) newTask() *taskStats {
	if m == nil {
		return nil
	}
	return &taskStats{start: time.Now()}
}

// readerOpened notes that task t reads through r, whose backlog the
// task's source operator reports.
func (m *Metrics) readerOpened(t *taskStats, r connector.Reader) {
	bl, ok := r.(connector.Backlog)
	if m == nil || t == nil || !ok {
		return
	}
	m.mu.Lock()
	t.reader = bl
	m.mu.Unlock()
}

// taskEnded notes that task t ended: it no longer blocks nor reads.
func (m *Metrics) taskEnded(t *taskStats) {
	if m == nil || t == nil {
		return
	}
	m.mu.Lock()
	t.ended, t.reader = true, nil
	m.mu.Unlock()
}

// newRun folds what the meters of an earlier run of the graph counted
// into the operators' totals and forgets the meters, gauges and tasks:
// the run that starts has its own. m.mu is held.
func (m *Metrics) newRun() {
	for _, e := range m.meters {
		if m.base == nil {
			m.base = map[*OperatorInfo]*[2]int64{}
		}
		b := m.base[e.info]
		if b == nil {
			b = new([2]int64)
			m.base[e.info] = b
		}
		if e.out {
			b[1] += e.f.rows.Load()
		} else {
			b[0] += e.f.rows.Load()
		}
	}
	m.meters, m.opGauges = nil, nil
}

// Health is a snapshot of a job's metrics.
type Health struct {
	// At is when the snapshot was taken.
	At time.Time
	// The job's counters (see Metrics).
	RowsIn, RowsOut, LateRows, Malformed, SuppressedAlerts int64
	// Reconnects and SinkDropped: see Metrics.
	Reconnects, SinkDropped int64
	// Checkpoints committed; LastCheckpoint is when the last committed
	// (zero: none yet) and LastCheckpointDuration how long it took, from
	// the request of its barriers to its commit.
	Checkpoints            int64
	LastCheckpoint         time.Time
	LastCheckpointDuration time.Duration
	// StateKeys and StateBytes are the state held in memory by the
	// operators whose state grows with their keys (see StateGauge).
	StateKeys, StateBytes int64
	// ConsumerLag is the sum of the sources' consumer lags, when any
	// source knows its own (HasConsumerLag).
	ConsumerLag    int64
	HasConsumerLag bool
	// MaxWatermarkLag and MaxBackPressure are the largest of the
	// operators' (HasWatermarkLag: some operator has a watermark).
	MaxWatermarkLag time.Duration
	HasWatermarkLag bool
	MaxBackPressure float64
	// Operators are the job's operators in the order the plan was built
	// in (sources first, sinks last).
	Operators []OperatorHealth
}

// OperatorHealth is a snapshot of the metrics of one operator of a job,
// summed over its tasks.
type OperatorHealth struct {
	// Name, Kind and Table are the operator's OperatorInfo.
	Name, Kind, Table string
	// Tasks is the number of its tasks in the current (or last) run.
	Tasks int
	// RowsIn and RowsOut are the rows it took and passed on; a source's
	// rows in are those it read, a sink's rows out those it wrote.
	RowsIn, RowsOut int64
	// Watermark is the lowest event-time watermark among its tasks that
	// have one and have not ended, leaving out those idle unless all are
	// (microseconds since the epoch): the watermark it received, or for
	// a source the one it generates.
	// WatermarkLag is the wall clock at the snapshot minus it. Without
	// such a task HasWatermark is false and both are zero.
	Watermark    int64
	WatermarkLag time.Duration
	HasWatermark bool
	// BackPressure is the largest share of time any of its tasks spent
	// blocked sending to a full inbox downstream, over the last
	// BackPressureWindow (0 to 1). A task's operators share its share.
	BackPressure float64
	// StateKeys and StateBytes are the state its tasks hold in memory,
	// for operators whose state grows with their keys (HasState).
	StateKeys, StateBytes int64
	HasState              bool
	// ConsumerLag, for a source whose readers know it (Kafka), is the
	// number of records of its partitions not read yet: the sum over its
	// partitions of the log's end (the high watermark of the last fetch)
	// minus the next offset to read.
	ConsumerLag    int64
	HasConsumerLag bool
}

// lowestWatermark returns the lowest watermark of flows that have one
// (not ended), of the tasks that are not idle only if busy.
func lowestWatermark(flows []taskFlow, busy bool) (wm int64, ok bool) {
	for _, tf := range flows {
		if busy && tf.t != nil && tf.t.idle.Load() {
			continue
		}
		w := tf.f.wm.Load()
		if w == MinWatermark || w == MaxWatermark {
			continue
		}
		if !ok || w < wm {
			wm, ok = w, true
		}
	}
	return wm, ok
}

// Health returns a snapshot of the job's metrics, with the lags taken
// at now (the wall clock).
func (m *Metrics) Health(now time.Time) Health {
	h := Health{At: now, RowsIn: m.RowsIn.Load(), RowsOut: m.RowsOut.Load(), LateRows: m.LateRows.Load(),
		Malformed: m.SkippedRecs.Load(), SuppressedAlerts: m.SuppressedAlerts.Load(), Checkpoints: m.Checkpoints.Load(),
		Reconnects: m.Reconnects.Load(), SinkDropped: m.SinkDropped.Load(),
		LastCheckpointDuration: time.Duration(m.CheckpointDuration.Load()) * time.Microsecond}
	if at := m.LastCheckpoint.Load(); at > 0 {
		h.LastCheckpoint = time.UnixMicro(at)
	}
	h.StateKeys, h.StateBytes = m.State()
	m.mu.Lock()
	defer m.mu.Unlock()

	// The operators, with their entries, in the order of the plan.
	type opView struct {
		info      *OperatorInfo
		ins, outs []taskFlow
		tasks     []*taskStats
		o         OperatorHealth
	}
	byInfo := map[*OperatorInfo]*opView{}
	var ops []*opView
	view := func(info *OperatorInfo) *opView {
		v := byInfo[info]
		if v == nil {
			v = &opView{info: info}
			byInfo[info] = v
			ops = append(ops, v)
		}
		return v
	}
	for info := range m.base {
		view(info)
	}
	for _, e := range m.meters {
		v := view(e.info)
		if e.out {
			v.outs = append(v.outs, taskFlow{e.f, e.t})
		} else {
			v.ins = append(v.ins, taskFlow{e.f, e.t})
		}
		if e.t != nil && !slices.Contains(v.tasks, e.t) {
			v.tasks = append(v.tasks, e.t)
		}
	}
	for _, ge := range m.opGauges {
		v := view(ge.info)
		v.o.StateKeys += ge.g.keys.Load()
		v.o.StateBytes += ge.g.bytes.Load()
		v.o.HasState = true
	}
	slices.SortStableFunc(ops, func(a, b *opView) int { return a.info.Index - b.info.Index })

	nowMicros := now.UnixMicro()
	h.Operators = make([]OperatorHealth, 0, len(ops))
	for _, v := range ops {
		o := v.o
		o.Name, o.Kind, o.Table, o.Tasks = v.info.Name(), v.info.Kind, v.info.Table, len(v.tasks)
		if b := m.base[v.info]; b != nil {
			o.RowsIn, o.RowsOut = b[0], b[1]
		}
		for _, tf := range v.ins {
			o.RowsIn += tf.f.rows.Load()
		}
		for _, tf := range v.outs {
			o.RowsOut += tf.f.rows.Load()
		}
		wms := v.ins
		if v.info.Source {
			wms = v.outs
		}
		o.Watermark, o.HasWatermark = lowestWatermark(wms, true)
		if !o.HasWatermark {
			o.Watermark, o.HasWatermark = lowestWatermark(wms, false)
		}
		if o.HasWatermark {
			o.WatermarkLag = time.Duration(nowMicros-o.Watermark) * time.Microsecond
			if !h.HasWatermarkLag || o.WatermarkLag > h.MaxWatermarkLag {
				h.MaxWatermarkLag, h.HasWatermarkLag = o.WatermarkLag, true
			}
		}
		for _, t := range v.tasks {
			o.BackPressure = max(o.BackPressure, t.backPressure(now))
			if v.info.Source && t.reader != nil {
				if n, ok := t.reader.Backlog(); ok {
					o.ConsumerLag += n
					o.HasConsumerLag = true
				}
			}
		}
		h.MaxBackPressure = max(h.MaxBackPressure, o.BackPressure)
		if o.HasConsumerLag {
			h.ConsumerLag += o.ConsumerLag
			h.HasConsumerLag = true
		}
		h.Operators = append(h.Operators, o)
	}
	return h
}
