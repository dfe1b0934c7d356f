package share

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// idleWait is how long a Read waits for a batch before it returns with
// none, as the connector.Reader contract asks of an unbounded reader.
const idleWait = 100 * time.Millisecond

// errClosed is what a subscriber read after Close returns.
var errClosed = errors.New("shared source: read after close")

// subscriber is one job's reader of one partition of a hub: the rows of
// the batches the hub hands it, as they are (the same values, the same
// origins), after its offset when it resumes.
type subscriber struct {
	h    *hub
	pt   *part
	job  string
	part int
	q    chan *item
	gone chan struct{} // closed when it leaves: the hub no longer waits for it

	// skip drops the rows up to after (a resumed job has seen them).
	skip  bool
	after int64

	cur     *item // the batch being handed out, from row pos on
	pos     int
	err     error // the end or the failure the hub reported, once reached
	skipped int64
	timer   *time.Timer
	closed  bool
	// queued counts the rows the hub handed this subscriber that it has
	// not handed out yet, for Backlog.
	queued atomic.Int64
	// kept holds the rows of a batch after a resumed job's offset, when
	// some were before it.
	kept []types.Row
	// woke is the context whose end wakes a wait (the task's: Read's),
	// and unwake undoes that.
	woke   context.Context
	unwake func() bool

	// pushes says that push is set (connector.Pusher), and waiting that
	// a ReadView waits in next, where the hub may push to it: both are
	// read by the hub without mu, and checked again under it.
	pushes, waiting atomic.Bool
	// mu orders the hub's pushes with the job's own run: a push holds
	// it, and next takes it before it hands the job anything.
	mu sync.Mutex
	// Guarded by mu: the job's chain, the most rows it takes at once,
	// and the first error it returned.
	push    func([]types.Row) error
	pushMax int
	pushErr error
}

// SetPush implements connector.Pusher: while a ReadView waits for the
// hub's next batch, with nothing in the queue, the hub hands the batch to
// fn itself (see hub.run).
func (s *subscriber) SetPush(max int, fn func([]types.Row) error) {
	s.mu.Lock()
	s.push, s.pushMax = fn, max
	s.mu.Unlock()
	s.pushes.Store(fn != nil)
}

// tryPush hands the rows of it to the job's chain, when the job waits in
// next with an empty queue and has not failed; else it reports false and
// the hub queues it. An error of the chain wakes the job, whose ReadView
// returns it.
func (s *subscriber) tryPush(it *item) bool {
	if it.err != nil || !s.pushes.Load() || !s.waiting.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.push == nil || !s.waiting.Load() || len(s.q) > 0 || s.pushErr != nil {
		return false
	}
	s.skipped += it.skipped
	rows := it.b.Rows
	if s.skip {
		rows = s.unseen(rows)
	}
	for len(rows) > 0 {
		n := min(len(rows), max(s.pushMax, 1))
		if err := s.push(rows[:n]); err != nil {
			s.pushErr = err
			s.Wake()
			break
		}
		rows = rows[n:]
	}
	return true
}

// Wake implements connector.Waker: a Read waiting for the hub's next
// batch returns without one (the next Read, if none waits). The wake is
// a nil item in the queue, so that a wait is on the queue and a timer
// only: thousands of jobs wait for every batch of a shared source. A
// full queue needs none.
func (s *subscriber) Wake() {
	select {
	case s.q <- nil:
	default:
	}
}

// Backlog implements connector.Backlog: the backlog of the hub's reader
// of the partition, and the rows the hub read that this job has not yet.
func (s *subscriber) Backlog() (int64, bool) {
	bl := s.pt.backlog.Load()
	if bl == nil {
		return 0, false
	}
	n, ok := bl.Backlog.Backlog()
	if !ok {
		return 0, false
	}
	return n + max(s.queued.Load(), 0), true
}

// Read implements connector.Reader: it appends up to max of the hub's
// rows to b. Their values are the hub's: no one may change them. The
// batch they come from is released at the next Read (or Close), once
// the caller is done with them.
func (s *subscriber) Read(ctx context.Context, b *types.Batch, max int) error {
	rows, err := s.ReadView(ctx, max)
	b.Rows = append(b.Rows, rows...)
	return err
}

