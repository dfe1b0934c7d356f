package exec

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
)

// MaxParallelism is the most tasks a stage that is not a source may have
// ('parallelism.default'). Every task is a goroutine with an inbox, and
// between two keyed stages every upstream task has an output to every
// downstream task, and every inbox tracks the watermark of every upstream
// task: memory grows with the square of the parallelism (about 100 bytes a
// pair: 100 MiB between two stages of 1024 tasks), and so does the
// traffic of every watermark and barrier. More tasks than cores gain
// nothing in one process; Flink's own default upper bound on key groups
// is 128.
const MaxParallelism = 1024

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
	// InputKeys, if set, are the key columns of each input (a join's
	// sides have theirs), in place of KeyBy.
	InputKeys [][]int
	// Build builds the operator chain of task i, ending in out. For a
	// source stage, i is the partition the task reads.
	Build func(task int, out Output) (*Chain, error)
	// Parts, if not nil, are the partitions of Source this process reads
	// (in cluster mode, those the consumer group assigned it); nil reads
	// them all. Partition numbers, not task indexes, name positions and
	// origins, so that they stay the same under another assignment.
	Parts []int
	// Output, if set, builds the output edge of the task reading partition
	// part of a source stage that has no consumer in the graph (a shuffle
	// topic's writer). The edge also takes part in checkpoints as an
	// operator of the chain (CheckpointListener, Releaser).
	Output func(part int) (Output, error)
	// Trunk, if set, makes this a branch of the source stage Trunk: one
	// of several users of one source read once (source reuse). A branch
	// has no Source, Inputs or inboxes of its own: its chain runs inside
	// each task of its trunk, which hands it every batch, watermark and
	// end of input the trunk's own chain puts out, together with its
	// other branches, in the order of the graph's stages, without a copy.
	// Its tasks are the trunk's (Build gets the partition). A consumer
	// lists a branch in its Inputs as any stage. A branch without one is
	// terminal (its chain ends in a sink): the trunk's task then
	// acknowledges checkpoints for it, as a source task that is a sink.
	Trunk *Stage
	// Filter, on a trunk, builds the filter of task task that evaluates
	// the WHERE clauses of its branches together; Rule, on a branch, is
	// 1 + the number of its rule in that filter (0: the branch gets every
	// row). A branch with a rule gets only the rows its rule keeps.
	Filter func(task int, m *Metrics) (BranchFilter, error)
	Rule   int
}

