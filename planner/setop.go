package planner

import (
	"fmt"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// Set operations, planned as Flink plans them:
//
//   - UNION ALL is a Union of the inputs.
//   - UNION is one distinct GroupAggregate (every column a key) over a
//     Union of all the inputs of a chain of UNIONs, distinct or not
//     (Calcite's UNION_TO_DISTINCT and AGGREGATE_UNION_AGGREGATE rules).
//   - INTERSECT (EXCEPT) is a distinct GroupAggregate over a SEMI (ANTI)
//     join of the two inputs on every column, NULL equal to NULL
//     (ReplaceIntersectWithSemiJoinRule, ReplaceMinusWithAntiJoinRule).
//   - INTERSECT ALL (EXCEPT ALL) tags each input's rows with markers,
//     unions them, counts each side's rows per distinct row (sums +1 and
//     -1), keeps the rows both sides have (more of on the left), and
//     replicates each as often as it remains with the ReplicateRows table
//     function (RewriteIntersectAllRule, RewriteMinusAllRule).
//
// All but UNION ALL are updating, as in Flink; NULLs compare equal, as
// SQL's set operations compare rows.

func (p *Planner) bindSetOp(s *ast.SetOp) (plan.Node, *scope, error) {
	var bodies []ast.QueryBody
	if s.Op == "UNION" {
		bodies = unionInputs(s, !s.All)
	} else {
		bodies = []ast.QueryBody{s.Left, s.Right}
	}
	ins := make([]plan.Node, len(bodies))
	for i, b := range bodies {
		n, _, err := p.bindBody(b)
		if err != nil {
			return nil, nil, err
		}
		ins[i] = n
	}
	out, err := p.setOpSchema(s, bodies, ins)
	if err != nil {
		return nil, nil, err
	}
	for i := range ins {
		if ins[i], err = p.castTo(bodies[i], ins[i], out); err != nil {
			return nil, nil, err
		}
	}
	var n plan.Node
	switch {
	case s.Op == "UNION" && s.All:
		n = &plan.Union{Ins: ins, Out: out}
	case s.Op == "UNION":
		n = distinct(&plan.Union{Ins: ins, Out: out}, p.sqlAt("UNION", s.OpPos))
	case s.All:
		n, err = p.setOpAll(s, ins[0], ins[1], out)
		if err != nil {
			return nil, nil, err
		}
	default:
		j := &plan.Join{Left: ins[0], Right: ins[1], Kind: plan.SemiJoin, NullSafe: true, Out: withoutTimeAttrs(out)}
		if s.Op == "EXCEPT" {
			j.Kind = plan.AntiJoin
		}
		for i := range out.Columns {
			j.LeftKeys = append(j.LeftKeys, i)
			j.RightKeys = append(j.RightKeys, i)
		}
		j.SQL = p.sqlAt(s.Op, s.OpPos)
		n = distinct(j, p.sqlAt(s.Op, s.OpPos))
	}
	return n, scopeOf("", n.Schema()), nil
}

// unionInputs returns the inputs of a chain of UNIONs: under a UNION
// that removes duplicates, those of the UNIONs below it, whether they do
// or not (the one aggregate removes them all); under a UNION ALL, those
// of UNION ALLs.
func unionInputs(b ast.QueryBody, dedup bool) []ast.QueryBody {
	s, ok := b.(*ast.SetOp)
	if !ok || s.Op != "UNION" || !dedup && !s.All {
		return []ast.QueryBody{b}
	}
	return append(unionInputs(s.Left, dedup), unionInputs(s.Right, dedup)...)
}

// setOpSchema returns the columns of a set operation: the first input's
// names, and for each column the common type of the inputs' (a time
// attribute stays one only when every input has it alike).
func (p *Planner) setOpSchema(s *ast.SetOp, bodies []ast.QueryBody, ins []plan.Node) (types.Schema, error) {
	op := s.Op
	if s.All {
		op += " ALL"
	}
	first := ins[0].Schema()
	out := types.Schema{Columns: append([]types.Column(nil), first.Columns...)}
	for i, in := range ins[1:] {
		sc := in.Schema()
		if sc.Len() != first.Len() {
			return types.Schema{}, p.errorf(bodies[i+1], "each %s input must have as many columns as the first, which has %d: this one has %d",
				op, first.Len(), sc.Len())
		}
		for c := range out.Columns {
			have, next := out.Columns[c].Type, sc.Columns[c].Type
			if have.Equal(next) {
				continue
			}
			t, ok := types.CommonType(have.WithoutTimeAttr(), next.WithoutTimeAttr())
			if !ok {
				return types.Schema{}, p.errorf(bodies[i+1], "column %d (%s) of this %s input has type %s, which does not mix with %s: CAST one to the other's type",
					c+1, out.Columns[c].Name, op, next, have)
			}
			out.Columns[c].Type = t
		}
	}
	return out, nil
}

// withoutTimeAttrs returns s with no time attribute: the rows of an
// aggregate or a join are materialized.
func withoutTimeAttrs(s types.Schema) types.Schema {
	out := types.Schema{Columns: make([]types.Column, s.Len())}
	for i, c := range s.Columns {
		out.Columns[i] = types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()}
	}
	return out
}

