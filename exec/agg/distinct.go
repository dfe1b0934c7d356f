package agg

import (
	"encoding/binary"
	"slices"

	"github.com/sluicesql/sluice/types"
)

// distinctAcc wraps an accumulator for f(DISTINCT ...). It counts how many
// times each distinct argument tuple is present and feeds the inner
// accumulator only on the first arrival (count 0 → 1) and the last removal
// (1 → 0). A retraction of a tuple not present leaves a negative count that
// a later arrival cancels, so that a retraction overtaking its accumulation
// still nets out. Rows with a NULL argument are skipped, as SQL's DISTINCT
// aggregates do.
type distinctAcc struct {
	inner Accumulator
	seen  map[string]*distinctEntry
	buf   []byte
}

type distinctEntry struct {
	n    int64
	args []types.Value // owned copy of the arguments
}

func newDistinct(f Func, argTypes []types.Type, result types.Type) Accumulator {
	return &distinctAcc{
		inner: f.New(argTypes, result),
		seen:  make(map[string]*distinctEntry),
	}
}

func (a *distinctAcc) key(args []types.Value) []byte {
	a.buf = a.buf[:0]
	for _, v := range args {
		a.buf = types.AppendKey(a.buf, v)
	}
	return a.buf
}

func (a *distinctAcc) Add(args []types.Value) error { return a.apply(args, 1) }

func (a *distinctAcc) Retract(args []types.Value) error { return a.apply(args, -1) }

func (a *distinctAcc) apply(args []types.Value, delta int64) error {
	if anyNull(args) {
		return nil
	}
	k := a.key(args)
	e, ok := a.seen[string(k)]
	if !ok {
		e = &distinctEntry{args: slices.Clone(args)}
		a.seen[string(k)] = e
	}
	return a.shift(string(k), e, delta)
}

// shift changes e's count by delta and feeds the inner accumulator when the
// tuple appears (count rises above 0) or disappears (falls to 0 or below).
func (a *distinctAcc) shift(k string, e *distinctEntry, delta int64) error {
	before := e.n
	e.n += delta
	var err error
	switch {
	case before <= 0 && e.n > 0:
		err = a.inner.Add(e.args)
	case before > 0 && e.n <= 0:
		err = a.inner.Retract(e.args)
	}
	if e.n == 0 {
		delete(a.seen, k)
	}
	return err
}

func (a *distinctAcc) Merge(other Accumulator) error {
	o, ok := other.(*distinctAcc)
	if !ok {
		return mergeError("DISTINCT", other)
	}
	for k, oe := range o.seen {
		e, ok := a.seen[k]
		if !ok {
			e = &distinctEntry{args: oe.args}
			a.seen[k] = e
		}
		if err := a.shift(k, e, oe.n); err != nil {
			return err
		}
	}
	return nil
}

func (a *distinctAcc) Result() types.Value { return a.inner.Result() }

func (a *distinctAcc) Clone() Accumulator {
	c := &distinctAcc{inner: a.inner.Clone(), seen: make(map[string]*distinctEntry, len(a.seen))}
	for k, e := range a.seen {
		c.seen[k] = &distinctEntry{n: e.n, args: e.args} // args are never mutated
	}
	return c
}

func (a *distinctAcc) Reset() {
	clear(a.seen)
	a.inner.Reset()
}

// AppendState writes the counted tuples in key order (so that equal states
// encode alike) followed by the inner accumulator's state, which is kept
// rather than rebuilt because order-sensitive functions depend on arrival
// order.
func (a *distinctAcc) AppendState(dst []byte) []byte {
	keys := make([]string, 0, len(a.seen))
	for k := range a.seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		e := a.seen[k]
		dst = binary.AppendVarint(dst, e.n)
		dst = binary.AppendUvarint(dst, uint64(len(e.args)))
		for _, v := range e.args {
			dst = AppendStateValue(dst, v)
		}
	}
	inner := a.inner.AppendState(nil)
	dst = binary.AppendUvarint(dst, uint64(len(inner)))
	return append(dst, inner...)
}

func (a *distinctAcc) LoadState(src []byte) error {
	clear(a.seen)
	r := stateReader{src: src}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		e := &distinctEntry{n: r.varint()}
		m := r.uvarint()
		if m > uint64(len(r.src)) {
			r.err = errCorrupt
			break
		}
		e.args = make([]types.Value, m)
		for j := range e.args {
			e.args[j] = r.value()
		}
		a.seen[string(a.key(e.args))] = e
	}
	inner := r.bytes()
	if err := r.done("DISTINCT"); err != nil {
		return err
	}
	return a.inner.LoadState(inner)
}
