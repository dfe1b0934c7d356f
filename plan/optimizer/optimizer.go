// Package optimizer rewrites logical plans. Rules are an explicit, ordered
// list; each has a stable ID that EXPLAIN and tests can name. A rule is a
// function from a node to a node, applied bottom-up over the whole tree.
package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// Rule is one rewrite.
type Rule struct {
	// ID names the rule.
	ID string
	// Apply rewrites n (whose inputs are already rewritten); it returns n
	// itself when it does not apply.
	Apply func(o *Optimizer, n plan.Node) plan.Node
}

// Optimizer applies rules in order. It holds no state of its own: one
// may optimize several plans, at once.
type Optimizer struct {
	Builder *expr.Builder
	Rules   []Rule
}

// New returns an optimizer with the default rules.
func New(b *expr.Builder) *Optimizer {
	return &Optimizer{Builder: b, Rules: DefaultRules()}
}

// DefaultRules returns the rules Sluice applies, in order.
func DefaultRules() []Rule {
	return []Rule{
		{ID: "push-filter-into-join", Apply: pushFilterIntoJoin},
		{ID: "push-filter-into-lookup-join", Apply: pushFilterIntoLookupJoin},
		{ID: "prune-join-inputs", Apply: pruneJoinInputs},
		{ID: "merge-calc", Apply: mergeCalc},
		{ID: "rank-limit", Apply: rankLimit},
		{ID: "window-rank-limit", Apply: windowRankLimit},
		{ID: "remove-identity-calc", Apply: removeIdentityCalc},
	}
}

// Optimize rewrites the tree rooted at n.
func (o *Optimizer) Optimize(n plan.Node) plan.Node {
	n = o.rewriteInputs(n)
	for _, r := range o.Rules {
		n = r.Apply(o, n)
	}
	return n
}

// and returns the conjunction of es (nil for none); false if the
// builder refuses it.
func (o *Optimizer) and(es []expr.Node) (expr.Node, bool) {
	var out expr.Node
	for _, e := range es {
		if out == nil {
			out = e
			continue
		}
		x, err := o.Builder.Call("AND", out, e)
		if err != nil {
			return nil, false
		}
		out = x
	}
	return out, true
}

func (o *Optimizer) rewriteInputs(n plan.Node) plan.Node {
	ins := n.Inputs()
	if len(ins) == 0 {
		return n
	}
	out := make([]plan.Node, len(ins))
	same := true
	for i, in := range ins {
		out[i] = o.Optimize(in)
		same = same && out[i] == in
	}
	if same {
		return n // nodes are not changed once built: no copy is needed
	}
	return n.WithInputs(out)
}

// mergeCalc fuses Calc(Calc(x)) into one Calc over x: the outer
// expressions are rewritten over x, and the filters are ANDed (inner
// first). It applies only when every inner expression that the outer
// one uses more than once is deterministic: the copies are then computed
// once per row (the filter and projections of a Calc are compiled
// together, expr.CompileProgram), and no nondeterministic call is
// duplicated.
func mergeCalc(o *Optimizer, n plan.Node) plan.Node {
	outer, ok := n.(*plan.Calc)
	if !ok {
		return n
	}
	inner, ok := outer.Input.(*plan.Calc)
	if !ok {
		return n
	}
	uses := map[int]int{}
	count := func(e expr.Node) {
		for _, c := range expr.Columns(e) {
			uses[c]++
		}
	}
	for _, p := range outer.Projs {
		count(p)
	}
	if outer.Filter != nil {
		count(outer.Filter)
	}
	for c, k := range uses {
		if k > 1 && !cheap(inner.Projs[c]) && !expr.IsDeterministic(inner.Projs[c]) {
			return n
		}
	}
	sub := func(e expr.Node) expr.Node {
		return expr.MapColumns(e, func(c *expr.Column) expr.Node { return inner.Projs[c.Index] })
	}
	merged := &plan.Calc{Input: inner.Input, Filter: inner.Filter, Out: outer.Out}
	for _, p := range outer.Projs {
		merged.Projs = append(merged.Projs, sub(p))
	}
	if outer.Filter != nil {
		f := sub(outer.Filter)
		if merged.Filter == nil {
			merged.Filter = f
		} else {
			and, err := o.Builder.Call("AND", merged.Filter, f)
			if err != nil {
				return n
			}
			merged.Filter = and
		}
	}
	// Keep the outer column names and types (time attributes included).
	for i, p := range merged.Projs {
		if !p.Type().SameKind(outer.Out.Columns[i].Type) {
			return n
		}
	}
	return merged
}

