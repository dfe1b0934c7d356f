package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// WatermarkReader is a connector.Reader that carries its partition's
// watermark and idleness, which the connector.Reader contract has no place
// for: the reader of a shuffle topic, whose writers upstream sent them. The
// task polls Watermark after every Read; when ok, it forwards wm downstream
// if it advanced and marks its output idle or active as idle says.
type WatermarkReader interface {
	connector.Reader
	Watermark() (wm int64, idle bool, ok bool)
}

// PositionReader is a connector.Reader whose rows keep the origins of an
// upstream source (the reader of a shuffle topic), so that the task cannot
// derive its position from them: the reader reports it, encoded.
type PositionReader interface {
	connector.Reader
	Position() ([]byte, error)
}

// PositionSource is a Source whose readers are PositionReaders; OpenAt
// opens a partition at a position one of them reported.
type PositionSource interface {
	OpenAt(ctx context.Context, p int, pos []byte) (connector.Reader, error)
}

// posKey is the key under which a task keeps a PositionReader's position.
var posKey = []byte("position")

// WatermarkAssigner tracks the event time of one source partition. For each
// row it evaluates the table's WATERMARK expression and keeps the maximum;
// after each batch it emits that maximum if it advanced. A row whose
// expression is NULL does not move the watermark (as in Flink).
//
// In processing-time mode (ProcTime) it ignores rows and emits the current
// processing time on every Tick, so that processing-time windows fire on
// the wall clock.
type WatermarkAssigner struct {
	// Expr computes a row's watermark candidate; unused in ProcTime mode.
	Expr     RowFunc
	ProcTime bool
	Now      func() int64
	Next     Operator

	current int64
}

// Open implements Operator.
func (w *WatermarkAssigner) Open(ctx *Context) error {
	w.current = MinWatermark
	if w.Now == nil {
		w.Now = ctx.Now
	}
	return w.Next.Open(ctx)
}

// Process implements Operator.
func (w *WatermarkAssigner) Process(b *types.Batch) error {
	if err := w.Next.Process(b); err != nil {
		return err
	}
	if w.ProcTime || w.Expr == nil {
		return nil
	}
	wm := w.current
	for i := range b.Rows {
		v, err := w.Expr(b.Rows[i].Vals)
		if err != nil {
			return fmt.Errorf("cannot compute watermark: %w", err)
		}
		if !v.IsNull() && v.Int() > wm {
			wm = v.Int()
		}
	}
	return w.advance(wm)
}

func (w *WatermarkAssigner) advance(wm int64) error {
	if wm <= w.current {
		return nil
	}
	w.current = wm
	return w.Next.Watermark(wm)
}

// Tick is called by the source loop after every read, data or not.
func (w *WatermarkAssigner) Tick() error {
	if w.ProcTime {
		return w.advance(w.Now())
	}
	return nil
}

// Watermark implements Operator: an upstream watermark (the end of input)
// passes through when it is ahead.
func (w *WatermarkAssigner) Watermark(wm int64) error { return w.advance(wm) }

// Finish implements Operator.
func (w *WatermarkAssigner) Finish() error { return w.Next.Finish() }

// Close implements Operator.
func (w *WatermarkAssigner) Close() error { return w.Next.Close() }