// parts returns the partitions (source stage) or task numbers the stage
// runs, in task order.
func (s *Stage) parts() []int {
	if s.Trunk != nil {
		return s.Trunk.parts()
	}
	if s.Source != nil && s.Parts != nil {
		return s.Parts
	}
	n := max(s.Parallelism, 1)
	if s.Source != nil {
		n = s.Source.Partitions()
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func (s *Stage) tasks() int { return len(s.parts()) }

// Graph is a job's stages, each after its inputs. Stages with no consumer
// are terminal: the sinks, and in cluster mode the writers of shuffle
// topics.
type Graph struct {
	Stages []*Stage
	// Manifest says what the job's state belongs to (see state.Manifest).
	Manifest state.Manifest
}

// Bounded reports whether every source of the graph ends, so that the
// job ends by itself.
func (g *Graph) Bounded() bool {
	for _, s := range g.Stages {
		if s.Source != nil && !s.Source.Bounded() {
			return false
		}
	}
	return true
}

// live returns the stages that run: a source stage with no partition to
// read does not, nor does a stage none of whose inputs runs. inputs maps
// each live stage to its live inputs.
func (g *Graph) live() (stages []*Stage, inputs map[*Stage][]*Stage) {
	alive := map[*Stage]bool{}
	inputs = map[*Stage][]*Stage{}
	for _, s := range g.Stages {
		switch {
		case s.Source != nil:
			alive[s] = s.tasks() > 0
		case s.Trunk != nil:
			alive[s] = alive[s.Trunk]
		default:
			for _, in := range s.Inputs {
				if alive[in] {
					inputs[s] = append(inputs[s], in)
				}
			}
			alive[s] = len(inputs[s]) > 0
		}
		if alive[s] {
			stages = append(stages, s)
		}
	}
	return stages, inputs
}

// RunOptions are what a running graph may use.
type RunOptions struct {
	// Job is the prefix of the job's stage and operator IDs (its name):
	// its checkpoints commit the positions of this job alone.
	Job     string
	State   state.Backend
	Metrics *Metrics
	Now     func() int64
	// InboxCapacity is the number of batches an inbox holds (default 4).
	InboxCapacity int
	// Stop, when closed, stops the sources gracefully: they stop reading
	// and finish their chains without advancing the watermark to the end,
	// so sinks flush what is complete (Flink's stop without drain).
	Stop <-chan struct{}
	// StartFresh discards the state the backend holds under the job's
	// name before the job starts; without it, a state saved by a job that
	// read or computed something else is refused (see Graph.Manifest).
	StartFresh bool
	// AllowStateLoss starts the job over a state saved by a job whose
	// manifest differs instead of refusing it: the entries whose IDs
	// both have keep their state, the new ones start from zero, and the
	// stores and positions of those the job no longer has are dropped
	// (see state.Compare). Logf, if set, hears what was dropped.
	AllowStateLoss bool
	Logf           func(format string, args ...any)
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
	stats *taskStats
}

// Run runs the graph until every source is exhausted (bounded) or ctx is
// cancelled. The first error cancels everything and is returned. The
// calling goroutine runs one of the tasks (the last: a sink's, or the
// source's of a job whose sink runs in it); every other task has a
// goroutine of its own. Nothing else of the job has one: its checkpoints
// are started by a timer and committed by the task that completes them.
func (g *Graph) Run(ctx context.Context, opts RunOptions) error {
	x, err := g.prepare(ctx, opts)
	if x == nil {
		return err
	}
	return x.run()
}

// execution is a graph ready to run: its tasks built and their chains
// opened.
type execution struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	opts   RunOptions
	tasks  []*task
	coord  *coordinator
	// sourceTasks are the source tasks among tasks: those whose readers
	// acknowledge on checkpoints stay open until the final commit.
	sourceTasks []*SourceTask
	// finished is closed once every task ended.
	finished chan struct{}
	// completers are the goroutines that pass completed checkpoints on to
	// the chains of tasks that ended; run waits for them once finished
	// is closed, before it notifies the chains itself.
	completers *sync.WaitGroup
}

// prepare checks the graph, claims its state and builds and opens its
// tasks. It returns nil and the error when that failed, and nil, nil when
// there is nothing to run (no stage of it runs here) or the graph was
// stopped meanwhile.
func (g *Graph) prepare(ctx context.Context, opts RunOptions) (x *execution, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer func() {
		if x == nil {
			cancel(nil)
		}
	}()
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

	seen := map[*Stage]bool{}
	for _, s := range g.Stages {
		if s.Source == nil && s.Parallelism > MaxParallelism {
			return nil, fmt.Errorf("stage %s: parallelism %d is above the maximum of %d", s.Name, s.Parallelism, MaxParallelism)
		}
		if t := s.Trunk; t != nil {
			switch {
			case s.Source != nil || len(s.Inputs) > 0 || s.Output != nil:
				return nil, fmt.Errorf("stage %s: a branch has no source, inputs or output of its own", s.Name)
			case t.Source == nil || t.Trunk != nil || t.Output != nil:
				return nil, fmt.Errorf("stage %s: its trunk %s is not a source stage whose chain ends in its branches", s.Name, t.Name)
			case !seen[t]:
				return nil, fmt.Errorf("stage %s: its trunk %s is not among the stages before it", s.Name, t.Name)
			}
		}
		seen[s] = true
	}
	stages, liveInputs := g.live()
	if len(stages) == 0 {
		return nil, nil // nothing assigned to this process
	}
	opts.Metrics.dropStateGauges() // the state is this run's

	// Who consumes each stage, and at which sender index each upstream task
	// writes into the consumer's inboxes.
	consumer := map[*Stage]*Stage{}
	base := map[*Stage]int{}
	senders := map[*Stage]int{}
	inputIdx := map[*Stage]int{} // a stage's index in its consumer's Inputs
	for _, s := range stages {
		for i, in := range s.Inputs {
			inputIdx[in] = i
		}
		for _, in := range liveInputs[s] {
			if consumer[in] != nil {
				return nil, fmt.Errorf("stage %s has two consumers", in.Name)
			}
			consumer[in] = s
			base[in] = senders[s]
			senders[s] += in.tasks()
		}
	}
	// The branches of each trunk, in the order of the stages.
	branches := map[*Stage][]*Stage{}
	for _, s := range stages {
		if s.Trunk == nil {
			continue
		}
		if consumer[s.Trunk] != nil {
			return nil, fmt.Errorf("stage %s: source %s has branches and cannot feed a stage of its own", consumer[s.Trunk].Name, s.Trunk.Name)
		}
		branches[s.Trunk] = append(branches[s.Trunk], s)
	}
	inboxes := map[*Stage][]*Inbox{}
	for _, s := range stages {
		if s.Source != nil || s.Trunk != nil {
			continue
		}
		if senders[s] == 0 {
			return nil, fmt.Errorf("stage %s has no inputs", s.Name)
		}
		inputOf := make([]int, 0, senders[s])
		for _, in := range liveInputs[s] {
			for range in.tasks() {
				inputOf = append(inputOf, inputIdx[in])
			}
		}
		for range s.tasks() {
			ib := NewInbox(senders[s], capacity)
			ib.inputOf = inputOf
			inboxes[s] = append(inboxes[s], ib)
		}
	}

	// Number the partitions of all sources of the job apart (all of them,
	// also those another process reads), and name their positions. A
	// shuffle topic's rows keep the origins they had upstream.
	if opts.Job != "" {
		if err := g.claimState(opts); err != nil {
			return nil, err
		}
	}
	parts, err := g.partitions(opts)
	if err != nil {
		return nil, err
	}

	var coord *coordinator
	var resume map[string]int64
	if opts.CheckpointInterval > 0 {
		coord = newCoordinator(opts.CheckpointInterval, opts.State, opts.Job, opts.Metrics)
		if resume, err = opts.State.Positions(opts.Job); err != nil {
			return nil, fmt.Errorf("cannot read checkpointed positions: %w", err)
		}
	}

	stopping := func() bool {
		select {
		case <-opts.Stop:
			return true
		default:
			return false
		}
	}

	// A stop before the tasks run, while they are built and opened (a
	// large graph, the load of a dimension table, a connection), cancels
	// that work: no row was read, so there is nothing to flush. Once they
	// run, a stop is graceful (sources stop, sinks flush).
	// The watcher lasts until prepare returns: a running job has no
	// goroutine waiting for its stop.
	var early struct {
		sync.Mutex
		running bool
	}
	prepared := make(chan struct{})
	defer close(prepared)
	if opts.Stop != nil {
		go func() {
			select {
			case <-opts.Stop:
				early.Lock()
				if !early.running {
					cancel(errStoppedEarly)
				}
				early.Unlock()
			case <-ctx.Done():
			case <-prepared:
			}
		}()
	}

	// finished is closed once every task ended.
	finished := make(chan struct{})
	completers := &sync.WaitGroup{}

	// Sources that bound how many of their partitions are open at once
	// (a directory of many files) hand out that many slots; the others'
	// tasks wait their turn.
	slots := map[*Stage]chan struct{}{}
	for _, s := range stages {
		if l, ok := s.Source.(connector.OpenLimit); ok && l.MaxOpen() > 0 && l.MaxOpen() < s.tasks() {
			slots[s] = make(chan struct{}, l.MaxOpen())
		}
	}

	// edge builds the output edge of task i (reading partition part, for
	// a source or a branch) of stage s: the sender into its consumer's
	// inbox, or an exchange over all of them; when the job takes
	// checkpoints, wrapped to snapshot the chain at the end of input.
	edge := func(s *Stage, i, part int) (Output, *snapshotOnFinish, error) {
		var out Output = Discard{}
		if consumer[s] == nil && s.Output != nil {
			o, err := s.Output(part)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot build stage %s: %w", s.Name, err)
			}
			out = o
		}
		if c := consumer[s]; c != nil {
			id := base[s] + i
			if len(inboxes[c]) == 1 {
				out = inboxes[c][0].Sender(id)
			} else {
				outs := make([]Output, len(inboxes[c]))
				for j, in := range inboxes[c] {
					outs[j] = in.Sender(id)
				}
				keys := c.KeyBy
				if c.InputKeys != nil {
					keys = c.InputKeys[inputIdx[s]]
				}
				out = &HashExchange{Keys: keys, Outputs: outs}
			}
		}
		var wrap *snapshotOnFinish
		if coord != nil && consumer[s] != nil {
			wrap = &snapshotOnFinish{Output: out}
			out = wrap
		}
		if coord != nil {
			if _, ok := out.(BarrierOutput); !ok {
				return nil, nil, fmt.Errorf("stage %s: its output %T cannot carry checkpoint barriers; disable checkpointing", s.Name, out)
			}
		}
		return out, wrap, nil
	}

	var tasks []*task
	var sourceTasks []*SourceTask // the source tasks among them
	for _, s := range stages {
		if s.Trunk != nil {
			continue // runs in the tasks of its trunk
		}
		// A trunk is a terminal stage when one of its branches is: the
		// other branches' consumers acknowledge for theirs.
		terminalStage := consumer[s] == nil && len(branches[s]) == 0
		for _, br := range branches[s] {
			terminalStage = terminalStage || consumer[br] == nil
		}
		for i, part := range s.parts() {
			if stopping() || ctx.Err() != nil {
				return nil, stoppedEarly(ctx)
			}
			num := i
			if s.Source != nil {
				num = part
			}
			var out Output
			var wrap *snapshotOnFinish
			var fan *tee
			var fanChains []*Chain
			var fanWraps []*snapshotOnFinish
			var endChain *Chain // what the task snapshots at its end, if not chain
			if len(branches[s]) == 0 {
				if out, wrap, err = edge(s, i, part); err != nil {
					return nil, err
				}
			} else {
				fan = &tee{}
				if s.Filter != nil {
					if fan.filter, err = s.Filter(num, opts.Metrics); err != nil {
						return nil, fmt.Errorf("cannot build the filters of the branches of stage %s: %w", s.Name, err)
					}
				}
				for _, br := range branches[s] {
					fan.rules = append(fan.rules, br.Rule-1)
					if br.Rule > len(fan.sel.Rows) {
						fan.sel.Rows = append(fan.sel.Rows, make([][]int32, br.Rule-len(fan.sel.Rows))...)
					}
					var shift int32
					if bp, ok := parts[br]; ok {
						shift = bp[part].origin - parts[s][part].origin
					}
					fan.shifts = append(fan.shifts, shift)
					bout, bwrap, err := edge(br, i, part)
					if err != nil {
						return nil, err
					}
					bc, err := br.Build(num, bout)
					if err != nil {
						return nil, fmt.Errorf("cannot build stage %s: %w", br.Name, err)
					}
					if bc.Assigner != nil {
						return nil, fmt.Errorf("stage %s: a branch's chain cannot assign watermarks: its trunk %s does", br.Name, s.Name)
					}
					fan.heads = append(fan.heads, bc.Head)
					fan.edges = append(fan.edges, bout)
					fanChains = append(fanChains, bc)
					fanWraps = append(fanWraps, bwrap)
				}
				out = fan
			}
			chain, err := s.Build(num, out)
			if err != nil {
				return nil, fmt.Errorf("cannot build stage %s: %w", s.Name, err)
			}
			if fan != nil {
				// The task snapshots, ticks and notifies the operators of
				// every branch with its own. A branch's edge snapshots at
				// the end of input what has finished by then: that branch,
				// and the trunk for the first.
				// A terminal branch (no consumer, so no wrap) is
				// snapshotted at the end by the task, with the trunk
				// unless the first branch's edge did that.
				trunkOps := chain.Ops
				all := slices.Clone(trunkOps)
				var endOps []Operator
				for k, bc := range fanChains {
					all = append(all, bc.Ops...)
					if fanWraps[k] != nil {
						ops := bc.Ops
						if k == 0 {
							ops = append(slices.Clone(trunkOps), ops...)
						}
						fanWraps[k].chain = &Chain{Ops: ops}
						continue
					}
					if k == 0 {
						endOps = append(endOps, trunkOps...)
					}
					endOps = append(endOps, bc.Ops...)
				}
				chain.Ops = all
				endChain = &Chain{Ops: endOps}
			}
			if wrap != nil {
				wrap.chain = chain
			}
			if consumer[s] == nil && s.Output != nil {
				chain.Ops = append(chain.Ops, out)
			}
			t := &task{stage: s, index: num, chain: chain, stats: opts.Metrics.newTask()}
			if s.Source != nil {
				sp := parts[s][part]
				st := &SourceTask{Table: s.Name, Source: s.Source, Part: part, Head: chain.Head, Out: out,
					Assigner: chain.Assigner, IdleTimeout: s.IdleTimeout, Stop: opts.Stop, Metrics: opts.Metrics,
					PartBase: sp.origin - int32(part), Chain: chain, EndChain: endChain, Slots: slots[s], stats: t.stats}
				sourceTasks = append(sourceTasks, st)
				terminal := -1
				var acked atomic.Int64 // the last barrier the task acknowledged
				if coord != nil {
					ch := make(chan int64, 1)
					coord.sources = append(coord.sources, ch)
					coord.wakes = append(coord.wakes, st.wake)
					key := sp.key
					st.Barriers = ch
					st.Position = func(off int64) { coord.recordPosition(key, off) }
					st.Final = func(off int64) { coord.recordFinal(key, off) }
					st.EndLock = &coord.trigger
					if _, ok := s.Source.(PositionSource); ok {
						if st.PosStore, err = opts.State.Store(key); err != nil {
							return nil, fmt.Errorf("cannot open the position of stage %s partition %d: %w", s.Name, part, err)
						}
					} else if !sp.fresh {
						st.ResumeAfter, st.Resume = resume[key]
					}
					complete := make(chan int64, 16)
					coord.completes = append(coord.completes, complete)
					var wake func() // for a chain that listens
					if chain.listens() {
						wake = st.wake
					}
					coord.completeWakes = append(coord.completeWakes, wake)
					st.Complete = complete
					if terminalStage { // a terminal source task acknowledges
						// (a trunk of which a branch is terminal, too)
						k := coord.terminal()
						terminal = k
						st.OnBarrier = func(id int64) error {
							acked.Store(id)
							return coord.ack(k, id)
						}
					}
				}
				t.run = func(ctx context.Context) error {
					err := st.Run(ctx)
					if terminal >= 0 {
						if err == nil {
							err = coord.standDown(ctx, chain, acked.Load())
						}
						coord.taskEnded(terminal)
					}
					if err == nil && st.Complete != nil {
						// The chain's edge may still hold records back
						// (a shuffle writer): it hears of the checkpoints
						// that complete after its task ended.
						completers.Add(1)
						go func() {
							defer completers.Done()
							for {
								select {
								case id := <-st.Complete:
									if err := st.Completed(id); err != nil {
										cancel(err)
										return
									}
								case <-finished:
									return
								case <-ctx.Done():
									return
								}
							}
						}()
					}
					return err
				}
			} else {
				in := inboxes[s][i]
				terminal := -1
				it := inboxTask{chain: chain, out: out, snapshotAtEnd: coord != nil, stopping: stopping}
				var acked atomic.Int64 // the last barrier the task acknowledged
				if coord != nil {
					complete := make(chan int64, 16)
					coord.completes = append(coord.completes, complete)
					coord.completeWakes = append(coord.completeWakes, nil)
					it.complete = complete
					if terminalStage { // a terminal task acknowledges
						k := coord.terminal()
						terminal = k
						it.onBarrier = func(id int64) error {
							acked.Store(id)
							return coord.ack(k, id)
						}
					}
				}
				t.run = func(ctx context.Context) error {
					err := in.run(ctx, it)
					if terminal >= 0 {
						if err == nil {
							err = coord.standDown(ctx, chain, acked.Load())
						}
						// An ended terminal task stands for every later
						// checkpoint: the others need not wait for it.
						coord.taskEnded(terminal)
					}
					return err
				}
			}
			tasks = append(tasks, t)
		}
	}
	if coord != nil && coord.need == 0 && len(tasks) > 0 {
		// A checkpoint completes when every terminal task has taken its
		// part; without one it would complete before any task did.
		return nil, errors.New("no task of the job acknowledges checkpoints: a graph must end in a sink or a shuffle")
	}

	// Open every chain before any data flows.
	var opened []*task
	for _, t := range tasks {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
			break
		}
		octx := &Context{Ctx: ctx, Task: t.index, State: opts.State, Now: opts.Now, Metrics: opts.Metrics,
			Stopping: stopping, Checkpoints: coord != nil, task: t.stats, source: t.stage.Source != nil}
		if err = t.chain.Head.Open(octx); err != nil {
			err = fmt.Errorf("cannot open stage %s task %d: %w", t.stage.Name, t.index, err)
			break
		}
		opened = append(opened, t)
	}
	early.Lock()
	early.running = err == nil && ctx.Err() == nil
	early.Unlock()
	if err == nil && !early.running {
		err = context.Cause(ctx)
	}
	if errors.Is(context.Cause(ctx), errStoppedEarly) {
		err = errStoppedEarly
	}
	if err != nil {
		for _, t := range opened {
			t.chain.Head.Close()
		}
		if errors.Is(err, errStoppedEarly) {
			return nil, nil
		}
		return nil, err
	}
	return &execution{ctx: ctx, cancel: cancel, opts: opts, tasks: tasks, coord: coord, sourceTasks: sourceTasks, finished: finished, completers: completers}, nil
}

