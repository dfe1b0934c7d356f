package expr

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/sluicesql/sluice/types"
)

// Common sub-expressions.
//
// Expressions compiled together over the same row (a Calc's filter and
// projections, or one expression on its own) evaluate each distinct
// deterministic sub-expression that occurs more than once among them at
// most once per row: q21's CASE tests LOWER(channel) four times, q14 its
// HOUR(dateTime) four times. Every occurrence compiles to a read of one
// slot, filled the first time an occurrence is reached for the current
// row. The slot is filled lazily, so a sub-expression that the unshared
// expression would not have evaluated (an untaken CASE branch, the
// right-hand side of a short-circuited AND or OR) is not evaluated either,
// and a failure surfaces exactly where it did. A failure is kept in the
// slot like a value: a deterministic expression fails again on the same
// row. Calls of non-deterministic functions (RAND, NOW, UUID ...) and
// anything containing one are never shared: each occurrence is its own
// call, as in Flink.

// cse is the sharing plan of one compilation unit.
type cse struct {
	// shared maps each occurrence of a shared sub-expression to its slot.
	shared map[Node]*cseSlot
	// gen identifies the current row; a slot whose gen differs holds the
	// value of an earlier row.
	gen uint64
}

// cseSlot is the per-row value of one shared sub-expression.
type cseSlot struct {
	gen  uint64
	v    types.Value
	err  error
	eval Eval // the sub-expression itself, compiled once
}

// planCSE finds the sub-expressions of roots worth sharing: deterministic,
// not a bare column or literal, and reached more than once when every
// shared sub-expression's operands are counted once. It returns nil when
// there are none.
func planCSE(roots []Node) *cse {
	// Only a node other than a column or a literal is shared, and one is
	// shared when reached twice: with fewer than two there is nothing to
	// share (a rule's x LIKE 'p'), and no keys to build.
	inner := 0
	for _, r := range roots {
		if r != nil && inner < 2 {
			Walk(r, func(n Node) bool {
				switch n.(type) {
				case *Column, *Literal:
				default:
					inner++
				}
				return inner < 2
			})
		}
	}
	if inner < 2 {
		return nil
	}
	k := &cseKeys{ids: make(map[string]int), of: make(map[Node]int)}
	raw := make(map[int]int)
	for _, r := range roots {
		if r != nil {
			Walk(r, func(n Node) bool {
				if id, ok := k.id(n); ok {
					raw[id]++
				}
				return true
			})
		}
	}
	// Count again, entering a repeated sub-expression's operands only at
	// its first occurrence: UPPER(LOWER(c)) twice shares UPPER(...), and
	// LOWER(c) inside it is then evaluated once without a slot of its own.
	eff := make(map[int]int)
	entered := make(map[int]bool)
	var visit func(n Node)
	visit = func(n Node) {
		if id, ok := k.id(n); ok {
			eff[id]++
			if raw[id] > 1 {
				if entered[id] {
					return
				}
				entered[id] = true
			}
		}
		for _, c := range Children(n) {
			visit(c)
		}
	}
	for _, r := range roots {
		if r != nil {
			visit(r)
		}
	}
	var s *cse
	slots := make(map[int]*cseSlot)
	for n, id := range k.of {
		if id < 0 || eff[id] < 2 {
			continue
		}
		if s == nil {
			s = &cse{shared: make(map[Node]*cseSlot), gen: 1}
		}
		sl := slots[id]
		if sl == nil {
			sl = &cseSlot{}
			slots[id] = sl
		}
		s.shared[n] = sl
	}
	return s
}

// cseKeys gives structurally equal sub-expressions the same id.
type cseKeys struct {
	ids map[string]int
	of  map[Node]int // -1: not shareable
	buf []byte
}

// id returns the id of n's structure, and false when n is not worth
// sharing (a column, a literal) or must not be shared (non-deterministic).
func (k *cseKeys) id(n Node) (int, bool) {
	id := k.intern(n)
	if id < 0 {
		return 0, false
	}
	switch n.(type) {
	case *Column, *Literal:
		return id, false
	}
	return id, true
}

// intern returns the id of n's structure, or -1 when n or an operand of it
// is non-deterministic or unknown.
func (k *cseKeys) intern(n Node) int {
	if id, ok := k.of[n]; ok {
		return id
	}
	var kids []int
	for _, c := range Children(n) {
		id := k.intern(c)
		if id < 0 {
			k.of[n] = -1
			return -1
		}
		kids = append(kids, id)
	}
	b := k.buf[:0]
	switch x := n.(type) {
	case *Column:
		b = append(b, 'c')
		b = strconv.AppendInt(b, int64(x.Index), 10)
	case *Literal:
		b = append(b, 'l')
		b = types.AppendKey(b, x.V)
		if x.V.Kind() == types.KindFloat || x.V.Kind() == types.KindDouble {
			// AppendKey equates 0.0 and -0.0; 1/x tells them apart.
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.V.Float()))
		}
	case *Call:
		if x.Fn == nil || x.Fn.NonDeterministic {
			k.of[n] = -1
			return -1
		}
		b = fmt.Appendf(b, "f%p%s", x.Fn, x.Name)
	case *Cast:
		b = append(b, 'x')
		if x.Try {
			b = append(b, 't')
		}
	case *Case:
		b = append(b, 'k')
		if x.Operand != nil {
			b = append(b, 'o')
		}
		if x.Else != nil {
			b = append(b, 'e')
		}
	default:
		k.of[n] = -1
		return -1
	}
	b = append(b, '|')
	b = append(b, n.Type().String()...)
	for _, id := range kids {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(id), 10)
	}
	k.buf = b
	id, ok := k.ids[string(b)]
	if !ok {
		id = len(k.ids)
		k.ids[string(b)] = id
	}
	k.of[n] = id
	return id
}

// compileShared returns the evaluator of an occurrence of a shared
// sub-expression: it reads the slot, filling it first if this row has not
// reached the sub-expression yet.
func (c *compiler) compileShared(n Node, sl *cseSlot) (Eval, error) {
	if sl.eval == nil {
		e, err := c.compileNode(n)
		if err != nil {
			return nil, err
		}
		sl.eval = e
	}
	s, inner := c.cse, sl.eval
	return func(row []types.Value) (types.Value, error) {
		if sl.gen != s.gen {
			sl.v, sl.err = inner(row)
			sl.gen = s.gen
		}
		return sl.v, sl.err
	}, nil
}

// nextRow makes every slot stale.
func (s *cse) nextRow() { s.gen++ }
