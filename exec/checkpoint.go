package exec

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluicesql/sluice/state"
)

// Checkpointer is implemented by operators that keep state. At a checkpoint
// barrier the task that drives the operator calls Checkpoint between batches:
// the operator writes what changed since the last checkpoint into its
// state.Store. The writes become durable when the whole checkpoint
// completes (state.Backend.Commit), together with the source positions.
type Checkpointer interface {
	Checkpoint() error
}

// BarrierCheckpointer is a Checkpointer that needs the ID of the
// checkpoint it takes part in (-1 for the final snapshot at the end of a
// job): a sink that must tell a late notice of an older checkpoint from
// the notice of its latest one.
type BarrierCheckpointer interface {
	CheckpointBarrier(id int64) error
}

// CheckpointListener is implemented by operators (sinks) that must learn
// when a checkpoint completed, e.g. to commit a transaction prepared at the
// barrier.
type CheckpointListener interface {
	CheckpointComplete(id int64) error
}

// Releaser is implemented by operators (sinks) that hold output back
// between a barrier and the completion of its checkpoint. After every task
// of a job ended normally, Release hands it over before the final commit.
type Releaser interface {
	Release() error
}

// BarrierOutput is implemented by edges that carry checkpoint barriers.
// A graph takes checkpoints only when every edge does.
type BarrierOutput interface {
	Barrier(id int64) error
}

// Chain is a task's operators, built by Stage.Build.
type Chain struct {
	// Head receives the task's input.
	Head Operator
	// Ops are the chain's operators, head first (the edge excluded): the
	// runtime snapshots those that are Checkpointers at every barrier.
	Ops []Operator
	// Assigner is the source chain's watermark assigner, if any.
	Assigner *WatermarkAssigner
}

// snapshot checkpoints the chain's stateful operators, upstream first, for
// checkpoint id (-1: the final snapshot).
func (c *Chain) snapshot(id int64) error {
	for _, op := range c.Ops {
		if bc, ok := op.(BarrierCheckpointer); ok {
			if err := bc.CheckpointBarrier(id); err != nil {
				return err
			}
			continue
		}
		if cp, ok := op.(Checkpointer); ok {
			if err := cp.Checkpoint(); err != nil {
				return err
			}
		}
	}
	return nil
}

// tickEvery is how often the chain's Timed operators want Tick; 0: none.
func (c *Chain) tickEvery() time.Duration {
	var every time.Duration
	for _, op := range c.Ops {
		if t, ok := op.(Timed); ok {
			if d := t.TickEvery(); d > 0 && (every == 0 || d < every) {
				every = d
			}
		}
	}
	return every
}

// tick calls the chain's Timed operators, upstream first.
func (c *Chain) tick() error {
	for _, op := range c.Ops {
		if t, ok := op.(Timed); ok {
			if err := t.Tick(); err != nil {
				return err
			}
		}
	}
	return nil
}

