package rank

import "github.com/sluicesql/sluice/types"

// Type is the numbering function of a Top-N.
type Type uint8

// Numbering functions, as SQL's.
const (
	// RowNumber numbers rows 1, 2, 3, ...; rows that tie get distinct
	// numbers in arrival order.
	RowNumber Type = iota
	// Standard is RANK(): rows that tie share the number of the first of
	// them, and the numbers after a tie skip (1, 1, 3).
	Standard
	// Dense is DENSE_RANK(): rows that tie share a number, and the numbers
	// after a tie do not skip (1, 1, 2).
	Dense
)

// String returns the SQL name of the function.
func (t Type) String() string {
	switch t {
	case Standard:
		return "RANK"
	case Dense:
		return "DENSE_RANK"
	}
	return "ROW_NUMBER"
}

// insertRanked adds a row to p under RANK or DENSE_RANK.
func (o *Operator) insertRanked(p *partition, vals []types.Value) {
	n := len(p.rows)
	// pos: after the rows it ties with; lo: before them.
	pos := n
	for pos > 0 && o.compare(vals, p.rows[pos-1].vals) < 0 {
		pos--
	}
	lo := pos
	for lo > 0 && o.compare(vals, p.rows[lo-1].vals) == 0 {
		lo--
	}
	if !o.cfg.KeepAll {
		// Numbers only grow with an append-only input: a row numbered
		// past N now never comes in.
		num := lo + 1
		if o.cfg.Type == Dense && lo > 0 {
			if num = p.rows[lo-1].num + 1; p.rows[lo-1].num == 0 {
				return
			}
		}
		if num > o.cfg.Limit {
			return
		}
	}
	o.touch(p)
	e := &entry{vals: append([]types.Value(nil), vals...)}
	if o.cfg.KeepAll {
		e.enc = o.identity(vals)
	}
	o.size.kept(e)
	p.rows = append(p.rows, nil)
	copy(p.rows[pos+1:], p.rows[pos:])
	p.rows[pos] = e
	o.renumber(p, pos, true)
	if !o.cfg.KeepAll {
		// Drop the rows numbered past N.
		end := len(p.rows)
		for end > pos && p.rows[end-1].num == 0 {
			end--
		}
		clear(p.rows[end:])
		p.rows = p.rows[:end]
	}
}

// retractRanked removes the row at pos of p under RANK or DENSE_RANK.
func (o *Operator) retractRanked(p *partition, pos int) {
	gone := p.rows[pos]
	copy(p.rows[pos:], p.rows[pos+1:])
	p.rows[len(p.rows)-1] = nil
	p.rows = p.rows[:len(p.rows)-1]
	if gone.num > 0 {
		o.emit(types.Delete, gone.vals, gone.num)
	}
	o.renumber(p, pos, true)
}

// renumber numbers the rows of p from index from on (the rows before keep
// their numbers) and, with emit, emits what changed: a row that enters the
// top N (+I), moves within it (-U, +U) or leaves it (-D).
func (o *Operator) renumber(p *partition, from int, emit bool) {
	num := 0
	if from > 0 {
		if num = p.rows[from-1].num; num == 0 {
			return // the rows from there on are and were past N
		}
	}
	for i := from; i < len(p.rows); i++ {
		e := p.rows[i]
		switch {
		case i > 0 && o.compare(e.vals, p.rows[i-1].vals) == 0:
			// A tie keeps the number.
		case o.cfg.Type == Standard:
			num = i + 1
		default:
			num++
		}
		if num > o.cfg.Limit {
			if e.num == 0 {
				return // it and the rows after it were past N already
			}
			if emit {
				o.emit(types.Delete, e.vals, e.num)
			}
			e.num = 0
			continue
		}
		if emit {
			switch {
			case e.num == 0:
				o.emit(types.Insert, e.vals, num)
			case e.num != num:
				o.emit(types.UpdateBefore, e.vals, e.num)
				o.emit(types.UpdateAfter, e.vals, num)
			}
		}
		e.num = num
	}
}
