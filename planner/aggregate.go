package planner

import (
	"slices"
	"strings"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

func hint(name string, cands []string) string { return suggest.Hint(name, cands) }

// isAggregate reports whether a call is an aggregate (not an OVER window).
func (p *Planner) isAggregate(c *ast.Call) bool {
	if c.Over != nil || c.OverName != nil || len(c.Name.Parts) != 1 {
		return false
	}
	return p.Aggs.Has(c.Name.Last().Name)
}

// hasAggregate reports whether the select list or HAVING calls an aggregate.
func (p *Planner) hasAggregate(sel *ast.Select) bool { return p.firstAggregate(sel) != nil }

// firstAggregate returns the first aggregate call (or GROUPING()) of the
// select list or HAVING, or nil.
func (p *Planner) firstAggregate(sel *ast.Select) *ast.Call {
	var found *ast.Call
	visit := func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.Call:
			// GROUPING() makes an aggregate query too, as in Calcite.
			if p.isAggregate(n) || groupingFunc(n) != "" {
				found = n
				return false
			}
		case *ast.Query, *ast.SubqueryExpr, *ast.Exists:
			return false
		}
		return true
	}
	for _, it := range sel.Items {
		if it.Expr != nil {
			ast.Inspect(it.Expr, visit)
		}
	}
	if sel.Having != nil {
		ast.Inspect(sel.Having, visit)
	}
	return found
}

func isGroupWindowFunc(name string) bool {
	switch name {
	case "TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "TUMBLE_PROCTIME",
		"HOP_START", "HOP_END", "HOP_ROWTIME", "HOP_PROCTIME",
		"SESSION_START", "SESSION_END", "SESSION_ROWTIME", "SESSION_PROCTIME":
		return true
	}
	return false
}

// postAgg maps expressions over an aggregation's input to the aggregation's
// output columns: grouped expressions, aggregate calls and window bounds.
type postAgg struct {
	in      *scope         // the aggregation's input scope
	keys    map[string]int // bound key expression text → output column
	aggs    map[string]int // aggregate call fingerprint → output column
	out     types.Schema   // the aggregation's output
	winCols map[string]int // window_start, window_end, window_time → output column
	legacy  *legacyWindow  // GROUP BY TUMBLE(...) etc.
	// grouping computes GROUPING() and the like.
	grouping *grouping
}

type legacyWindow struct {
	kind string // TUMBLE, HOP, SESSION
	args []string
}

func (pa *postAgg) column(i int) expr.Node {
	c := pa.out.Columns[i]
	return &expr.Column{Index: i, Name: c.Name, T: c.Type}
}

// match maps e to an output column if it is grouped, aggregated or a window
// bound; ok is false when e must be bound structurally.
func (pa *postAgg) match(b *binder, e ast.Expr) (expr.Node, bool, error) {
	p := b.p
	if c, isCall := e.(*ast.Call); isCall {
		name := strings.ToUpper(c.Name.Last().Name)
		if g := groupingFunc(c); g != "" {
			n, err := pa.grouping.bind(pa, b, c, g)
			return n, true, err
		}
		if p.isAggregate(c) {
			fp, err := p.aggFingerprint(c, pa.in)
			if err != nil {
				return nil, true, err
			}
			if i, ok := pa.aggs[fp]; ok {
				return pa.column(i), true, nil
			}
			return nil, true, p.errorf(c, "aggregate %s is not computed by this query", name)
		}
		if isGroupWindowFunc(name) {
			return pa.matchLegacy(p, c, name)
		}
	}
	// A window bound or a grouped expression, by its bound text.
	if n, err := p.bindExpr(e, pa.in); err == nil {
		if i, ok := pa.keys[exprKey(n)]; ok {
			return pa.column(i), true, nil
		}
		if col, ok := n.(*expr.Column); ok {
			if i, ok := pa.winCols[strings.ToLower(pa.in.cols[col.Index].name)]; ok && pa.isWindowCol(col.Index) {
				return pa.column(i), true, nil
			}
		}
		if isConstant(n) {
			return n, true, nil
		}
	}
	return nil, false, nil
}

// isWindowCol reports whether input column i is a window TVF's bound.
func (pa *postAgg) isWindowCol(i int) bool {
	n := len(pa.in.cols)
	return pa.winCols != nil && i >= n-3
}

