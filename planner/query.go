package planner

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// PlanQuery plans a query; the result's schema holds the output columns.
func (p *Planner) PlanQuery(q *ast.Query) (plan.Node, error) {
	n, _, err := p.bindQuery(q)
	return n, err
}

func (p *Planner) bindQuery(q *ast.Query) (plan.Node, *scope, error) {
	if len(q.With) > 0 {
		m := map[string]*cte{}
		for _, c := range q.With {
			before := make(map[string]*cte, len(m))
			for k, v := range m {
				before[k] = v
			}
			m[c.Name.Name] = &cte{def: c, file: p.File, before: before}
		}
		p.ctes = append(p.ctes, m)
		defer func() { p.ctes = p.ctes[:len(p.ctes)-1] }()
	}
	n, sc, err := p.bindBody(q.Body)
	if err != nil {
		return nil, nil, err
	}
	if len(q.OrderBy) == 0 && q.Limit == nil && q.Offset == nil {
		return n, sc, nil
	}
	n, keys, err := p.bindOrderBy(q, n, sc)
	if err != nil {
		return nil, nil, err
	}
	width := len(sc.cols)
	sort := &plan.Sort{Input: n, Keys: keys, Limit: -1}
	if q.Limit != nil {
		if sort.Limit, err = p.constInt(q.Limit, "LIMIT"); err != nil {
			return nil, nil, err
		}
	}
	if q.Offset != nil {
		if sort.Offset, err = p.constInt(q.Offset, "OFFSET"); err != nil {
			return nil, nil, err
		}
	}
	var out plan.Node = sort
	if n.Schema().Len() > width {
		// Project the columns that only ORDER BY reads away.
		s := n.Schema()
		keep := types.Schema{Columns: s.Columns[:width]}
		out = &plan.Calc{Input: sort, Projs: identity(keep), Out: keep}
	}
	return out, sc, nil
}

// bindOrderBy resolves the ORDER BY items of q, whose body was planned as
// n with the output scope sc. As in Flink, an item is an ordinal of the
// select list, a name or expression over the select list's columns
// (which come first), or, for a plain SELECT, an expression over its FROM
// clause (columns the select list leaves out, an aggregate with GROUP
// BY). It returns n, with the columns the sort keys need appended after
// the query's own, and the keys.
func (p *Planner) bindOrderBy(q *ast.Query, n plan.Node, sc *scope) (plan.Node, []plan.SortKey, error) {
	keys := make([]plan.SortKey, len(q.OrderBy))
	var overOutput []expr.Node      // computed over the select list
	var overInput []*ast.SelectItem // computed with the select list
	inputKey := map[int]int{}       // ORDER BY item -> index in overInput
	outputKey := map[int]int{}      // ORDER BY item -> index in overOutput
	for i, o := range q.OrderBy {
		keys[i] = plan.SortKey{Desc: o.Desc, NullsFirst: !o.Desc}
		if o.NullsFirst != nil {
			keys[i].NullsFirst = *o.NullsFirst
		}
		if lit, ok := o.Expr.(*ast.Literal); ok && lit.Kind == ast.Number {
			c, err := strconv.Atoi(lit.Value)
			if err != nil || c < 1 || c > len(sc.cols) {
				return nil, nil, p.errorf(o.Expr, "ORDER BY position %s is not in the select list (1..%d)", lit.Value, len(sc.cols))
			}
			keys[i].Col = c - 1
			continue
		}
		over, err := p.readsOutput(o.Expr, sc)
		if err != nil {
			return nil, nil, err
		}
		if over {
			e, err := p.bindExpr(o.Expr, sc)
			if err != nil {
				return nil, nil, err
			}
			if c, ok := e.(*expr.Column); ok {
				keys[i].Col = c.Index
			} else {
				outputKey[i] = len(overOutput)
				overOutput = append(overOutput, e)
			}
			continue
		}
		inputKey[i] = len(overInput)
		overInput = append(overInput, &ast.SelectItem{Span: o.Span, Expr: o.Expr})
	}
	width := len(sc.cols)
	if len(overInput) > 0 {
		sel, ok := q.Body.(*ast.Select)
		switch {
		case !ok:
			at := q.OrderBy[firstKey(inputKey)].Expr
			return nil, nil, p.errorf(at, "ORDER BY of a %s can name its output columns only (%s), or their positions",
				bodyKind(q.Body), strings.Join(sc.names(), ", "))
		case sel.Distinct:
			at := q.OrderBy[firstKey(inputKey)].Expr
			return nil, nil, p.errorf(at, "ORDER BY of a SELECT DISTINCT can name columns of its select list only (%s); add %s to the select list",
				strings.Join(sc.names(), ", "), ast.Format(at))
		}
		// Plan the select again, with the ORDER BY expressions as more
		// items: bound where the select list is, after it.
		x := *sel
		x.Items = append(append([]*ast.SelectItem(nil), sel.Items...), overInput...)
		saved := p.orderItems
		p.orderItems = overInput
		wide, _, err := p.bindSelect(&x)
		p.orderItems = saved
		if err != nil {
			return nil, nil, err
		}
		n = wide
		for i, j := range inputKey {
			keys[i].Col = width + j
		}
	}
	if len(overOutput) > 0 {
		s := n.Schema()
		projs := identity(s)
		out := types.Schema{Columns: append([]types.Column(nil), s.Columns...)}
		for j, e := range overOutput {
			projs = append(projs, e)
			out.Columns = append(out.Columns, types.Column{Name: "$order" + strconv.Itoa(j), Type: e.Type()})
		}
		base := s.Len()
		n = &plan.Calc{Input: n, Projs: projs, Out: out}
		for i, j := range outputKey {
			keys[i].Col = base + j
		}
	}
	return n, keys, nil
}

