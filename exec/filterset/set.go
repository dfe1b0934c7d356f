package filterset

import (
	"fmt"
	"slices"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

// Set is the filters of a plan compiled for one task: an
// exec.BranchFilter.
type Set struct {
	groups []*group
	// guarding are the groups that guard rules.
	guarding  []*group
	rules     []rule
	unguarded []unguarded
}

type predicate func(row []types.Value) (bool, error)

type rule struct {
	rest    []ref
	residue []predicate
}

type unguarded struct {
	rule int32
	pred predicate
}

// The cache of a group turns itself off when fewer than minHitRate of
// the lookups of a window of window rows hit, and on again for another
// window after offRows rows.
const (
	window     = 1 << 14
	minHitRate = 0.1
	offRows    = 1 << 20
)

// group is a group's conjuncts compiled, with its cache and the list of
// TRUE conjuncts for the row at hand.
type group struct {
	plan  *groupPlan
	col   int
	env   *expr.Env
	preds []predicate // compiled conjuncts (see pred)
	cache *cache
	stats *exec.FilterGroupStats
	// matchers decide the pattern conjuncts (LIKE, REGEXP, ...) of each
	// tested expression in one pass; others lists the other conjuncts.
	matchers []*matcher
	indexes  []*index
	others   []int32

	// null is the list for NULL, computed once.
	null     []uint32
	nullDone bool

	// guards says the group guards rules: it looks up every row.
	guards bool
	// rows (a guarding group's) are the lists of the rows of the batch
	// at hand; arena holds those that are no cached list's.
	rows    [][]uint32
	arena   []uint32
	scratch []uint32
	buf     []byte

	lookups, hits int
	off           int // rows left with the cache off
	// The counts of this batch, added to stats once it is done (an atomic
	// add per row and group would cost more than the lookup).
	nHits, nMisses, nUncached int64
}

// flush adds the batch's counts to the group's stats.
func (g *group) flush() {
	if g.nHits != 0 {
		g.stats.Hits.Add(g.nHits)
	}
	if g.nMisses != 0 {
		g.stats.Misses.Add(g.nMisses)
	}
	if g.nUncached != 0 {
		g.stats.Uncached.Add(g.nUncached)
	}
	g.nHits, g.nMisses, g.nUncached = 0, 0, 0
}

// New compiles the plan for one task; m receives the groups' counters
// (nil: none).
func (p *Plan) New(m *exec.Metrics) (*Set, error) {
	s := &Set{}
	for _, gp := range p.groups {
		g := &group{plan: gp, col: gp.col, stats: m.FilterGroup(p.Name, gp.name), env: p.env, preds: make([]predicate, len(gp.conjs))}
		if !p.NoMultiPattern {
			if err := g.compileMatchers(p.env); err != nil {
				return nil, err
			}
		}
		// The conjuncts a matcher or an index does not decide are
		// compiled now; the others when first evaluated alone (a rule's
		// rest, the cache off), if ever.
		eager := g.others
		if g.matchers == nil && g.indexes == nil {
			eager = make([]int32, len(gp.conjs))
			for j := range eager {
				eager[j] = int32(j)
			}
		}
		for _, j := range eager {
			if _, err := g.pred(int(j)); err != nil {
				return nil, err
			}
		}
		s.groups = append(s.groups, g)
		for _, rs := range gp.guards {
			if len(rs) > 0 {
				s.guarding = append(s.guarding, g)
				g.guards = true
				break
			}
		}
		// A group that guards no rule is only asked of one conjunct at a
		// time, for a candidate: evaluating it costs less than a lookup.
		if p.Budget != nil && len(s.guarding) > 0 && s.guarding[len(s.guarding)-1] == g {
			g.cache = newCache(p.Budget, g.stats)
		}
	}
	for r, rp := range p.rules {
		var ru rule
		ru.rest = rp.rest
		for _, c := range rp.residue {
			pred, err := expr.CompilePredicate(c, p.env)
			if err != nil {
				return nil, err
			}
			ru.residue = append(ru.residue, pred)
		}
		if rp.whole != nil {
			pred, err := expr.CompilePredicate(rp.whole, p.env)
			if err != nil {
				return nil, err
			}
			s.unguarded = append(s.unguarded, unguarded{rule: int32(r), pred: pred})
		}
		s.rules = append(s.rules, ru)
	}
	return s, nil
}

// Close gives the caches' memory back to the budget.
func (s *Set) Close() {
	for _, g := range s.groups {
		if g.cache != nil {
			g.cache.release()
		}
	}
}

// Select implements exec.BranchFilter. It goes a group at a time: each
// guarding group looks up the values of its column in every row of the
// batch (a tight loop whose cache misses overlap, the group's state at
// hand), then each row's lists decide its rules.
func (s *Set) Select(b *types.Batch, sel *exec.Selection) error {
	defer func() {
		for _, g := range s.guarding {
			g.flush()
		}
	}()
	for _, g := range s.guarding {
		if err := g.lookupAll(b); err != nil {
			return err
		}
	}
	for i := range b.Rows {
		row := b.Rows[i].Vals
		for _, g := range s.guarding {
			for _, j := range g.rows[i] {
				for _, r := range g.plan.guards[j] {
					ok, err := s.keeps(r, row, i)
					if err != nil {
						return filterError(b.Rows[i].Origin, err)
					}
					if ok {
						sel.Add(int(r), int32(i))
					}
				}
			}
		}
		for _, u := range s.unguarded {
			ok, err := u.pred(row)
			if err != nil {
				return filterError(b.Rows[i].Origin, err)
			}
			if ok {
				sel.Add(int(u.rule), int32(i))
			}
		}
	}
	return nil
}

// keeps reports whether rule r, whose guard is TRUE, keeps row i of the
// batch.
func (s *Set) keeps(r int32, row []types.Value, i int) (bool, error) {
	ru := &s.rules[r]
	for _, x := range ru.rest {
		g := s.groups[x.group]
		if !g.guards {
			// A group that guards nothing has no lists: one conjunct
			// costs less than the group's.
			pred, err := g.pred(int(x.conj))
			if err != nil {
				return false, err
			}
			if ok, err := pred(row); err != nil || !ok {
				return false, err
			}
			continue
		}
		if !contains(g.rows[i], uint32(x.conj)) {
			return false, nil
		}
	}
	for _, pred := range ru.residue {
		if ok, err := pred(row); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// contains reports whether sorted list l holds j.
func contains(l []uint32, j uint32) bool {
	lo, hi := 0, len(l)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l[m] < j {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(l) && l[lo] == j
}

// lookupAll sets g.rows to the lists of the rows of b.
func (g *group) lookupAll(b *types.Batch) error {
	g.rows = slices.Grow(g.rows[:0], len(b.Rows))[:len(b.Rows)]
	g.arena = g.arena[:0]
	for i := range b.Rows {
		l, fresh, err := g.lookup(b.Rows[i].Vals)
		if err != nil {
			clear(g.rows)
			return filterError(b.Rows[i].Origin, err)
		}
		if fresh {
			// l is the group's scratch, which the next miss reuses. A
			// list taken from the arena stays valid as the arena grows
			// (it keeps the old array).
			at := len(g.arena)
			g.arena = append(g.arena, l...)
			l = g.arena[at:len(g.arena):len(g.arena)]
		}
		g.rows[i] = l
	}
	return nil
}

// lookup returns the list of row; fresh says it is the group's scratch.
func (g *group) lookup(row []types.Value) (l []uint32, fresh bool, err error) {
	v := row[g.col]
	if v.IsNull() {
		if !g.nullDone {
			l, err := g.evaluate(row, nil)
			if err != nil {
				return nil, false, err
			}
			g.null, g.nullDone = l, true
		}
		return g.null, false, nil
	}
	if g.cache == nil {
		g.scratch, err = g.evaluate(row, g.scratch[:0])
		return g.scratch, true, err
	}
	if g.off > 0 {
		g.off--
		g.nUncached++
		g.scratch, err = g.evaluate(row, g.scratch[:0])
		return g.scratch, true, err
	}
	g.lookups++
	c := g.cache
	var ok bool
	var f fingerprint
	str := c.small != nil && (v.Kind() == types.KindVarChar || v.Kind() == types.KindChar)
	if str {
		l, ok = c.small[v.Str()]
	} else {
		f, g.buf = fingerprintOf(v, g.buf)
		l, ok = c.get(f)
	}
	if ok {
		g.hits++
		g.nHits++
	} else {
		g.nMisses++
		if l, err = g.evaluate(row, g.scratch[:0]); err != nil {
			return nil, false, err
		}
		g.scratch, fresh = l, true
		if !str || !c.putSmall(v.Str(), l) {
			if str {
				f, g.buf = fingerprintOf(v, g.buf)
			}
			c.put(f, l)
		}
	}
	if g.lookups == window {
		if float64(g.hits) < minHitRate*window {
			g.off = offRows
			g.cache.release()
		}
		g.lookups, g.hits = 0, 0
	}
	return l, fresh, nil
}

// evaluate appends to l the conjuncts TRUE for row, in order.
func (g *group) evaluate(row []types.Value, l []uint32) ([]uint32, error) {
	if g.matchers == nil && g.indexes == nil {
		for j, pred := range g.preds {
			ok, err := pred(row)
			if err != nil {
				return nil, err
			}
			if ok {
				l = append(l, uint32(j))
			}
		}
		return l, nil
	}
	for _, m := range g.matchers {
		var err error
		if l, err = m.appendTrue(row, l); err != nil {
			return nil, err
		}
	}
	for _, ix := range g.indexes {
		var err error
		if l, err = ix.appendTrue(row, l); err != nil {
			return nil, err
		}
	}
	for _, j := range g.others {
		ok, err := g.preds[j](row)
		if err != nil {
			return nil, err
		}
		if ok {
			l = append(l, uint32(j))
		}
	}
	slices.Sort(l)
	return l, nil
}

func filterError(o types.Origin, err error) error {
	if o.Part < 0 {
		return fmt.Errorf("cannot evaluate filter: %w", err)
	}
	return fmt.Errorf("cannot evaluate filter of the row from source partition %d, offset %d: %w", o.Part, o.Offset, err)
}

// pred returns conjunct j compiled, compiling it the first time.
func (g *group) pred(j int) (predicate, error) {
	if g.preds[j] == nil {
		p, err := expr.CompilePredicate(g.plan.conjs[j], g.env)
		if err != nil {
			return nil, err
		}
		g.preds[j] = p
	}
	return g.preds[j], nil
}
