package over

import "github.com/sluicesql/sluice/types"

// ring is a FIFO of rows of one width in a circular buffer, with their
// times: a frame. Rows leave it oldest first. It grows by doubling, up to
// limit rows if limit > 0 (a ROWS frame never holds more).
type ring struct {
	vals  []types.Value // cap rows of w values
	ts    []int64       // cap times
	head  int
	n     int
	limit int
}

func (r *ring) len() int { return r.n }

func (r *ring) slot(i int) int {
	j := r.head + i
	if j >= len(r.ts) {
		j -= len(r.ts)
	}
	return j
}

// row returns the values of row i (0 is the oldest).
func (r *ring) row(i, w int) []types.Value {
	j := r.slot(i)
	return r.vals[j*w : (j+1)*w : (j+1)*w]
}

// time returns the time of row i.
func (r *ring) time(i int) int64 { return r.ts[r.slot(i)] }

// push appends a row at time t and returns its values (NULL), to be
// filled in.
func (r *ring) push(t int64, w int) []types.Value {
	if r.n == len(r.ts) {
		r.grow(w)
	}
	j := r.slot(r.n)
	r.ts[j] = t
	r.n++
	return r.vals[j*w : (j+1)*w : (j+1)*w]
}

func (r *ring) grow(w int) {
	c := max(4, 2*len(r.ts))
	if r.limit > 0 {
		c = min(c, r.limit)
	}
	ts := make([]int64, c)
	vals := make([]types.Value, c*w)
	for i := range r.n {
		ts[i] = r.time(i)
		copy(vals[i*w:(i+1)*w], r.row(i, w))
	}
	r.ts, r.vals, r.head = ts, vals, 0
}

// pop drops the oldest row.
func (r *ring) pop(w int) {
	clear(r.row(0, w)) // let the GC free strings
	r.head = r.slot(1)
	r.n--
	if r.n == 0 {
		r.head = 0
	}
}
