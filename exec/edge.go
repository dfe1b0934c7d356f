package exec

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluicesql/sluice/types"
)

// Output is the tail of a task's operator chain: the edge to the next stage.
// Besides the Operator calls it learns when its task's input is idle, so
// that downstream watermarks do not wait for it.
type Output interface {
	Operator
	// SetIdle marks the sending task idle (true) or active again (false).
	SetIdle(idle bool) error
}

type msgKind uint8

const (
	msgBatch msgKind = iota
	msgWatermark
	msgIdle
	msgActive
	msgFinish
	msgBarrier
)

type message struct {
	sender int
	kind   msgKind
	wm     int64
	batch  *types.Batch
}

// Inbox is the input of one task of a stage: a bounded queue that several
// upstream tasks (senders) write into. The task's goroutine drains it with
// Run, which combines the senders' watermarks as their minimum (ignoring
// idle senders) and finishes once every sender has finished. A full inbox
// blocks its senders: back-pressure, never loss.
type Inbox struct {
	ch      chan message
	senders int
	pool    sync.Pool
	// inputOf maps a sender to the input (of the stage's Inputs) it
	// belongs to, for a task whose head is a MultiInput.
	inputOf []int
}

// MultiInput is an Operator with several inputs (a join): the inbox of its
// task hands each batch to ProcessInput with the index, in the stage's
// Inputs, of the input it comes from.
type MultiInput interface {
	ProcessInput(input int, b *types.Batch) error
}

// NewInbox returns an inbox for the given number of senders, holding at
// most capacity batches in flight.
func NewInbox(senders, capacity int) *Inbox {
	return &Inbox{ch: make(chan message, capacity), senders: senders}
}

func (in *Inbox) getBatch() *types.Batch {
	if b, ok := in.pool.Get().(*types.Batch); ok {
		return b
	}
	return types.NewBatch(256, 8)
}

