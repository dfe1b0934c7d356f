// Package filterset evaluates the WHERE clauses of many queries over one
// source together, as a rule set is: a statement set of filter INSERTs
// over one table (the branches of one source, see exec.Stage.Filter).
//
// At plan time each filter is split into its conjuncts (the conditions
// its ANDs join). A conjunct that reads one column and calls only
// deterministic functions is a function of that column's value; such
// conjuncts are collected, without duplicates, into the column's group.
// Every rule with a group conjunct picks one as its guard (an equality or
// an IN list before a pattern, a pattern before a range, a negation
// last): the rule cannot keep a row unless its guard is TRUE. The other
// conjuncts of the rule are its rest (group conjuncts) and its residue
// (conjuncts over several columns or non-deterministic ones). A rule
// without a group conjunct is unguarded and evaluated whole on every row.
//
// At run time, per row, a group maps its column's value to the list of
// its conjuncts that are TRUE for it, remembered in a cache keyed by a
// 128-bit hash of the value (see cache.go); the rules guarded by those
// conjuncts are the row's candidates, each kept when its rest and residue
// are TRUE too. A row costs a hash and a lookup per group plus the
// candidates, not the number of rules.
//
// Semantics are each filter's own: a WHERE keeps a row when its condition
// is TRUE, an AND is TRUE when all its conjuncts are, and a conjunct over
// one column has the same truth for the same value (it is deterministic),
// so remembering it per value changes no result. Conjuncts of a group are
// all evaluated for a value not seen before, also those a rule's AND would
// have skipped: a conjunct that fails on a value (an invalid CAST) fails
// the job there, where evaluated alone it might not have been reached.
package filterset

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

// Plan is the analysis of the filters of the rules over one source.
type Plan struct {
	groups []*groupPlan
	rules  []rulePlan
	// unguarded lists the rules evaluated whole on every row.
	unguarded []int32
	env       *expr.Env
	// Budget bounds the memory of the groups' caches (shared with other
	// plans of the engine); nil disables the caches.
	Budget *Budget
	// Name names the source, in metrics and EXPLAIN.
	Name string
	// NoMultiPattern evaluates pattern conjuncts one by one.
	NoMultiPattern bool
}

// groupPlan is the conjuncts over one column.
type groupPlan struct {
	col   int
	name  string
	typ   types.Type
	conjs []expr.Node
	keys  map[string]int32
	// guards[j] lists the rules whose guard is conjunct j.
	guards [][]int32
}

// ref names conjunct conj of group group.
type ref struct{ group, conj int32 }

type rulePlan struct {
	guard   ref // group -1: unguarded
	rest    []ref
	residue []expr.Node
	whole   expr.Node // the filter, for an unguarded rule
}