func cheap(e expr.Node) bool {
	switch e.(type) {
	case *expr.Column, *expr.Literal:
		return true
	}
	return false
}

// removeIdentityCalc drops a Calc that neither filters nor changes its input.
func removeIdentityCalc(o *Optimizer, n plan.Node) plan.Node {
	if c, ok := n.(*plan.Calc); ok && c.IsIdentity() {
		return c.Input
	}
	return n
}

// pushFilterIntoJoin moves the conditions that read one side of a join
// only to that side's input, so that the join keeps fewer rows: from a
// filter above the join (WHERE) onto a side that is never padded with
// NULLs, and from the join's own condition (ON) onto a side whose rows it
// only restricts the matches of (the right side of a LEFT JOIN, either
// side of an INNER one). Nothing moves onto the versioned side of a
// temporal join: filtering versions would change which one is valid.
func pushFilterIntoJoin(o *Optimizer, n plan.Node) plan.Node {
	var c *plan.Calc
	var j *plan.Join
	var ij *plan.IntervalJoin
	var tj *plan.TemporalJoin
	var wj *plan.WindowJoin
	in := n
	if x, ok := n.(*plan.Calc); ok {
		c, in = x, x.Input
	}
	switch x := in.(type) {
	case *plan.Join:
		j = x
	case *plan.IntervalJoin:
		ij, j = x, &x.Join
	case *plan.TemporalJoin:
		tj, j = x, &x.Join
	case *plan.WindowJoin:
		wj, j = x, &x.Join
	}
	if j == nil {
		return n
	}
	versioned := tj != nil
	nl := j.Left.Schema().Len()
	inner, left, right := j.Kind == plan.InnerJoin, j.Kind == plan.LeftJoin, j.Kind == plan.RightJoin
	var toLeft, toRight []expr.Node
	split := func(cond expr.Node, leftOK, rightOK bool) (keep []expr.Node) {
		if cond == nil {
			return nil
		}
		for _, e := range expr.Conjuncts(cond) {
			cols := expr.Columns(e)
			switch {
			case len(cols) == 0:
				keep = append(keep, e)
			case cols[len(cols)-1] < nl && leftOK:
				toLeft = append(toLeft, e)
			case cols[0] >= nl && rightOK:
				toRight = append(toRight, expr.MapColumns(e, func(col *expr.Column) expr.Node {
					x := *col
					x.Index -= nl
					return &x
				}))
			default:
				keep = append(keep, e)
			}
		}
		return keep
	}
	var where []expr.Node
	if c != nil {
		where = split(c.Filter, inner || left, (inner || right) && !versioned)
	}
	on := split(j.Residual, inner || right, (inner || left) && !versioned)
	if len(toLeft)+len(toRight) == 0 {
		return n
	}
	filtered := func(in plan.Node, conds []expr.Node) (plan.Node, bool) {
		if len(conds) == 0 {
			return in, true
		}
		f, ok := o.and(conds)
		if !ok {
			return nil, false
		}
		s := in.Schema()
		calc := &plan.Calc{Input: in, Filter: f, Out: s}
		for i, col := range s.Columns {
			calc.Projs = append(calc.Projs, &expr.Column{Index: i, Name: col.Name, T: col.Type})
		}
		return removeIdentityCalc(o, mergeCalc(o, calc)), true
	}
	nj := *j
	var ok bool
	if nj.Left, ok = filtered(j.Left, toLeft); !ok {
		return n
	}
	if nj.Right, ok = filtered(j.Right, toRight); !ok {
		return n
	}
	if nj.Residual, ok = o.and(on); !ok {
		return n
	}
	var joined plan.Node = &nj
	switch {
	case ij != nil:
		x := *ij
		x.Join = nj
		joined = &x
	case tj != nil:
		x := *tj
		x.Join = nj
		joined = &x
	case wj != nil:
		x := *wj
		x.Join = nj
		joined = &x
	}
	if c == nil {
		return joined
	}
	nc := *c
	nc.Input = joined
	if nc.Filter, ok = o.and(where); !ok {
		return n
	}
	return &nc
}