// readsOutput reports whether an ORDER BY expression is over the select
// list's columns: every column it names is one of them, and it calls no
// aggregate, GROUPING or window function. A name two output columns share is an
// error.
func (p *Planner) readsOutput(e ast.Expr, sc *scope) (bool, error) {
	over := true
	var err error
	ast.Inspect(e, func(n ast.Node) bool {
		if !over || err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.ColumnRef:
			var ok bool
			if len(n.Parts) >= 2 {
				_, ok, err = p.find(sc, n.Parts[0].Name, n.Parts[1])
			}
			if !ok && err == nil {
				_, ok, err = p.find(sc, "", n.Parts[0])
			}
			over = ok
		case *ast.Call:
			if p.isAggregate(n) || groupingFunc(n) != "" || n.Over != nil || n.OverName != nil {
				over = false
			}
		case *ast.Query, *ast.SubqueryExpr, *ast.Exists:
			return false
		}
		return true
	})
	return over, err
}

func firstKey(m map[int]int) int {
	first := -1
	for k := range m {
		if first < 0 || k < first {
			first = k
		}
	}
	return first
}

// bodyKind names a query body for messages.
func bodyKind(b ast.QueryBody) string {
	switch b := b.(type) {
	case *ast.SetOp:
		return b.Op
	case *ast.Values:
		return "VALUES"
	}
	return "subquery"
}