func (pa *postAgg) matchLegacy(p *Planner, c *ast.Call, name string) (expr.Node, bool, error) {
	kind, part, _ := strings.Cut(name, "_")
	if pa.legacy == nil || pa.legacy.kind != kind {
		return nil, true, p.errorf(c, "%s requires GROUP BY %s(...)", name, kind)
	}
	if len(c.Args) != len(pa.legacy.args) {
		return nil, true, p.errorf(c, "%s must have the same arguments as the GROUP BY %s", name, kind)
	}
	for i, a := range c.Args {
		n, err := p.bindExpr(a, pa.in)
		if err != nil {
			return nil, true, err
		}
		if exprKey(n) != pa.legacy.args[i] {
			return nil, true, p.errorf(a, "%s must have the same arguments as the GROUP BY %s", name, kind)
		}
	}
	col := map[string]string{"START": "window_start", "END": "window_end", "ROWTIME": "window_time", "PROCTIME": "window_time"}[part]
	return pa.column(pa.winCols[col]), true, nil
}

func isConstant(n expr.Node) bool {
	_, ok := n.(*expr.Literal)
	return ok
}

// aggFingerprint identifies an aggregate call by its bound arguments.
func (p *Planner) aggFingerprint(c *ast.Call, in *scope) (string, error) {
	var b strings.Builder
	b.WriteString(strings.ToUpper(c.Name.Last().Name))
	b.WriteByte('(')
	if c.Distinct {
		b.WriteString("DISTINCT ")
	}
	if c.Star {
		b.WriteByte('*')
	}
	for i, a := range c.Args {
		n, err := p.bindExpr(a, in)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(exprKey(n))
	}
	b.WriteByte(')')
	if c.Filter != nil {
		n, err := p.bindExpr(c.Filter, in)
		if err != nil {
			return "", err
		}
		b.WriteString(" FILTER ")
		b.WriteString(exprKey(n))
	}
	return b.String(), nil
}

// aggCollector gathers the aggregate calls of a query and the columns the
// pre-aggregation projection must compute for them.
type aggCollector struct {
	p     *Planner
	in    *scope
	pre   []expr.Node // pre-projection: keys first, then arguments
	preIx map[string]int
	calls []agg.Call
	fps   map[string]int
	names []string
	// columns: pre starts with the input's columns, which arguments use
	// as they are.
	columns bool
}

func (ac *aggCollector) preCol(n expr.Node) int {
	if c, ok := n.(*expr.Column); ok && ac.columns {
		return c.Index
	}
	s := exprKey(n)
	if i, ok := ac.preIx[s]; ok {
		return i
	}
	ac.pre = append(ac.pre, n)
	ac.preIx[s] = len(ac.pre) - 1
	return len(ac.pre) - 1
}

func (ac *aggCollector) collect(e ast.Expr) error {
	var err error
	ast.Inspect(e, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.Query, *ast.SubqueryExpr, *ast.Exists:
			return false
		case *ast.Call:
			if ac.p.isAggregate(n) {
				err = ac.add(n)
				return false
			}
		}
		return true
	})
	return err
}

func (ac *aggCollector) add(c *ast.Call) error {
	p := ac.p
	fp, err := p.aggFingerprint(c, ac.in)
	if err != nil {
		return err
	}
	if _, ok := ac.fps[fp]; ok {
		return nil
	}
	name := strings.ToUpper(c.Name.Last().Name)
	f, err := p.Aggs.Lookup(name)
	if err != nil {
		return p.errorf(c.Name, "%s", err.Error())
	}
	call := agg.Call{Func: f, Filter: -1, Distinct: c.Distinct}
	if c.Star {
		if name != "COUNT" {
			return p.errorf(c, "%s(*) is not allowed; only COUNT(*)", name)
		}
	}
	for _, a := range c.Args {
		var nested bool
		ast.Inspect(a, func(n ast.Node) bool {
			if cc, ok := n.(*ast.Call); ok && p.isAggregate(cc) {
				nested = true
			}
			return !nested
		})
		if nested {
			return p.errorf(a, "aggregate calls cannot be nested")
		}
		n, err := p.bindExpr(a, ac.in)
		if err != nil {
			return err
		}
		if d, ok := f.(agg.Declared); ok && len(d.DeclaredArgs()) == len(c.Args) {
			want := d.DeclaredArgs()[len(call.Args)]
			if got := n.Type(); !got.SameKind(want) && got.Kind != types.KindNull && types.Assignable(got.WithoutTimeAttr(), want) {
				if n, err = p.builder.Cast(n, want, false); err != nil {
					return p.wrap(a, err)
				}
			}
		}
		call.Args = append(call.Args, ac.preCol(n))
		call.ArgTypes = append(call.ArgTypes, n.Type().WithoutTimeAttr())
	}
	if name == "COUNT" && len(call.Args) > 1 {
		return p.errorf(c, "COUNT takes one argument")
	}
	if c.Filter != nil {
		n, err := p.bindCondition(c.Filter, ac.in, "FILTER")
		if err != nil {
			return err
		}
		call.Filter = ac.preCol(n)
	}
	rt, err := f.ResultType(call.ArgTypes)
	if err != nil {
		return p.errorf(c, "%s", err.Error())
	}
	call.Result = rt
	ac.fps[fp] = len(ac.calls)
	ac.calls = append(ac.calls, call)
	ac.names = append(ac.names, fp)
	return nil
}

