package share

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// hub reads one shared source: per partition, one reader and the
// subscribers it feeds.
type hub struct {
	reg   *Registry
	key   string
	table string
	src   connector.Source
	users int // guarded by reg.mu: subscribers attached or attaching

	mu    sync.Mutex
	parts []*part
	jobs  map[string]int // partitions attached, per job

	opens, rowsRead atomic.Int64
}

func newHub(reg *Registry, key, table string, src connector.Source) *hub {
	h := &hub{reg: reg, key: key, table: table, src: src, parts: make([]*part, src.Partitions()), jobs: map[string]int{}}
	for i := range h.parts {
		h.parts[i] = &part{free: make(chan *types.Batch, reg.opts.Queue+2)}
	}
	return h
}

// partState is where a partition's reader is in its life.
type partState int

const (
	idle     partState = iota // no reader
	opening                   // a subscriber opens the reader
	running                   // the reader's goroutine feeds the subscribers
	stopping                  // the reader is being closed
)

// part is one partition of a hub. Its fields are guarded by hub.mu,
// but free, which the goroutine and the subscribers use without it.
type part struct {
	state partState
	// change is closed when an opening or a stopping ends.
	change chan struct{}
	subs   []*subscriber
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has closed the reader
	// last is the origin offset of the last row handed out (when read);
	// before any, the reader starts after start (when startKnown).
	last       int64
	read       bool
	start      int64
	startKnown bool
	// fromStartup says the reader was opened at the table's startup
	// position (Open), not after a job's offset.
	fromStartup bool
	free        chan *types.Batch
	// backlog is the partition's reader, once opened, when it is a
	// connector.Backlog: the subscribers' Backlog reads it without hub.mu
	// (a server's reads of a thousand jobs' metrics would queue on it).
	backlog atomic.Pointer[backlogOf]
}

// epochs is a source whose origin offsets carry an epoch of the
// partition's log (kafka.Source.OriginEpoch): origins of two epochs are
// not positions in one log.
type epochs interface {
	OriginEpoch(offset int64) int64
}

// at reports whether a subscriber attached to pt now gets every row
// after hi, waiting at most for the rows from lo to hi: the hub has
// handed out rows up to an offset from lo to hi (or, before any, opened
// after one), in the epoch of the log hi is in.
func (h *hub) at(pt *part, lo, hi int64) bool {
	pos := pt.start
	switch {
	case pt.read:
		pos = pt.last
	case !pt.startKnown:
		return false
	}
	if pos < lo || pos > hi {
		return false
	}
	if e, ok := h.src.(epochs); ok && e.OriginEpoch(pos) != e.OriginEpoch(hi) {
		return false
	}
	return true
}

// attach attaches the job of s to partition p: a subscriber, or nil
// when the job must read the partition on its own until it has caught
// up with the hub (see Registry.Wrap).
func (h *hub) attach(ctx context.Context, s *Source, p int, resume bool, after int64) (connector.Reader, error) {
	pt := h.parts[p]
	for {
		h.mu.Lock()
		switch pt.state {
		case opening, stopping:
			ch := pt.change
			h.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			continue
		case running:
			var there bool
			switch {
			case resume:
				there = h.at(pt, after, after)
			case s.generated && !s.whole:
				there = true
			default:
				there = pt.fromStartup && !pt.read
			}
			if !there {
				from := "the table's startup position"
				if resume {
					from = "after offset " + strconv.FormatInt(after, 10)
				}
				at := "its start"
				if pt.read {
					at = "offset " + strconv.FormatInt(pt.last, 10)
				}
				h.mu.Unlock()
				h.reg.logf("shared source %s: job %s reads partition %d on its own, from %s, until it reaches the shared reader (at %s)",
					h.table, s.job, p, from, at)
				return nil, nil
			}
			sub, note := h.subscribe(s.job, p, resume, after)
			h.mu.Unlock()
			h.reg.note(note)
			return sub, nil
		}
		pt.state, pt.change = opening, make(chan struct{})
		h.mu.Unlock()
		rd, start, startKnown, err := h.open(ctx, p, resume, after)
		h.mu.Lock()
		close(pt.change)
		if err != nil {
			pt.state = idle
			h.mu.Unlock()
			return nil, err
		}
		rctx, cancel := context.WithCancel(context.Background())
		pt.state, pt.cancel, pt.done = running, cancel, make(chan struct{})
		pt.read, pt.start, pt.startKnown, pt.fromStartup = false, start, startKnown, !resume
		if bl, ok := rd.(connector.Backlog); ok {
			pt.backlog.Store(&backlogOf{bl})
		} else {
			pt.backlog.Store(nil)
		}
		sub, note := h.subscribe(s.job, p, resume, after)
		h.opens.Add(1)
		go h.run(rctx, pt, rd, pt.done)
		h.mu.Unlock()
		h.reg.note(note)
		return sub, nil
	}
}