// ReadView implements connector.ViewReader: up to max of the hub's rows
// themselves, those of the batch every job attached got (a resumed job's
// rows up to its offset left out, in a copy of its own).
func (s *subscriber) ReadView(ctx context.Context, max int) ([]types.Row, error) {
	if s.closed {
		return nil, errClosed
	}
	if s.cur != nil && s.pos >= len(s.cur.b.Rows) {
		s.err = s.cur.err
		s.cur.release()
		s.cur = nil
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.cur == nil {
		it, err := s.next(ctx)
		if it == nil {
			return nil, err
		}
		s.cur, s.pos = it, 0
		s.skipped += it.skipped
	}
	rows := s.cur.b.Rows[s.pos:]
	rows = rows[:min(len(rows), max)]
	s.pos += len(rows)
	s.queued.Add(-int64(len(rows)))
	if s.skip {
		rows = s.unseen(rows)
	}
	if s.pos >= len(s.cur.b.Rows) && s.cur.err != nil && len(s.cur.b.Rows) == 0 {
		// An error without rows: report it now.
		s.err = s.cur.err
		s.cur.release()
		s.cur = nil
		return nil, s.err
	}
	return rows, nil
}

// unseen returns the rows of a resumed job that come after its offset:
// rows itself when none is before it, else a copy of those that are.
func (s *subscriber) unseen(rows []types.Row) []types.Row {
	seen := func(r types.Row) bool { return r.Origin.Part >= 0 && r.Origin.Offset <= s.after }
	if !slices.ContainsFunc(rows, seen) {
		return rows
	}
	s.kept = s.kept[:0]
	for _, r := range rows {
		if !seen(r) {
			s.kept = append(s.kept, r)
		}
	}
	return s.kept
}

// next waits for the hub's next batch, at most idleWait: nil, nil when
// none came (or a Wake came first).
func (s *subscriber) next(ctx context.Context) (*item, error) {
	select {
	case it := <-s.q:
		return s.got(ctx, it)
	default:
	}
	if ctx != s.woke {
		// The end of ctx wakes the wait, as a Wake does.
		if s.unwake != nil {
			s.unwake()
		}
		s.woke, s.unwake = ctx, context.AfterFunc(ctx, s.Wake)
	}
	if s.timer == nil {
		s.timer = time.NewTimer(idleWait)
	} else {
		s.timer.Reset(idleWait)
	}
	defer s.timer.Stop()
	pushing := s.pushes.Load()
	if pushing {
		s.waiting.Store(true)
	}
	var it *item
	select {
	case it = <-s.q:
	case <-s.timer.C:
	}
	if pushing {
		// From here on the hub queues: whatever it pushed is done.
		s.mu.Lock()
		s.waiting.Store(false)
		err := s.pushErr
		s.mu.Unlock()
		if err != nil {
			if it != nil { // not to be handed out: the job failed
				s.queued.Add(-int64(len(it.b.Rows)))
				it.release()
			}
			s.err = err
			return nil, err
		}
	}
	if it == nil {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		return nil, nil
	}
	return it, nil
}

// got is what next returns for an item taken from the queue: nil for a
// wake, with ctx's error if it ended.
func (s *subscriber) got(ctx context.Context, it *item) (*item, error) {
	if it == nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return it, nil
}

// Skipped implements connector.Stats: the malformed records the hub's
// reader skipped in the stretch of the partition this subscriber got.
func (s *subscriber) Skipped() int64 { return s.skipped }

// Close implements connector.Reader: the subscriber leaves the hub,
// releasing the batches it holds; the partition's last one closes the
// hub's reader.
func (s *subscriber) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.unwake != nil {
		s.unwake()
	}
	s.h.detach(s)
	if s.cur != nil {
		s.cur.release()
		s.cur = nil
	}
	for {
		select {
		case it := <-s.q:
			if it != nil { // not a wake
				it.release()
			}
		default:
			return nil
		}
	}
}

// catchUp is a job's reader of a partition that the hub has read past
// where the job starts: it reads with a reader of the job's own, and
// after every read that leaves it at a known offset tries to join the
// hub there; once it has, it hands out the hub's rows.
type catchUp struct {
	src  *Source
	part int
	own  connector.Reader
	// last is the origin offset of the last row the job got (or the
	// offset it resumed after), when known.
	last  int64
	known bool
	sub   *subscriber
	// ownSkipped is what the own reader skipped before it was closed.
	ownSkipped int64
	// backlog holds the connector.Backlog of the reader read now (own,
	// then sub), if it has one: Backlog is called from other goroutines.
	backlog atomic.Pointer[backlogOf]
	// buf holds the rows of own that ReadView hands out.
	buf *types.Batch
	// waker is the connector.Waker of the reader read now, if it has
	// one: Wake is called from other goroutines.
	waker atomic.Pointer[wakerOf]
	// push and pushMax are what SetPush set, for sub once it is there.
	push    func([]types.Row) error
	pushMax int
}

// SetPush implements connector.Pusher: the hub pushes once the job reads
// through it; its own reader's rows ReadView returns.
func (c *catchUp) SetPush(max int, fn func([]types.Row) error) {
	c.push, c.pushMax = fn, max
	if c.sub != nil {
		c.sub.SetPush(max, fn)
	}
}

