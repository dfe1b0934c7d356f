package planner

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// maxGroupingSets bounds the grouping sets of one GROUP BY: each input row
// becomes one row per set.
const maxGroupingSets = 4096

// maxGroupingExprs is Flink's bound on the grouping expressions of a GROUP
// BY with grouping sets: the expand id and GROUPING() are 64-bit values.
const maxGroupingExprs = 63

// groupSets is a GROUP BY as Calcite sees it: the distinct grouping
// expressions in the order they first appear, and the grouping sets over
// them (GROUPING SETS, ROLLUP and CUBE expanded, the elements of GROUP BY
// crossed). A plain GROUP BY a, b is one set of all its expressions.
type groupSets struct {
	exprs []ast.Expr
	nodes []expr.Node
	keys  []string // exprKey of each expression
	// sets are in ascending expand id, which is the order of Calcite's
	// grouping sets (enclosing sets first); equal sets are kept, one after
	// the other, as SQL asks (each gives its own rows).
	sets []groupSet
}

// groupSet is one grouping set.
type groupSet struct {
	cols uint64 // bit i set: exprs[i] is grouped
	// id is the expand id ($e), Flink's: a bit per expression, the first
	// expression the highest, set when the expression is not grouped
	// (equal to GROUPING_ID of all the expressions). A set that repeats
	// an earlier one has dup<<len(exprs) added, so that its groups stay
	// apart.
	id int64
	// dup is GROUP_ID(): the number of equal sets before this one.
	dup int
}

// inAll reports whether expression i is grouped by every set.
func (g *groupSets) inAll(i int) bool {
	for _, s := range g.sets {
		if s.cols&(1<<i) == 0 {
			return false
		}
	}
	return true
}

// expands reports whether the GROUP BY needs an Expand: more than one
// grouping set.
func (g *groupSets) expands() bool { return len(g.sets) > 1 }

// exprKey identifies a bound expression: its text and the columns it
// reads (two columns of one name, l.k and r.k, differ).
func exprKey(n expr.Node) string {
	return n.String() + "@" + fmt.Sprint(expr.Columns(n))
}

// hasGroupingSets reports whether GROUP BY holds GROUPING SETS, ROLLUP,
// CUBE, or a parenthesized list such as () or (a, b).
func hasGroupingSets(groupBy []ast.Expr) bool {
	for _, g := range groupBy {
		switch g := g.(type) {
		case *ast.GroupingSet:
			return true
		case *ast.RowCtor:
			if len(g.Args) != 1 {
				return true
			}
		}
	}
	return false
}

// firstGroupingSet returns the first element of GROUP BY that is a
// grouping set, for positioning errors.
func firstGroupingSet(groupBy []ast.Expr) ast.Expr {
	for _, g := range groupBy {
		if _, ok := g.(*ast.GroupingSet); ok {
			return g
		}
	}
	return groupBy[0]
}

// groupingFunc returns the name of a GROUPING, GROUPING_ID or GROUP_ID
// call, or "".
func groupingFunc(c *ast.Call) string {
	if c.Over != nil || c.OverName != nil || len(c.Name.Parts) != 1 {
		return ""
	}
	switch name := strings.ToUpper(c.Name.Last().Name); name {
	case "GROUPING", "GROUPING_ID", "GROUP_ID":
		return name
	}
	return ""
}

// expandGroupBy expands a GROUP BY with grouping sets.
func (p *Planner) expandGroupBy(groupBy []ast.Expr, sc *scope) (*groupSets, error) {
	g := &groupSets{}
	acc := []uint64{0}
	for _, el := range groupBy {
		sets, err := g.element(p, el, sc)
		if err != nil {
			return nil, err
		}
		if len(acc)*len(sets) > maxGroupingSets {
			return nil, p.errorf(el, "GROUP BY gives more than %d grouping sets: at most %d are supported (each input row becomes one row per set)",
				maxGroupingSets, maxGroupingSets)
		}
		next := make([]uint64, 0, len(acc)*len(sets))
		for _, a := range acc {
			for _, s := range sets {
				next = append(next, a|s)
			}
		}
		acc = next
	}
	n := len(g.exprs)
	seen := map[uint64]int{}
	for _, cols := range acc {
		s := groupSet{cols: cols}
		for i := range n {
			if cols&(1<<i) == 0 {
				s.id |= 1 << (n - 1 - i)
			}
		}
		s.dup = seen[cols]
		seen[cols]++
		if s.dup > 0 {
			if n+bits.Len(uint(s.dup)) > 62 {
				return nil, p.errorf(firstGroupingSet(groupBy), "too many repeated grouping sets over %d grouping expressions", n)
			}
			s.id |= int64(s.dup) << n
		}
		g.sets = append(g.sets, s)
	}
	slices.SortStableFunc(g.sets, func(a, b groupSet) int {
		return cmp.Or(cmp.Compare(a.id&(1<<n-1), b.id&(1<<n-1)), cmp.Compare(a.dup, b.dup))
	})
	return g, nil
}

