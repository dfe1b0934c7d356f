package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

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
	// Resume, with ResumeAfter, restarts the partition after the position
	// of the checkpoint the job restarts from: rows whose origin offset is
	// not above ResumeAfter are skipped (or not read, for a Resumer).
	Resume      bool
	ResumeAfter int64
}

// finish ends the chain and, when the job takes checkpoints, snapshots it
// for the final commit.
func (t *SourceTask) finish() error {
	if err := t.Head.Finish(); err != nil {
		return err
	}
	if t.Barriers != nil && t.Chain != nil {
		return t.Chain.snapshot()
	}
	return nil
}

// barrier takes the task's part of checkpoint id: the chain's snapshot, the
// partition's position, then the barrier downstream.
func (t *SourceTask) barrier(id, last int64, read bool) error {
	if t.Chain != nil {
		if err := t.Chain.snapshot(); err != nil {
			return err
		}
	}
	if t.Position != nil && read {
		t.Position(last)
	}
	if b, ok := t.Out.(BarrierOutput); ok {
		return b.Barrier(id)
	}
	return fmt.Errorf("source %s: its output cannot carry checkpoint barriers", t.Table)
}

// Run reads the partition until it ends or ctx is cancelled. At the end of
// a bounded partition it emits MaxWatermark and finishes the chain.
func (t *SourceTask) Run(ctx context.Context) error {
	var r connector.Reader
	var err error
	if rs, ok := t.Source.(connector.Resumer); ok && t.Resume {
		r, err = rs.OpenAfter(ctx, t.Part, t.ResumeAfter)
	} else {
		r, err = t.Source.Open(ctx, t.Part)
	}
	if err != nil {
		return fmt.Errorf("cannot open source %s partition %d: %w", t.Table, t.Part, err)
	}
	defer r.Close()
	if st, ok := r.(connector.Stats); ok && t.Metrics != nil {
		defer func() { t.Metrics.SkippedRecs.Add(st.Skipped()) }()
	}
	n := t.BatchSize
	if n <= 0 {
		n = 1024
	}
	b := types.NewBatch(n, 8)
	lastData := time.Now()
	idle := false
	last, read := t.ResumeAfter, t.Resume // origin offset of the last row read, and whether there is one
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		select {
		case <-t.Stop:
			if err := t.finish(); err != nil {
				return err
			}
			if t.Final != nil && read {
				t.Final(last)
			}
			return nil
		case id := <-t.Barriers:
			if err := t.barrier(id, last, read); err != nil {
				return err
			}
		default:
		}
		b.Reset()
		err := r.Read(ctx, b, n)
		if err != nil && !errors.Is(err, io.EOF) {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if strings.HasPrefix(err.Error(), "source "+t.Table+":") {
				return err // the connector's error policy already named the source
			}
			return fmt.Errorf("source %s: %w", t.Table, err)
		}
		if t.Resume && len(b.Rows) > 0 {
			// Restarting from a checkpoint: the state already holds rows
			// up to ResumeAfter.
			keep := b.Rows[:0]
			for _, r := range b.Rows {
				if r.Origin.Part < 0 || r.Origin.Offset > t.ResumeAfter {
					keep = append(keep, r)
				}
			}
			b.Rows = keep
		}
		if n := len(b.Rows); n > 0 && b.Rows[n-1].Origin.Part >= 0 {
			last, read = b.Rows[n-1].Origin.Offset, true
		}
		if len(b.Rows) > 0 {
			if t.Metrics != nil {
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
			if idle {
				idle = false
				if err := t.Out.SetIdle(false); err != nil {
					return err
				}
			}
			if err := t.Head.Process(b); err != nil {
				return err
			}
		} else if t.IdleTimeout > 0 && !idle && time.Since(lastData) >= t.IdleTimeout {
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
		if errors.Is(err, io.EOF) {
			if err := t.Head.Watermark(MaxWatermark); err != nil {
				return err
			}
			if err := t.finish(); err != nil {
				return err
			}
			// Only now, with the end of input sent downstream, may a
			// checkpoint claim the partition's end.
			if t.Final != nil && read {
				t.Final(last)
			}
			return nil
		}
	}
}
