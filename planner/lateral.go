package planner

import (
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// bindLateral plans `left, LATERAL TABLE(f(args)) [AS t(cols)]`, its
// CROSS/INNER JOIN ... ON TRUE form and LEFT JOIN ... ON TRUE.
func (p *Planner) bindLateral(j *ast.Join, tf *ast.TableFunc) (plan.Node, *scope, error) {
	left := false
	switch j.Kind {
	case "COMMA", "CROSS", "INNER":
	case "LEFT":
		left = true
	default:
		return nil, nil, p.errorf(j, "%s JOIN LATERAL TABLE is not supported; use INNER or LEFT", j.Kind)
	}
	if j.On != nil && !isTrueLiteral(j.On) {
		return nil, nil, p.errorf(j.On, "a join with LATERAL TABLE takes ON TRUE; filter the rows in WHERE")
	}
	in, sc, err := p.bindFrom(j.Left)
	if err != nil {
		return nil, nil, err
	}
	b := &binder{p: p, sc: sc}
	var args []ast.Expr
	for _, a := range tf.Args {
		if a.Name != nil {
			return nil, nil, p.errorf(a, "named arguments are not supported for table functions")
		}
		args = append(args, a.Value)
	}
	bound, err := b.bindAll(args)
	if err != nil {
		return nil, nil, err
	}
	call, err := p.builder.TableCall(strings.ToUpper(tf.Name.Last().Name), bound...)
	if err != nil {
		return nil, nil, p.errorf(tf.Name, "%s", err.Error())
	}
	fnCols := append([]types.Column(nil), call.Out.Columns...)
	if len(tf.ColumnAliases) > 0 {
		if len(tf.ColumnAliases) != len(fnCols) {
			return nil, nil, p.errorf(tf.ColumnAliases[0], "%d column aliases given for the %d columns of %s",
				len(tf.ColumnAliases), len(fnCols), tf.Name)
		}
		for i, a := range tf.ColumnAliases {
			fnCols[i].Name = a.Name
		}
	}
	qual := tf.Name.Last().Name
	if tf.Alias != nil {
		qual = tf.Alias.Name
	}
	n, outScope := correlate(in, sc, call, fnCols, qual, left)
	return n, outScope, nil
}

// correlate joins each row of in (whose scope is sc) with the rows call
// emits for it, whose columns are cols under qualifier qual; left keeps
// the rows for which it emits none, padded with NULLs.
func correlate(in plan.Node, sc *scope, call *expr.TableCall, cols []types.Column, qual string, left bool) (plan.Node, *scope) {
	out := types.Schema{Columns: append([]types.Column(nil), in.Schema().Columns...)}
	outScope := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for _, c := range cols {
		if left {
			c.Type = c.Type.WithNullable(true)
		}
		out.Columns = append(out.Columns, c)
		outScope.cols = append(outScope.cols, scopeCol{qual: qual, name: c.Name, typ: c.Type})
	}
	return &plan.Correlate{Input: in, Call: call, Left: left, Out: out}, outScope
}

func isTrueLiteral(e ast.Expr) bool {
	l, ok := e.(*ast.Literal)
	return ok && l.Kind == ast.Bool && strings.EqualFold(l.Value, "TRUE")
}
