package expr

import (
	"slices"
)

// acAutomaton finds which of a set of keys occur in a string, in one pass
// over its bytes (Aho-Corasick). Matching ignores ASCII case: keys are
// lower-case and the input's A-Z read as a-z.
//
// Bytes are mapped to classes first: each byte that occurs in a key has
// its own class and all other bytes share class 0, so a state's row has
// as many entries as the keys have distinct bytes, not 256. The states
// are numbered breadth first; the shallowest ones, where a scan spends
// nearly all its time, have dense rows (a full transition table, one
// lookup a byte), as many as fit in acDenseBudget bytes. Deeper states keep
// only their trie edges and fall back along failure links, which always
// end in a dense state. So a set of 10,000 keys costs a few bytes per key
// byte instead of a row per key byte.
type acAutomaton struct {
	class  [256]uint8
	nclass int
	shift  uint // rows are 1<<shift entries, nclass of them used: a state is its row's offset shifted back
	ndense uint32
	// Transitions name states by their code (see code): a dense state by
	// the offset of its row, so that a step is one load.
	dense   []uint32 // ndense rows of targets' codes, each or'ed with acOut when it has keys
	fail    []uint32 // failure link of each state
	edgeOff []uint32 // edges of sparse state s: edgeOff[s-ndense] to edgeOff[s-ndense+1]
	edgeCls []uint8
	edgeTo  []uint32 // codes, or'ed with acOut
	key     []int32  // key ending at each state, or -1
	outLink []uint32 // next state along the failure links with a key, or 0
}

// acOut marks a transition whose target state has keys to report.
const acOut = 1 << 31

// acDenseBudget bounds the memory of the dense rows.
const acDenseBudget = 1 << 20

// acHit is the first occurrence of a key: the index of its last byte.
type acHit struct {
	key int32
	end int
}