// notify tells the chain's listeners that checkpoint id completed.
func (c *Chain) notify(id int64) error {
	for _, op := range c.Ops {
		if l, ok := op.(CheckpointListener); ok {
			if err := l.CheckpointComplete(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// listens reports whether an operator of the chain is a
// CheckpointListener.
func (c *Chain) listens() bool {
	for _, op := range c.Ops {
		if _, ok := op.(CheckpointListener); ok {
			return true
		}
	}
	return false
}

// release lets the chain's Releasers hand over what they hold.
func (c *Chain) release() error {
	for _, op := range c.Ops {
		if r, ok := op.(Releaser); ok {
			if err := r.Release(); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshotOnFinish is the edge of a task that takes part in checkpoints:
// when the end of input reaches it, every operator of the chain has
// finished (fired its windows, flushed), and the chain is snapshotted
// BEFORE the end of input goes downstream. Otherwise a downstream task
// could end, and a checkpoint complete without this task's final state.
type snapshotOnFinish struct {
	Output
	chain *Chain
}

func (s *snapshotOnFinish) Finish() error {
	if err := s.chain.snapshot(-1); err != nil {
		return err
	}
	return s.Output.Finish()
}

// Barrier implements BarrierOutput.
func (s *snapshotOnFinish) Barrier(id int64) error {
	b, ok := s.Output.(BarrierOutput)
	if !ok {
		return fmt.Errorf("output %T cannot carry checkpoint barriers", s.Output)
	}
	return b.Barrier(id)
}

// recordFinal keeps an ended partition's position for the next checkpoint.
func (c *coordinator) recordFinal(key string, offset int64) {
	c.mu.Lock()
	c.finals[key] = offset
	c.mu.Unlock()
}

// applyFinals moves the ended partitions' positions into the positions of
// the checkpoint being started.
func (c *coordinator) applyFinals() {
	c.mu.Lock()
	for k, v := range c.finals {
		c.positions[k] = v
	}
	clear(c.finals)
	c.mu.Unlock()
}

// PositionKey names a source partition in the positions a checkpoint
// records: the source stage's ID and the connector's partition number.
func PositionKey(stageID string, part int) string { return fmt.Sprintf("%s/%d", stageID, part) }

// coordinator triggers checkpoints and completes them. It runs one
// checkpoint at a time: each source task injects barrier id after its
// current batch and records its position; the barrier flows through every
// inbox (aligned: a sender that delivered it waits for the others); each
// terminal task acknowledges it; then the backend commits the stores'
// writes with the positions, and the chains' listeners are told.
//
// It has no goroutine of its own (a server runs thousands of jobs): a
// timer's callback starts each checkpoint, and the goroutine of the
// terminal task whose acknowledgement (or end) completes it commits it,
// then arms the timer for the next.
type coordinator struct {
	interval time.Duration
	backend  state.Backend
	job      string       // whose positions the checkpoints commit
	metrics  *Metrics     // counts the checkpoints; may be nil
	sources  []chan int64 // one per source task
	// wakes wake the source tasks (sources) in a read, and completeWakes
	// those that completes deliver to (nil for an inbox task, which
	// waits for its complete channel).
	wakes, completeWakes []func()
	need                 int // terminal tasks, numbered 0..need-1
	// fail fails the job with the error of a commit that a timer's
	// callback or an ended task made.
	fail func(error)
	ctx  context.Context

	// completes delivers completed checkpoint IDs to the tasks, whose
	// chains' listeners (sinks) hear of them on their own goroutines.
	completes []chan int64

	mu        sync.Mutex
	positions map[string]int64
	finals    map[string]int64 // ended partitions, for the next checkpoint
	completed int64
	// The checkpoint under way (id 0: none), when its barriers were
	// requested, and which terminal tasks acknowledged it or ended (an
	// ended task has nothing left to snapshot).
	id, last int64
	started  time.Time
	acked    []bool
	ended    []bool
	timer    *time.Timer
	stopped  bool

	running sync.Mutex // held while a checkpoint is being completed
	// trigger is held while a checkpoint starts: its ended partitions'
	// positions are attached and its barriers requested.
	trigger sync.Mutex
}

func newCoordinator(interval time.Duration, backend state.Backend, job string, metrics *Metrics) *coordinator {
	return &coordinator{interval: interval, backend: backend, job: job, metrics: metrics,
		positions: map[string]int64{}, finals: map[string]int64{}}
}

// recordPosition is called by a source task at a barrier.
func (c *coordinator) recordPosition(key string, offset int64) {
	c.mu.Lock()
	c.positions[key] = offset
	c.mu.Unlock()
}

// terminal numbers a new terminal task.
func (c *coordinator) terminal() int {
	c.need++
	return c.need - 1
}

// start arms the timer of the first checkpoint; ctx is the job's, and
// fail fails it.
func (c *coordinator) start(ctx context.Context, fail func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx, c.fail = ctx, fail
	c.acked, c.ended = make([]bool, c.need), make([]bool, c.need)
	c.timer = time.AfterFunc(c.interval, c.tick)
}

// stop ends the checkpoints: none starts from here on, and stop waits
// for a commit under way.
func (c *coordinator) stop() {
	c.mu.Lock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.running.Lock()
	c.running.Unlock()
}

// tick starts the next checkpoint: it asks every source task for its
// barrier.
func (c *coordinator) tick() {
	c.trigger.Lock() // see SourceTask.end
	c.mu.Lock()
	if c.stopped || c.ctx.Err() != nil {
		c.mu.Unlock()
		c.trigger.Unlock()
		return
	}
	c.last++
	id := c.last
	c.id, c.started = id, time.Now()
	clear(c.acked)
	c.mu.Unlock()
	c.applyFinals()
	for i, ch := range c.sources {
		select {
		case ch <- id:
			c.wakes[i]()
		default: // a finished or busy task; finished ones count as aligned
		}
	}
	c.trigger.Unlock()
	// Every terminal task may have ended already.
	c.mu.Lock()
	id, started, ok := c.claim()
	c.mu.Unlock()
	if ok {
		if err := c.complete(id, started); err != nil {
			c.fail(err)
		}
	}
}

// claim reports whether the checkpoint under way is complete, every
// terminal task having acknowledged it or ended, and if so takes it off
// (the caller commits it). c.mu is held.
func (c *coordinator) claim() (id int64, started time.Time, ok bool) {
	if c.id == 0 || c.stopped {
		return 0, time.Time{}, false
	}
	for k := range c.acked {
		if !c.acked[k] && !c.ended[k] {
			return 0, time.Time{}, false
		}
	}
	id, started = c.id, c.started
	c.id = 0
	return id, started, true
}

// ack is terminal task k acknowledging checkpoint id. The one that
// completes the checkpoint commits it, on the caller's goroutine.
func (c *coordinator) ack(k int, id int64) error {
	c.mu.Lock()
	if id != c.id {
		c.mu.Unlock()
		return nil
	}
	c.acked[k] = true
	id, started, ok := c.claim()
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return c.complete(id, started)
}

// taskEnded is terminal task k ending: it stands for every later
// checkpoint, so the others need not wait for it.
func (c *coordinator) taskEnded(k int) {
	c.mu.Lock()
	c.ended[k] = true
	id, started, ok := c.claim()
	c.mu.Unlock()
	if ok {
		if err := c.complete(id, started); err != nil {
			c.fail(err)
		}
	}
}

// complete commits checkpoint id, whose barriers were requested at
// started, and arms the timer of the next one.
func (c *coordinator) complete(id int64, started time.Time) error {
	c.running.Lock()
	defer c.running.Unlock()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	pos := make(map[string]int64, len(c.positions))
	for k, v := range c.positions {
		pos[k] = v
	}
	c.mu.Unlock()
	if err := c.backend.Commit(c.job, pos); err != nil {
		return fmt.Errorf("cannot complete checkpoint %d: %w", id, err)
	}
	c.committed(time.Since(started))
	for i, ch := range c.completes {
		select {
		case ch <- id:
			if w := c.completeWakes[i]; w != nil {
				w()
			}
		default: // the task is gone or far behind; it hears of a later one
		}
	}
	c.mu.Lock()
	c.completed = id
	if !c.stopped {
		c.timer.Reset(max(c.interval-time.Since(started), 0))
	}
	c.mu.Unlock()
	return nil
}

// standDown is what an ended terminal task does before it stops counting
// in checkpoints: it waits until the last checkpoint it acknowledged (acked)
// completed, then lets its chain hand over what it held back since that
// barrier (connector.Holder sinks, shuffle writers), into the transaction
// the next checkpoint commits. Otherwise that checkpoint could complete
// without the held records while claiming the positions of the rows they
// came from. Checkpoints run one at a time, so the one acknowledged
// completes without this task. The records go out while no checkpoint
// commits (c.running): a later checkpoint may be committing by then, and
// a record produced between its transaction's end and the next one's
// beginning would belong to no transaction.
func (c *coordinator) standDown(ctx context.Context, chain *Chain, acked int64) error {
	for {
		c.mu.Lock()
		done := c.completed >= acked
		c.mu.Unlock()
		if done {
			c.running.Lock()
			defer c.running.Unlock()
			return chain.release()
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// commitFinal commits the state after every task ended normally. The
// stateful operators flushed their results at the end of input; their
// stores are written by a last snapshot taken by the runtime before this.
func (c *coordinator) commitFinal() error {
	c.running.Lock()
	defer c.running.Unlock()
	c.applyFinals()
	c.mu.Lock()
	pos := make(map[string]int64, len(c.positions))
	for k, v := range c.positions {
		pos[k] = v
	}
	c.mu.Unlock()
	if err := c.backend.Commit(c.job, pos); err != nil {
		return fmt.Errorf("cannot commit the final checkpoint: %w", err)
	}
	c.committed(-1)
	return nil
}

// committed counts a checkpoint committed, which took d from the
// request of its barriers (negative: the final one, which has none).
func (c *coordinator) committed(d time.Duration) {
	if c.metrics != nil {
		c.metrics.Checkpoints.Add(1)
		c.metrics.LastCheckpoint.Store(time.Now().UnixMicro())
		if d >= 0 {
			c.metrics.CheckpointDuration.Store(d.Microseconds())
		}
	}
}