func (p *Planner) constInt(e ast.Expr, what string) (int64, error) {
	lit, ok := e.(*ast.Literal)
	if ok && lit.Kind == ast.Number {
		if n, err := strconv.ParseInt(lit.Value, 10, 64); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, p.errorf(e, "%s expects a non-negative integer literal", what)
}

func (p *Planner) bindBody(body ast.QueryBody) (plan.Node, *scope, error) {
	switch b := body.(type) {
	case *ast.Select:
		return p.bindSelect(b)
	case *ast.Query:
		return p.bindQuery(b)
	case *ast.Values:
		return p.bindValues(b)
	case *ast.SetOp:
		return p.bindSetOp(b)
	}
	return nil, nil, p.errorf(body, "unsupported query %T", body)
}

// castTo projects n onto the column types of out, casting where needed.
func (p *Planner) castTo(at ast.Node, n plan.Node, out types.Schema) (plan.Node, error) {
	in := n.Schema()
	same := true
	projs := make([]expr.Node, in.Len())
	cols := make([]types.Column, in.Len())
	for i, c := range in.Columns {
		var e expr.Node = &expr.Column{Index: i, Name: c.Name, T: c.Type}
		want := out.Columns[i].Type
		if !c.Type.SameKind(want) || c.Type.Nullable() != want.Nullable() && !want.Nullable() {
			cast, err := p.builder.Cast(e, want, false)
			if err != nil {
				return nil, p.wrap(at, err)
			}
			e, same = cast, false
		}
		projs[i] = e
		cols[i] = types.Column{Name: out.Columns[i].Name, Type: e.Type()}
	}
	if same {
		return n, nil
	}
	return &plan.Calc{Input: n, Projs: projs, Out: types.Schema{Columns: cols}}, nil
}

func (p *Planner) bindValues(v *ast.Values) (plan.Node, *scope, error) {
	if len(v.Rows) == 0 {
		return nil, nil, p.errorf(v, "VALUES needs at least one row")
	}
	width := len(v.Rows[0])
	empty := &scope{}
	rows := make([][]types.Value, len(v.Rows))
	var colTypes []types.Type
	nodes := make([][]expr.Node, len(v.Rows))
	for i, r := range v.Rows {
		if len(r) != width {
			return nil, nil, p.errorf(v, "VALUES rows have %d and %d columns", width, len(r))
		}
		nodes[i] = make([]expr.Node, width)
		for j, e := range r {
			n, err := p.bindExpr(e, empty)
			if err != nil {
				return nil, nil, err
			}
			nodes[i][j] = n
			if i == 0 {
				colTypes = append(colTypes, n.Type())
			} else {
				t, ok := types.CommonType(colTypes[j], n.Type())
				if !ok {
					return nil, nil, p.errorf(e, "VALUES column %d mixes %s and %s", j+1, colTypes[j], n.Type())
				}
				colTypes[j] = t
			}
		}
	}
	env := &expr.Env{Now: func() int64 { return 0 }}
	for i := range nodes {
		rows[i] = make([]types.Value, width)
		for j, n := range nodes[i] {
			if !n.Type().SameKind(colTypes[j]) {
				c, err := p.builder.Cast(n, colTypes[j], false)
				if err != nil {
					return nil, nil, p.wrap(v.Rows[i][j], err)
				}
				n = c
			}
			ev, err := expr.Compile(n, env)
			if err != nil {
				return nil, nil, p.wrap(v.Rows[i][j], err)
			}
			val, err := ev(nil)
			if err != nil {
				return nil, nil, p.wrap(v.Rows[i][j], err)
			}
			rows[i][j] = val
		}
	}
	out := types.Schema{}
	for j, t := range colTypes {
		out.Columns = append(out.Columns, types.Column{Name: "EXPR$" + strconv.Itoa(j), Type: t})
	}
	return &plan.Values{Rows: rows, Out: out}, scopeOf("", out), nil
}

// ---------------------------------------------------------------------------
// FROM

func (p *Planner) bindFrom(t ast.TableExpr) (plan.Node, *scope, error) {
	switch t := t.(type) {
	case *ast.TableName:
		if t.SystemTime != nil {
			return nil, nil, p.errorf(t.SystemTime, "FOR SYSTEM_TIME AS OF belongs to the right side of a join (a temporal join): l JOIN v FOR SYSTEM_TIME AS OF l.t ON l.k = v.k")
		}
		n, sc, err := p.bindTableRef(t.Name, t.Hints)
		if err != nil {
			return nil, nil, err
		}
		return p.alias(n, sc, t.Name.Last().Name, t.Alias, t.ColumnAliases)
	case *ast.SubqueryTable:
		if t.Lateral {
			return nil, nil, p.errorf(t, "LATERAL subqueries are not supported yet")
		}
		n, sc, err := p.bindQuery(t.Query)
		if err != nil {
			return nil, nil, err
		}
		return p.alias(n, sc, "", t.Alias, t.ColumnAliases)
	case *ast.TableFunc:
		if t.Lateral {
			return nil, nil, p.errorf(t, "LATERAL TABLE must follow a table it is joined with: FROM t, LATERAL TABLE(f(t.x))")
		}
		return p.bindTableFunc(t)
	case *ast.Join:
		if tf, ok := t.Right.(*ast.TableFunc); ok && tf.Lateral {
			return p.bindLateral(t, tf)
		}
		if u, ok := t.Right.(*ast.Unnest); ok {
			return p.bindUnnest(t, u)
		}
		if tn, ok := t.Right.(*ast.TableName); ok && tn.SystemTime != nil {
			return p.bindTemporalJoin(t, tn)
		}
		return p.bindJoin(t)
	case *ast.Unnest:
		return nil, nil, p.errorf(t, "UNNEST must follow the table whose arrays it expands: FROM t CROSS JOIN UNNEST(t.arr) AS u(x)")
	}
	return nil, nil, p.errorf(t, "unsupported FROM item %T", t)
}

// commaJoin rewrites `FROM a, b WHERE cond` (or CROSS JOIN) as `FROM a
// JOIN b ON cond`: for an inner join the two mean the same, and the
// planner finds the join's keys in ON. Other selects are returned as they
// are.
func commaJoin(sel *ast.Select) *ast.Select {
	j, ok := sel.From.(*ast.Join)
	if !ok || j.Kind != "COMMA" && j.Kind != "CROSS" || sel.Where == nil {
		return sel
	}
	switch j.Right.(type) {
	case *ast.TableFunc, *ast.Unnest:
		return sel // a lateral expansion, not a join of two relations
	}
	if l, ok := j.Left.(*ast.Join); ok && (l.Kind == "COMMA" || l.Kind == "CROSS") {
		return sel // three or more: which condition joins which pair is not said
	}
	x := *sel
	nj := *j
	nj.Kind, nj.On, nj.EndPos = "INNER", sel.Where, sel.Where.End()
	x.From, x.Where = &nj, nil
	return &x
}

// alias renames a relation (and optionally its columns).
func (p *Planner) alias(n plan.Node, sc *scope, def string, alias *ast.Ident, cols []*ast.Ident) (plan.Node, *scope, error) {
	q := def
	if alias != nil {
		q = alias.Name
	}
	sc = sc.requalify(q)
	if len(cols) > 0 {
		if len(cols) != len(sc.cols) {
			return nil, nil, p.errorf(cols[0], "%d column aliases given for %d columns", len(cols), len(sc.cols))
		}
		for i, c := range cols {
			for _, d := range cols[:i] {
				if c.Name == d.Name {
					return nil, nil, p.errorf(c, "duplicate name '%s' in the column alias list", c.Name)
				}
			}
		}
		projs := make([]expr.Node, len(cols))
		out := types.Schema{}
		for i, c := range cols {
			sc.cols[i].name = c.Name
			projs[i] = &expr.Column{Index: i, Name: c.Name, T: sc.cols[i].typ}
			out.Columns = append(out.Columns, types.Column{Name: c.Name, Type: sc.cols[i].typ})
		}
		n = &plan.Calc{Input: n, Projs: projs, Out: out}
	}
	return n, sc, nil
}

// bindTableRef plans a reference to a CTE, a view or a table.
func (p *Planner) bindTableRef(name *ast.ObjectName, hints []*ast.Hint) (plan.Node, *scope, error) {
	last, err := p.ObjectName(name)
	if err != nil {
		return nil, nil, err
	}
	if len(name.Parts) == 1 {
		for i := len(p.ctes) - 1; i >= 0; i-- {
			if c, ok := p.ctes[i][last]; ok {
				if err := p.refuseHints(hints, "WITH query", last); err != nil {
					return nil, nil, err
				}
				// A CTE sees the CTEs of enclosing queries and those
				// declared before it in its own WITH, as in Flink.
				saved := p.ctes
				p.ctes = append(p.ctes[:i:i], c.before)
				n, sc, err := p.bindQuery(c.def.Query)
				p.ctes = saved
				if err != nil {
					return nil, nil, err
				}
				if len(c.def.Columns) == 0 {
					if dup := duplicateName(sc.names()); dup != "" {
						// As Flink does: a CTE's columns need names of their own.
						return nil, nil, p.errorf(c.def.Query, "CTE '%s' has two columns named '%s': give them different aliases, or name the CTE's columns: WITH %s (col1, col2, ...) AS (...)",
							last, dup, last)
					}
				}
				return p.alias(n, sc, last, nil, c.def.Columns)
			}
		}
	}
	tbl, view, err := p.Catalog.Lookup(last)
	if err != nil {
		return nil, nil, p.errorf(name, "%s", err.Error())
	}
	if view != nil {
		if err := p.refuseHints(hints, "view", view.Name); err != nil {
			return nil, nil, err
		}
		return p.bindView(name, view)
	}
	if tbl, err = p.hintedTable(tbl, hints); err != nil {
		return nil, nil, err
	}
	n, sc, err := p.bindScan(name, tbl)
	if err != nil {
		return nil, nil, err
	}
	if s := n.(*plan.Scan); s.Upsert {
		// Rows of an upsert stream replace their key's row: keep the
		// last row per key to retract it.
		norm := &plan.ChangelogNormalize{Input: s}
		for _, pk := range tbl.PrimaryKey {
			for i, c := range tbl.Columns {
				if c.Name == pk {
					norm.Keys = append(norm.Keys, i)
				}
			}
		}
		n = norm
	}
	return n, sc, nil
}

func (p *Planner) bindView(at ast.Node, v *catalog.View) (plan.Node, *scope, error) {
	if v.Ruleset != nil {
		return p.bindRuleset(at, v)
	}
	if v.MetricGroup != nil {
		return p.bindMetricGroup(at, v)
	}
	if p.viewDepth > 32 {
		return nil, nil, p.errorf(at, "views are nested more than 32 deep at '%s' (or a view refers to itself)", v.Name)
	}
	saved, savedCTEs := p.File, p.ctes
	p.File, p.ctes = v.File, nil
	p.viewDepth++
	n, sc, err := p.bindQuery(v.Query)
	p.viewDepth--
	p.File, p.ctes = saved, savedCTEs
	if err != nil {
		return nil, nil, err
	}
	var cols []*ast.Ident
	for _, c := range v.Columns {
		cols = append(cols, &ast.Ident{Name: c})
	}
	if len(cols) > 0 && len(cols) != len(sc.cols) {
		return nil, nil, p.errorf(at, "view '%s' declares %d columns but its query has %d", v.Name, len(cols), len(sc.cols))
	}
	return p.alias(n, sc, v.Name, nil, cols)
}

// bindScan plans a table read: physical columns, computed columns and the
// watermark. A table read again by the statement (a statement set of
// thousands of rules over one table) is bound once: each scan returned is
// a node of its own, but its schemas, computed columns and watermark are
// shared with the table's other scans, and the scope is the same. Nothing
// changes them once bound (the optimizer replaces a scan's Used and
// Table.Read, which are its own); a caller that would change the scope
// copies it first (alias does).
func (p *Planner) bindScan(at ast.Node, t *catalog.Table) (plan.Node, *scope, error) {
	if b, ok := p.scans[t]; ok {
		scan := *b.scan
		return &scan, b.sc, nil
	}
	n, sc, err := p.bindNewScan(at, t)
	if err != nil {
		return nil, nil, err
	}
	// Clipped, a slice shared by the scans is copied by whoever appends
	// to it rather than written past its end for all.
	scan := n.(*plan.Scan)
	scan.Out.Columns = slices.Clip(scan.Out.Columns)
	scan.Computed = slices.Clip(scan.Computed)
	scan.Table.Schema.Columns = slices.Clip(scan.Table.Schema.Columns)
	scan.Table.Metadata = slices.Clip(scan.Table.Metadata)
	sc.cols = slices.Clip(sc.cols)
	if p.scans == nil {
		p.scans = map[*catalog.Table]boundScan{}
	}
	p.scans[t] = boundScan{scan: scan, sc: sc}
	cp := *scan
	return &cp, sc, nil
}

// bindNewScan binds a scan of t (see bindScan).
func (p *Planner) bindNewScan(at ast.Node, t *catalog.Table) (plan.Node, *scope, error) {
	saved := p.File
	p.File = t.File
	defer func() { p.File = saved }()

	phys := t.Physical()
	// The connector's row: physical columns, then metadata columns.
	var meta []connector.MetadataColumn
	for _, c := range t.Columns {
		if c.Metadata {
			key := c.MetadataKey
			if key == "" {
				key = c.Name
			}
			meta = append(meta, connector.MetadataColumn{Name: c.Name, Key: key, Type: c.Type, Virtual: c.Virtual})
		}
	}
	readRow := types.Schema{Columns: append([]types.Column(nil), phys.Columns...)}
	for _, m := range meta {
		readRow.Columns = append(readRow.Columns, types.Column{Name: m.Name, Type: m.Type})
	}
	physScope := scopeOf(t.Name, readRow)
	scan := &plan.Scan{
		Table: connector.Table{Name: t.Name, Schema: phys, Metadata: meta, PrimaryKey: t.PrimaryKey,
			PartitionKeys: t.PartitionKeys, Options: t.Options},
		RowtimeCol:  -1,
		ProctimeCol: -1,
		Alias:       t.Name,
		HintAt:      t.HintAt,
	}
	if p.SourceChangelog != nil {
		scan.Changelog = p.SourceChangelog(scan.Table)
	}
	if p.SourceUpserts != nil && len(t.PrimaryKey) > 0 {
		scan.Upsert = p.SourceUpserts(scan.Table)
		scan.Changelog = scan.Changelog && !scan.Upsert
	}
	physIdx, metaIdx := 0, len(phys.Columns)
	for _, c := range t.Columns {
		var n expr.Node
		switch {
		case c.Metadata:
			n = &expr.Column{Index: metaIdx, Name: c.Name, T: c.Type}
			metaIdx++
		case c.Computed != nil:
			var err error
			if n, err = p.bindExpr(c.Computed, physScope); err != nil {
				return nil, nil, err
			}
		default:
			n = &expr.Column{Index: physIdx, Name: c.Name, T: c.Type}
			physIdx++
		}
		typ := n.Type()
		if typ.TimeAttr == types.ProcTime {
			scan.ProctimeCol = len(scan.Out.Columns)
		}
		scan.Computed = append(scan.Computed, n)
		scan.Out.Columns = append(scan.Out.Columns, types.Column{Name: c.Name, Type: typ})
	}
	full := scopeOf(t.Name, scan.Out)
	if wm := t.Watermark; wm != nil {
		idx, ok, err := p.find(full, "", wm.Column)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, p.errorf(wm.Column, "watermark column '%s' not found in table '%s'%s",
				wm.Column.Name, t.Name, hint(wm.Column.Name, full.names()))
		}
		ct := scan.Out.Columns[idx].Type
		if ct.Kind != types.KindTimestamp && ct.Kind != types.KindTimestampLTZ || ct.Precision > 3 {
			return nil, nil, p.errorf(wm.Column, "watermark column '%s' must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), but is %s",
				wm.Column.Name, ct)
		}
		we, err := p.bindExpr(wm.Expr, full)
		if err != nil {
			return nil, nil, err
		}
		if wt := we.Type(); !wt.Kind.IsTimestamp() {
			return nil, nil, p.errorf(wm.Expr, "watermark expression must return a TIMESTAMP, but returns %s", wt)
		}
		ct.TimeAttr = types.RowTime
		scan.Out.Columns[idx].Type = ct
		scan.Watermark = we
		scan.RowtimeCol = idx
	}
	idle, err := p.idleTimeout(at, t)
	if err != nil {
		return nil, nil, err
	}
	scan.IdleTimeoutMillis = idle.Milliseconds()
	return scan, scopeOf(t.Name, scan.Out), nil
}

