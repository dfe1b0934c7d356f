package exec

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
)

// Stage is one stage of a running job: a source read partition by partition,
// or a set of parallel tasks fed through inboxes. Stages are cut where rows
// must be re-keyed.
type Stage struct {
	// Name identifies the stage in errors.
	Name string
	// ID is the stage's stable identity within the job (derived from the
	// plan): checkpointed source positions are kept under it.
	ID string
	// Source, if set, makes this a source stage with one task per
	// partition; Inputs and Parallelism are then unused.
	Source      connector.Source
	IdleTimeout time.Duration
	// Inputs are the upstream stages whose output this stage consumes
	// (several for UNION ALL). Every input's output rows have the same
	// layout.
	Inputs []*Stage
	// Parallelism is the number of tasks (>= 1).
	Parallelism int
	// KeyBy are the columns of the input rows whose hash picks the task
	// when Parallelism > 1.
	KeyBy []int
	// Build builds the operator chain of task i, ending in out.
	Build func(task int, out Output) (*Chain, error)
}

func (s *Stage) tasks() int {
	if s.Source != nil {
		return s.Source.Partitions()
	}
	return max(s.Parallelism, 1)
}

// Graph is a job's stages. Exactly one stage, the last, has no consumer.
type Graph struct {
	Stages []*Stage
}

// RunOptions are what a running graph may use.
type RunOptions struct {
	State   state.Backend
	Metrics *Metrics
	Now     func() int64
	// InboxCapacity is the number of batches an inbox holds (default 4).
	InboxCapacity int
	// Stop, when closed, stops the sources gracefully: they stop reading
	// and finish their chains without advancing the watermark to the end,
	// so sinks flush what is complete (Flink's stop without drain).
	Stop <-chan struct{}
	// CheckpointInterval, if positive, takes a checkpoint that often: the
	// stateful operators' changes and the sources' positions are committed
	// to the state backend together. Sources resume from the backend's
	// last committed positions.
	CheckpointInterval time.Duration
}

type task struct {
	stage *Stage
	index int
	chain *Chain
	run   func(ctx context.Context) error
}

