package over

import "github.com/sluicesql/sluice/types"

// queue is a FIFO of rows of one width, stored flat, with their times:
// the rows of a partition waiting for the watermark, in time order.
type queue struct {
	vals []types.Value
	ts   []int64
	head int // index of the first row
}

func (q *queue) len() int { return len(q.ts) - q.head }

func (q *queue) row(i, w int) []types.Value {
	i += q.head
	return q.vals[i*w : (i+1)*w : (i+1)*w]
}

// push appends a row and returns its values, to be filled in.
func (q *queue) push(t int64, w int) []types.Value {
	q.ts = append(q.ts, t)
	n := len(q.vals)
	if cap(q.vals)-n >= w {
		q.vals = q.vals[:n+w]
	} else {
		q.vals = append(q.vals, make([]types.Value, w)...)
	}
	return q.vals[n : n+w : n+w]
}

// insert adds a row in time order, after the rows with the same time, and
// returns its values, to be filled in.
func (q *queue) insert(t int64, w int) []types.Value {
	i := len(q.ts)
	for i > q.head && q.ts[i-1] > t {
		i--
	}
	v := q.push(t, w)
	if i == len(q.ts)-1 {
		return v
	}
	copy(q.ts[i+1:], q.ts[i:])
	q.ts[i] = t
	copy(q.vals[(i+1)*w:], q.vals[i*w:len(q.vals)-w])
	v = q.vals[i*w : (i+1)*w : (i+1)*w]
	clear(v)
	return v
}

// pop drops the first n rows.
func (q *queue) pop(n, w int) {
	clear(q.vals[q.head*w : (q.head+n)*w]) // let the GC free strings
	q.head += n
	switch {
	case q.head == len(q.ts):
		q.ts, q.vals, q.head = q.ts[:0], q.vals[:0], 0
	case q.head*2 >= len(q.ts):
		// Moving the rest down costs no more than the rows popped.
		m := copy(q.ts, q.ts[q.head:])
		q.ts = q.ts[:m]
		copy(q.vals, q.vals[q.head*w:])
		clear(q.vals[m*w:])
		q.vals = q.vals[:m*w]
		q.head = 0
	}
}