// run runs the tasks until they all ended, then commits the final
// checkpoint and closes the chains. The calling goroutine runs the last
// task.
func (x *execution) run() error {
	ctx, cancel, opts, tasks, coord := x.ctx, x.cancel, x.opts, x.tasks, x.coord
	defer cancel(nil)
	if coord != nil {
		coord.start(ctx, func(err error) { cancel(err) })
	}
	runTask := func(t *task) {
		defer func() {
			// A bug in an operator fails its job, not the process
			// (an engine may run many jobs).
			if r := recover(); r != nil {
				cancel(fmt.Errorf("internal error in stage %s task %d: %v\n%s", t.stage.Name, t.index, r, debug.Stack()))
			}
		}()
		err := t.run(ctx)
		opts.Metrics.taskEnded(t.stats)
		if err != nil {
			cancel(err)
		}
	}
	var wg sync.WaitGroup
	for i, t := range tasks {
		if i == len(tasks)-1 {
			runTask(t)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runTask(t)
		}()
	}
	wg.Wait()
	close(x.finished)
	if coord != nil {
		coord.stop() // no checkpoint completes from here on
	}
	// A chain may still be hearing of a checkpoint that completed as its
	// task ended: the final notifications below must not overlap it (two
	// Commits of one sink at once).
	x.completers.Wait()
	err := context.Cause(ctx)
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
	// Readers kept open past their task's end acknowledge what the final
	// commit holds, if it succeeded, and close.
	for _, st := range x.sourceTasks {
		if serr := st.Settle(err == nil && coord != nil); serr != nil && err == nil {
			err = serr
		}
	}
	for _, t := range tasks {
		if cerr := t.chain.Head.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// errStoppedEarly is the cause of the cancellation of a graph stopped
// before its tasks ran.
var errStoppedEarly = errors.New("stopped before the job started")

// stoppedEarly returns nil when ctx was cancelled (or the graph stopped)
// before the tasks ran, else ctx's cause.
func stoppedEarly(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && !errors.Is(err, errStoppedEarly) {
		return err
	}
	return nil
}