// windowRef describes the window of a windowed aggregation.
type windowRef struct {
	spec          window.Spec
	timeCol       int // in the input scope
	partitionKeys []int
	tvf           *plan.WindowTVF // set for window TVF aggregation
	legacy        *legacyWindow
	legacyKey     int // index of the GROUP BY item that is the legacy window
}

func (p *Planner) bindAggregate(sel *ast.Select, in plan.Node, sc *scope) (plan.Node, *scope, error) {
	// Window TVF aggregation: GROUP BY window_start, window_end over a
	// window TVF; filters on the input move below the window.
	var win *windowRef
	var where expr.Node
	var err error
	// A subquery that only filters or picks columns of a window TVF
	// (SELECT ... FROM (SELECT * FROM TABLE(TUMBLE(...)) WHERE ...)) is
	// seen through, so that the aggregation stays a window aggregation.
	var tvfFilter expr.Node
	if c, ok := in.(*plan.Calc); ok {
		if tvf, ok := c.Input.(*plan.WindowTVF); ok {
			if tsc, ok := seeThrough(c, tvf, sc); ok && p.groupsByWindow(sel.GroupBy, tsc) {
				in, sc, tvfFilter = tvf, tsc, c.Filter
			}
		}
	}
	if sel.Where != nil {
		if where, err = p.bindCondition(sel.Where, sc, "WHERE"); err != nil {
			return nil, nil, err
		}
	}
	if tvfFilter != nil {
		if where == nil {
			where = tvfFilter
		} else if where, err = p.builder.Call("AND", tvfFilter, where); err != nil {
			return nil, nil, p.wrap(sel.Where, err)
		}
	}
	if tvf, ok := in.(*plan.WindowTVF); ok && p.groupsByWindow(sel.GroupBy, sc) {
		win = &windowRef{spec: tvf.Spec, timeCol: tvf.TimeCol, partitionKeys: tvf.PartitionKeys, tvf: tvf}
	}
	if win == nil {
		for i, g := range sel.GroupBy {
			c, ok := g.(*ast.Call)
			if !ok {
				continue
			}
			kind := strings.ToUpper(c.Name.Last().Name)
			if kind != "TUMBLE" && kind != "HOP" && kind != "SESSION" {
				continue
			}
			if win != nil {
				return nil, nil, p.errorf(c, "only one group window is allowed in GROUP BY")
			}
			if win, err = p.bindLegacyWindow(c, kind, sc); err != nil {
				return nil, nil, err
			}
			win.legacyKey = i
		}
	}

	// The grouping expressions and, with GROUPING SETS, ROLLUP or CUBE,
	// the grouping sets over them.
	groupBy := sel.GroupBy
	var gs *groupSets
	if hasGroupingSets(sel.GroupBy) {
		if win != nil && win.legacy != nil {
			return nil, nil, p.errorf(firstGroupingSet(sel.GroupBy), "GROUPING SETS are currently not supported with a group window function (as in Flink); "+
				"use a window table function: GROUP BY window_start, window_end, GROUPING SETS (...)")
		}
		if gs, err = p.expandGroupBy(sel.GroupBy, sc); err != nil {
			return nil, nil, err
		}
		groupBy = gs.exprs
	}

	ac := &aggCollector{p: p, in: sc, preIx: map[string]int{}, fps: map[string]int{}}
	// Keys first in the pre-projection, in GROUP BY order.
	type key struct {
		text string
		pre  int
		name string
		item int // index in groupBy
	}
	var keys []key
	winCols := map[string]int{}
	winItems := map[string]int{} // grouped window bound → index in groupBy
	plain := &groupSets{}        // a GROUP BY without grouping sets, for GROUPING()
	nodes := make([]expr.Node, len(groupBy))
	for i, g := range groupBy {
		switch {
		case win != nil && win.legacy != nil && i == win.legacyKey:
		case gs != nil:
			nodes[i] = gs.nodes[i]
		default:
			if nodes[i], err = p.bindExpr(g, sc); err != nil {
				return nil, nil, err
			}
			plain.exprs, plain.nodes, plain.keys = append(plain.exprs, g), append(plain.nodes, nodes[i]), append(plain.keys, exprKey(nodes[i]))
		}
	}
	// A GROUP BY of the window_start and window_end of rows that carry
	// their window is a window aggregation of those windows.
	var att *attachedGroup
	if win == nil {
		att = attachedGrouping(in, nodes, gs)
	}
	for i, n := range nodes {
		if n == nil {
			continue // the legacy window
		}
		if att != nil && att.bound(ac, i, n) {
			continue
		}
		if win != nil && win.tvf != nil {
			if col, ok := n.(*expr.Column); ok && col.Index >= len(sc.cols)-3 {
				name := strings.ToLower(sc.cols[col.Index].name)
				winCols[name] = -1 // grouped window bound
				winItems[name] = i
				continue
			}
		}
		pre := ac.preCol(n)
		// A key that is an expression is named by its input column, $fN,
		// as Flink names it: the aggregates' results are EXPR$0, EXPR$1,
		// ..., which a key must not repeat.
		name := "$f" + itoa(pre)
		if col, ok := n.(*expr.Column); ok {
			name = col.Name
		}
		keys = append(keys, key{text: exprKey(n), pre: pre, name: name, item: i})
	}
	if gs == nil {
		plain.sets = []groupSet{{cols: ^uint64(0)}}
		gs = plain
	}
	for _, it := range sel.Items {
		if it.Expr != nil {
			if err := ac.collect(it.Expr); err != nil {
				return nil, nil, err
			}
		}
	}
	if sel.Having != nil {
		if err := ac.collect(sel.Having); err != nil {
			return nil, nil, err
		}
	}

	// The pre-aggregation projection: keys, arguments, and for windows the
	// time column.
	var node plan.Node
	timeCol := -1
	if win != nil {
		timeCol = ac.preCol(&expr.Column{Index: win.timeCol, Name: sc.cols[win.timeCol].name, T: sc.cols[win.timeCol].typ})
	}
	var partKeys []int
	if win != nil {
		for _, k := range win.partitionKeys {
			partKeys = append(partKeys, ac.preCol(&expr.Column{Index: k, Name: sc.cols[k].name, T: sc.cols[k].typ}))
		}
	}
	preIn := in
	if win != nil && win.tvf != nil {
		// Evaluate over the TVF's input: nothing may use the window bounds.
		preIn = win.tvf.Input
		width := win.tvf.Input.Schema().Len()
		for _, n := range ac.pre {
			for _, c := range expr.Columns(n) {
				if c >= width {
					return nil, nil, p.errorf(sel, "window_start, window_end and window_time may only be grouped by, not used inside expressions of a window aggregation")
				}
			}
		}
		if where != nil {
			for _, c := range expr.Columns(where) {
				if c >= width {
					return nil, nil, p.errorf(sel.Where, "a WHERE condition on window bounds is not supported in a window aggregation")
				}
			}
		}
	}
	preSchema := types.Schema{}
	for i, n := range ac.pre {
		preSchema.Columns = append(preSchema.Columns, types.Column{Name: "$f" + itoa(i), Type: n.Type()})
	}
	for _, k := range keys {
		preSchema.Columns[k.pre].Name = k.name
	}
	if att != nil {
		preSchema.Columns[att.start].Name, preSchema.Columns[att.end].Name = att.startName, att.endName
	}
	node = &plan.Calc{Input: preIn, Filter: where, Projs: ac.pre, Out: preSchema}
	if c := node.(*plan.Calc); c.IsIdentity() {
		node = preIn
	}

	if win != nil && win.tvf != nil && (winCols["window_start"] != -1 || winCols["window_end"] != -1) {
		return nil, nil, p.errorf(sel, "a window aggregation must GROUP BY both window_start and window_end")
	}

	// Grouping sets: an Expand emits each row once per set, and the
	// aggregation groups by the keys and the expand id.
	idCol := -1
	if gs.expands() {
		if win != nil {
			for _, i := range winItems {
				if !gs.inAll(i) {
					return nil, nil, p.errorf(firstGroupingSet(sel.GroupBy), "a window aggregation with grouping sets must group every set by window_start and window_end "+
						"(and window_time, if grouped): write them beside the sets, GROUP BY window_start, window_end, GROUPING SETS (...); "+
						"Flink runs this query as an updating aggregation of the window table function's rows, which is not supported")
				}
			}
			for _, pk := range partKeys {
				for _, k := range keys {
					if k.pre == pk && !gs.inAll(k.item) {
						return nil, nil, p.errorf(firstGroupingSet(sel.GroupBy), "a SESSION window with PARTITION BY %s is aggregated with grouping sets only if every set groups by %s",
							k.name, k.name)
					}
				}
			}
		}
		keyCols := make([]int, len(keys))
		keyItems := make([]int, len(keys))
		for i, k := range keys {
			keyCols[i], keyItems[i] = k.pre, k.item
		}
		var reads []int
		for _, c := range ac.calls {
			reads = append(reads, c.Args...)
			if c.Filter >= 0 {
				reads = append(reads, c.Filter)
			}
		}
		if win != nil {
			reads = append(reads, timeCol)
		}
		ex, copies := gs.expandNode(node, keyCols, keyItems, reads)
		node, idCol = ex, ex.IDCol
		for i := range ac.calls {
			c := &ac.calls[i]
			c.Args = slices.Clone(c.Args)
			for j, a := range c.Args {
				if to, ok := copies[a]; ok {
					c.Args[j] = to
				}
			}
			if to, ok := copies[c.Filter]; ok {
				c.Filter = to
			}
		}
		if to, ok := copies[timeCol]; ok && win != nil {
			timeCol = to
		}
	}

	aggIn := node.Schema()
	keyIdx := make([]int, len(keys))
	out := types.Schema{}
	pa := &postAgg{in: sc, keys: map[string]int{}, aggs: map[string]int{}}
	for i, k := range keys {
		keyIdx[i] = k.pre
		pa.keys[k.text] = len(out.Columns)
		out.Columns = append(out.Columns, types.Column{Name: k.name, Type: aggIn.Columns[k.pre].Type.WithoutTimeAttr()})
	}
	pa.grouping = &grouping{g: gs, idCol: -1}
	if idCol >= 0 {
		keyIdx = append(keyIdx, idCol)
		pa.grouping.idCol = len(out.Columns)
		out.Columns = append(out.Columns, types.Column{Name: aggIn.Columns[idCol].Name, Type: aggIn.Columns[idCol].Type})
	}
	if att != nil {
		for text, b := range att.texts {
			pa.keys[text] = len(out.Columns) + b
		}
		out.Columns = append(out.Columns, attachedWindowColumns(att.wp)...)
	}
	if win != nil {
		ts := types.Timestamp(3).WithNullable(false)
		wt := windowTimeType(sc.cols[win.timeCol].typ)
		pa.winCols = map[string]int{}
		for _, wc := range []struct {
			name string
			t    types.Type
		}{{"window_start", ts}, {"window_end", ts}, {"window_time", wt}} {
			pa.winCols[wc.name] = len(out.Columns)
			out.Columns = append(out.Columns, types.Column{Name: wc.name, Type: wc.t})
		}
		pa.legacy = win.legacy
	}
	for i, c := range ac.calls {
		pa.aggs[ac.names[i]] = len(out.Columns)
		out.Columns = append(out.Columns, types.Column{Name: "EXPR$" + itoa(i), Type: c.Result})
	}
	pa.out = out
	if win != nil {
		if node.Updating() {
			return nil, nil, p.errorf(sel, "a window aggregation doesn't support consuming update and delete changes, which its input produces%s; window an append-only input",
				updatingCause(node))
		}
		node = &plan.WindowAggregate{Input: node, Spec: win.spec, TimeCol: timeCol, Keys: keyIdx,
			PartitionKeys: partKeys, Calls: ac.calls, Out: out}
	} else if att != nil {
		node = &plan.WindowAggregate{Input: node, Spec: att.wp.spec, TimeCol: -1, Attached: true, StartCol: att.start, EndCol: att.end,
			Keys: keyIdx, Calls: ac.calls, Out: out}
	} else {
		node = &plan.GroupAggregate{Input: node, Keys: keyIdx, Calls: ac.calls, Out: out, SQL: p.aggregateSQL(sel)}
	}

	b := &binder{p: p, sc: scopeOf("", out), post: pa}
	var having expr.Node
	if sel.Having != nil {
		if having, err = b.bind(sel.Having); err != nil {
			return nil, nil, err
		}
		if k := having.Type().Kind; k != types.KindBoolean && k != types.KindNull {
			return nil, nil, p.errorf(sel.Having, "HAVING condition must be BOOLEAN, but is %s", having.Type())
		}
	}
	projs, names, err := p.bindItems(sel.Items, b)
	if err != nil {
		return nil, nil, err
	}
	calc := &plan.Calc{Input: node, Filter: having, Projs: projs, Out: makeSchema(projs, uniqueNames(names))}
	var res plan.Node = calc
	if calc.IsIdentity() {
		res = node
	}
	if sel.Distinct {
		res = distinct(res, p.sqlAt("SELECT DISTINCT", sel.DistinctPos))
	}
	return res, selectScope(res, names), nil
}

