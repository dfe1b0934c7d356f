package filterset

import (
	"math/bits"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

// minPatterns is how many pattern conjuncts over one expression make a
// matcher worth its pass: fewer are evaluated one by one.
const minPatterns = 4

// matcher decides the pattern conjuncts of a group that test one
// expression (the column, or a function of it), all in one pass over its
// value (expr.PatternSet: literals through one automaton, the regexes
// that could match verified alone).
type matcher struct {
	subject expr.Eval
	set     *expr.PatternSet
	// conj and negated are per pattern: the conjunct it decides and
	// whether that conjunct is its negation (NOT LIKE ...).
	conj    []uint32
	negated []bool
	// negations lists the negated patterns: TRUE when theirs is FALSE.
	negations []int32
	bits      []uint64
}

// compileMatchers builds the group's matchers, one per expression that
// at least minPatterns pattern conjuncts test; the other conjuncts stay
// in others.
func (g *group) compileMatchers(env *expr.Env) error {
	type subject struct {
		node     expr.Node
		pats     []expr.Pattern
		conjs    []uint32
		negateds []bool
	}
	var subjects []*subject
	byKey := map[string]*subject{}
	for j, c := range g.plan.conjs {
		x, p, neg, ok := expr.AsPattern(c)
		if !ok {
			continue
		}
		if k := x.Type().Kind; k != types.KindChar && k != types.KindVarChar {
			continue
		}
		key := x.String() + " : " + x.Type().String()
		s := byKey[key]
		if s == nil {
			s = &subject{node: x}
			byKey[key] = s
			subjects = append(subjects, s)
		}
		s.pats = append(s.pats, p)
		s.conjs = append(s.conjs, uint32(j))
		s.negateds = append(s.negateds, neg)
	}
	decided := make([]bool, len(g.plan.conjs))
	if err := g.compileIndexes(env, decided); err != nil {
		return err
	}
	for _, s := range subjects {
		if len(s.pats) < minPatterns {
			continue
		}
		set, err := expr.NewPatternSet(s.pats)
		if err != nil {
			return err
		}
		ev, err := expr.Compile(s.node, env)
		if err != nil {
			return err
		}
		m := &matcher{subject: ev, set: set, conj: s.conjs, negated: s.negateds, bits: make([]uint64, (len(s.pats)+63)/64)}
		for i, neg := range s.negateds {
			if neg {
				m.negations = append(m.negations, int32(i))
			}
		}
		g.matchers = append(g.matchers, m)
		for _, j := range s.conjs {
			decided[j] = true
		}
	}
	if g.matchers == nil && g.indexes == nil {
		return nil
	}
	for j, d := range decided {
		if !d {
			g.others = append(g.others, int32(j))
		}
	}
	return nil
}

// appendTrue appends to l the conjuncts of m TRUE for row: none when the
// subject is NULL (a pattern over NULL is NULL, and so is its NOT).
func (m *matcher) appendTrue(row []types.Value, l []uint32) ([]uint32, error) {
	v, err := m.subject(row)
	if err != nil || v.IsNull() {
		return l, err
	}
	m.set.Match(v.Str(), m.bits)
	for w, word := range m.bits {
		for word != 0 {
			i := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if !m.negated[i] {
				l = append(l, m.conj[i])
			}
		}
	}
	for _, i := range m.negations {
		if m.bits[i>>6]&(1<<(i&63)) == 0 {
			l = append(l, m.conj[i])
		}
	}
	return l, nil
}

// minMembers is how many equality and IN conjuncts over one expression
// make an index worth it.
const minMembers = 2

// index decides the equality and IN-list conjuncts of a group that test
// one expression: one map lookup gives those that hold the value.
type index struct {
	subject expr.Eval
	strs    map[string][]uint32
	ints    map[int64][]uint32
}

// compileIndexes builds the group's indexes, one per expression that at
// least minMembers equality or IN conjuncts test, and marks the
// conjuncts they decide.
func (g *group) compileIndexes(env *expr.Env, decided []bool) error {
	type subject struct {
		node  expr.Node
		conjs []uint32
		keys  [][]types.Value
	}
	var subjects []*subject
	byKey := map[string]*subject{}
	for j, c := range g.plan.conjs {
		x, keys, ok := expr.AsMembership(c)
		if !ok || decided[j] {
			continue
		}
		key := x.String() + " : " + x.Type().String()
		s := byKey[key]
		if s == nil {
			s = &subject{node: x}
			byKey[key] = s
			subjects = append(subjects, s)
		}
		s.conjs = append(s.conjs, uint32(j))
		s.keys = append(s.keys, keys)
	}
	for _, s := range subjects {
		if len(s.conjs) < minMembers {
			continue
		}
		ev, err := expr.Compile(s.node, env)
		if err != nil {
			return err
		}
		ix := &index{subject: ev}
		add := func(l []uint32, j uint32) []uint32 {
			if n := len(l); n > 0 && l[n-1] == j {
				return l // the constant twice in one IN list
			}
			return append(l, j)
		}
		if s.node.Type().Kind.IsString() {
			ix.strs = map[string][]uint32{}
			for i, j := range s.conjs {
				for _, k := range s.keys[i] {
					ix.strs[k.Str()] = add(ix.strs[k.Str()], j)
				}
			}
		} else {
			ix.ints = map[int64][]uint32{}
			for i, j := range s.conjs {
				for _, k := range s.keys[i] {
					ix.ints[k.Int()] = add(ix.ints[k.Int()], j)
				}
			}
		}
		g.indexes = append(g.indexes, ix)
		for _, j := range s.conjs {
			decided[j] = true
		}
	}
	return nil
}

// appendTrue appends to l the conjuncts of ix TRUE for row.
func (ix *index) appendTrue(row []types.Value, l []uint32) ([]uint32, error) {
	v, err := ix.subject(row)
	if err != nil || v.IsNull() {
		return l, err
	}
	if ix.strs != nil {
		return append(l, ix.strs[v.Str()]...), nil
	}
	return append(l, ix.ints[v.Int()]...), nil
}