// rankLimit moves the bound on a Rank's row number from the filter above
// it into the Rank (`rn <= N`, `rn < N`, `rn = N`, `rn BETWEEN M AND N`,
// with `rn >= M`, `rn > M`): Top-N, from the M-th row on as Flink's rank
// range.
func rankLimit(o *Optimizer, n plan.Node) plan.Node {
	c, ok := n.(*plan.Calc)
	if !ok || c.Filter == nil {
		return n
	}
	r, ok := c.Input.(*plan.Rank)
	if !ok || r.Limit > 0 {
		return n
	}
	first, limit, read, nc, ok := takeNumberBound(o, c, r.Out.Len()-1)
	if !ok {
		return n
	}
	nr := *r
	nr.First, nr.Limit, nr.NoNumbers = first, limit, !read
	nc.Input = &nr
	return nc
}

// takeNumberBound splits the filter of c, a Calc over a numbering node
// whose number is column rn: the tightest bounds on the number (the
// lowest number kept, 1 unless bounded below, and the highest), whether
// the rest of c (its projections and the other conditions) reads the
// number, and a copy of c whose filter is the other conditions. ok is
// false when the filter bounds the number from above by nothing.
func takeNumberBound(o *Optimizer, c *plan.Calc, rn int) (first, limit int64, read bool, rest *plan.Calc, ok bool) {
	var keep []expr.Node
	first = 1
	for _, e := range expr.Conjuncts(c.Filter) {
		lo, hi, ok := rowNumberBounds(e, rn)
		if !ok {
			keep = append(keep, e)
			continue
		}
		first = max(first, lo)
		if hi > 0 && (limit == 0 || hi < limit) {
			limit = hi
		}
	}
	if limit <= 0 {
		return 0, 0, false, nil, false
	}
	if first > limit {
		// Nothing is kept; a Rank of one row, none of it emitted, is
		// not worth a special case: keep the bounds in the filter.
		return 0, 0, false, nil, false
	}
	for _, e := range append(append([]expr.Node(nil), c.Projs...), keep...) {
		for _, col := range expr.Columns(e) {
			read = read || col == rn
		}
	}
	nc := *c
	nc.Filter = nil
	for _, e := range keep {
		if nc.Filter == nil {
			nc.Filter = e
		} else if f, err := o.Builder.Call("AND", nc.Filter, e); err == nil {
			nc.Filter = f
		} else {
			return 0, 0, false, nil, false
		}
	}
	return first, limit, read, &nc, true
}

// rowNumberBounds reads e as a bound on column rn by integer literals:
// `rn <= N`, `rn < N`, `rn >= M`, `rn > M`, `rn = N` (either way round)
// or `rn BETWEEN M AND N`. It returns the lowest number kept (1 when e
// bounds it only from above) and the highest (0 when e bounds it only
// from below).
func rowNumberBounds(e expr.Node, rn int) (lo, hi int64, ok bool) {
	call, ok := e.(*expr.Call)
	if !ok {
		return 0, 0, false
	}
	isRN := func(n expr.Node) bool {
		c, ok := n.(*expr.Column)
		return ok && c.Index == rn
	}
	constant := func(n expr.Node) (int64, bool) {
		l, ok := n.(*expr.Literal)
		if !ok || l.V.IsNull() || !l.T.Kind.IsInteger() {
			return 0, false
		}
		return l.V.Int(), true
	}
	if call.Name == "BETWEEN" && len(call.Args) == 3 && isRN(call.Args[0]) {
		m, ok1 := constant(call.Args[1])
		n, ok2 := constant(call.Args[2])
		if !ok1 || !ok2 || n < 1 || n < m {
			return 0, 0, false
		}
		return max(m, 1), n, true
	}
	if len(call.Args) != 2 {
		return 0, 0, false
	}
	op := call.Name
	col, lit := call.Args[0], call.Args[1]
	if !isRN(col) {
		col, lit = lit, col
		op = map[string]string{">=": "<=", ">": "<", "<=": ">=", "<": ">", "=": "="}[op]
	}
	v, ok := constant(lit)
	if !isRN(col) || !ok {
		return 0, 0, false
	}
	switch op {
	case "<=":
		return 1, v, v > 0
	case "<":
		return 1, v - 1, v > 1
	case "=":
		return v, v, v > 0
	case ">=":
		return max(v, 1), 0, true
	case ">":
		return max(v+1, 1), 0, true
	}
	return 0, 0, false
}