// idleTimeout returns the idle timeout of a scan of t: its
// 'scan.watermark.idle-timeout', else the session's.
func (p *Planner) idleTimeout(at ast.Node, t *catalog.Table) (time.Duration, error) {
	idle, err := connector.Options(t.Options).Duration("scan.watermark.idle-timeout", 0)
	if err != nil {
		return 0, p.errorf(t.Decl, "table '%s': %v", t.Name, err)
	}
	if idle == 0 {
		if idle, err = config.Duration(p.Config, config.SourceIdleTimeout); err != nil {
			return 0, p.errorf(at, "%v", err)
		}
	}
	return idle, nil
}

// ---------------------------------------------------------------------------
// SELECT

func (p *Planner) bindSelect(sel *ast.Select) (plan.Node, *scope, error) {
	if err := p.checkQueryHints(sel.Hints); err != nil {
		return nil, nil, err
	}
	sel = commaJoin(sel)
	var in plan.Node
	var sc *scope
	var err error
	if sel.From == nil {
		in = &plan.Values{Rows: [][]types.Value{{}}}
		sc = &scope{}
	} else if in, sc, err = p.bindFrom(sel.From); err != nil {
		return nil, nil, err
	}
	if sel.Where != nil && hasSubqueryCond(sel.Where) {
		if in, sc, sel, err = p.bindSubqueryConds(sel, in, sc); err != nil {
			return nil, nil, err
		}
	}
	if len(sel.GroupBy) > 0 || sel.Having != nil || p.hasAggregate(sel) {
		return p.bindAggregate(sel, in, sc)
	}
	var filter expr.Node
	if sel.Where != nil {
		if filter, err = p.bindCondition(sel.Where, sc, "WHERE"); err != nil {
			return nil, nil, err
		}
	}
	b := &binder{p: p, sc: sc}
	if calls := overCalls(sel.Items); len(calls) > 0 {
		// The select list reads the row numbers of a Rank, or the
		// aggregates of an OverAggregate, over the filtered input.
		if filter != nil {
			in = &plan.Calc{Input: in, Filter: filter, Projs: identity(in.Schema()), Out: in.Schema()}
			filter = nil
		}
		specs, err := p.windowSpecs(calls, sel.Windows)
		if err != nil {
			return nil, nil, err
		}
		if isRowNumber(calls) {
			in, sc, b.over, err = p.bindRank(calls, specs, in, sc)
		} else {
			in, sc, b.over, err = p.bindOverAgg(calls, specs, in, sc)
		}
		if err != nil {
			return nil, nil, err
		}
		b.sc = sc
	}
	projs, names, err := p.bindItems(sel.Items, b)
	if err != nil {
		return nil, nil, err
	}
	out := makeSchema(projs, uniqueNames(names))
	calc := &plan.Calc{Input: in, Filter: filter, Projs: projs, Out: out}
	var n plan.Node = calc
	if calc.IsIdentity() {
		n = in
	}
	if sel.Distinct {
		n = distinct(n, p.sqlAt("SELECT DISTINCT", sel.DistinctPos))
	}
	return n, selectScope(n, names), nil
}