// Run runs the graph until every source is exhausted (bounded) or ctx is
// cancelled. The first error cancels everything and is returned.
func (g *Graph) Run(ctx context.Context, opts RunOptions) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	capacity := opts.InboxCapacity
	if capacity <= 0 {
		capacity = 4
	}
	if opts.State == nil {
		opts.State = state.NewMemory()
	}
	if opts.Now == nil {
		opts.Now = func() int64 { return time.Now().UnixMicro() }
	}

	// Who consumes each stage, and at which sender index each upstream task
	// writes into the consumer's inboxes.
	consumer := map[*Stage]*Stage{}
	base := map[*Stage]int{}
	senders := map[*Stage]int{}
	for _, s := range g.Stages {
		for _, in := range s.Inputs {
			if consumer[in] != nil {
				return fmt.Errorf("stage %s has two consumers", in.Name)
			}
			consumer[in] = s
			base[in] = senders[s]
			senders[s] += in.tasks()
		}
	}
	inboxes := map[*Stage][]*Inbox{}
	for _, s := range g.Stages {
		if s.Source != nil {
			continue
		}
		if senders[s] == 0 {
			return fmt.Errorf("stage %s has no inputs", s.Name)
		}
		for i := 0; i < s.tasks(); i++ {
			inboxes[s] = append(inboxes[s], NewInbox(senders[s], capacity))
		}
	}

	// Number the partitions of all sources of the job apart.
	partBase := map[*Stage]int32{}
	var nextPart int32
	for _, s := range g.Stages {
		if s.Source != nil {
			partBase[s] = nextPart
			nextPart += int32(s.tasks())
		}
	}

	var coord *coordinator
	var resume map[string]int64
	if opts.CheckpointInterval > 0 {
		coord = newCoordinator(opts.CheckpointInterval, opts.State)
		var err error
		if resume, err = opts.State.Positions(); err != nil {
			return fmt.Errorf("cannot read checkpointed positions: %w", err)
		}
	}

	var tasks []*task
	for _, s := range g.Stages {
		for i := 0; i < s.tasks(); i++ {
			var out Output = Discard{}
			if c := consumer[s]; c != nil {
				id := base[s] + i
				if len(inboxes[c]) == 1 {
					out = inboxes[c][0].Sender(id)
				} else {
					outs := make([]Output, len(inboxes[c]))
					for j, in := range inboxes[c] {
						outs[j] = in.Sender(id)
					}
					out = &HashExchange{Keys: c.KeyBy, Outputs: outs}
				}
			}
			var wrap *snapshotOnFinish
			if coord != nil && consumer[s] != nil {
				wrap = &snapshotOnFinish{Output: out}
				out = wrap
			}
			chain, err := s.Build(i, out)
			if err != nil {
				return fmt.Errorf("cannot build stage %s: %w", s.Name, err)
			}
			if wrap != nil {
				wrap.chain = chain
			}
			if coord != nil {
				if _, ok := out.(BarrierOutput); !ok {
					return fmt.Errorf("stage %s: its output %T cannot carry checkpoint barriers; disable checkpointing", s.Name, out)
				}
			}
			t := &task{stage: s, index: i, chain: chain}
			if s.Source != nil {
				st := &SourceTask{Table: s.Name, Source: s.Source, Part: i, Head: chain.Head, Out: out,
					Assigner: chain.Assigner, IdleTimeout: s.IdleTimeout, Stop: opts.Stop, Metrics: opts.Metrics,
					PartBase: partBase[s], Chain: chain}
				if coord != nil {
					ch := make(chan int64, 1)
					coord.sources = append(coord.sources, ch)
					key := PositionKey(s.ID, i)
					st.Barriers = ch
					st.Position = func(off int64) { coord.recordPosition(key, off) }
					st.Final = func(off int64) { coord.recordFinal(key, off) }
					st.ResumeAfter, st.Resume = resume[key]
				}
				t.run = st.Run
			} else {
				in := inboxes[s][i]
				it := inboxTask{chain: chain, out: out, snapshotAtEnd: coord != nil}
				if coord != nil {
					complete := make(chan int64, 16)
					coord.completes = append(coord.completes, complete)
					it.complete = complete
					if consumer[s] == nil { // a terminal task acknowledges
						k := coord.need
						coord.need++
						it.onBarrier = func(id int64) error {
							select {
							case coord.acks <- ack{task: k, id: id}:
								return nil
							case <-ctx.Done():
								return context.Cause(ctx)
							}
						}
					}
				}
				terminal := -1
				if coord != nil && consumer[s] == nil {
					terminal = coord.need - 1
				}
				t.run = func(ctx context.Context) error {
					err := in.run(ctx, it)
					if terminal >= 0 {
						// An ended terminal task stands for every later
						// checkpoint: the others need not wait for it.
						coord.terminalDone <- terminal
					}
					return err
				}
			}
			tasks = append(tasks, t)
		}
	}

	// Open every chain before any data flows.
	var opened []*task
	var err error
	for _, t := range tasks {
		octx := &Context{Ctx: ctx, Task: t.index, State: opts.State, Now: opts.Now, Metrics: opts.Metrics}
		if err = t.chain.Head.Open(octx); err != nil {
			err = fmt.Errorf("cannot open stage %s task %d: %w", t.stage.Name, t.index, err)
			break
		}
		opened = append(opened, t)
	}
	if err == nil {
		var wg sync.WaitGroup
		finished := make(chan struct{})
		coordDone := make(chan struct{})
		if coord != nil {
			go func() {
				defer close(coordDone)
				if err := coord.run(ctx, finished); err != nil {
					cancel(err)
				}
			}()
		} else {
			close(coordDone)
		}
		for _, t := range tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					// A bug in an operator fails its job, not the process
					// (an engine may run many jobs).
					if r := recover(); r != nil {
						cancel(fmt.Errorf("internal error in stage %s task %d: %v\n%s", t.stage.Name, t.index, r, debug.Stack()))
					}
				}()
				if err := t.run(ctx); err != nil {
					cancel(err)
				}
			}()
		}
		wg.Wait()
		close(finished)
		<-coordDone // no checkpoint completes from here on
		err = context.Cause(ctx)
		if err == nil {
			// Sinks hand over what they held back since their last
			// barrier, into the transaction the final commit commits.
			for _, t := range tasks {
				if err = t.chain.release(); err != nil {
					break
				}
			}
		}
		if err == nil && coord != nil {
			// Everything was processed and flushed: commit the final state
			// with the sources' final positions.
			err = coord.commitFinal()
		}
		if err == nil {
			// Then two-step sinks make their last writes visible. Every
			// task has ended, so the chains are quiet.
			for _, t := range tasks {
				if err = t.chain.notify(-1); err != nil {
					break
				}
			}
		}
	}
	for _, t := range opened {
		if cerr := t.chain.Head.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}
