package exec

import (
	"fmt"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// SinkOperator writes its input to a connector sink: the end of a chain.
type SinkOperator struct {
	Table string
	Sink  connector.Sink
	// ID names the state of a connector.StatefulSink.
	ID string

	ctx   *Context
	store state.Store
	// blocking, for a sink in a source task, is the task's stats: the
	// time its writes take is the task's back pressure, as the time a
	// send into the inbox of a sink of its own would be.
	blocking *taskStats
	// prepared is the ID of the last checkpoint barrier the sink prepared
	// for.
	prepared int64
}

// Open implements Operator: a stateful sink restores what it saved at the
// job's last checkpoint.
func (s *SinkOperator) Open(ctx *Context) error {
	s.ctx = ctx
	if ctx.source {
		s.blocking = ctx.task
	}
	ss, ok := s.Sink.(connector.StatefulSink)
	if !ok {
		return nil
	}
	var snap []byte
	if ctx.State != nil && s.ID != "" {
		st, err := ctx.State.Store(s.ID)
		if err != nil {
			return fmt.Errorf("cannot open the state of %s: %w", s.Table, err)
		}
		s.store = st
		v, found, err := st.Get(sinkStateKey)
		if err != nil {
			return fmt.Errorf("cannot read the state of %s: %w", s.Table, err)
		}
		if found {
			snap = v
		}
	}
	r := connector.SinkRestore{Snapshot: snap, Checkpointed: ctx.Checkpoints && s.store != nil}
	if s.store != nil {
		r.Owner = s.ID
	}
	if err := ss.Restore(ctx.Ctx, r); err != nil {
		return fmt.Errorf("cannot restore %s: %w", s.Table, err)
	}
	return nil
}

// sinkStateKey is where a stateful sink's snapshot is kept in its store.
var sinkStateKey = []byte("sink")

// Process implements Operator.
func (s *SinkOperator) Process(b *types.Batch) error {
	var err error
	if st := s.blocking; st != nil {
		start := time.Now()
		st.blockedSince.Store(start.UnixNano())
		err = s.Sink.Write(s.ctx.Ctx, b)
		st.blocked.Add(int64(time.Since(start)))
		st.blockedSince.Store(0)
	} else {
		err = s.Sink.Write(s.ctx.Ctx, b)
	}
	if err != nil {
		return fmt.Errorf("cannot write to %s: %w", s.Table, err)
	}
	if s.ctx.Metrics != nil {
		s.ctx.Metrics.RowsOut.Add(int64(len(b.Rows)))
	}
	return nil
}

// Watermark implements Operator: a connector.WatermarkSink hears it.
func (s *SinkOperator) Watermark(wm int64) error {
	if ws, ok := s.Sink.(connector.WatermarkSink); ok {
		ws.SinkWatermark(wm)
	}
	return nil
}

// Finish implements Operator: everything is flushed (prepared, for a sink
// that commits in two steps: it commits when the job's final state is).
func (s *SinkOperator) Finish() error {
	if e, ok := s.Sink.(connector.EndPreparer); ok {
		if err := e.PrepareEnd(s.ctx.Ctx); err != nil {
			return fmt.Errorf("cannot flush %s at the end of input: %w", s.Table, err)
		}
		return nil
	}
	return s.prepare("at the end of input")
}

func (s *SinkOperator) prepare(when string) error {
	var err error
	if c, ok := s.Sink.(connector.Committer); ok {
		err = c.Prepare(s.ctx.Ctx)
	} else {
		err = s.Sink.Flush(s.ctx.Ctx)
	}
	if err != nil {
		return fmt.Errorf("cannot flush %s %s: %w", s.Table, when, err)
	}
	return nil
}

// Close implements Operator.
func (s *SinkOperator) Close() error {
	if err := s.Sink.Close(); err != nil {
		return fmt.Errorf("cannot close %s: %w", s.Table, err)
	}
	return nil
}

// Checkpoint implements Checkpointer: at a barrier, everything written so
// far is flushed (prepared, for a sink that commits in two steps), and a
// stateful sink's state saved with the checkpoint.
func (s *SinkOperator) Checkpoint() error {
	if err := s.prepare("at a checkpoint"); err != nil {
		return err
	}
	ss, ok := s.Sink.(connector.StatefulSink)
	if !ok || s.store == nil {
		return nil
	}
	snap, err := ss.Snapshot()
	if err == nil {
		err = s.store.Put(sinkStateKey, snap)
	}
	if err == nil {
		err = s.store.Checkpoint()
	}
	if err != nil {
		return fmt.Errorf("cannot save the state of %s: %w", s.Table, err)
	}
	return nil
}

// TickEvery implements Timed: in a job without checkpoints, a sink that
// commits by itself (connector.SelfCommitting) is ticked that often.
func (s *SinkOperator) TickEvery() time.Duration {
	if sc, ok := s.Sink.(connector.SelfCommitting); ok && (s.ctx == nil || !s.ctx.Checkpoints) {
		return sc.CommitEvery()
	}
	return 0
}

// Tick implements Timed: what was written is prepared and committed.
func (s *SinkOperator) Tick() error {
	if s.ctx == nil || s.ctx.Checkpoints {
		return nil
	}
	c, ok := s.Sink.(connector.Committer)
	if !ok {
		return nil
	}
	if err := s.prepare("on its commit interval"); err != nil {
		return err
	}
	if err := c.Commit(s.ctx.Ctx); err != nil {
		return fmt.Errorf("cannot commit %s: %w", s.Table, err)
	}
	return nil
}

// CheckpointBarrier implements BarrierCheckpointer: Checkpoint, noting the
// barrier's ID.
func (s *SinkOperator) CheckpointBarrier(id int64) error {
	if id >= 0 {
		s.prepared = id
	}
	return s.Checkpoint()
}

// CheckpointComplete implements CheckpointListener: a two-step sink makes
// what it prepared visible. The notice of a checkpoint older than the last
// barrier comes late (checkpoints run one at a time, so it had completed
// before that barrier) and is ignored: committing now would also commit
// what was prepared at the later barrier, whose checkpoint may yet fail.
func (s *SinkOperator) CheckpointComplete(id int64) error {
	if id >= 0 && id < s.prepared {
		return nil
	}
	if c, ok := s.Sink.(connector.Committer); ok {
		if err := c.Commit(s.ctx.Ctx); err != nil {
			return fmt.Errorf("cannot commit %s for checkpoint %d: %w", s.Table, id, err)
		}
	}
	return nil
}

// Release implements Releaser for sinks that hold records back between a
// barrier and its commit (connector.Holder).
func (s *SinkOperator) Release() error {
	if h, ok := s.Sink.(connector.Holder); ok {
		if err := h.Release(s.ctx.Ctx); err != nil {
			return fmt.Errorf("cannot release %s's held records: %w", s.Table, err)
		}
	}
	return nil
}

// SetIdle implements Output, so that a sink can end a chain.
func (s *SinkOperator) SetIdle(bool) error { return nil }