// SourceTask reads one partition of a source and pushes its rows through the
// task's operator chain.
type SourceTask struct {
	// Table names the source in errors.
	Table  string
	Source connector.Source
	Part   int
	// Head is the first operator of the chain; Out is its tail (the edge to
	// the next stage), told when the partition goes idle.
	Head Operator
	Out  Output
	// Assigner, if set, is the chain's watermark assigner, ticked after
	// every read.
	Assigner *WatermarkAssigner
	// IdleTimeout marks the partition idle after this long without rows;
	// 0 never does.
	IdleTimeout time.Duration
	// BatchSize is the most rows read at once (default 1024).
	BatchSize int
	// Stop, when closed, ends the task gracefully (see RunOptions.Stop).
	Stop <-chan struct{}
	// Metrics, if set, counts rows read and malformed records skipped.
	Metrics *Metrics
	// PartBase is added to the partition of every row's origin, so that
	// partitions of different sources of one job never share a number
	// (stateful operators drop replays per origin partition).
	PartBase int32
	// EndChain, if set, is what of Chain the task snapshots at the end of
	// its input (a trunk's branches that have a consumer snapshot
	// themselves as the end passes them).
	EndChain *Chain
	// Chain is the task's operators, snapshotted at checkpoint barriers.
	Chain *Chain
	// Barriers delivers checkpoint requests; nil takes no checkpoints.
	Barriers <-chan int64
	// Position records the partition's position at a barrier: the origin
	// offset of the last row read. Nothing is recorded before the first
	// row (a restart then starts the partition afresh).
	Position func(offset int64)
	// Final records the position of an ended partition. The coordinator
	// attaches it to the next checkpoint it starts, never to one already
	// under way: the partition's last rows belong to that next one.
	Final func(offset int64)
	// EndLock, if set, is held by the coordinator while it starts a
	// checkpoint (see end).
	EndLock sync.Locker
	// Resume, with ResumeAfter, restarts the partition after the position
	// of the checkpoint the job restarts from: rows whose origin offset is
	// not above ResumeAfter are skipped (or not read, for a Resumer).
	Resume      bool
	ResumeAfter int64
	// PosStore, for a PositionSource, keeps the reader's position at every
	// barrier and at the end; the partition reopens at it. Such a task
	// leaves origins as they are, does not resume from ResumeAfter, and
	// reports to Position and Final the offset of the last record its
	// reader read whole (a reader with an Offset method), for the record.
	PosStore state.Store
	// OnBarrier, if set, is called after a barrier went downstream: the
	// task is terminal and acknowledges it.
	OnBarrier func(id int64) error
	// Complete delivers the IDs of completed checkpoints, for the chain's
	// listeners (a shuffle writer holding rows back).
	Complete <-chan int64
	// Slots, if set, bounds the partitions of the source read at once:
	// the task takes a slot before it opens its partition (taking part in
	// checkpoints while it waits) and gives it back when it ends.
	Slots chan struct{}

	reader connector.Reader
	stats  *taskStats // the task's, for its reader's backlog; may be nil
	// waker is the reader's connector.Waker, if it is one, once open.
	waker atomic.Pointer[connector.Waker]
	// acker is the reader when it acknowledges what it read only once a
	// checkpoint holding it completes (connector.Acknowledger).
	acker connector.Acknowledger
	// held is such a reader, kept open after the task ended so that the
	// job's final commit can acknowledge its last messages (Settle).
	held connector.Reader
}

// wake cuts the read the task waits in short, if its reader can be
// woken: a barrier to send or a completed checkpoint to pass on waits
// for no idle read. Safe from any goroutine.
func (t *SourceTask) wake() {
	if w := t.waker.Load(); w != nil {
		(*w).Wake()
	}
}

// Completed is called when checkpoint id completed: the chain's listeners
// hear of it, and a reader that acknowledges on checkpoints acknowledges
// what the checkpoint holds. After the task ended, it may be called from
// another goroutine.
func (t *SourceTask) Completed(id int64) error {
	if err := t.Chain.notify(id); err != nil {
		return err
	}
	if t.acker != nil {
		return t.acker.Acknowledge(id)
	}
	return nil
}

