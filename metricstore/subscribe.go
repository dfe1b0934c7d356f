package metricstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicesql/sluice/types"
)

// Token is a position in a group's commits: the group's incarnation (a
// random number given when the group is created in this process) and the
// number of the last commit (or redefinition) before the position. The
// zero Token is no position.
type Token struct {
	epoch, seq uint64
}

// IsZero reports whether t is the zero Token.
func (t Token) IsZero() bool { return t == Token{} }

// String returns the token's text form, "" for the zero Token.
func (t Token) String() string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprintf("%016x-%d", t.epoch, t.seq)
}

// ParseToken parses the text form of a token; "" is the zero Token.
func ParseToken(s string) (Token, error) {
	if s == "" {
		return Token{}, nil
	}
	e, n, ok := strings.Cut(s, "-")
	if ok && len(e) == 16 {
		epoch, err1 := strconv.ParseUint(e, 16, 64)
		seq, err2 := strconv.ParseUint(n, 10, 64)
		if err1 == nil && err2 == nil && epoch != 0 {
			return Token{epoch: epoch, seq: seq}, nil
		}
	}
	return Token{}, fmt.Errorf("%q is not a metric store token (a token is what an event's id or a read's token gave): %w", s, ErrInvalid)
}

// EventKind is the kind of a subscription event.
type EventKind uint8

// Event kinds.
const (
	// Changes are the changes of one commit (of Commit, Reset or
	// Replace): for each key changed, its state after the commit.
	Changes EventKind = iota + 1
	// Snapshot is the state of every key (or of every key asked for
	// that the group holds) at one position.
	Snapshot
	// Redefined says that the group was redefined (Event.Group is the
	// new definition); with Reset, its key columns changed and every
	// value was dropped.
	Redefined
)

