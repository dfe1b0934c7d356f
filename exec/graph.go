package exec

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
)

// Stage is one stage of a running job: a source read partition by partition,
// or a set of parallel tasks fed through inboxes. Stages are cut where rows
// must be re-keyed.
type Stage struct {
	// Name identifies the stage in errors and operator IDs.
	Name string
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
	// Build builds the operator chain of task i, ending in out. A source
	// stage's chain may contain a WatermarkAssigner, returned so that the
	// source loop can tick it.
	Build func(task int, out Output) (Operator, *WatermarkAssigner, error)
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
}

type task struct {
	stage *Stage
	index int
	head  Operator
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
			head, assigner, err := s.Build(i, out)
			if err != nil {
				return fmt.Errorf("cannot build stage %s: %w", s.Name, err)
			}
			t := &task{stage: s, index: i, head: head}
			if s.Source != nil {
				st := &SourceTask{Table: s.Name, Source: s.Source, Part: i, Head: head, Out: out,
					Assigner: assigner, IdleTimeout: s.IdleTimeout, Stop: opts.Stop, Metrics: opts.Metrics, PartBase: partBase[s]}
				t.run = st.Run
			} else {
				in := inboxes[s][i]
				t.run = func(ctx context.Context) error { return in.Run(ctx, head, out) }
			}
			tasks = append(tasks, t)
		}
	}

	// Open every chain before any data flows.
	var opened []*task
	var err error
	for _, t := range tasks {
		octx := &Context{Ctx: ctx, Task: t.index, State: opts.State, Now: opts.Now, Metrics: opts.Metrics}
		if err = t.head.Open(octx); err != nil {
			err = fmt.Errorf("cannot open stage %s task %d: %w", t.stage.Name, t.index, err)
			break
		}
		opened = append(opened, t)
	}
	if err == nil {
		var wg sync.WaitGroup
		for _, t := range tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := t.run(ctx); err != nil {
					cancel(err)
				}
			}()
		}
		wg.Wait()
		err = context.Cause(ctx)
	}
	for _, t := range opened {
		if cerr := t.head.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}