// Settle closes the reader the task kept open after it ended normally, if
// any, first acknowledging everything it read when committed says that
// the job's final commit succeeded. Otherwise what it read since the last
// completed checkpoint is not acknowledged, and its system delivers it
// again to the next run.
func (t *SourceTask) Settle(committed bool) error {
	r := t.held
	if r == nil {
		return nil
	}
	t.held = nil
	var err error
	if committed {
		err = t.acker.Acknowledge(-1)
	}
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// wait waits for a slot to read the partition, passing checkpoint
// barriers on meanwhile. It reports false when the task was stopped
// before it got one (and has ended its chain).
func (t *SourceTask) wait(ctx context.Context) (bool, error) {
	for {
		select {
		case t.Slots <- struct{}{}:
			return true, nil
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-t.Stop:
			if err := t.end(t.ResumeAfter, t.Resume); err != nil {
				return false, err
			}
			return false, t.finish()
		case id := <-t.Barriers:
			if err := t.barrier(id, t.ResumeAfter, t.Resume); err != nil {
				return false, err
			}
		case id := <-t.Complete:
			if err := t.Completed(id); err != nil {
				return false, err
			}
		}
	}
}

// readerOffset returns the offset of the last record a PositionReader
// read whole, if it has one.
func (t *SourceTask) readerOffset() (int64, bool) {
	if or, ok := t.reader.(interface{ Offset() int64 }); ok && t.PosStore != nil {
		if off := or.Offset(); off > 0 {
			return off - 1, true
		}
	}
	return 0, false
}

// end records that the partition ends (its input, or a stop) after the
// rows sent so far, before its end goes downstream. A barrier requested
// meanwhile goes first, after those rows, with their position. Then the
// end position is recorded for the next checkpoint. Both happen under
// EndLock, which the coordinator holds while it starts a checkpoint, so
// that the rows sent so far always land in the checkpoint that claims
// their position: a barrier this task sent covers them, and otherwise
// they reach every consumer before the barriers of the next checkpoint.
func (t *SourceTask) end(last int64, read bool) error {
	if t.EndLock != nil {
		t.EndLock.Lock()
		defer t.EndLock.Unlock()
	}
	select {
	case id := <-t.Barriers:
		if err := t.barrier(id, last, read); err != nil {
			return err
		}
	default:
	}
	if t.Final == nil {
		return nil
	}
	if off, ok := t.readerOffset(); ok {
		t.Final(off)
	} else if read && t.PosStore == nil {
		t.Final(last)
	}
	return nil
}

// savePosition keeps a PositionReader's position in PosStore and, at a
// barrier, reports its offset as the partition's position.
func (t *SourceTask) savePosition(final bool) error {
	pr, ok := t.reader.(PositionReader)
	if !ok || t.PosStore == nil {
		return nil
	}
	if off, ok := t.readerOffset(); ok && !final && t.Position != nil {
		t.Position(off)
	}
	pos, err := pr.Position()
	if err != nil {
		return err
	}
	if err := t.PosStore.Put(posKey, pos); err != nil {
		return err
	}
	return t.PosStore.Checkpoint()
}

// finish ends the chain and, when the job takes checkpoints, snapshots it
// for the final commit.
func (t *SourceTask) finish() error {
	if err := t.Head.Finish(); err != nil {
		return err
	}
	end := t.Chain
	if t.EndChain != nil {
		end = t.EndChain
	}
	if t.Barriers != nil && end != nil {
		if err := end.snapshot(-1); err != nil {
			return err
		}
	}
	return t.savePosition(true)
}

// barrier takes the task's part of checkpoint id: the chain's snapshot, the
// partition's position, then the barrier downstream.
func (t *SourceTask) barrier(id, last int64, read bool) error {
	if t.Chain != nil {
		if err := t.Chain.snapshot(id); err != nil {
			return err
		}
	}
	if err := t.savePosition(false); err != nil {
		return err
	}
	if t.Position != nil && read {
		t.Position(last)
	}
	if t.acker != nil {
		t.acker.Barrier(id)
	}
	b, ok := t.Out.(BarrierOutput)
	if !ok {
		return fmt.Errorf("source %s: its output cannot carry checkpoint barriers", t.Table)
	}
	if err := b.Barrier(id); err != nil {
		return err
	}
	if t.OnBarrier != nil {
		return t.OnBarrier(id)
	}
	return nil
}

// open opens the task's partition: at the position PosStore keeps, after
// the checkpointed offset, or from the start.
func (t *SourceTask) open(ctx context.Context) (connector.Reader, error) {
	if ps, ok := t.Source.(PositionSource); ok && t.PosStore != nil {
		pos, found, err := t.PosStore.Get(posKey)
		if err != nil {
			return nil, err
		}
		if found {
			return ps.OpenAt(ctx, t.Part, pos)
		}
		return t.Source.Open(ctx, t.Part)
	}
	if rs, ok := t.Source.(connector.Resumer); ok && t.Resume {
		return rs.OpenAfter(ctx, t.Part, t.ResumeAfter)
	}
	return t.Source.Open(ctx, t.Part)
}

// pollWatermark forwards a WatermarkReader's watermark and idleness.
func (t *SourceTask) pollWatermark(wr WatermarkReader, idle *bool, wm *int64) error {
	w, isIdle, ok := wr.Watermark()
	if !ok {
		return nil
	}
	if isIdle != *idle {
		*idle = isIdle
		if err := t.Out.SetIdle(isIdle); err != nil {
			return err
		}
	}
	if w > *wm && w != MaxWatermark {
		*wm = w
		return t.Head.Watermark(w)
	}
	return nil
}

// Run reads the partition until it ends or ctx is cancelled. At the end of
// a bounded partition it emits MaxWatermark and finishes the chain.
func (t *SourceTask) Run(ctx context.Context) (err error) {
	if t.Slots != nil {
		ok, err := t.wait(ctx)
		if !ok {
			return err
		}
		defer func() { <-t.Slots }()
	}
	r, err := t.open(ctx)
	if err != nil {
		return fmt.Errorf("cannot open source %s partition %d: %w", t.Table, t.Part, err)
	}
	if a, ok := r.(connector.Acknowledger); ok && t.Barriers != nil {
		a.DeferAcks()
		t.acker = a
	}
	defer func() {
		if err == nil && t.acker != nil {
			t.held = r // for the final commit to acknowledge (Settle)
			return
		}
		r.Close()
	}()
	t.reader = r
	if w, ok := r.(connector.Waker); ok {
		t.waker.Store(&w)
		defer t.waker.Store(nil)
	}
	t.Metrics.readerOpened(t.stats, r)
	wr, _ := r.(WatermarkReader)
	readerWM := MinWatermark
	// Malformed records the reader skipped go into the job's metric as
	// they are read (health, Prometheus and alert rules see them while
	// the job runs), and at the end.
	stats, _ := r.(connector.Stats)
	var skipped int64
	countSkipped := func() {
		if stats == nil || t.Metrics == nil {
			return
		}
		if s := stats.Skipped(); s != skipped {
			t.Metrics.SkippedRecs.Add(s - skipped)
			skipped = s
		}
	}
	defer countSkipped()
	n := t.BatchSize
	if n <= 0 {
		n = 1024
	}
	// The batch grows as rows come: a task that reads little keeps
	// little (thousands of jobs each have one). A task whose reader lends
	// it the rows of a shared reader reads them where they are, without
	// a batch of its own, unless it must change them (it numbers their
	// partitions apart, or leaves out those a resumed job has seen).
	own := &types.Batch{}
	vr, _ := r.(connector.ViewReader)
	if t.PartBase != 0 {
		vr = nil
	}
	var view types.Batch
	lastData := time.Now()
	var tickEvery time.Duration
	if t.Chain != nil {
		tickEvery = t.Chain.tickEvery()
	}
	lastTick := lastData
	idle := false
	last, read := t.ResumeAfter, t.Resume // origin offset of the last row read, and whether there is one
	// take sends the rows of b (the reader's, a view, or a push) down the
	// chain, with what follows every read.
	take := func(b *types.Batch) error {
		if t.Resume && len(b.Rows) > 0 {
			// Restarting from a checkpoint: the state already holds rows
			// up to ResumeAfter.
			seen := func(r types.Row) bool { return r.Origin.Part >= 0 && r.Origin.Offset <= t.ResumeAfter }
			if b != own && slices.ContainsFunc(b.Rows, seen) {
				// A view's rows are not the task's to change.
				own.Reset()
				own.Rows = append(own.Rows, b.Rows...)
				b = own
			}
			b.Rows = slices.DeleteFunc(b.Rows, seen)
		}
		if n := len(b.Rows); n > 0 && b.Rows[n-1].Origin.Part >= 0 {
			last, read = b.Rows[n-1].Origin.Offset, true
		}
		if len(b.Rows) > 0 {
			if t.Metrics != nil && wr == nil { // a shuffle's rows were counted upstream
				t.Metrics.RowsIn.Add(int64(len(b.Rows)))
			}
			if t.PartBase != 0 {
				for i := range b.Rows {
					if b.Rows[i].Origin.Part >= 0 {
						b.Rows[i].Origin.Part += t.PartBase
					}
				}
			}
			lastData = time.Now()
			if idle && wr == nil {
				idle = false
				if err := t.Out.SetIdle(false); err != nil {
					return err
				}
			}
			if err := t.Head.Process(b); err != nil {
				return err
			}
		} else if wr == nil && t.IdleTimeout > 0 && !idle && time.Since(lastData) >= t.IdleTimeout {
			idle = true
			if err := t.Out.SetIdle(true); err != nil {
				return err
			}
		}
		if t.Assigner != nil {
			if err := t.Assigner.Tick(); err != nil {
				return err
			}
		}
		if tickEvery > 0 && time.Since(lastTick) >= tickEvery {
			lastTick = time.Now()
			if err := t.Chain.tick(); err != nil {
				return err
			}
		}
		return nil
	}
	// A reader that pushes (a shared source's, to its many jobs) runs
	// take itself while the task waits in ReadView, on its own
	// goroutine: the task wakes for barriers, completed checkpoints, a
	// stop and idleness only, not for every batch. chainErr is the error
	// a push returned, which ReadView returns too.
	var chainErr error
	if p, ok := r.(connector.Pusher); ok && vr != nil && wr == nil {
		var pushed types.Batch
		p.SetPush(n, func(rows []types.Row) (err error) {
			defer func() {
				// A bug in an operator fails its job, not the shared
				// reader (nor the process), as on the task's goroutine.
				if rec := recover(); rec != nil {
					err = fmt.Errorf("internal error in source %s partition %d: %v\n%s", t.Table, t.Part, rec, debug.Stack())
				}
				if err != nil {
					chainErr = err
				}
			}()
			pushed.Rows = rows
			err = take(&pushed)
			pushed.Rows = nil
			return err
		})
		defer p.SetPush(0, nil)
	}
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		// Everything pending before the next read: a barrier and a
		// completed checkpoint can both be waiting, and handling one a
		// read (up to an idle reader's wait) would let completions lag
		// behind, and a sink in this task commit late.
		// One channel at a time: a receive that finds an empty channel
		// takes no lock, where a select over all of them locks each, at
		// every read of thousands of tasks.
		select {
		case <-t.Stop:
			if err := t.end(last, read); err != nil {
				return err
			}
			return t.finish()
		default:
		}
	pending:
		for {
			select {
			case id := <-t.Barriers:
				if err := t.barrier(id, last, read); err != nil {
					return err
				}
				continue
			default:
			}
			select {
			case id := <-t.Complete:
				if err := t.Completed(id); err != nil {
					return err
				}
			default:
				break pending
			}
		}
		b := own
		var err error
		if vr != nil {
			view.Rows, err = vr.ReadView(ctx, n)
			b = &view
		} else {
			b.Reset()
			err = r.Read(ctx, b, n)
		}
		countSkipped()
		if chainErr != nil {
			return chainErr // the chain failed in a push
		}
		if err != nil && !errors.Is(err, io.EOF) {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if strings.HasPrefix(err.Error(), "source "+t.Table+":") {
				return err // the connector's error policy already named the source
			}
			return fmt.Errorf("source %s: %w", t.Table, err)
		}
		if err := take(b); err != nil {
			return err
		}
		if wr != nil {
			if err := t.pollWatermark(wr, &idle, &readerWM); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			if err := t.end(last, read); err != nil {
				return err
			}
			if err := t.Head.Watermark(MaxWatermark); err != nil {
				return err
			}
			return t.finish()
		}
	}
}
