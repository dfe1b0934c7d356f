package planner

import (
	"sort"
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// bindLookupJoin plans `l [LEFT] JOIN d FOR SYSTEM_TIME AS OF l.proc_time
// ON l.k = d.k [AND ...]`: a lookup join of each row of l, as it arrives,
// with the rows of the dimension table d whose columns equal it. The key
// set d is looked up by is every column of d that ON equates with an
// expression of l or a constant; nothing is declared. left and lsc are the
// bound left side.
func (p *Planner) bindLookupJoin(j *ast.Join, vt *ast.TableName, kind plan.JoinKind, left plan.Node, lsc *scope) (plan.Node, *scope, error) {
	if left.Updating() {
		return nil, nil, p.errorf(j.Left, "the left side of a lookup join must be append-only, but it produces updates")
	}
	name, err := p.ObjectName(vt.Name)
	if err != nil {
		return nil, nil, err
	}
	if len(vt.Name.Parts) == 1 && p.isCTE(name) {
		return nil, nil, p.errorf(vt.Name, "the dimension side of a lookup join must be a table; '%s' is a WITH query", name)
	}
	tbl, view, err := p.Catalog.Lookup(name)
	if err != nil {
		return nil, nil, p.errorf(vt.Name, "%s", err.Error())
	}
	if view != nil {
		return nil, nil, p.errorf(vt.Name, "the dimension side of a lookup join must be a table; '%s' is a view", name)
	}
	if tbl, err = p.hintedTable(tbl, vt.Hints); err != nil {
		return nil, nil, err
	}
	right, rsc, err := p.bindScan(vt.Name, tbl)
	if err != nil {
		return nil, nil, err
	}
	scan := right.(*plan.Scan)
	if len(scan.Computed) != scan.Table.Schema.Len() || len(scan.Table.Metadata) > 0 {
		return nil, nil, p.errorf(vt.Name, "lookup join: table '%s' has computed or metadata columns; a dimension table has physical columns only", name)
	}
	if p.SourceLookup == nil || !p.SourceLookup(scan.Table) {
		can := "none"
		if p.LookupConnectors != nil {
			if names := p.LookupConnectors(); len(names) > 0 {
				can = strings.Join(names, ", ")
			}
		}
		return nil, nil, p.errorf(vt.Name, "lookup join: table '%s' cannot be looked up: its connector '%s' is not a lookup source (connectors that are: %s)",
			name, scan.Table.Options["connector"], can)
	}
	if _, rsc, err = p.alias(right, rsc, name, vt.Alias, vt.ColumnAliases); err != nil {
		return nil, nil, err
	}

	nl := len(lsc.cols)
	cond, on, err := p.bindOn(j, lsc, rsc)
	if err != nil {
		return nil, nil, err
	}

	// The keys: d.col = (an expression of the left side only, or a
	// constant). A column of d equated twice is looked up by the first;
	// the other equality stays in the residual.
	type pair struct {
		col int
		x   expr.Node
	}
	var keys []pair
	var rest []expr.Node
	taken := map[int]bool{}
	for _, c := range expr.Conjuncts(cond) {
		col, x, ok := lookupKey(c, nl)
		if !ok || taken[col] {
			rest = append(rest, c)
			continue
		}
		dt, xt := on.cols[nl+col].typ, x.Type()
		if xt.Kind != types.KindNull && types.KeyKind(dt.Kind) != types.KeyKind(xt.Kind) {
			return nil, nil, p.errorf(j.On, "lookup key %s (%s) and %s (%s) have different types: CAST one to the other's",
				on.cols[nl+col].name, dt.WithNullable(true), x, xt.WithNullable(true))
		}
		// An integer key takes the column's type, so that an index
		// keyed by the column's own encoding finds it; a value the type
		// cannot hold equals no row (TRY_CAST gives NULL). Other kinds
		// are not cast: a cast to a shorter string or a smaller scale
		// would round, and equal values of one KeyKind encode alike.
		if xt.Kind.IsInteger() && dt.Kind.IsInteger() && xt.Kind != dt.Kind {
			want := types.Type{Kind: dt.Kind}
			if x, err = p.builder.Cast(x, want, xt.Kind > dt.Kind); err != nil {
				return nil, nil, p.errorf(j.On, "%s", err.Error())
			}
		}
		taken[col] = true
		keys = append(keys, pair{col, x})
	}
	if len(keys) == 0 {
		for _, c := range rest {
			if col, typ, ok := castKey(c, nl); ok {
				return nil, nil, p.errorf(j.On, "lookup join: column %s of '%s' (%s) is compared as %s, so it cannot be looked up; CAST the left side to %s instead",
					on.cols[nl+col].name, name, on.cols[nl+col].typ.WithNullable(true), typ.WithNullable(true), on.cols[nl+col].typ.WithNullable(true))
			}
		}
		return nil, nil, p.errorf(j.On, "lookup join: ON has no equality between a column of '%s' and the left side or a constant (ON l.k = %s.k): the rows to look up are found by it",
			name, rsc.cols[0].qual)
	}
	// One order for one key set, however ON writes it: jobs that look the
	// table up by the same columns share its index.
	sort.Slice(keys, func(a, b int) bool { return keys[a].col < keys[b].col })
	n := &plan.LookupJoin{Input: left, Kind: kind, Table: scan.Table, Alias: rsc.cols[0].qual, HintAt: scan.HintAt}
	for _, k := range keys {
		n.Keys = append(n.Keys, k.col)
		n.KeyExprs = append(n.KeyExprs, k.x)
	}
	jn := &plan.Join{}
	if err := p.joinResidual(jn, j.On, rest); err != nil {
		return nil, nil, err
	}
	n.Residual = jn.Residual

	// The output: the left columns (time attributes kept: rows go out as
	// they come in), then d's (NULL when a LEFT join finds no row).
	outScope := &scope{}
	for i, c := range on.cols {
		if i >= nl {
			c.typ = c.typ.WithoutTimeAttr()
			if kind == plan.LeftJoin {
				c.typ = c.typ.WithNullable(true)
			}
		}
		outScope.cols = append(outScope.cols, c)
		n.Out.Columns = append(n.Out.Columns, types.Column{Name: c.name, Type: c.typ})
	}
	return n, outScope, nil
}

// lookupKey reports whether n is `d.col = x` (or `x = d.col`) where d's
// columns are those from nl on and x reads left columns only (or none),
// and returns col (an index into d's row) and x.
func lookupKey(n expr.Node, nl int) (int, expr.Node, bool) {
	c, isCall := n.(*expr.Call)
	if !isCall || c.Name != "=" || len(c.Args) != 2 {
		return 0, nil, false
	}
	for i := range 2 {
		d, ok := c.Args[i].(*expr.Column)
		if !ok || d.Index < nl {
			continue
		}
		x := c.Args[1-i]
		cols := expr.Columns(x)
		if len(cols) > 0 && cols[len(cols)-1] >= nl {
			continue
		}
		return d.Index - nl, x, true
	}
	return 0, nil, false
}

// castKey reports whether n is `CAST(d.col AS t) = x` (either way round),
// with x reading the left side only: a key the comparison's typing took
// away. It returns col (an index into d's row) and t.
func castKey(n expr.Node, nl int) (int, types.Type, bool) {
	c, isCall := n.(*expr.Call)
	if !isCall || c.Name != "=" || len(c.Args) != 2 {
		return 0, types.Type{}, false
	}
	for i := range 2 {
		cast, ok := c.Args[i].(*expr.Cast)
		if !ok {
			continue
		}
		d, ok := cast.X.(*expr.Column)
		if !ok || d.Index < nl {
			continue
		}
		if cols := expr.Columns(c.Args[1-i]); len(cols) > 0 && cols[len(cols)-1] >= nl {
			continue
		}
		return d.Index - nl, cast.T, true
	}
	return 0, types.Type{}, false
}
