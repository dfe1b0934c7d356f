package planner

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// unnestFn expands an ARRAY (or MULTISET) into one row per element: the
// element's fields when the elements are ROWs of fields fields (NULLs for
// a NULL element), else the element itself; WITH ORDINALITY adds the
// 1-based position.
func unnestFn(ordinality bool, fields int) *expr.TableFunction {
	return &expr.TableFunction{
		Name: "UNNEST",
		Eval: func(args []types.Value, emit func(row []types.Value) error) error {
			if args[0].IsNull() {
				return nil
			}
			var row []types.Value
			for i, e := range args[0].Elems() {
				row = row[:0]
				switch {
				case fields == 0:
					row = append(row, e)
				case e.Kind() == types.KindRow && len(e.Elems()) == fields:
					row = append(row, e.Elems()...)
				default: // a NULL element
					for range fields {
						row = append(row, types.Value{})
					}
				}
				if ordinality {
					row = append(row, types.IntValue(types.KindInt, int64(i+1)))
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// bindUnnest plans `left CROSS JOIN UNNEST(arr) [WITH ORDINALITY] [AS
// t(cols)]` (or a comma, INNER JOIN ... ON TRUE, LEFT JOIN ... ON TRUE):
// each left row joined with each element of its array.
func (p *Planner) bindUnnest(j *ast.Join, u *ast.Unnest) (plan.Node, *scope, error) {
	left := false
	switch j.Kind {
	case "COMMA", "CROSS", "INNER":
	case "LEFT":
		left = true
	default:
		return nil, nil, p.errorf(j, "%s JOIN UNNEST is not supported; use CROSS or LEFT", j.Kind)
	}
	if j.On != nil && !isTrueLiteral(j.On) {
		return nil, nil, p.errorf(j.On, "a join with UNNEST takes ON TRUE; filter the rows in WHERE")
	}
	if len(u.Exprs) != 1 {
		return nil, nil, p.errorf(u, "UNNEST takes one array")
	}
	in, sc, err := p.bindFrom(j.Left)
	if err != nil {
		return nil, nil, err
	}
	arg, err := (&binder{p: p, sc: sc}).bind(u.Exprs[0])
	if err != nil {
		return nil, nil, err
	}
	at := arg.Type()
	if (at.Kind != types.KindArray && at.Kind != types.KindMultiset) || at.Elem == nil {
		return nil, nil, p.errorf(u.Exprs[0], "UNNEST takes an ARRAY or a MULTISET, not %s", at)
	}
	var cols []types.Column
	fields := 0
	if el := *at.Elem; el.Kind == types.KindRow {
		fields = len(el.Fields)
		for _, f := range el.Fields {
			cols = append(cols, types.Column{Name: f.Name, Type: f.Type.WithNullable(true)})
		}
	} else {
		cols = append(cols, types.Column{Name: "EXPR$0", Type: el.WithNullable(true)})
	}
	if u.WithOrdinality {
		cols = append(cols, types.Column{Name: "ORDINALITY", Type: types.Int.WithNullable(false)})
	}
	if len(u.ColumnAliases) > 0 {
		if len(u.ColumnAliases) != len(cols) {
			return nil, nil, p.errorf(u.ColumnAliases[0], "%d column aliases given for the %d columns of UNNEST", len(u.ColumnAliases), len(cols))
		}
		for i, a := range u.ColumnAliases {
			cols[i].Name = a.Name
		}
	}
	call := &expr.TableCall{Fn: unnestFn(u.WithOrdinality, fields), Args: []expr.Node{arg}, Out: types.Schema{Columns: cols}}
	qual := ""
	if u.Alias != nil {
		qual = u.Alias.Name
	}
	n, outScope := correlate(in, sc, call, cols, qual, left)
	return n, outScope, nil
}