// element returns the grouping sets of one element of GROUP BY (or of
// GROUPING SETS), registering its expressions.
func (g *groupSets) element(p *Planner, el ast.Expr, sc *scope) ([]uint64, error) {
	switch el := el.(type) {
	case *ast.GroupingSet:
		switch el.Kind {
		case "ROLLUP", "CUBE":
			units := make([]uint64, len(el.Items))
			for i, it := range el.Items {
				u, err := g.unit(p, it, sc)
				if err != nil {
					return nil, err
				}
				units[i] = u
			}
			if el.Kind == "ROLLUP" {
				// The list and each of its prefixes, down to ().
				sets := make([]uint64, 0, len(units)+1)
				for k := len(units); k >= 0; k-- {
					var s uint64
					for _, u := range units[:k] {
						s |= u
					}
					sets = append(sets, s)
				}
				return sets, nil
			}
			// Every subset.
			if len(units) > 12 {
				return nil, p.errorf(el, "CUBE of %d elements gives %d grouping sets: at most %d are supported (each input row becomes one row per set)",
					len(units), 1<<len(units), maxGroupingSets)
			}
			sets := make([]uint64, 0, 1<<len(units))
			for m := range 1 << len(units) {
				var s uint64
				for i, u := range units {
					if m&(1<<i) != 0 {
						s |= u
					}
				}
				sets = append(sets, s)
			}
			return sets, nil
		default: // GROUPING SETS
			var sets []uint64
			for _, it := range el.Items {
				s, err := g.element(p, it, sc)
				if err != nil {
					return nil, err
				}
				sets = append(sets, s...)
				if len(sets) > maxGroupingSets {
					return nil, p.errorf(el, "GROUPING SETS gives more than %d grouping sets: at most %d are supported", maxGroupingSets, maxGroupingSets)
				}
			}
			return sets, nil
		}
	default:
		u, err := g.unit(p, el, sc)
		if err != nil {
			return nil, err
		}
		return []uint64{u}, nil
	}
}

// unit returns the set of one expression, or of a parenthesized list of
// them ((a, b), or () for none).
func (g *groupSets) unit(p *Planner, e ast.Expr, sc *scope) (uint64, error) {
	if r, ok := e.(*ast.RowCtor); ok && len(r.Args) != 1 {
		var s uint64
		for _, a := range r.Args {
			u, err := g.unit(p, a, sc)
			if err != nil {
				return 0, err
			}
			s |= u
		}
		return s, nil
	}
	if gs, ok := e.(*ast.GroupingSet); ok {
		return 0, p.errorf(gs, "%s is not allowed inside ROLLUP, CUBE or a parenthesized list; only inside GROUPING SETS", gs.Kind)
	}
	if c, ok := e.(*ast.Call); ok && len(c.Name.Parts) == 1 {
		switch strings.ToUpper(c.Name.Last().Name) {
		case "TUMBLE", "HOP", "SESSION":
			return 0, p.errorf(c, "GROUPING SETS are currently not supported with a group window function (as in Flink); "+
				"use a window table function: GROUP BY window_start, window_end, GROUPING SETS (...)")
		}
	}
	n, err := p.bindExpr(e, sc)
	if err != nil {
		return 0, err
	}
	k := exprKey(n)
	i := slices.Index(g.keys, k)
	if i < 0 {
		if len(g.exprs) == maxGroupingExprs {
			return 0, p.errorf(e, "group count must be less than 64 (as in Flink): GROUP BY with grouping sets takes at most %d expressions", maxGroupingExprs)
		}
		i = len(g.exprs)
		g.exprs, g.nodes, g.keys = append(g.exprs, e), append(g.nodes, n), append(g.keys, k)
	}
	return 1 << i, nil
}

// grouping computes GROUPING, GROUPING_ID and GROUP_ID after an
// aggregation.
type grouping struct {
	g *groupSets
	// idCol is the aggregation's output column of the expand id, or -1
	// when there is one grouping set.
	idCol int
}

