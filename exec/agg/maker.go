package agg

import "github.com/sluicesql/sluice/types"

// slabSize is how many accumulators (or groups) a Maker allocates at once.
// A slab lives while any accumulator in it does, so it is kept small: a
// key that outlives its neighbours holds at most this many small structs.
const slabSize = 16

// Maker makes the accumulator groups of one operator, as NewGroup does,
// but allocates the fixed-size built-in accumulators (COUNT, SUM, AVG and
// append-only MIN and MAX over numbers) and the Group slices slabSize at
// a time: an aggregate over many keys then allocates about one object per
// slab instead of one per call and key. A Maker is not safe for concurrent
// use.
type Maker struct {
	calls  []Call
	makers []func() Accumulator // nil: newAccumulator
	slab   []Accumulator
}

// NewMaker returns a Maker for calls.
func NewMaker(calls []Call) *Maker {
	m := &Maker{calls: calls, makers: make([]func() Accumulator, len(calls))}
	for i := range calls {
		m.makers[i] = slabFor(newAccumulator(&calls[i]))
	}
	return m
}

// New returns empty accumulators for the Maker's calls.
func (m *Maker) New() Group {
	n := len(m.calls)
	if len(m.slab) < n {
		m.slab = make([]Accumulator, n*slabSize)
	}
	g := Group(m.slab[:n:n])
	m.slab = m.slab[n:]
	for i := range g {
		if f := m.makers[i]; f != nil {
			g[i] = f()
		} else {
			g[i] = newAccumulator(&m.calls[i])
		}
	}
	return g
}

// slabFor returns a function that hands out copies of the empty
// accumulator proto from slabs, or nil for accumulators that hold
// references (their copies would share them) or are rare.
func slabFor(proto Accumulator) func() Accumulator {
	switch p := proto.(type) {
	case *countAcc:
		return slabOf(*p)
	case *sumIntAcc:
		return slabOf(*p)
	case *sumFloatAcc:
		return slabOf(*p)
	case *avgIntAcc:
		return slabOf(*p)
	case *avgFloatAcc:
		return slabOf(*p)
	case *extremeAcc:
		if p.v.Kind() != types.KindNull || p.has {
			return nil
		}
		return slabOf(*p)
	}
	return nil
}

func slabOf[T any, P interface {
	*T
	Accumulator
}](proto T) func() Accumulator {
	var free []T
	return func() Accumulator {
		if len(free) == 0 {
			free = make([]T, slabSize)
		}
		free[0] = proto
		p := P(&free[0])
		free = free[1:]
		return p
	}
}
