package connector

// AckLog is an Acknowledger's bookkeeping: what a reader has read and not
// yet acknowledged, in the order read, and where the barriers of the
// job's checkpoints fell in it, so that a completed checkpoint
// acknowledges exactly what came before its barrier. T is what the
// system needs to acknowledge a message (a packet or delivery tag, a
// receipt, a held request). It is not safe for concurrent use: the
// reader guards it with its own lock.
type AckLog[T any] struct {
	pending []T
	marks   []ackMark
}

// ackMark is where checkpoint id's barrier fell: after the first n
// pending entries.
type ackMark struct {
	id int64
	n  int
}

// Add appends an entry read.
func (l *AckLog[T]) Add(x T) { l.pending = append(l.pending, x) }

// Len returns how many entries are not acknowledged.
func (l *AckLog[T]) Len() int { return len(l.pending) }

// Pending returns the entries not acknowledged, oldest first; valid until
// the next change.
func (l *AckLog[T]) Pending() []T { return l.pending }

// Barrier records checkpoint id's barrier after the entries read so far.
func (l *AckLog[T]) Barrier(id int64) { l.marks = append(l.marks, ackMark{id: id, n: len(l.pending)}) }

// Covered returns how many of the oldest pending entries checkpoint id
// (and the checkpoints before it) covers, forgetting their barriers; an
// id below 0 (the final commit) covers them all. The caller acknowledges
// them and Drops them.
func (l *AckLog[T]) Covered(id int64) int {
	n, k := 0, 0
	for ; k < len(l.marks) && (id < 0 || l.marks[k].id <= id); k++ {
		n = l.marks[k].n
	}
	l.marks = l.marks[k:]
	if id < 0 {
		n = len(l.pending)
	}
	return n
}

// Drop forgets the n oldest pending entries (acknowledged, or never to
// be: the broker sends them again).
func (l *AckLog[T]) Drop(n int) {
	n = min(n, len(l.pending))
	if n <= 0 {
		return
	}
	var zero T
	rest := copy(l.pending, l.pending[n:])
	for i := rest; i < len(l.pending); i++ {
		l.pending[i] = zero
	}
	l.pending = l.pending[:rest]
	for i := range l.marks {
		l.marks[i].n = max(l.marks[i].n-n, 0)
	}
}

// Reset forgets every entry and barrier.
func (l *AckLog[T]) Reset() { l.pending, l.marks = nil, nil }