// groupsByWindow reports whether GROUP BY names window_start or window_end
// of a window TVF, also inside GROUPING SETS, ROLLUP or CUBE.
func (p *Planner) groupsByWindow(groupBy []ast.Expr, sc *scope) bool {
	for _, g := range groupBy {
		switch g := g.(type) {
		case *ast.ColumnRef:
			if idx, rest, err := p.resolve(sc, g.Parts); err == nil && len(rest) == 0 && idx >= len(sc.cols)-3 {
				n := strings.ToLower(sc.cols[idx].name)
				if n == "window_start" || n == "window_end" {
					return true
				}
			}
		case *ast.GroupingSet:
			if p.groupsByWindow(g.Items, sc) {
				return true
			}
		case *ast.RowCtor:
			if p.groupsByWindow(g.Args, sc) {
				return true
			}
		}
	}
	return false
}

func (p *Planner) bindLegacyWindow(c *ast.Call, kind string, sc *scope) (*windowRef, error) {
	want := map[string]int{"TUMBLE": 2, "HOP": 3, "SESSION": 2}[kind]
	if len(c.Args) != want && !(kind == "TUMBLE" && len(c.Args) == 3) {
		return nil, p.errorf(c, "%s expects %d arguments (time attribute and interval%s)", kind, want,
			map[bool]string{true: "s", false: ""}[want > 2])
	}
	w := &windowRef{legacy: &legacyWindow{kind: kind}}
	tn, err := p.bindExpr(c.Args[0], sc)
	if err != nil {
		return nil, err
	}
	col, ok := tn.(*expr.Column)
	if !ok || tn.Type().TimeAttr == types.NoTimeAttr {
		return nil, p.errorf(c.Args[0], "the first argument of %s must be a time attribute column, but is %s", kind, tn.Type())
	}
	w.timeCol = col.Index
	w.legacy.args = append(w.legacy.args, exprKey(tn))
	var ivs []int64
	for _, a := range c.Args[1:] {
		n, err := p.bindExpr(a, sc)
		if err != nil {
			return nil, err
		}
		w.legacy.args = append(w.legacy.args, exprKey(n))
		iv, err := p.intervalValue(a, n)
		if err != nil {
			return nil, err
		}
		ivs = append(ivs, iv)
	}
	switch kind {
	case "TUMBLE":
		w.spec = window.Spec{Kind: window.Tumble, Size: ivs[0]}
		if len(ivs) > 1 {
			w.spec.Offset = ivs[1]
		}
	case "HOP":
		w.spec = window.Spec{Kind: window.Hop, Slide: ivs[0], Size: ivs[1]}
	case "SESSION":
		w.spec = window.Spec{Kind: window.Session, Gap: ivs[0]}
	}
	w.spec.LTZ = tn.Type().Kind == types.KindTimestampLTZ
	if err := w.spec.Validate(); err != nil {
		return nil, p.errorf(c, "%s", err.Error())
	}
	return w, nil
}