// send puts m into the inbox, waiting while it is full. The time a send
// waits counts in the back pressure of the sending task (st, if set): a
// send that finds room does not read the clock.
func (in *Inbox) send(ctx context.Context, m message, st *taskStats) error {
	select {
	case in.ch <- m:
		return nil
	default:
	}
	if st == nil {
		select {
		case in.ch <- m:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	start := time.Now()
	st.blockedSince.Store(start.UnixNano())
	defer func() {
		st.blocked.Add(int64(time.Since(start)))
		st.blockedSince.Store(0)
	}()
	select {
	case in.ch <- m:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Sender returns the Output through which upstream task i writes to this
// inbox. Each sender is used by one goroutine.
func (in *Inbox) Sender(i int) Output {
	if i < 0 || i >= in.senders {
		panic(fmt.Sprintf("exec: sender %d out of range [0,%d)", i, in.senders))
	}
	return &sender{in: in, id: i}
}

type sender struct {
	in    *Inbox
	id    int
	ctx   context.Context
	stats *taskStats // the sending task's, for its back pressure; may be nil
}

func (s *sender) Open(ctx *Context) error { s.ctx, s.stats = ctx.Ctx, ctx.task; return nil }

func (s *sender) Process(b *types.Batch) error {
	if len(b.Rows) == 0 {
		return nil
	}
	c := s.in.getBatch()
	for _, r := range b.Rows {
		c.Append(r)
	}
	return s.in.send(s.ctx, message{sender: s.id, kind: msgBatch, batch: c}, s.stats)
}

func (s *sender) Watermark(wm int64) error {
	return s.in.send(s.ctx, message{sender: s.id, kind: msgWatermark, wm: wm}, s.stats)
}

func (s *sender) SetIdle(idle bool) error {
	if s.stats != nil {
		s.stats.idle.Store(idle)
	}
	k := msgActive
	if idle {
		k = msgIdle
	}
	return s.in.send(s.ctx, message{sender: s.id, kind: k}, s.stats)
}

// Barrier implements BarrierOutput.
func (s *sender) Barrier(id int64) error {
	return s.in.send(s.ctx, message{sender: s.id, kind: msgBarrier, wm: id}, s.stats)
}

func (s *sender) Finish() error {
	return s.in.send(s.ctx, message{sender: s.id, kind: msgFinish}, s.stats)
}

func (s *sender) Close() error { return nil }

// Run drains the inbox into next until every sender has finished, then
// calls next.Finish. tail, if not nil, is told when all unfinished senders
// are idle, so that idleness propagates downstream. Run does not Open or
// Close next. Barriers are forwarded to tail without snapshots; a task that
// takes part in checkpoints uses run.
func (in *Inbox) Run(ctx context.Context, next Operator, tail Output) error {
	return in.run(ctx, inboxTask{chain: &Chain{Head: next}, out: tail})
}

// inboxTask is what an inbox-driven task does besides passing rows on.
type inboxTask struct {
	chain *Chain
	out   Output
	// onBarrier is called once a barrier is aligned (received from every
	// unfinished sender), after the chain's snapshot; nil forwards it to out.
	onBarrier func(id int64) error
	// complete delivers the IDs of completed checkpoints, so that the
	// chain's listeners hear of them on the task's goroutine.
	complete <-chan int64
	// snapshotAtEnd takes a last snapshot after Finish, for the final
	// commit of a job that ends normally.
	snapshotAtEnd bool
	// stopping, if set, reports that the job is being stopped: senders
	// that finish then do not count as having reached MaxWatermark, so
	// that the task's operators keep their open windows.
	stopping func() bool
}

func (in *Inbox) run(ctx context.Context, t inboxTask) error {
	next := t.chain.Head
	tail := t.out
	// The combined watermark is the minimum over the active senders (not
	// idle, not finished): the tree holds each sender's watermark, or
	// MaxWatermark while it is idle or finished, so that a message costs
	// O(log senders) rather than a pass over all of them.
	wms := make([]int64, in.senders)
	idle := make([]bool, in.senders)
	done := make([]bool, in.senders)
	for i := range wms {
		wms[i] = MinWatermark
	}
	tree := newMinTree(in.senders, MinWatermark)
	active := in.senders // senders neither idle nor finished
	setIdle := func(i int, v bool) {
		if idle[i] == v {
			return
		}
		idle[i] = v
		if v {
			active--
			tree.set(i, MaxWatermark)
		} else {
			active++
			tree.set(i, wms[i])
		}
	}
	finished := 0
	outWM := MinWatermark
	allIdle := false  // downstream was told that this task is idle
	idleSeen := false // every unfinished sender was idle after the last message

	// Barrier alignment: once sender i delivered barrier `aligning`, its
	// later messages wait in held[i] until every unfinished sender has.
	aligning := int64(0)
	arrived := make([]bool, in.senders)
	var arrivedList []int // the senders that delivered the barrier, in order
	held := make([][]message, in.senders)
	var backlog []message

	var tickC <-chan time.Time
	if every := t.chain.tickEvery(); every > 0 {
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		tickC = ticker.C
	}

	// A sender that delivered the barrier has not finished (its finish is
	// held), so the barrier is aligned once those that did and those that
	// finished are all the senders.
	alignedNow := func() bool { return len(arrivedList)+finished == in.senders }
	completeBarrier := func() error {
		if err := t.chain.snapshot(aligning); err != nil {
			return err
		}
		var err error
		if t.onBarrier != nil {
			err = t.onBarrier(aligning)
		} else if b, ok := tail.(BarrierOutput); ok && tail != nil {
			err = b.Barrier(aligning)
		}
		if err != nil {
			return err
		}
		aligning = 0
		for _, i := range arrivedList {
			arrived[i] = false
			backlog = append(backlog, held[i]...)
			held[i] = nil
		}
		arrivedList = arrivedList[:0]
		return nil
	}

	for finished < in.senders {
		var m message
		if len(backlog) > 0 {
			m, backlog = backlog[0], backlog[1:]
		} else {
			// A message waiting is taken without a select over every
			// channel (which locks each); completions and ticks first,
			// so that a busy inbox does not hold them back.
			select {
			case id := <-t.complete:
				if err := t.chain.notify(id); err != nil {
					return err
				}
				continue
			default:
			}
			select {
			case <-tickC:
				if err := t.chain.tick(); err != nil {
					return err
				}
				continue
			default:
			}
			select {
			case m = <-in.ch:
			default:
				select {
				case m = <-in.ch:
				case id := <-t.complete:
					if err := t.chain.notify(id); err != nil {
						return err
					}
					continue
				case <-tickC:
					if err := t.chain.tick(); err != nil {
						return err
					}
					continue
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
		}
		if aligning != 0 && arrived[m.sender] {
			held[m.sender] = append(held[m.sender], m)
			continue
		}
		switch m.kind {
		case msgBarrier:
			aligning = m.wm
			arrived[m.sender] = true
			arrivedList = append(arrivedList, m.sender)
			if alignedNow() {
				if err := completeBarrier(); err != nil {
					return err
				}
			}
			continue
		case msgBatch:
			setIdle(m.sender, false)
			if allIdle && tail != nil {
				allIdle = false
				if err := tail.SetIdle(false); err != nil {
					return err
				}
			}
			var err error
			if mi, ok := next.(MultiInput); ok && in.inputOf != nil {
				err = mi.ProcessInput(in.inputOf[m.sender], m.batch)
			} else {
				err = next.Process(m.batch)
			}
			m.batch.Reset()
			in.pool.Put(m.batch)
			if err != nil {
				return err
			}
			continue
		case msgWatermark:
			setIdle(m.sender, false)
			if m.wm > wms[m.sender] {
				wms[m.sender] = m.wm
				tree.set(m.sender, m.wm)
			}
		case msgIdle:
			setIdle(m.sender, true)
		case msgActive:
			setIdle(m.sender, false)
		case msgFinish:
			setIdle(m.sender, true) // out of the minimum
			done[m.sender] = true
			wms[m.sender] = MaxWatermark
			finished++
			if aligning != 0 && alignedNow() {
				if err := completeBarrier(); err != nil {
					return err
				}
			}
			if t.stopping != nil && t.stopping() {
				idleSeen = false
				continue // a stop: the watermark stays where it is
			}
		}
		// Combined watermark: the minimum over active senders. Finished
		// senders count as MaxWatermark; idle ones are left out.
		if active == 0 && finished < in.senders {
			// Everyone unfinished is idle. As Flink's watermark valve does,
			// advance to the largest watermark any of them reached (nothing
			// older can arrive before one of them resumes, and a resuming
			// sender's older rows are late), then tell downstream. Only a
			// watermark or data makes a sender active again, so the largest
			// is computed once per spell of idleness.
			if !idleSeen {
				idleSeen = true
				highest := MinWatermark
				for i := range wms {
					if !done[i] {
						highest = max(highest, wms[i])
					}
				}
				if highest > outWM {
					outWM = highest
					if err := next.Watermark(outWM); err != nil {
						return err
					}
				}
			}
			if !allIdle && tail != nil {
				allIdle = true
				if err := tail.SetIdle(true); err != nil {
					return err
				}
			}
			continue
		}
		idleSeen = false
		if allIdle && tail != nil {
			allIdle = false
			if err := tail.SetIdle(false); err != nil {
				return err
			}
		}
		if combined := tree.min(); combined > outWM {
			outWM = combined
			if err := next.Watermark(outWM); err != nil {
				return err
			}
		}
	}
	if err := next.Finish(); err != nil {
		return err
	}
	if t.snapshotAtEnd {
		return t.chain.snapshot(-1)
	}
	return nil
}

// minTree keeps the minimum of n values under updates of one value in
// O(log n): leaves at [n, 2n), each inner node the minimum of its two
// children, the root (node 1) the minimum of all.
type minTree []int64

func newMinTree(n int, v int64) minTree {
	t := make(minTree, 2*n)
	for i := range t {
		t[i] = v
	}
	return t
}

func (t minTree) set(i int, v int64) {
	n := len(t) / 2
	i += n
	t[i] = v
	for i > 1 {
		i /= 2
		t[i] = min(t[2*i], t[2*i+1])
	}
}

// min returns the minimum of all values (MaxWatermark when all senders
// are idle or finished).
func (t minTree) min() int64 { return t[1] }

// HashExchange routes each row to one of several outputs by the hash of its
// key columns, so that all rows of a key meet in the same downstream task.
// Watermarks, idleness and the end of input go to every output.
type HashExchange struct {
	Keys    []int
	Outputs []Output

	parts []*types.Batch
	buf   []byte
}

// Open implements Operator.
func (h *HashExchange) Open(ctx *Context) error {
	// A part's batch is made when a row first goes to its output: an
	// exchange between two keyed stages has as many outputs as there are
	// downstream tasks, once per upstream task.
	h.parts = make([]*types.Batch, len(h.Outputs))
	for _, o := range h.Outputs {
		if err := o.Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Process implements Operator.
func (h *HashExchange) Process(b *types.Batch) error {
	n := uint64(len(h.Outputs))
	for _, r := range b.Rows {
		h.buf = h.buf[:0]
		for _, k := range h.Keys {
			h.buf = types.AppendKey(h.buf, r.Vals[k])
		}
		p := fnv64(h.buf) % n
		if h.parts[p] == nil {
			h.parts[p] = &types.Batch{} // rows only: their values alias b
		}
		h.parts[p].Rows = append(h.parts[p].Rows, r) // values alias b: sent before return
	}
	for i, p := range h.parts {
		if p == nil || len(p.Rows) == 0 {
			continue
		}
		err := h.Outputs[i].Process(p)
		p.Rows = p.Rows[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// Watermark implements Operator.
func (h *HashExchange) Watermark(wm int64) error {
	for _, o := range h.Outputs {
		if err := o.Watermark(wm); err != nil {
			return err
		}
	}
	return nil
}

// SetIdle implements Output.
func (h *HashExchange) SetIdle(idle bool) error {
	for _, o := range h.Outputs {
		if err := o.SetIdle(idle); err != nil {
			return err
		}
	}
	return nil
}

// Barrier implements BarrierOutput: the barrier goes to every output.
func (h *HashExchange) Barrier(id int64) error {
	for _, o := range h.Outputs {
		b, ok := o.(BarrierOutput)
		if !ok {
			return fmt.Errorf("exchange output %T cannot carry checkpoint barriers", o)
		}
		if err := b.Barrier(id); err != nil {
			return err
		}
	}
	return nil
}

// Finish implements Operator.
func (h *HashExchange) Finish() error {
	for _, o := range h.Outputs {
		if err := o.Finish(); err != nil {
			return err
		}
	}
	return nil
}

// Close implements Operator.
func (h *HashExchange) Close() error {
	var first error
	for _, o := range h.Outputs {
		if err := o.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// KeyHash is the hash that routes a key's encoding (types.AppendKey of the
// key columns) to a partition. It is stable across processes and versions:
// FNV-1a, 64 bits.
func KeyHash(key []byte) uint64 { return fnv64(key) }

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// Discard is an Output that drops everything: the tail of a sink's chain.
type Discard struct{}

// Open implements Operator.
func (Discard) Open(*Context) error { return nil }

// Process implements Operator.
func (Discard) Process(*types.Batch) error { return nil }

// Watermark implements Operator.
func (Discard) Watermark(int64) error { return nil }

// SetIdle implements Output.
func (Discard) SetIdle(bool) error { return nil }

// Finish implements Operator.
func (Discard) Finish() error { return nil }

// Barrier implements BarrierOutput.
func (Discard) Barrier(int64) error { return nil }

// Close implements Operator.
func (Discard) Close() error { return nil }