// join attaches job to partition p after offset hi, where its own
// reader has got to, if the hub is reading the partition and is at
// (at(lo, hi)); else it returns nil.
func (h *hub) join(job string, p int, lo, hi int64) *subscriber {
	pt := h.parts[p]
	h.mu.Lock()
	if pt.state != running || !h.at(pt, lo, hi) {
		h.mu.Unlock()
		return nil
	}
	sub, note := h.subscribe(job, p, true, hi)
	h.mu.Unlock()
	h.reg.logf("shared source %s: job %s has caught up with the shared reader on partition %d (offset %d): it reads through it now",
		h.table, job, p, hi)
	h.reg.note(note)
	return sub
}

// open opens the underlying reader of partition p for its first
// subscriber, and says after which offset it starts, when that is known:
// a Resumer's OpenAfter starts after its offset, and a source that is
// not a Resumer replays a partition from its start; a Resumer's Open
// starts where the table's options say.
func (h *hub) open(ctx context.Context, p int, resume bool, after int64) (r connector.Reader, start int64, known bool, err error) {
	rs, resumer := h.src.(connector.Resumer)
	switch {
	case !resumer:
		r, err = h.src.Open(ctx, p)
		return r, math.MinInt64, true, err
	case resume:
		r, err = rs.OpenAfter(ctx, p, after)
		return r, after, true, err
	default:
		r, err = h.src.Open(ctx, p)
		return r, 0, false, err
	}
}

// subscribe adds a subscriber of job to partition p, and returns with it
// what the log is to say of it ("" when the job is alone, or was
// attached already). h.mu is held.
func (h *hub) subscribe(job string, p int, resume bool, after int64) (*subscriber, string) {
	pt := h.parts[p]
	s := &subscriber{h: h, pt: pt, job: job, part: p, q: make(chan *item, h.reg.opts.Queue), gone: make(chan struct{}),
		skip: resume, after: after}
	pt.subs = append(pt.subs, s)
	h.jobs[job]++
	if h.jobs[job] == 1 && len(h.jobs) > 1 {
		return s, fmt.Sprintf("shared source %s: job %s reads it through the reader it shares with %s", h.table, job, h.others(job))
	}
	return s, ""
}