// distinct plans the duplicate removal of n's rows, for the construct
// at: a GROUP BY of all its columns, which is a window aggregation when
// n's rows carry their window.
func distinct(n plan.Node, at plan.SQL) plan.Node {
	if w := attachedDistinct(n); w != nil {
		return w
	}
	s := n.Schema()
	keys := make([]int, s.Len())
	out := types.Schema{Columns: make([]types.Column, s.Len())}
	for i, c := range s.Columns {
		keys[i] = i
		out.Columns[i] = types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()}
	}
	return &plan.GroupAggregate{Input: n, Keys: keys, Out: out, SQL: at}
}

func (p *Planner) bindCondition(e ast.Expr, sc *scope, clause string) (expr.Node, error) {
	n, err := p.bindExpr(e, sc)
	if err != nil {
		return nil, err
	}
	if k := n.Type().Kind; k != types.KindBoolean && k != types.KindNull {
		return nil, p.errorf(e, "%s condition must be BOOLEAN, but is %s", clause, n.Type())
	}
	return n, nil
}

// bindItems binds a select list, expanding * and t.*. The names are the
// columns as an enclosing query sees them, as in Flink (Calcite): an
// item's alias or column name as written, so that two items may share one
// (and a reference to it is then ambiguous), and the columns of * made
// unique against the names before them (a, a0). The schema of the result
// takes uniqueNames(names).
func (p *Planner) bindItems(items []*ast.SelectItem, b *binder) ([]expr.Node, []string, error) {
	projs := make([]expr.Node, 0, len(items))
	names := make([]string, 0, len(items))
	for i, it := range items {
		if it.Star {
			if b.post != nil {
				return nil, nil, p.errorf(it, "* is not allowed with GROUP BY; list the grouped columns")
			}
			q := ""
			if it.Qualifier != nil {
				q = it.Qualifier.Last().Name
				if !p.hasQualifier(b.sc, q) {
					return nil, nil, p.errorf(it.Qualifier, "unknown table '%s' in %s.*", q, q)
				}
			}
			for j, c := range b.sc.cols {
				if !c.hidden && (q == "" || strings.EqualFold(c.qual, q)) {
					projs = append(projs, &expr.Column{Index: j, Name: c.name, T: c.typ})
					names = append(names, uniqueName(c.name, names))
				}
			}
			continue
		}
		p.inOrderBy = slices.Contains(p.orderItems, it)
		n, err := b.bind(it.Expr)
		p.inOrderBy = false
		if err != nil {
			return nil, nil, err
		}
		projs = append(projs, n)
		names = append(names, itemName(it, i))
	}
	return projs, names, nil
}