func (k EventKind) String() string {
	switch k {
	case Changes:
		return "changes"
	case Snapshot:
		return "snapshot"
	case Redefined:
		return "redefined"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// logRecord is one commit or redefinition in a group's change log.
//
// A commit's items (the keys it changed, each with its record after the
// commit) are locations in a few byte buffers: the table's chunks the
// records were written to, and a buffer of its own of the deleted keys'
// records (the key without values), in the chunks' format. So a log of a
// million changes holds no pointer per change for the collector to
// trace.
type logRecord struct {
	seq   uint64
	kind  EventKind
	reset bool
	def   *definition
	// bufs holds the buffers, the first being the deleted keys'; locs an
	// item each: buffer index << 32 | offset.
	bufs  [][]byte
	locs  []uint64
	bytes int64

	// json is the record's event as a subscriber of every key and
	// metric gets it, encoded once for all of them (see SharedJSON) by
	// the first under jsonMu, and kept while the record is among the
	// last few so encoded (jsonKept).
	jsonMu   sync.Mutex
	json     atomic.Pointer[[]byte]
	jsonKept *jsonKept
	// keyIndex gives, by the hash of a key, the last item of that key,
	// built at the first call of index, for subscribers that follow few
	// keys.
	keyOnce  sync.Once
	keyIndex map[uint64]int32
}

// jsonKept bounds the memory of the shared encodings of a group's
// records: only the last few encoded keep theirs (a subscriber far
// behind encodes the event again).
type jsonKept struct {
	mu   sync.Mutex
	recs [16]*logRecord
	next int
}

// keep notes that r's encoding was made, and drops the oldest one kept.
func (k *jsonKept) keep(r *logRecord) {
	k.mu.Lock()
	old := k.recs[k.next]
	k.recs[k.next] = r
	k.next = (k.next + 1) % len(k.recs)
	k.mu.Unlock()
	if old != nil && old != r {
		old.json.Store(nil)
	}
}

// item returns item i: its key, its record and whether it is a deletion.
func (r *logRecord) item(i int) (key, rec []byte, deleted bool) {
	l := r.locs[i]
	key, rec, _ = recordAt(r.bufs[l>>32], int(uint32(l)))
	return key, rec, l>>32 == 0
}

// find returns the last item of key.
func (r *logRecord) find(seed maphash.Seed, key string) (int, bool) {
	r.keyOnce.Do(func() {
		r.keyIndex = make(map[uint64]int32, len(r.locs))
		for i := range r.locs {
			k, _, _ := r.item(i)
			r.keyIndex[maphash.Bytes(seed, k)] = int32(i)
		}
	})
	if i, ok := r.keyIndex[maphash.String(seed, key)]; ok {
		if k, _, _ := r.item(int(i)); string(k) == key {
			return int(i), true
		}
		// Another key of the same hash: the long way.
		for i := len(r.locs) - 1; i >= 0; i-- {
			if k, _, _ := r.item(i); string(k) == key {
				return i, true
			}
		}
	}
	return 0, false
}

// logBuilder makes a commit's log record.
type logBuilder struct {
	r     *logRecord
	tombs []byte
	// ids are the table's chunk ids of bufs[1:].
	ids []uint32
}

func newLogBuilder(r *logRecord, n int) *logBuilder {
	r.bufs = [][]byte{nil}
	r.locs = make([]uint64, 0, n)
	return &logBuilder{r: r}
}

// add adds an item: the record at location l of table t.
func (b *logBuilder) add(t *table, l uint64) {
	id := uint32(l >> 32)
	i := len(b.ids) - 1
	for i >= 0 && b.ids[i] != id {
		i--
	}
	if i < 0 {
		b.ids = append(b.ids, id)
		// To its capacity: later items of the commit may be appended to
		// the chunk (whose array never moves).
		c := t.chunkOf(l)
		b.r.bufs = append(b.r.bufs, c.buf[:cap(c.buf)])
		i = len(b.ids) - 1
	}
	_, _, size := t.at(l)
	b.r.locs = append(b.r.locs, uint64(i+1)<<32|uint64(uint32(l)))
	b.r.bytes += int64(size) + itemOverhead
}

// addDeleted adds a deleted key's item.
func (b *logBuilder) addDeleted(key, rec []byte) {
	off := len(b.tombs)
	b.tombs = appendRecord(b.tombs, key, rec)
	b.r.locs = append(b.r.locs, uint64(off))
	b.r.bytes += int64(len(b.tombs)-off) + itemOverhead
}

// done returns the record.
func (b *logBuilder) done() *logRecord {
	b.r.bufs[0] = b.tombs
	return b.r
}

// item is a key of a snapshot with its record.
type item struct {
	key, rec []byte
}

// itemOverhead estimates what an item costs besides its key and record.
const itemOverhead = 16

// changeLog is a group's last commits, in order, numbered without gaps.
type changeLog struct {
	recs  []*logRecord
	bytes int64
}

// first returns the number of the oldest record held; next (the number
// the next record will get) when there is none.
func (l *changeLog) first(next uint64) uint64 {
	if len(l.recs) == 0 {
		return next
	}
	return l.recs[0].seq
}

// at returns record seq, which the log holds.
func (l *changeLog) at(seq uint64) *logRecord { return l.recs[seq-l.recs[0].seq] }

// append numbers r, adds it to the log (dropping the oldest records
// beyond the log's size; the last one always stays) and wakes the
// subscribers. g.mu is held for writing.
func (g *group) append(r *logRecord) {
	g.seq++
	r.seq = g.seq
	r.jsonKept = &g.jsonKept
	if r.bytes == 0 {
		r.bytes = itemOverhead
	}
	g.log.recs = append(g.log.recs, r)
	g.log.bytes += r.bytes
	for len(g.log.recs) > 1 && g.log.bytes > g.s.opts.ChangeLogBytes {
		g.log.bytes -= g.log.recs[0].bytes
		g.log.recs[0] = nil
		g.log.recs = g.log.recs[1:]
	}
	g.wakeAll()
}

// wakeAll wakes the subscribers waiting for a commit. g.mu is held for
// writing.
func (g *group) wakeAll() {
	close(g.wake)
	g.wake = make(chan struct{})
}

// SubscribeOptions say where a subscription starts and what it follows.
type SubscribeOptions struct {
	// From resumes after a token (an event's, a read's): the
	// subscription delivers every commit after it. If the change log no
	// longer holds the commits after it, or it is of another incarnation
	// of the group (the store restarted, the group was dropped and
	// created again), the subscription starts with a Snapshot instead.
	From Token
	// Snapshot, without From, starts with a snapshot of the current
	// values; otherwise a subscription without From delivers the commits
	// made after Subscribe.
	Snapshot bool
	// Keys, if not empty, are the only keys followed: events carry only
	// their state after each commit that changed them (once, if a commit
	// changed one twice), and a commit that changes none of them makes no
	// event (Subscription.Token moves on still).
	Keys [][]types.Value
	// Metrics, if not empty, are the only metrics whose values events
	// carry, in this order. A metric removed by a redefinition reads
	// NOT_FOUND.
	Metrics []string
}

// Subscription follows a group's commits. It is used by one goroutine.
type Subscription struct {
	s       *Store
	g       *group
	epoch   uint64
	size    int
	keys    map[string]bool // nil: every key
	keyList []string
	metrics []string
	// pos is the number of the last commit delivered or skipped (valid
	// when posOK); snap says that a snapshot comes next.
	pos   uint64
	posOK bool
	snap  bool
	// unit is the snapshot or commit being delivered, in parts.
	unit *unit
	// selDef and sel are the metrics selected, as of a definition.
	selDef     *definition
	sel        []int
	selMetrics []Metric
	closed     bool
}

// unit is a snapshot or a commit as a subscriber gets it.
type unit struct {
	kind  EventKind
	reset bool
	def   *definition
	end   uint64
	// A commit's unit has its log record and the items delivered (nil:
	// all of them); a snapshot's its items.
	rec  *logRecord
	idx  []int32
	snap []item
	next int
	// shared: the unit is all of rec, to a subscriber of every key and
	// metric, and its encoding is shared.
	shared bool
}

// len returns the number of items of u.
func (u *unit) len() int {
	switch {
	case u.snap != nil:
		return len(u.snap)
	case u.idx != nil:
		return len(u.idx)
	case u.rec != nil:
		return len(u.rec.locs)
	}
	return 0
}

// item returns item i of u.
func (u *unit) item(i int) (key, rec []byte, deleted bool) {
	switch {
	case u.snap != nil:
		return u.snap[i].key, u.snap[i].rec, false
	case u.idx != nil:
		return u.rec.item(int(u.idx[i]))
	}
	return u.rec.item(i)
}

// Subscribe returns a subscription to group's commits, from where opts
// say. Nothing is read until Next.
func (s *Store) Subscribe(group string, opts SubscribeOptions) (*Subscription, error) {
	g, err := s.group(group)
	if err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.gone != nil {
		return nil, g.gone
	}
	d := g.def
	if _, err := d.selectMetrics(opts.Metrics); err != nil {
		return nil, err
	}
	sub := &Subscription{s: s, g: g, epoch: g.epoch, size: s.opts.EventSize, metrics: opts.Metrics}
	if len(opts.Keys) > 0 {
		sub.keys = make(map[string]bool, len(opts.Keys))
		for i, k := range opts.Keys {
			if err := d.checkKey(fmt.Sprintf("key %d", i), k); err != nil {
				return nil, err
			}
			ks := string(appendKey(nil, k))
			if !sub.keys[ks] {
				sub.keys[ks] = true
				sub.keyList = append(sub.keyList, ks)
			}
		}
	}
	switch f := opts.From; {
	case f.IsZero():
		sub.pos, sub.posOK, sub.snap = g.seq, !opts.Snapshot, opts.Snapshot
	case f.epoch != g.epoch:
		sub.snap = true
	case f.seq > g.seq:
		return nil, fmt.Errorf("token %s is ahead of metric group %s's last commit (%d): %w", f, g.name, g.seq, ErrInvalid)
	default:
		sub.pos, sub.posOK = f.seq, true
	}
	s.subscribers.Add(1)
	return sub, nil
}

// errSubscriptionClosed is what Next returns after Close.
var errSubscriptionClosed = errors.New("the subscription is closed")

// Next returns the next event, waiting for a commit if there is none: the
// events of each commit after the subscription's position, in order, a
// snapshot first when one is due (the subscription started from no
// position with Snapshot, from an unusable token, or it fell behind the
// change log's start). A commit or snapshot of more than
// Options.EventSize keys comes in several events; only the last carries
// the token, and only then is the subscriber's state consistent. Next
// returns ctx's error when ctx ends first, a *NotFoundError once the
// group is dropped, and ErrClosed once the store is closed.
func (sub *Subscription) Next(ctx context.Context) (*Event, error) {
	if sub.closed {
		return nil, errSubscriptionClosed
	}
	for {
		if u := sub.unit; u != nil {
			return sub.part(u), nil
		}
		g := sub.g
		g.mu.RLock()
		if g.gone != nil {
			err := g.gone
			g.mu.RUnlock()
			return nil, err
		}
		switch {
		case sub.snap || sub.pos+1 < g.log.first(g.seq+1):
			var err error
			sub.unit, err = sub.snapshot()
			g.mu.RUnlock()
			if err != nil {
				return nil, err
			}
			continue
		case sub.pos < g.seq:
			r := g.log.at(sub.pos + 1)
			g.mu.RUnlock()
			if sub.unit = sub.unitOf(r); sub.unit == nil {
				sub.pos = r.seq
			}
			continue
		}
		wake := g.wake
		g.mu.RUnlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Token returns the subscription's position: every commit up to it was
// delivered, or changed no key followed. It is the zero Token while a
// subscription that started from no usable position has not received
// its snapshot's last event.
func (sub *Subscription) Token() Token {
	if !sub.posOK {
		return Token{}
	}
	return Token{epoch: sub.epoch, seq: sub.pos}
}

// Close ends the subscription. It must not be called while Next runs
// (end Next's context instead).
func (sub *Subscription) Close() {
	if !sub.closed {
		sub.closed = true
		sub.unit = nil
		sub.s.subscribers.Add(-1)
	}
}

// snapshot returns the unit of a snapshot of the followed keys. g.mu is
// held for reading.
func (sub *Subscription) snapshot() (*unit, error) {
	g := sub.g
	var items []item
	if sub.keys != nil {
		for _, k := range sub.keyList {
			rec, _, err := g.lookup([]byte(k))
			if err != nil {
				return nil, fmt.Errorf("metric group %s: %w", g.name, err)
			}
			if rec != nil {
				items = append(items, item{key: []byte(k), rec: rec})
			}
		}
	} else {
		items = make([]item, 0, g.t.keys+g.spilled)
		g.t.each(func(k, rec []byte) {
			items = append(items, item{key: k, rec: rec})
		})
		if g.spilled > 0 {
			err := g.spillStore.Scan(nil, func(k, v []byte) bool {
				items = append(items, item{key: k, rec: v})
				return true
			})
			if err != nil {
				return nil, fmt.Errorf("metric group %s: cannot read the spilled values: %w", g.name, err)
			}
		}
	}
	sub.snap = false
	if items == nil {
		items = []item{}
	}
	return &unit{kind: Snapshot, reset: true, def: g.def, snap: items, end: g.seq}, nil
}

// unitOf returns the unit of log record r for the subscriber, or nil when
// it has nothing for it.
func (sub *Subscription) unitOf(r *logRecord) *unit {
	u := &unit{kind: r.kind, reset: r.reset, def: r.def, end: r.seq, rec: r}
	if r.kind != Changes {
		return u
	}
	n := len(r.locs)
	if sub.keys == nil {
		u.shared = sub.metrics == nil && n <= sub.size
		return u
	}
	u.idx = []int32{}
	if len(sub.keyList) < n/4 {
		// Few keys followed: they are looked up in the commit, rather than
		// the commit's keys among them (the last state of each key).
		for _, k := range sub.keyList {
			if i, ok := r.find(sub.s.seed, k); ok {
				u.idx = append(u.idx, int32(i))
			}
		}
		slices.Sort(u.idx)
	} else {
		for i := range n {
			if k, _, _ := r.item(i); sub.keys[string(k)] {
				u.idx = append(u.idx, int32(i))
			}
		}
	}
	if len(u.idx) == 0 && !r.reset {
		return nil
	}
	return u
}

// part returns the next event of u.
func (sub *Subscription) part(u *unit) *Event {
	n := min(u.len()-u.next, sub.size)
	sel, metrics := sub.selection(u.def)
	ev := &Event{Kind: u.kind, Reset: u.reset && u.next == 0, Group: u.def.g, Metrics: metrics,
		def: u.def, sel: sel, u: u, lo: u.next, hi: u.next + n}
	u.next += n
	if u.next >= u.len() {
		ev.Token = Token{epoch: sub.epoch, seq: u.end}
		if u.shared {
			ev.rec = u.rec
		}
		sub.pos, sub.posOK, sub.unit = u.end, true, nil
	}
	return ev
}

// selection returns the indices (-1: not in d) and the metrics of the
// metrics followed, as of definition d.
func (sub *Subscription) selection(d *definition) ([]int, []Metric) {
	if sub.selDef == d {
		return sub.sel, sub.selMetrics
	}
	sub.selDef = d
	if sub.metrics == nil {
		sub.sel, _ = d.selectMetrics(nil)
		sub.selMetrics = d.g.Metrics
		return sub.sel, sub.selMetrics
	}
	sub.sel = make([]int, len(sub.metrics))
	sub.selMetrics = make([]Metric, len(sub.metrics))
	for i, name := range sub.metrics {
		j, ok := d.index[name]
		if !ok {
			sub.sel[i], sub.selMetrics[i] = -1, Metric{Name: name}
			continue
		}
		sub.sel[i], sub.selMetrics[i] = j, d.g.Metrics[j]
	}
	return sub.sel, sub.selMetrics
}

// Event is one event of a subscription.
type Event struct {
	Kind EventKind
	// Token is the position after the event, set on the last event of a
	// commit or snapshot (zero on the parts before).
	Token Token
	// Reset says to drop every value held for the followed keys before
	// applying the event: set on a snapshot's first event, on the first
	// event of a Reset or Replace, and on a redefinition that changed the
	// key columns.
	Reset bool
	// Group is the definition the values are read with (for Redefined,
	// the new definition). Its slices must not be modified.
	Group Group
	// Metrics are the metrics of each entry's values, in order (a
	// followed metric the definition lacks has a zero Type).
	Metrics []Metric

	def *definition
	sel []int
	// The event is items lo to hi of u; rec is set when its encoding is
	// shared.
	u       *unit
	lo, hi  int
	rec     *logRecord
	entries []Entry
}

// Entries returns the keys of the event with their values after it (for
// a Changes or Snapshot event), decoded at the first call.
func (e *Event) Entries() ([]Entry, error) {
	if e.entries != nil || e.hi == e.lo {
		return e.entries, nil
	}
	recs := make([][]byte, e.hi-e.lo)
	deleted := make([]bool, e.hi-e.lo)
	for i := range recs {
		_, recs[i], deleted[i] = e.u.item(e.lo + i)
	}
	var err error
	e.entries, err = e.def.entries(e.sel, nil, recs, deleted)
	return e.entries, err
}
