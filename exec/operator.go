package exec

import (
	"context"
	"math"
	"time"

	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Watermark bounds.
const (
	MinWatermark int64 = math.MinInt64
	// MaxWatermark is the watermark of an exhausted input: every window fires.
	MaxWatermark int64 = math.MaxInt64
)

// Operator is a push-based physical operator. Each operator is built with its
// downstream operator and forwards its output by calling it.
type Operator interface {
	// Open prepares the operator; it is called once before any other call.
	Open(ctx *Context) error
	// Process consumes a batch of rows. The batch belongs to the caller
	// and is read-only: an operator must not change its rows, their
	// values or its slice of rows (filter into a batch of its own), nor
	// keep any of them past the call (copy what it keeps, types.CopyRow).
	// A source read once for several users (Stage.Trunk) hands the same
	// batch to each of them in turn.
	Process(b *types.Batch) error
	// Watermark signals that no more rows with an event time at or before
	// wm are expected (rows that still arrive are late). Operators fire
	// what became complete and forward the watermark.
	Watermark(wm int64) error
	// Finish signals the end of input: flush everything and forward.
	Finish() error
	// Close releases resources; it is called once, also after a failure.
	Close() error
}

// Timed is implemented by operators that act as processing time passes,
// input or not: a mini-batch that must flush by its deadline, state that
// expires. The task that drives the operator calls Tick between batches,
// about every TickEvery (the shortest any operator of its chain asks for).
type Timed interface {
	TickEvery() time.Duration
	Tick() error
}

// Context is what a running operator may use: cancellation, the task's
// identity, state, clock and counters. It is per task (per parallel
// instance), never process-wide.
type Context struct {
	Ctx context.Context
	// Task is the index of this parallel instance of the stage.
	Task int
	// State gives each stateful operator its store, by operator ID.
	State state.Backend
	// Now returns processing time in microseconds since the epoch.
	Now func() int64
	// Metrics collects job counters; may be nil in tests.
	Metrics *Metrics
	// Checkpoints says whether the job takes checkpoints.
	Checkpoints bool
	// Stopping, if set, reports whether the job is being stopped rather
	// than having reached the end of its input: a Finish then is a
	// stop, and operators keep what is incomplete (open windows) in
	// their state, for the run that takes over (a rebalance).
	Stopping func() bool

	// task is the stats of the task the operator runs in; op the
	// operator of the plan it belongs to (see Meter). Either may be nil.
	task *taskStats
	op   *OperatorInfo
	// source: the task is a source task (a sink in it counts the time
	// its writes take as the task's back pressure).
	source bool
}

// Stopped reports whether the job is being stopped (see Stopping).
func (c *Context) Stopped() bool { return c != nil && c.Stopping != nil && c.Stopping() }

// Passthrough is an Operator that forwards every call to Next. Embed it to
// implement only what differs.
type Passthrough struct{ Next Operator }

// Open opens downstream.
func (p *Passthrough) Open(ctx *Context) error { return p.Next.Open(ctx) }

// Process forwards b.
func (p *Passthrough) Process(b *types.Batch) error { return p.Next.Process(b) }

// Watermark forwards wm.
func (p *Passthrough) Watermark(wm int64) error { return p.Next.Watermark(wm) }

// Finish forwards the end of input.
func (p *Passthrough) Finish() error { return p.Next.Finish() }

// Close closes downstream.
func (p *Passthrough) Close() error { return p.Next.Close() }