// bind binds a call of name (GROUPING, GROUPING_ID or GROUP_ID) as Flink
// does: a literal when every grouping set gives the same value, else a
// CASE on the expand id. GROUPING and GROUPING_ID are the same function
// (Calcite's): a bit per argument, the first the highest, set when the
// argument is not grouped in the row's set.
func (gr *grouping) bind(pa *postAgg, b *binder, c *ast.Call, name string) (expr.Node, error) {
	p := b.p
	g := gr.g
	vals := make([]int64, len(g.sets))
	if name == "GROUP_ID" {
		if len(c.Args) > 0 {
			return nil, p.errorf(c, "GROUP_ID takes no arguments")
		}
		for i, s := range g.sets {
			vals[i] = int64(s.dup)
		}
	} else {
		if len(c.Args) == 0 || c.Star {
			return nil, p.errorf(c, "%s takes one or more grouped expressions", name)
		}
		if len(c.Args) > maxGroupingExprs {
			return nil, p.errorf(c, "%s takes at most %d arguments", name, maxGroupingExprs)
		}
		if c.Distinct || c.Filter != nil {
			return nil, p.errorf(c, "%s takes neither DISTINCT nor FILTER", name)
		}
		for _, a := range c.Args {
			n, err := p.bindExpr(a, pa.in)
			if err != nil {
				return nil, err
			}
			i := slices.Index(g.keys, exprKey(n))
			if i < 0 {
				return nil, p.errorf(a, "Argument to %s operator must be a grouped expression", name)
			}
			for j, s := range g.sets {
				// One set groups by every expression (a plain GROUP BY
				// may have more than 64).
				vals[j] <<= 1
				if len(g.sets) > 1 && s.cols&(1<<i) == 0 {
					vals[j] |= 1
				}
			}
		}
	}
	lit := func(v int64) expr.Node {
		return &expr.Literal{V: types.BigIntValue(v), T: types.BigInt.WithNullable(false)}
	}
	same := true
	for _, v := range vals {
		same = same && v == vals[0]
	}
	if same || gr.idCol < 0 {
		return lit(vals[0]), nil
	}
	id := pa.column(gr.idCol)
	whens := make([]expr.Node, 0, len(vals)-1)
	thens := make([]expr.Node, 0, len(vals)-1)
	for i, s := range g.sets[:len(g.sets)-1] {
		var idLit expr.Node = lit(s.id)
		if s.id <= 1<<31-1 {
			idLit = &expr.Literal{V: types.IntValue(types.KindInt, s.id), T: types.Int.WithNullable(false)}
		}
		eq, err := p.builder.Call("=", id, idLit)
		if err != nil {
			return nil, p.wrap(c, err)
		}
		whens, thens = append(whens, eq), append(thens, lit(vals[i]))
	}
	n, err := p.builder.Case(nil, whens, thens, lit(vals[len(vals)-1]))
	return n, p.wrap(c, err)
}

// expandNode returns the Expand over in (the projection under the
// aggregation) for the grouping sets: key i is column keyCols[i], the
// grouping expression keyItems[i]. Each set's row puts NULL in the keys it
// does not group by (their columns become nullable) and its expand id in
// $e, after in's columns. A column that aggregate calls or the window's
// time read (reads) and that some set puts NULL in is copied after $e, as
// Flink does; copies maps it to its copy.
func (g *groupSets) expandNode(in plan.Node, keyCols, keyItems []int, reads []int) (*plan.Expand, map[int]int) {
	inSchema := in.Schema()
	width := inSchema.Len()
	nulled := map[int]bool{} // the columns of keys some set leaves out
	for i, c := range keyCols {
		if !g.inAll(keyItems[i]) {
			nulled[c] = true
		}
	}
	var dups []int
	for _, c := range reads {
		if nulled[c] && !slices.Contains(dups, c) {
			dups = append(dups, c)
		}
	}
	slices.Sort(dups)
	out := types.Schema{Columns: slices.Clone(inSchema.Columns)}
	taken := inSchema.Names()
	for c := range nulled {
		out.Columns[c].Type = out.Columns[c].Type.WithNullable(true)
	}
	idName := uniqueSuffixed("$e", taken)
	taken = append(taken, idName)
	out.Columns = append(out.Columns, types.Column{Name: idName, Type: types.BigInt.WithNullable(false)})
	copies := map[int]int{}
	for _, c := range dups {
		name := uniqueSuffixed(inSchema.Columns[c].Name+"_0", taken)
		taken = append(taken, name)
		copies[c] = len(out.Columns)
		out.Columns = append(out.Columns, types.Column{Name: name, Type: inSchema.Columns[c].Type})
	}
	e := &plan.Expand{Input: in, IDCol: width, Out: out}
	for _, s := range g.sets {
		proj := make([]int, 0, out.Len())
		for c := range width {
			proj = append(proj, c)
		}
		for i, c := range keyCols {
			if s.cols&(1<<keyItems[i]) == 0 {
				proj[c] = -1
			}
		}
		proj = append(proj, -1) // $e
		proj = append(proj, dups...)
		e.Projects = append(e.Projects, proj)
		e.IDs = append(e.IDs, s.id)
	}
	return e, copies
}

// uniqueSuffixed returns name, or name_0, name_1, ... (as Flink names
// columns it adds), the first that none of taken is.
func uniqueSuffixed(name string, taken []string) string {
	out := name
	for i := 0; slices.ContainsFunc(taken, func(t string) bool { return strings.EqualFold(t, out) }); i++ {
		out = name + "_" + itoa(i)
	}
	return out
}