// newACAutomaton builds an automaton over distinct, non-empty lower-case
// keys; key i is reported as i. Dense rows take at most denseBudget
// bytes (the root's row at least).
func newACAutomaton(keys []string, denseBudget int) *acAutomaton {
	a := &acAutomaton{}
	used := [256]bool{}
	for _, k := range keys {
		for i := 0; i < len(k); i++ {
			used[k[i]] = true
		}
	}
	n := 1
	for b := range 256 {
		if used[b] && !('A' <= b && b <= 'Z') {
			a.class[b] = uint8(n)
			n++
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		a.class[b] = a.class[b+'a'-'A']
	}
	a.nclass = n
	for 1<<a.shift < n {
		a.shift++
	}

	// The trie, with children in sorted slices, numbered in insertion
	// order; then renumbered breadth first.
	type edge struct {
		cls uint8
		to  int32
	}
	children := [][]edge{nil}
	keyAt := []int32{-1}
	for ki, k := range keys {
		s := int32(0)
		for i := 0; i < len(k); i++ {
			c := a.class[k[i]]
			es := children[s]
			j, found := slices.BinarySearchFunc(es, c, func(e edge, c uint8) int { return int(e.cls) - int(c) })
			if found {
				s = es[j].to
				continue
			}
			t := int32(len(children))
			children = append(children, nil)
			keyAt = append(keyAt, -1)
			children[s] = slices.Insert(es, j, edge{c, t})
			s = t
		}
		keyAt[s] = int32(ki)
	}
	ns := len(children)
	order := make([]int32, 0, ns) // BFS order: new id -> old id
	newID := make([]uint32, ns)
	order = append(order, 0)
	for i := 0; i < len(order); i++ {
		for _, e := range children[order[i]] {
			newID[e.to] = uint32(len(order))
			order = append(order, e.to)
		}
	}

	a.key = make([]int32, ns)
	a.fail = make([]uint32, ns)
	a.outLink = make([]uint32, ns)
	for id, old := range order {
		a.key[id] = keyAt[old]
	}
	a.ndense = uint32(min(ns, max(denseBudget/(4<<a.shift), 1)))
	a.edgeOff = make([]uint32, 1, ns-int(a.ndense)+1)
	a.edgeCls = make([]uint8, 0, ns-int(a.ndense))
	a.edgeTo = make([]uint32, 0, ns-int(a.ndense))
	a.dense = make([]uint32, int(a.ndense)<<a.shift)

	// goTo follows a trie edge from state s (new ids), or returns false.
	goTo := func(s uint32, c uint8) (uint32, bool) {
		es := children[order[s]]
		j, found := slices.BinarySearchFunc(es, c, func(e edge, c uint8) int { return int(e.cls) - int(c) })
		if !found {
			return 0, false
		}
		return newID[es[j].to], true
	}
	hasOut := func(s uint32) uint32 {
		if a.key[s] >= 0 || a.outLink[s] != 0 {
			return acOut
		}
		return 0
	}
	code := a.code
	// Failure and output links, breadth first: a state's failure target
	// is shallower, so it is done before it.
	for s := uint32(0); s < uint32(ns); s++ {
		for _, e := range children[order[s]] {
			t := newID[e.to]
			if s != 0 {
				f := a.fail[s]
				for {
					if g, ok := goTo(f, e.cls); ok {
						a.fail[t] = g
						break
					}
					if f == 0 {
						break
					}
					f = a.fail[f]
				}
			}
			if f := a.fail[t]; a.key[f] >= 0 {
				a.outLink[t] = f
			} else {
				a.outLink[t] = a.outLink[f]
			}
		}
	}
	for s := uint32(0); s < uint32(ns); s++ {
		if s < a.ndense {
			row := a.dense[int(s)<<a.shift : int(s)<<a.shift+a.nclass]
			for c := range a.nclass {
				if t, ok := goTo(s, uint8(c)); ok {
					row[c] = code(t) | hasOut(t)
				} else if s != 0 {
					row[c] = a.dense[int(a.fail[s])<<a.shift+c]
				}
			}
			continue
		}
		for _, e := range children[order[s]] {
			t := newID[e.to]
			a.edgeCls = append(a.edgeCls, e.cls)
			a.edgeTo = append(a.edgeTo, code(t)|hasOut(t))
		}
		a.edgeOff = append(a.edgeOff, uint32(len(a.edgeCls)))
	}
	return a
}

// code is the code of state s: the offset of its row for a dense state,
// and for a sparse one its number past the rows.
func (a *acAutomaton) code(s uint32) uint32 {
	if s < a.ndense {
		return s << a.shift
	}
	return a.ndense<<a.shift + s - a.ndense
}

// state is the state of code v.
func (a *acAutomaton) state(v uint32) uint32 {
	if lim := a.ndense << a.shift; v >= lim {
		return v - lim + a.ndense
	}
	return v >> a.shift
}

// step returns the transition of sparse state s on class c.
func (a *acAutomaton) step(s uint32, c uint8) uint32 {
	for s >= a.ndense {
		i := s - a.ndense
		for j := a.edgeOff[i]; j < a.edgeOff[i+1]; j++ {
			if a.edgeCls[j] == c {
				return a.edgeTo[j]
			}
		}
		s = a.fail[s]
	}
	return a.dense[int(s)<<a.shift+int(c)]
}

// scan appends to hits the first occurrence of each key in str that seen
// (a bit set over keys, cleared by the caller) does not yet hold, and
// marks it in seen.
func (a *acAutomaton) scan(str string, seen []uint64, hits []acHit) []acHit {
	v := uint32(0)
	dense, lim := a.dense, a.ndense<<a.shift
	for i := 0; i < len(str); i++ {
		c := a.class[str[i]]
		var t uint32
		if v < lim {
			t = dense[v+uint32(c)]
		} else {
			t = a.step(v-lim+a.ndense, c)
		}
		v = t &^ acOut
		if t&acOut == 0 {
			continue
		}
		for o := a.state(v); o != 0; o = a.outLink[o] {
			k := a.key[o]
			if k < 0 {
				continue
			}
			if w, b := k>>6, uint64(1)<<(k&63); seen[w]&b == 0 {
				seen[w] |= b
				hits = append(hits, acHit{key: k, end: i})
			}
		}
	}
	return hits
}

// memSize is the automaton's size in bytes, roughly.
func (a *acAutomaton) memSize() int {
	return 4*len(a.dense) + 4*len(a.fail) + 4*len(a.edgeOff) + len(a.edgeCls) + 4*len(a.edgeTo) +
		4*len(a.key) + 4*len(a.outLink) + 256
}