// setOpAll plans INTERSECT ALL and EXCEPT ALL of l and r, whose columns
// are out.
func (p *Planner) setOpAll(s *ast.SetOp, l, r plan.Node, out types.Schema) (plan.Node, error) {
	errAt := func(err error) error {
		if err == nil {
			return nil
		}
		return token.NewError(p.File, s.OpPos, "cannot plan %s ALL: %s", s.Op, err)
	}
	width := out.Len()
	boolean := types.Boolean
	trueLit := &expr.Literal{V: types.BoolValue(true), T: boolean.WithNullable(false)}
	nullLit := &expr.Literal{T: boolean.WithNullable(true)}
	bigint := types.BigInt.WithNullable(false)
	one := &expr.Literal{V: types.IntValue(types.KindBigInt, 1), T: bigint}
	minusOne := &expr.Literal{V: types.IntValue(types.KindBigInt, -1), T: bigint}

	// 1. Each side's rows with their markers, then one Union.
	var markers [2][]expr.Node
	var names []string
	var calls []string
	if s.Op == "INTERSECT" {
		markers = [2][]expr.Node{{trueLit, nullLit}, {nullLit, trueLit}}
		names = []string{"vcol_left_marker", "vcol_right_marker"}
		calls = []string{"vcol_left_cnt", "vcol_right_cnt"}
	} else {
		markers = [2][]expr.Node{{one}, {minusOne}}
		names = []string{"vcol_marker"}
		calls = []string{"sum_vcol_marker"}
	}
	var sides [2]plan.Node
	for i, in := range []plan.Node{l, r} {
		sc := in.Schema()
		projs := identity(sc)
		cols := append([]types.Column(nil), sc.Columns...)
		for m, e := range markers[i] {
			projs = append(projs, e)
			cols = append(cols, types.Column{Name: names[m], Type: e.Type()})
		}
		sides[i] = &plan.Calc{Input: in, Projs: projs, Out: types.Schema{Columns: cols}}
	}
	union := &plan.Union{Ins: sides[:], Out: types.Schema{Columns: append(append([]types.Column(nil), out.Columns...),
		sides[0].Schema().Columns[width:]...)}}

	// 2. Per distinct row, COUNT each side's marker, or SUM the markers.
	g := &plan.GroupAggregate{Input: union, Out: withoutTimeAttrs(out), SQL: p.sqlAt(s.Op+" ALL", s.OpPos)}
	for i := range width {
		g.Keys = append(g.Keys, i)
	}
	fn := "COUNT"
	if s.Op == "EXCEPT" {
		fn = "SUM"
	}
	f, err := p.Aggs.Lookup(fn)
	if err != nil {
		return nil, errAt(err)
	}
	for m := range names {
		at := []types.Type{union.Out.Columns[width+m].Type}
		rt, err := f.ResultType(at)
		if err != nil {
			return nil, errAt(err)
		}
		g.Calls = append(g.Calls, agg.Call{Func: f, Args: []int{width + m}, ArgTypes: at, Result: rt, Filter: -1})
		g.Out.Columns = append(g.Out.Columns, types.Column{Name: calls[m], Type: rt})
	}

	// 3. The rows that remain, and how many times: min(left, right) of
	// those both sides have (INTERSECT ALL); left - right when positive
	// (EXCEPT ALL).
	col := func(i int) expr.Node {
		c := g.Out.Columns[i]
		return &expr.Column{Index: i, Name: c.Name, T: c.Type}
	}
	lit := func(n int64) expr.Node {
		return &expr.Literal{V: types.IntValue(types.KindInt, n), T: types.Int.WithNullable(false)}
	}
	call := func(name string, args ...expr.Node) expr.Node {
		if err != nil {
			return nil
		}
		var n expr.Node
		n, err = p.builder.Call(name, args...)
		return n
	}
	var filter, times expr.Node
	countName := calls[0]
	if s.Op == "INTERSECT" {
		lc, rc := col(width), col(width+1)
		filter = call("AND", call(">=", lc, lit(1)), call(">=", rc, lit(1)))
		times = call("IF", call(">", lc, rc), rc, lc)
		countName = "$f0"
	} else {
		sum := col(width)
		filter = call(">", sum, lit(0))
		times = sum
	}
	if err != nil {
		return nil, errAt(err)
	}
	projs := []expr.Node{times}
	cols := []types.Column{{Name: countName, Type: times.Type()}}
	for i := range width {
		projs = append(projs, col(i))
		cols = append(cols, g.Out.Columns[i])
	}
	counted := &plan.Calc{Input: g, Filter: filter, Projs: projs, Out: types.Schema{Columns: cols}}

	// 4. Each row as many times as it remains, and its columns alone.
	args := identity(counted.Out)
	fnOut := types.Schema{Columns: make([]types.Column, width)}
	for i := range width {
		fnOut.Columns[i] = types.Column{Name: g.Out.Columns[i].Name + "0", Type: g.Out.Columns[i].Type}
	}
	rep := &plan.Correlate{Input: counted, Call: &expr.TableCall{Fn: replicateRows, Args: args, Out: fnOut},
		Out: types.Schema{Columns: append(append([]types.Column(nil), counted.Out.Columns...), fnOut.Columns...)}}
	final := make([]expr.Node, width)
	for i := range width {
		c := rep.Out.Columns[1+width+i]
		final[i] = &expr.Column{Index: 1 + width + i, Name: c.Name, T: c.Type}
	}
	return &plan.Calc{Input: rep, Projs: final, Out: withoutTimeAttrs(out)}, nil
}

// replicateRows is Flink's internal ReplicateRows table function: it
// emits its arguments after the first as many times as the first (a
// BIGINT) says. Users cannot call it: it is in no registry.
var replicateRows = &expr.TableFunction{
	Name: "ReplicateRows",
	Eval: func(args []types.Value, emit func([]types.Value) error) error {
		if args[0].IsNull() {
			return nil
		}
		n := args[0].Int()
		if n < 0 {
			return fmt.Errorf("cannot replicate a row %d times", n)
		}
		for range n {
			if err := emit(args[1:]); err != nil {
				return err
			}
		}
		return nil
	},
}
