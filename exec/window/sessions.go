package window

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// sessionSet tracks the live session windows of every partition key, with
// Flink's merging rules: a row at t opens the window [t, t+gap); windows
// that intersect, touching ends included (as Flink's TimeWindow.intersects),
// merge into one. D is what a session holds (accumulators, buffered rows).
type sessionSet[D any] struct {
	gap   int64
	zone  *Zone // where session bounds are wall-clock times (nil: UTC)
	parts map[string]*sessionPart[D]
	heap  sessionHeap[D]
	// merge folds src's data into dst's when two sessions merge.
	merge func(dst, src *D) error

	// Checkpoint bookkeeping, for operators that store whole sessions.
	// While track is set, every session changed since the last
	// checkpoint is listed in dirty (once: its dirty flag is set); the
	// list is given up when it outgrows dirtyLimit(live). removed lists
	// the IDs of stored sessions that merged away or fired.
	nextID  uint64
	live    int
	track   bool
	dirty   []*session[D]
	removed []uint64
}

// sessionPart is the live sessions of one partition key, sorted by start;
// they neither overlap nor touch.
type sessionPart[D any] struct {
	key  string
	list []*session[D]
}

type session[D any] struct {
	id         uint64 // the session's store key; unique in the operator
	start, end int64
	// heapEnd is the end the session was queued under; the real end may
	// have grown since, in which case the session is queued again when it
	// reaches the top of the heap.
	heapEnd int64
	part    *sessionPart[D]
	dead    bool // merged into another session, or fired
	dirty   bool // listed in the set's dirty list
	stored  bool // the store holds the session under id
	data    D
}

func newSessionSet[D any](gap int64, zone *Zone, merge func(dst, src *D) error) *sessionSet[D] {
	return &sessionSet[D]{gap: gap, zone: zone, parts: make(map[string]*sessionPart[D]), merge: merge}
}

// add places a row at t of partition pkey, merging sessions it bridges, and
// returns its session. It returns nil when the row is late: it joins no
// live session and its own window [t, t+gap) has already fired under wm.
// newData initialises the data of a new session.
func (ss *sessionSet[D]) add(pkey []byte, t, wm int64, newData func(*D)) (*session[D], error) {
	end := t + ss.gap
	p := ss.parts[string(pkey)]
	if p != nil {
		list := p.list
		// In-order input extends the last session: search from the back.
		j := len(list)
		for j > 0 && list[j-1].start > end {
			j--
		}
		i := j
		for i > 0 && list[i-1].end >= t {
			i--
		}
		if i < j {
			dst := list[i]
			dst.start = min(dst.start, t)
			dst.end = max(dst.end, end)
			for _, src := range list[i+1 : j] {
				dst.end = max(dst.end, src.end)
				if err := ss.merge(&dst.data, &src.data); err != nil {
					return nil, err
				}
				ss.kill(src)
			}
			if j-i > 1 {
				n := copy(list[i+1:], list[j:])
				clear(list[i+1+n:])
				p.list = list[:i+1+n]
			}
			if ss.track && !dst.dirty {
				ss.touch(dst)
			}
			return dst, nil
		}
		if ss.zone.Fired(end, wm) {
			return nil, nil
		}
		s := ss.newSession(p, t, end, newData)
		p.list = slices.Insert(p.list, i, s)
		return s, nil
	}
	if ss.zone.Fired(end, wm) {
		return nil, nil
	}
	p = &sessionPart[D]{key: string(pkey)}
	ss.parts[p.key] = p
	s := ss.newSession(p, t, end, newData)
	p.list = append(p.list, s)
	return s, nil
}

func (ss *sessionSet[D]) newSession(p *sessionPart[D], start, end int64, newData func(*D)) *session[D] {
	s := &session[D]{id: ss.nextID, start: start, end: end, heapEnd: end, part: p}
	ss.nextID++
	ss.live++
	newData(&s.data)
	ss.heap.push(s)
	if ss.track {
		ss.touch(s)
	}
	return s
}