// intervalValue evaluates a constant day-time interval argument.
func (p *Planner) intervalValue(at ast.Node, n expr.Node) (int64, error) {
	lit, ok := n.(*expr.Literal)
	if !ok || lit.V.Kind() != types.KindIntervalDayTime {
		return 0, p.errorf(at, "expected a constant INTERVAL like INTERVAL '10' MINUTE, got %s", n.Type())
	}
	return lit.V.Int(), nil
}

// bindTableFunc plans TABLE(TUMBLE|HOP|CUMULATE|SESSION(...)).
func (p *Planner) bindTableFunc(t *ast.TableFunc) (plan.Node, *scope, error) {
	name := strings.ToUpper(t.Name.Last().Name)
	params := map[string][]string{
		"TUMBLE":   {"DATA", "TIMECOL", "SIZE", "OFFSET"},
		"HOP":      {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
		"CUMULATE": {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
		"SESSION":  {"DATA", "TIMECOL", "GAP"},
	}[name]
	if params == nil {
		return nil, nil, p.errorf(t.Name, "unknown table function '%s'%s", t.Name.Last().Name,
			hint(t.Name.Last().Name, []string{"TUMBLE", "HOP", "CUMULATE", "SESSION"}))
	}
	args := map[string]*ast.FuncArg{}
	for i, a := range t.Args {
		key := ""
		if a.Name != nil {
			key = strings.ToUpper(a.Name.Name)
			found := false
			for _, pn := range params {
				found = found || pn == key
			}
			if !found {
				return nil, nil, p.errorf(a.Name, "%s has no parameter %s%s; its parameters are %s", name, a.Name.Name,
					hint(key, params), strings.Join(params, ", "))
			}
		} else {
			if i >= len(params) {
				return nil, nil, p.errorf(a, "too many arguments for %s: it takes %s", name, strings.Join(params, ", "))
			}
			key = params[i]
		}
		if args[key] != nil {
			return nil, nil, p.errorf(a, "%s is given twice", key)
		}
		args[key] = a
	}
	data, ok := args["DATA"]
	if !ok {
		return nil, nil, p.errorf(t, "%s needs a table argument: TABLE name", name)
	}
	targ, ok := data.Value.(*ast.TableArg)
	if !ok {
		return nil, nil, p.errorf(data, "%s's first argument must be TABLE name", name)
	}
	in, sc, err := p.bindTableRef(targ.Name, nil)
	if err != nil {
		return nil, nil, err
	}
	in, sc, err = p.alias(in, sc, targ.Name.Last().Name, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	tc, ok := args["TIMECOL"]
	if !ok {
		return nil, nil, p.errorf(t, "%s needs a time column: DESCRIPTOR(col)", name)
	}
	desc, ok := tc.Value.(*ast.Descriptor)
	if !ok || len(desc.Columns) != 1 {
		return nil, nil, p.errorf(tc, "%s's time column must be DESCRIPTOR(col)", name)
	}
	timeCol, found, err := p.find(sc, "", desc.Columns[0])
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return nil, nil, p.errorf(desc.Columns[0], "column '%s' not found%s", desc.Columns[0].Name, hint(desc.Columns[0].Name, sc.names()))
	}
	if tt := sc.cols[timeCol].typ; tt.TimeAttr == types.NoTimeAttr {
		return nil, nil, p.errorf(desc.Columns[0], "the window function requires the time column to be a time attribute (a column with a WATERMARK, or PROCTIME()), but '%s' is %s",
			sc.cols[timeCol].name, tt)
	}
	iv := func(key string) (int64, error) {
		a, ok := args[key]
		if !ok {
			return 0, nil
		}
		n, err := p.bindExpr(a.Value, &scope{})
		if err != nil {
			return 0, err
		}
		return p.intervalValue(a, n)
	}
	var spec window.Spec
	vals := map[string]int64{}
	for _, k := range params[2:] {
		if _, ok := args[k]; !ok && k != "OFFSET" {
			return nil, nil, p.errorf(t, "%s needs the %s argument", name, k)
		}
		if vals[k], err = iv(k); err != nil {
			return nil, nil, err
		}
	}
	switch name {
	case "TUMBLE":
		spec = window.Spec{Kind: window.Tumble, Size: vals["SIZE"], Offset: vals["OFFSET"]}
	case "HOP":
		spec = window.Spec{Kind: window.Hop, Size: vals["SIZE"], Slide: vals["SLIDE"], Offset: vals["OFFSET"]}
	case "CUMULATE":
		spec = window.Spec{Kind: window.Cumulate, Size: vals["SIZE"], Step: vals["STEP"], Offset: vals["OFFSET"]}
	case "SESSION":
		spec = window.Spec{Kind: window.Session, Gap: vals["GAP"]}
	}
	spec.LTZ = sc.cols[timeCol].typ.Kind == types.KindTimestampLTZ
	if err := spec.Validate(); err != nil {
		return nil, nil, p.errorf(t, "%s", err.Error())
	}
	var partKeys []int
	for _, pk := range targ.PartitionBy {
		if name != "SESSION" {
			return nil, nil, p.errorf(pk, "PARTITION BY is only allowed for SESSION windows")
		}
		n, err := p.bindExpr(pk, sc)
		if err != nil {
			return nil, nil, err
		}
		c, ok := n.(*expr.Column)
		if !ok {
			return nil, nil, p.errorf(pk, "PARTITION BY takes column names")
		}
		partKeys = append(partKeys, c.Index)
	}
	out := types.Schema{Columns: append([]types.Column(nil), in.Schema().Columns...)}
	ts := types.Timestamp(3).WithNullable(false)
	wt := windowTimeType(sc.cols[timeCol].typ)
	out.Columns = append(out.Columns, types.Column{Name: "window_start", Type: ts},
		types.Column{Name: "window_end", Type: ts}, types.Column{Name: "window_time", Type: wt})
	if in.Updating() {
		return nil, nil, p.errorf(t, "window function %s doesn't support consuming update and delete changes, which its input produces%s; window an append-only input",
			name, updatingCause(in))
	}
	node := &plan.WindowTVF{Input: in, Spec: spec, TimeCol: timeCol, PartitionKeys: partKeys, Out: out}
	q := targ.Name.Last().Name
	if t.Alias != nil {
		q = t.Alias.Name
	}
	outScope := scopeOf(q, out)
	if len(t.ColumnAliases) > 0 {
		return p.alias(node, outScope, q, nil, t.ColumnAliases)
	}
	return node, outScope, nil
}

// windowTimeType is the type of the window_time of windows over the time
// attribute of type t, as in Flink: TIMESTAMP(3) *ROWTIME* over a
// TIMESTAMP rowtime, TIMESTAMP_LTZ(3) with t's time attribute over a
// TIMESTAMP_LTZ one (a rowtime, or PROCTIME()). window_start and
// window_end are TIMESTAMP(3) either way: wall-clock times in the session
// time zone.
func windowTimeType(t types.Type) types.Type {
	wt := types.Timestamp(3).WithNullable(false)
	if t.Kind == types.KindTimestampLTZ {
		wt = types.TimestampLTZ(3).WithNullable(false)
	}
	wt.TimeAttr = types.RowTime
	if t.TimeAttr == types.ProcTime {
		wt.TimeAttr = types.ProcTime
	}
	return wt
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// seeThrough returns a scope over tvf's columns for a Calc that only picks
// (and perhaps filters) them: the columns the Calc keeps carry its names,
// the others are unreachable. ok is false when the Calc computes anything.
func seeThrough(c *plan.Calc, tvf *plan.WindowTVF, outer *scope) (*scope, bool) {
	ts := tvf.Schema()
	sc := &scope{cols: make([]scopeCol, ts.Len())}
	for j, col := range ts.Columns {
		sc.cols[j] = scopeCol{name: "$" + col.Name, typ: col.Type}
	}
	for i, pr := range c.Projs {
		col, ok := pr.(*expr.Column)
		if !ok {
			return nil, false
		}
		sc.cols[col.Index] = scopeCol{qual: outer.cols[i].qual, name: outer.cols[i].name, typ: outer.cols[i].typ}
	}
	return sc, true
}
