package filterset

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/zeebo/xxh3"
)

// Budget is the memory the caches of an engine's filter groups may hold
// together, in bytes. Its zero value holds nothing.
type Budget struct {
	limit atomic.Int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget {
	b := &Budget{}
	b.limit.Store(limit)
	return b
}

// SetLimit changes the limit; caches over it shrink as they next grow.
func (b *Budget) SetLimit(limit int64) { b.limit.Store(limit) }

// Used returns the bytes held.
func (b *Budget) Used() int64 { return b.used.Load() }

// take reserves n bytes, if the budget has them.
func (b *Budget) take(n int64) bool {
	if b.used.Add(n) > b.limit.Load() {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *Budget) give(n int64) { b.used.Add(-n) }

// fingerprint is a 128-bit hash of a value. Two distinct values of one
// column share a fingerprint with probability 2^-128; among n distinct
// values, some pair does with probability at most n²/2^129 (below 10^-20
// for ten billion values), and only then could a rule's result for one be
// taken for the other's.
type fingerprint [2]uint64

// slot is a cached value: its fingerprint and where its list of TRUE
// conjuncts lies in the generation's arena; n is the list's length + 1
// (0: an empty slot).
type slot struct {
	f      fingerprint
	off, n uint32
}

// generation is half of a cache: the values seen since it began, in an
// open-addressing table indexed by the fingerprint's low bits (it is a
// hash already) with linear probing, at most 3/4 full.
type generation struct {
	slots []slot
	used  int
	arena []uint32
	bytes int64
}

// entryBytes is what a cached value costs beside its list: its slot and
// the share of the table's free slots.
const entryBytes = 48

func (g *generation) find(f fingerprint) *slot {
	mask := uint64(len(g.slots) - 1)
	for i := f[1] & mask; ; i = (i + 1) & mask {
		s := &g.slots[i]
		if s.n == 0 || s.f == f {
			return s
		}
	}
}

func (g *generation) get(f fingerprint) ([]uint32, bool) {
	s := g.find(f)
	if s.n == 0 {
		return nil, false
	}
	return g.arena[s.off : s.off+s.n-1 : s.off+s.n-1], true
}

func (g *generation) insert(f fingerprint, l []uint32) {
	if 4*(g.used+1) > 3*len(g.slots) {
		old := g.slots
		g.slots = make([]slot, 2*len(old))
		for _, s := range old {
			if s.n != 0 {
				*g.find(s.f) = s
			}
		}
	}
	s := g.find(f)
	if s.n != 0 {
		return
	}
	*s = slot{f: f, off: uint32(len(g.arena)), n: uint32(len(l)) + 1}
	g.arena = append(g.arena, l...)
	g.used++
}

// cache remembers, per fingerprint of a value, the conjuncts of a group
// that are TRUE for it. It has two generations: new values go into the
// current one; when the budget runs out, the older one is dropped and the
// current one becomes the older (a value found there moves back into the
// current one), so what is used often stays and memory stays bounded.
//
// Short strings of a column with few distinct values (a host, a user, a
// state) are first kept exactly, by their text, in a map: a lookup there
// costs a map access instead of a 128-bit hash and a probe. Once the
// column shows more than smallMax distinct values, or a long one, the map
// is dropped and the fingerprints take over.
type cache struct {
	budget   *Budget
	cur, old generation
	stats    *exec.FilterGroupStats

	small      map[string][]uint32 // nil once given up
	smallBytes int64
}

// The exact tier: at most smallMax values of at most smallLen bytes,
// each costing its bytes, its list and smallEntryBytes.
const (
	smallMax        = 4096
	smallLen        = 64
	smallEntryBytes = 64
)

func newCache(budget *Budget, stats *exec.FilterGroupStats) *cache {
	return &cache{budget: budget, cur: newGeneration(), old: newGeneration(), stats: stats, small: map[string][]uint32{}}
}

// putSmall keeps l for s in the exact tier, or gives the tier up (s is
// too long, the tier full, or the budget spent) and reports false.
func (c *cache) putSmall(s string, l []uint32) bool {
	cost := smallEntryBytes + int64(len(s)) + 4*int64(len(l))
	if len(s) > smallLen || len(c.small) >= smallMax || !c.budget.take(cost) {
		c.dropSmall()
		return false
	}
	c.small[strings.Clone(s)] = slices.Clone(l)
	c.smallBytes += cost
	c.stats.Bytes.Add(cost)
	return true
}

// dropSmall gives the exact tier up.
func (c *cache) dropSmall() {
	c.budget.give(c.smallBytes)
	c.stats.Bytes.Add(-c.smallBytes)
	c.small, c.smallBytes = nil, 0
}

func newGeneration() generation { return generation{slots: make([]slot, 64)} }

// get returns the list cached for f.
func (c *cache) get(f fingerprint) ([]uint32, bool) {
	if l, ok := c.cur.get(f); ok {
		return l, true
	}
	l, ok := c.old.get(f)
	if !ok {
		return nil, false
	}
	c.put(f, l)
	return l, true
}

// put caches l for f, if the budget allows.
func (c *cache) put(f fingerprint, l []uint32) {
	cost := entryBytes + 4*int64(len(l))
	if !c.budget.take(cost) {
		c.rotate()
		if !c.budget.take(cost) {
			return // other groups hold the budget
		}
	}
	c.cur.insert(f, l)
	c.cur.bytes += cost
	c.stats.Bytes.Add(cost)
	if len(c.cur.arena) > 1<<31 {
		c.rotate()
	}
}

// rotate drops the older generation.
func (c *cache) rotate() {
	if n := c.old.used; n > 0 {
		c.stats.Evictions.Add(int64(n))
	}
	c.budget.give(c.old.bytes)
	c.stats.Bytes.Add(-c.old.bytes)
	c.old, c.cur = c.cur, newGeneration()
}

// release gives the cache's memory back to the budget.
func (c *cache) release() {
	c.budget.give(c.cur.bytes + c.old.bytes + c.smallBytes)
	c.stats.Bytes.Add(-(c.cur.bytes + c.old.bytes + c.smallBytes))
	c.cur, c.old = newGeneration(), newGeneration()
	c.small, c.smallBytes = nil, 0
}

// fingerprintOf hashes v (not NULL); buf is scratch space.
func fingerprintOf(v types.Value, buf []byte) (fingerprint, []byte) {
	switch v.Kind() {
	case types.KindChar, types.KindVarChar:
		h := xxh3.HashString128(v.Str())
		return fingerprint{h.Hi, h.Lo}, buf
	}
	buf = types.AppendKey(buf[:0], v)
	if k := v.Kind(); k == types.KindFloat || k == types.KindDouble {
		// AppendKey equates 0.0 and -0.0, which a condition may not.
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
	}
	h := xxh3.Hash128(buf)
	return fingerprint{h.Hi, h.Lo}, buf
}