// touch lists s as changed since the last checkpoint.
func (ss *sessionSet[D]) touch(s *session[D]) {
	if len(ss.dirty) >= dirtyLimit(ss.live) {
		// Mostly sessions that are gone: the next checkpoint writes
		// the live ones instead.
		clear(ss.dirty)
		ss.dirty, ss.track = ss.dirty[:0], false
		return
	}
	s.dirty = true
	ss.dirty = append(ss.dirty, s)
}

// kill marks a session that merged away or fired; a stored one is deleted
// at the next checkpoint.
func (ss *sessionSet[D]) kill(s *session[D]) {
	s.dead = true
	ss.live--
	if s.stored {
		ss.removed = append(ss.removed, s.id)
		s.stored = false
	}
}

// restore adds a session read from the store. Sessions of one partition
// key may come in any order; call sorted once they are all in.
func (ss *sessionSet[D]) restore(id uint64, pkey string, start, end int64, data D) *session[D] {
	p := ss.parts[pkey]
	if p == nil {
		p = &sessionPart[D]{key: pkey}
		ss.parts[pkey] = p
	}
	s := &session[D]{id: id, start: start, end: end, heapEnd: end, part: p, stored: true, data: data}
	p.list = append(p.list, s)
	ss.heap.push(s)
	ss.live++
	ss.nextID = max(ss.nextID, id+1)
	return s
}

// sorted sorts every partition's sessions by start after restore.
func (ss *sessionSet[D]) sorted() {
	for _, p := range ss.parts {
		slices.SortFunc(p.list, func(x, y *session[D]) int { return cmp.Compare(x.start, y.start) })
	}
}

// each calls fn for every live session.
func (ss *sessionSet[D]) each(fn func(s *session[D]) error) error {
	for _, p := range ss.parts {
		for _, s := range p.list {
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// lastInstant returns the last instant (end - 1 ms, see Zone.Last) of the
// live session that ends last, or math.MinInt64 if there is none.
func (ss *sessionSet[D]) lastInstant() int64 {
	last := int64(math.MinInt64)
	for _, p := range ss.parts {
		for _, s := range p.list {
			last = max(last, ss.zone.Last(s.end))
		}
	}
	return last
}

// pending reports whether some session may fire under wm.
func (ss *sessionSet[D]) pending(wm int64) bool {
	return len(ss.heap) > 0 && ss.zone.Fired(ss.heap[0].heapEnd, wm)
}

// fire removes the sessions that fired under wm and appends them to dst in
// firing order: by end, then start, then partition key.
func (ss *sessionSet[D]) fire(wm int64, dst []*session[D]) []*session[D] {
	n := len(dst)
	for ss.pending(wm) {
		s := ss.heap.pop()
		if s.dead {
			continue
		}
		if s.end != s.heapEnd {
			s.heapEnd = s.end
			if !ss.zone.Fired(s.end, wm) {
				ss.heap.push(s)
				continue
			}
		}
		p := s.part
		if k := slices.Index(p.list, s); k >= 0 {
			p.list = slices.Delete(p.list, k, k+1)
		}
		if len(p.list) == 0 {
			delete(ss.parts, p.key)
		}
		ss.kill(s)
		dst = append(dst, s)
	}
	slices.SortFunc(dst[n:], func(x, y *session[D]) int {
		if c := cmp.Compare(x.end, y.end); c != 0 {
			return c
		}
		if c := cmp.Compare(x.start, y.start); c != 0 {
			return c
		}
		return strings.Compare(x.part.key, y.part.key)
	})
	return dst
}

// sessionHeap is a min-heap of sessions by heapEnd.
type sessionHeap[D any] []*session[D]

func (h *sessionHeap[D]) push(s *session[D]) {
	*h = append(*h, s)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].heapEnd <= a[i].heapEnd {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *sessionHeap[D]) pop() *session[D] {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a[last] = nil
	a = a[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(a) {
			break
		}
		c := l
		if r := l + 1; r < len(a) && a[r].heapEnd < a[l].heapEnd {
			c = r
		}
		if a[i].heapEnd <= a[c].heapEnd {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	*h = a
	return top
}