// selectScope is the scope an enclosing query sees of a select list's
// node n: its columns named by bindItems' names.
func selectScope(n plan.Node, names []string) *scope {
	sc := scopeOf("", n.Schema())
	if len(names) == len(sc.cols) {
		for i := range sc.cols {
			sc.cols[i].name = names[i]
		}
	}
	return sc
}

// itemName is the output name of a select item: its alias, the column it
// names, or EXPR$i as Flink does.
func itemName(it *ast.SelectItem, i int) string {
	if it.Alias != nil {
		return it.Alias.Name
	}
	switch e := it.Expr.(type) {
	case *ast.ColumnRef:
		return e.Parts[len(e.Parts)-1].Name
	case *ast.Call:
		// window_start etc. spelled as legacy functions keep Flink's EXPR$ names.
	}
	return "EXPR$" + strconv.Itoa(i)
}

// duplicateName returns the first name that occurs twice in names, or "".
func duplicateName(names []string) string {
	for i, n := range names {
		for _, m := range names[:i] {
			if n == m {
				return n
			}
		}
	}
	return ""
}

// uniqueName returns name, or name suffixed (name0, name1, ...) so that
// it differs from every one of taken (case-insensitively).
func uniqueName(name string, taken []string) string {
	seen := make(map[string]bool, len(taken))
	for _, t := range taken {
		seen[strings.ToLower(t)] = true
	}
	out := name
	for k := 0; seen[strings.ToLower(out)]; k++ {
		out = name + strconv.Itoa(k)
	}
	return out
}

// uniqueNames suffixes repeated names (a, a0, a1) as Flink does.
func uniqueNames(names []string) []string {
	seen := map[string]bool{}
	out := make([]string, len(names))
	for i, n := range names {
		name := n
		for k := 0; seen[strings.ToLower(name)]; k++ {
			name = n + strconv.Itoa(k)
		}
		seen[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}

// identity returns the projections that pass a row of s through.
func identity(s types.Schema) []expr.Node {
	out := make([]expr.Node, s.Len())
	for i, c := range s.Columns {
		out[i] = &expr.Column{Index: i, Name: c.Name, T: c.Type}
	}
	return out
}

func makeSchema(projs []expr.Node, names []string) types.Schema {
	out := types.Schema{Columns: make([]types.Column, len(projs))}
	for i, n := range projs {
		out.Columns[i] = types.Column{Name: names[i], Type: n.Type()}
	}
	return out
}
