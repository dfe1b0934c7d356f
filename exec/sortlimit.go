package exec

import (
	"slices"

	"github.com/sluicesql/sluice/types"
)

// SortKey is one ORDER BY key.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// SortLimit orders a bounded input by keys at the end of input, then skips
// offset rows and emits at most limit (-1: all). With no keys it needs no
// buffering: it passes the first rows through and drops the rest. An
// updating input (a changelog table, a GROUP BY) is applied as it comes:
// a -U or -D row removes an equal row taken before, and what is left at
// the end is sorted and emitted as +I rows.
type SortLimit struct {
	keys   []SortKey
	offset int64
	limit  int64
	next   Operator

	rows []types.Row
	seen int64
	out  *types.Batch

	// index holds, once a row was retracted, the positions in rows of
	// the live rows of each value (by their key encoding); a retracted
	// row's Vals become nil.
	index map[string][]int
	buf   []byte
}

// NewSortLimit returns a SortLimit operator.
func NewSortLimit(keys []SortKey, offset, limit int64, next Operator) *SortLimit {
	return &SortLimit{keys: keys, offset: offset, limit: limit, next: next}
}

// Open implements Operator.
func (s *SortLimit) Open(ctx *Context) error {
	s.out = types.NewBatch(256, 8)
	return s.next.Open(ctx)
}

// Process implements Operator.
func (s *SortLimit) Process(b *types.Batch) error {
	if len(s.keys) > 0 {
		for _, r := range b.Rows {
			if !r.Kind.IsAccumulate() {
				s.retract(r)
				continue
			}
			c := types.CopyRow(r)
			c.Kind = types.Insert
			if s.index != nil {
				k := s.key(c)
				s.index[k] = append(s.index[k], len(s.rows))
			}
			s.rows = append(s.rows, c)
		}
		return nil
	}
	s.out.Reset()
	for _, r := range b.Rows {
		s.take(r)
	}
	if len(s.out.Rows) == 0 {
		return nil
	}
	return s.next.Process(s.out)
}

// key returns the encoding of r's values.
func (s *SortLimit) key(r types.Row) string {
	s.buf = s.buf[:0]
	for _, v := range r.Vals {
		s.buf = types.AppendKey(s.buf, v)
	}
	return string(s.buf)
}

// retract removes the last live row equal to r, if any (as in Flink, a
// retraction of a row never seen is dropped).
func (s *SortLimit) retract(r types.Row) {
	if s.index == nil {
		s.index = make(map[string][]int)
		for i, x := range s.rows {
			if x.Vals != nil {
				k := s.key(x)
				s.index[k] = append(s.index[k], i)
			}
		}
	}
	k := s.key(r)
	at := s.index[k]
	if len(at) == 0 {
		return
	}
	s.rows[at[len(at)-1]].Vals = nil
	if len(at) == 1 {
		delete(s.index, k)
	} else {
		s.index[k] = at[:len(at)-1]
	}
}

// take passes r through if it falls inside the offset/limit window.
func (s *SortLimit) take(r types.Row) {
	s.seen++
	if s.seen <= s.offset {
		return
	}
	if s.limit >= 0 && s.seen > s.offset+s.limit {
		return
	}
	s.out.Rows = append(s.out.Rows, r)
}

// Watermark implements Operator.
func (s *SortLimit) Watermark(wm int64) error { return s.next.Watermark(wm) }

// Finish implements Operator: a sort emits everything now.
func (s *SortLimit) Finish() error {
	if len(s.keys) > 0 {
		if s.index != nil {
			s.rows = slices.DeleteFunc(s.rows, func(r types.Row) bool { return r.Vals == nil })
			s.index = nil
		}
		slices.SortStableFunc(s.rows, func(a, b types.Row) int {
			for _, k := range s.keys {
				x, y := a.Vals[k.Col], b.Vals[k.Col]
				if x.IsNull() != y.IsNull() {
					if x.IsNull() == k.NullsFirst {
						return -1
					}
					return 1
				}
				c := types.Compare(x, y)
				if k.Desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
		s.out.Reset()
		for _, r := range s.rows {
			s.take(r)
			if len(s.out.Rows) == 1024 {
				if err := s.next.Process(s.out); err != nil {
					return err
				}
				s.out.Reset()
			}
		}
		s.rows = nil
		if len(s.out.Rows) > 0 {
			if err := s.next.Process(s.out); err != nil {
				return err
			}
		}
	}
	return s.next.Finish()
}

// Close implements Operator.
func (s *SortLimit) Close() error { return s.next.Close() }