// wakerOf holds a reader's connector.Waker.
type wakerOf struct{ connector.Waker }

// Wake implements connector.Waker: it wakes the reader read now.
func (c *catchUp) Wake() {
	if w := c.waker.Load(); w != nil {
		w.Wake()
	}
}

// backlogOf holds a reader's connector.Backlog.
type backlogOf struct{ connector.Backlog }

// Backlog implements connector.Backlog: that of the reader read now.
func (c *catchUp) Backlog() (int64, bool) {
	if bl := c.backlog.Load(); bl != nil {
		return bl.Backlog.Backlog()
	}
	return 0, false
}

// noteReader makes r the reader whose backlog Backlog reports and that
// Wake wakes.
func (c *catchUp) noteReader(r connector.Reader) {
	if bl, ok := r.(connector.Backlog); ok {
		c.backlog.Store(&backlogOf{bl})
	} else {
		c.backlog.Store(nil)
	}
	if w, ok := r.(connector.Waker); ok {
		c.waker.Store(&wakerOf{w})
	} else {
		c.waker.Store(nil)
	}
}

// Read implements connector.Reader.
func (c *catchUp) Read(ctx context.Context, b *types.Batch, max int) error {
	if c.sub != nil {
		return c.sub.Read(ctx, b, max)
	}
	n := len(b.Rows)
	err := c.own.Read(ctx, b, max)
	// The hub is at when its last row is one of those just read (or the
	// one before them): joining there, the job waits for it at most for
	// those rows, which it drops.
	lo := c.last
	for _, r := range b.Rows[n:] {
		if r.Origin.Part < 0 {
			continue
		}
		if !c.known {
			lo, c.known = r.Origin.Offset-1, true
		}
		c.last = r.Origin.Offset
	}
	if err != nil || !c.known {
		return err
	}
	h := c.src.reg.lookup(c.src.key)
	if h == nil {
		return nil
	}
	sub := h.join(c.src.job, c.part, lo, c.last)
	if sub == nil {
		c.src.reg.release(h)
		return nil
	}
	if st, ok := c.own.(connector.Stats); ok {
		c.ownSkipped = st.Skipped()
	}
	c.own.Close()
	c.own, c.sub = nil, sub
	c.noteReader(sub)
	if c.push != nil {
		sub.SetPush(c.pushMax, c.push)
	}
	return nil
}

// ReadView implements connector.ViewReader: the rows of its own reader
// in a batch of its own, then the hub's.
func (c *catchUp) ReadView(ctx context.Context, max int) ([]types.Row, error) {
	if c.sub != nil {
		c.buf = nil
		return c.sub.ReadView(ctx, max)
	}
	if c.buf == nil {
		c.buf = &types.Batch{}
	}
	c.buf.Reset()
	err := c.Read(ctx, c.buf, max)
	return c.buf.Rows, err
}

// Skipped implements connector.Stats.
func (c *catchUp) Skipped() int64 {
	if c.sub != nil {
		return c.ownSkipped + c.sub.Skipped()
	}
	if st, ok := c.own.(connector.Stats); ok {
		return st.Skipped()
	}
	return 0
}

// Close implements connector.Reader.
func (c *catchUp) Close() error {
	if c.sub != nil {
		return c.sub.Close()
	}
	if c.own != nil {
		err := c.own.Close()
		c.own = nil
		return err
	}
	return nil
}

// skipTo is a reader of a source that is not a connector.Resumer,
// replayed from its start, that drops the rows up to a resumed job's
// offset.
type skipTo struct {
	connector.Reader
	offset int64
}

// Backlog implements connector.Backlog, when the reader has one.
func (a *skipTo) Backlog() (int64, bool) {
	if bl, ok := a.Reader.(connector.Backlog); ok {
		return bl.Backlog()
	}
	return 0, false
}

func (a *skipTo) Read(ctx context.Context, b *types.Batch, max int) error {
	n := len(b.Rows)
	err := a.Reader.Read(ctx, b, max)
	keep := b.Rows[:n]
	for _, r := range b.Rows[n:] {
		if r.Origin.Part < 0 || r.Origin.Offset > a.offset {
			keep = append(keep, r)
		}
	}
	b.Rows = keep
	return err
}

// Wake implements connector.Waker, when the reader is one.
func (a *skipTo) Wake() {
	if w, ok := a.Reader.(connector.Waker); ok {
		w.Wake()
	}
}

// Skipped implements connector.Stats.
func (a *skipTo) Skipped() int64 {
	if st, ok := a.Reader.(connector.Stats); ok {
		return st.Skipped()
	}
	return 0
}

var (
	_ connector.Pusher = (*subscriber)(nil)
	_ connector.Pusher = (*catchUp)(nil)
)