// NewPlan analyses conds, the filters of rules 0, 1, ... over rows of
// schema (nil filters keep every row).
func NewPlan(conds []expr.Node, schema types.Schema, env *expr.Env) (*Plan, error) {
	p := &Plan{env: env}
	byCol := map[int]int32{}
	// uses counts the rules that have each conjunct: the more rules share
	// one, the more candidates it brings when TRUE, and the worse a guard
	// it is (integrity_level = 'System' in four hundred rules).
	uses := map[string]int{}
	conds = slices.Clone(conds) // folded below; the caller's stay as they are
	// keys[r] are the keys of rule r's conjuncts (conjKey), built once.
	keys := make([][]string, len(conds))
	for r, cond := range conds {
		if cond == nil {
			cond = &expr.Literal{V: types.BoolValue(true), T: types.Boolean.WithNullable(false)}
		}
		if k := cond.Type().Kind; k != types.KindBoolean && k != types.KindNull {
			return nil, fmt.Errorf("cannot use %s as a condition: it is %s, not BOOLEAN", cond, cond.Type())
		}
		// Constant sub-expressions folded first (CONCAT('%', 'x') is a
		// pattern), as compiling would.
		folded, err := expr.Fold(cond, env)
		if err != nil {
			return nil, err
		}
		conds[r] = folded
		conjs := expr.Conjuncts(folded)
		keys[r] = make([]string, len(conjs))
		for i, c := range conjs {
			keys[r][i] = conjKey(c)
			uses[keys[r][i]]++
		}
	}
	for r, cond := range conds {
		rp := rulePlan{guard: ref{group: -1}}
		best := 0.0
		for i, c := range expr.Conjuncts(cond) {
			col, ok := groupColumn(c, schema)
			if !ok {
				rp.residue = append(rp.residue, c)
				continue
			}
			gi, ok := byCol[col]
			if !ok {
				gi = int32(len(p.groups))
				byCol[col] = gi
				p.groups = append(p.groups, &groupPlan{col: col, name: schema.Columns[col].Name,
					typ: schema.Columns[col].Type, keys: map[string]int32{}})
			}
			g := p.groups[gi]
			key := keys[r][i]
			j, ok := g.keys[key]
			if !ok {
				j = int32(len(g.conjs))
				g.keys[key] = j
				g.conjs = append(g.conjs, c)
				g.guards = append(g.guards, nil)
			}
			x := ref{group: gi, conj: j}
			if cost := guardCost(c) * float64(uses[key]); rp.guard.group < 0 || cost < best {
				if rp.guard.group >= 0 {
					rp.rest = append(rp.rest, rp.guard)
				}
				rp.guard, best = x, cost
			} else {
				rp.rest = append(rp.rest, x)
			}
		}
		if rp.guard.group < 0 {
			rp.whole, rp.residue = cond, nil
			p.unguarded = append(p.unguarded, int32(r))
		} else {
			g := p.groups[rp.guard.group]
			g.guards[rp.guard.conj] = append(g.guards[rp.guard.conj], int32(r))
		}
		p.rules = append(p.rules, rp)
	}
	return p, nil
}

// groupColumn returns the column c is a function of, when it reads exactly
// one column of a type whose values can be hashed and calls only
// deterministic functions.
func groupColumn(c expr.Node, schema types.Schema) (int, bool) {
	cols := expr.Columns(c)
	if len(cols) != 1 || !expr.IsDeterministic(c) || cols[0] >= schema.Len() {
		return 0, false
	}
	switch schema.Columns[cols[0]].Type.Kind {
	case types.KindChar, types.KindVarChar, types.KindBoolean, types.KindTinyInt, types.KindSmallInt,
		types.KindInt, types.KindBigInt, types.KindDecimal, types.KindFloat, types.KindDouble, types.KindDate,
		types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		return cols[0], true
	}
	return 0, false
}

func conjKey(c expr.Node) string { return c.String() + " : " + c.Type().String() }

// guardCost ranks a conjunct as a guard by how often it is likely TRUE:
// an equality or IN list rarely, a pattern more often, a range or an OR
// often, a negation almost always. A rule takes the conjunct of least
// cost times the number of rules that share it.
func guardCost(c expr.Node) float64 {
	call, ok := c.(*expr.Call)
	if !ok {
		return 8
	}
	switch call.Name {
	case "=", "IN", "IS NULL", "IS TRUE":
		return 1
	case "LIKE", "SIMILAR TO", "REGEXP", "IS FALSE":
		return 2
	case "OR":
		return 4
	case "<>", "NOT", "NOT LIKE", "NOT SIMILAR TO", "IS NOT NULL", "NOT IN", "IS NOT TRUE", "IS NOT FALSE":
		return 64
	}
	return 8
}

// String prints the groups: per column, its conjuncts and how many rules
// each guards; then the rules that are evaluated whole.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "SharedFilter(source=[%s], rules=[%d], groups=[%d], unguarded=[%d])\n", p.Name, len(p.rules), len(p.groups), len(p.unguarded))
	for _, g := range p.groups {
		guards := 0
		for _, rs := range g.guards {
			guards += len(rs)
		}
		fmt.Fprintf(&b, "+- Group(column=[%s], conditions=[%d], guards=[%d])\n", g.name, len(g.conjs), guards)
		order := make([]int, len(g.conjs))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, c int) bool { return len(g.guards[order[a]]) > len(g.guards[order[c]]) })
		for n, j := range order {
			if n == 8 && len(order) > 9 {
				fmt.Fprintf(&b, "   +- ... %d more\n", len(order)-n)
				break
			}
			fmt.Fprintf(&b, "   +- %s (guards %d)\n", g.conjs[j], len(g.guards[j]))
		}
	}
	return b.String()
}