// others lists the jobs attached but job, for the log. h.mu is held.
func (h *hub) others(job string) string {
	var names []string
	for j := range h.jobs {
		if j != job {
			names = append(names, j)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// detach removes s from its partition; the partition's last subscriber
// stops its reader and waits until it is closed.
func (h *hub) detach(s *subscriber) {
	pt := s.pt
	h.mu.Lock()
	i := slices.Index(pt.subs, s)
	if i >= 0 {
		pt.subs = slices.Delete(pt.subs, i, i+1)
	}
	h.jobs[s.job]--
	var note string
	if h.jobs[s.job] == 0 {
		delete(h.jobs, s.job)
		if len(h.jobs) > 0 {
			note = fmt.Sprintf("shared source %s: job %s no longer reads it; %s read on", h.table, s.job, h.others(""))
		}
	}
	var cancel context.CancelFunc
	var done chan struct{}
	if i >= 0 && len(pt.subs) == 0 && pt.state == running {
		pt.state, pt.change = stopping, make(chan struct{})
		cancel, done = pt.cancel, pt.done
	}
	h.mu.Unlock()
	h.reg.note(note)
	close(s.gone)
	if cancel != nil {
		cancel()
		<-done
		h.mu.Lock()
		pt.state = idle
		close(pt.change)
		h.mu.Unlock()
	}
	h.reg.release(h)
}

// run reads partition pt with r until it is cancelled (its last
// subscriber left), fails or ends, handing each batch to every
// subscriber attached when it was read. It closes r, and then done.
func (h *hub) run(ctx context.Context, pt *part, r connector.Reader, done chan struct{}) {
	defer close(done)
	st, _ := r.(connector.Stats)
	var skipped int64
	var subs, waiting []*subscriber
	var b *types.Batch
	push := pusher{from: h.reg.opts.PushFrom, full: h.reg.opts.BatchSize}
	for {
		if b == nil {
			b = h.batch(pt)
		}
		err := r.Read(ctx, b, h.reg.opts.BatchSize)
		if ctx.Err() != nil {
			r.Close() // every subscriber left
			return
		}
		if err == nil && len(b.Rows) == 0 {
			continue
		}
		it := &item{b: b, err: err, free: pt.free}
		b = nil
		if st != nil {
			n := st.Skipped()
			it.skipped, skipped = n-skipped, n
		}
		h.rowsRead.Add(int64(len(it.b.Rows)))
		h.mu.Lock()
		if pt.state != running {
			// The last subscriber is leaving: it waits for this to end.
			h.mu.Unlock()
			r.Close()
			return
		}
		for i := len(it.b.Rows) - 1; i >= 0; i-- {
			if o := it.b.Rows[i].Origin; o.Part >= 0 {
				pt.last, pt.read = o.Offset, true
				break
			}
		}
		subs = append(subs[:0], pt.subs...)
		if err != nil {
			// The subscribers attached get the error (or the end); the
			// next one to come opens a reader anew.
			pt.subs = nil
			pt.state, pt.change = stopping, make(chan struct{})
		}
		it.refs.Store(int32(len(subs)) + 1)
		h.mu.Unlock()
		if err != nil && !errors.Is(err, io.EOF) && len(subs) > 0 {
			h.reg.logf("shared source %s: the reader of partition %d failed: %v; the jobs reading it fail with it",
				h.table, slices.Index(h.parts, pt), err)
		}
		// Jobs that wait for this batch with nothing queued get it
		// pushed, after the others got theirs queued (see pusher).
		waiting := waiting[:0]
		pushing := err == nil && push.on(len(subs), len(it.b.Rows), time.Now())
		for _, s := range subs {
			if pushing && s.pushes.Load() && s.waiting.Load() {
				waiting = append(waiting, s)
				continue
			}
			enqueue(ctx, s, it)
		}
		slice := time.Now()
		for i, s := range waiting {
			if s.tryPush(it) {
				it.release()
			} else {
				enqueue(ctx, s, it)
			}
			// A round of a thousand chains is long: the goroutines it
			// keeps from the processor (a server's requests) run now
			// and then, not after the whole round.
			if i%16 == 15 && time.Since(slice) >= pushSlice {
				runtime.Gosched()
				slice = time.Now()
			}
		}
		clear(waiting)
		it.release() // the hub's own reference
		if err != nil {
			r.Close()
			h.mu.Lock()
			pt.state = idle
			close(pt.change)
			h.mu.Unlock()
			return
		}
	}
}

// enqueue puts it into the queue of s, waiting for room unless s leaves
// or the hub is cancelled.
func enqueue(ctx context.Context, s *subscriber, it *item) {
	n := int64(len(it.b.Rows))
	s.queued.Add(n)
	select {
	case s.q <- it: // the queue has room: no select over three
		return
	default:
	}
	select {
	case s.q <- it:
	case <-s.gone:
		s.queued.Add(-n)
		it.release()
	case <-ctx.Done():
		s.queued.Add(-n)
		it.release()
	}
}

// pushWindow is the stretch over which a hub sees whether it keeps up
// with its source while it pushes (pusher), and pushOff how many it then
// queues.
const (
	pushWindow = time.Second
	pushOff    = 5
)

// pushSlice is how long the hub pushes before it lets the goroutines
// waiting for its processor run.
const pushSlice = time.Millisecond

// pusher decides whether a hub pushes its batches into the chains of the
// jobs that wait for them (connector.Pusher) rather than queue them for
// the jobs' goroutines. Pushing, the hub's goroutine runs the chains one
// after the other: a batch wakes no goroutine, where a queue wakes one a
// job (a thousand jobs at a hundred batches a second make a hundred
// thousand wakes, each batch a burst of runnable goroutines that a
// server's requests queue behind), and the jobs of a partition take one
// core, leaving the others to the rest of the process. When that core
// is the limit, the hub falls behind its source and reads full batches:
// when most of a window's are, it queues for pushOff windows, so that
// the jobs run in parallel again, and then tries anew.
type pusher struct {
	from, full int // the fewest subscribers pushed to (below 1, none); a full batch
	off        int // windows left without pushes
	start      time.Time
	// batches and fulls count a window's batches, and those full.
	batches, fulls int
}

// on reports whether the hub pushes a batch of rows rows, read at now,
// to subs subscribers.
func (p *pusher) on(subs, rows int, now time.Time) bool {
	if p.from < 1 || subs < p.from {
		return false
	}
	if p.start.IsZero() {
		p.start = now
	}
	if now.Sub(p.start) >= pushWindow {
		switch {
		case p.off > 0:
			p.off--
		case p.fulls*2 > p.batches:
			p.off = pushOff
		}
		p.start, p.batches, p.fulls = now, 0, 0
	}
	p.batches++
	if rows >= p.full {
		p.fulls++
	}
	return p.off == 0
}

// batch returns an empty batch: one whose rows every subscriber has
// released, or a new one. A new one grows as it is read into: a source
// read slowly (a generator at a low rate, an idle topic) keeps small
// batches.
func (h *hub) batch(pt *part) *types.Batch {
	select {
	case b := <-pt.free:
		b.Reset()
		return b
	default:
		return &types.Batch{}
	}
}

// info describes h.
func (h *hub) info() Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	in := Info{Table: h.table, Opens: h.opens.Load(), RowsRead: h.rowsRead.Load()}
	for j := range h.jobs {
		in.Jobs = append(in.Jobs, j)
	}
	slices.Sort(in.Jobs)
	for _, pt := range h.parts {
		in.Subscribers += len(pt.subs)
		if pt.state == running {
			in.Readers++
		}
	}
	return in
}

// item is a batch read once and handed to several subscribers, with
// what came with it: the reader's error (io.EOF at the end) and how many
// malformed records it skipped on the way.
type item struct {
	b       *types.Batch
	err     error
	skipped int64
	// refs counts the holders that have not released the batch; the last
	// one puts it back into free, for the hub to read into again.
	refs atomic.Int32
	free chan *types.Batch
}

func (it *item) release() {
	if it.refs.Add(-1) == 0 {
		select {
		case it.free <- it.b:
		default:
		}
	}
}
