package planner

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// binder binds expressions over one scope. After an aggregation, post maps
// grouped expressions and aggregate calls to the aggregate's output columns.
type binder struct {
	p    *Planner
	sc   *scope
	post *postAgg
	// over maps the window function calls of a select list to the column
	// that holds their result (ROW_NUMBER's row number).
	over map[*ast.Call]int
	// outer, if set, is the scope of the query enclosing a subquery: a
	// name not found in sc resolves there, to column len(sc.cols) + i.
	outer *scope
}

func (p *Planner) bindExpr(e ast.Expr, sc *scope) (expr.Node, error) {
	b := &binder{p: p, sc: sc}
	return b.bind(e)
}

func (b *binder) call(n ast.Node, name string, args ...expr.Node) (expr.Node, error) {
	out, err := b.p.builder.Call(name, args...)
	if err != nil {
		return nil, b.p.wrap(n, err)
	}
	return out, b.checkConstants(n, out, args)
}

// checkConstants checks a call that has a constant string argument (a
// pattern, a format, a path) as compiling it would (expr.Check), so that a
// bad one is reported here, at its position, rather than when the job
// starts.
func (b *binder) checkConstants(n ast.Node, out expr.Node, args []expr.Node) error {
	for _, a := range args {
		if l, ok := a.(*expr.Literal); ok && l.V.Kind().IsString() {
			if err := expr.Check(out, &expr.Env{Now: func() int64 { return 0 }}); err != nil {
				return b.p.errorf(n, "%s", err.Error())
			}
			return nil
		}
	}
	return nil
}

func (b *binder) bindAll(es []ast.Expr) ([]expr.Node, error) {
	out := make([]expr.Node, len(es))
	for i, e := range es {
		n, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (b *binder) bind(e ast.Expr) (expr.Node, error) {
	if b.post != nil {
		if n, ok, err := b.post.match(b, e); ok || err != nil {
			return n, err
		}
	}
	p := b.p
	switch e := e.(type) {
	case *ast.ColumnRef:
		if b.post != nil {
			return nil, p.errorf(e, "expression '%s' is not being grouped", columnText(e))
		}
		sc, base := b.sc, 0
		if b.outer != nil && !p.visible(b.sc, e.Parts) {
			sc, base = b.outer, len(b.sc.cols)
		}
		idx, rest, err := p.resolve(sc, e.Parts)
		if err != nil {
			return nil, err
		}
		c := sc.cols[idx]
		idx += base
		var n expr.Node = &expr.Column{Index: idx, Name: c.name, T: c.typ}
		for _, f := range rest {
			if n, err = b.call(f, "FIELD", n, stringLit(f.Name)); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *ast.Literal:
		return p.bindLiteral(e)
	case *ast.TypedLiteral:
		return p.bindTypedLiteral(e)
	case *ast.IntervalLit:
		return p.bindInterval(e)
	case *ast.Unary:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case "+":
			return x, nil
		case "-":
			return b.call(e, "NEG", x)
		default:
			return b.call(e, "NOT", x)
		}
	case *ast.Binary:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		y, err := b.bind(e.Y)
		if err != nil {
			return nil, err
		}
		out, err := p.builder.Call(e.Op, x, y)
		if err != nil {
			return nil, p.errorf(&opNode{e.OpPos}, "%s", err.Error())
		}
		return out, nil
	case *ast.IsExpr:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		name := "IS "
		if e.Not {
			name += "NOT "
		}
		return b.call(e, name+e.What, x)
	case *ast.Between:
		if e.Symmetric {
			return nil, p.errorf(e, "BETWEEN SYMMETRIC is not supported")
		}
		args, err := b.bindAll([]ast.Expr{e.X, e.Lo, e.Hi})
		if err != nil {
			return nil, err
		}
		return b.call(e, notPrefix(e.Not)+"BETWEEN", args...)
	case *ast.In:
		if e.Query != nil {
			return nil, p.errorf(e, "IN with a subquery is supported only as a condition of WHERE, joined to the others by AND")
		}
		args, err := b.bindAll(append([]ast.Expr{e.X}, e.List...))
		if err != nil {
			return nil, err
		}
		return b.call(e, notPrefix(e.Not)+"IN", args...)
	case *ast.Like:
		es := []ast.Expr{e.X, e.Pattern}
		if e.Escape != nil {
			es = append(es, e.Escape)
		}
		args, err := b.bindAll(es)
		if err != nil {
			return nil, err
		}
		op := "LIKE"
		if e.Similar {
			op = "SIMILAR TO"
		}
		return b.call(e, notPrefix(e.Not)+op, args...)
	case *ast.Case:
		var operand, els expr.Node
		var err error
		if e.Operand != nil {
			if operand, err = b.bind(e.Operand); err != nil {
				return nil, err
			}
		}
		whens := make([]expr.Node, len(e.Whens))
		thens := make([]expr.Node, len(e.Whens))
		for i, w := range e.Whens {
			if whens[i], err = b.bind(w.Cond); err != nil {
				return nil, err
			}
			if thens[i], err = b.bind(w.Result); err != nil {
				return nil, err
			}
		}
		if e.Else != nil {
			if els, err = b.bind(e.Else); err != nil {
				return nil, err
			}
		}
		out, err := p.builder.Case(operand, whens, thens, els)
		return out, p.wrap(e, err)
	case *ast.Cast:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		t, err := p.convertType(e.Type)
		if err != nil {
			return nil, err
		}
		out, err := p.builder.Cast(x, t, e.Try)
		return out, p.wrap(e, err)
	case *ast.Call:
		return b.bindCall(e)
	case *ast.TimeUnit:
		return stringLit(e.Unit), nil
	case *ast.Index:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		i, err := b.bind(e.Index)
		if err != nil {
			return nil, err
		}
		return b.call(e, "ITEM", x, i)
	case *ast.FieldAccess:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		return b.call(e, "FIELD", x, stringLit(e.Name.Name))
	case *ast.RowCtor:
		args, err := b.bindAll(e.Args)
		if err != nil {
			return nil, err
		}
		return b.call(e, "ROW", args...)
	case *ast.ArrayCtor:
		args, err := b.bindAll(e.Elems)
		if err != nil {
			return nil, err
		}
		return b.call(e, "ARRAY", args...)
	case *ast.MapCtor:
		args, err := b.bindAll(e.Elems)
		if err != nil {
			return nil, err
		}
		return b.call(e, "MAP", args...)
	case *ast.Exists:
		return nil, p.errorf(e, "EXISTS is supported only as a condition of WHERE, joined to the others by AND")
	case *ast.SubqueryExpr:
		return nil, p.errorf(e, "scalar subqueries are not supported yet")
	case *ast.Descriptor, *ast.TableArg:
		return nil, p.errorf(e, "DESCRIPTOR and TABLE arguments are only allowed in window table functions")
	}
	return nil, p.errorf(e, "unsupported expression %T", e)
}

func (b *binder) bindCall(e *ast.Call) (expr.Node, error) {
	p := b.p
	name := strings.ToUpper(e.Name.Last().Name)
	if i, ok := b.over[e]; ok {
		c := b.sc.cols[i]
		return &expr.Column{Index: i, Name: c.name, T: c.typ}, nil
	}
	if e.Over != nil || e.OverName != nil {
		return nil, p.errorf(e, "%s OVER is not allowed here: OVER windows are allowed in the select list of a query without GROUP BY, not nested in one another", name)
	}
	if p.isAggregate(e) {
		return nil, p.errorf(e, "aggregate function %s is not allowed here", name)
	}
	if g := groupingFunc(e); g != "" {
		return nil, p.errorf(e, "%s operator may only occur in SELECT, HAVING or ORDER BY clause", g)
	}
	if e.Filter != nil || e.Distinct || e.Star {
		return nil, p.errorf(e, "%s is not an aggregate function: DISTINCT, * and FILTER are not allowed", name)
	}
	if isGroupWindowFunc(name) {
		return nil, p.errorf(e, "%s is only allowed in a GROUP BY with the matching group window", name)
	}
	args, err := b.bindAll(e.Args)
	if err != nil {
		return nil, err
	}
	if name == "JSON_VALUE" {
		return b.bindJSONValue(e, args)
	}
	out, err := p.builder.Call(name, args...)
	if err != nil {
		return nil, p.errorf(e.Name, "%s", err.Error())
	}
	if err := b.checkConstants(e, out, args); err != nil {
		return nil, err
	}
	return out, nil
}

// bindJSONValue binds JSON_VALUE(json, path [RETURNING type] [behaviour ON
// EMPTY] [behaviour ON ERROR]) with Flink's semantics: ON EMPTY applies
// when the path finds nothing (or a JSON null), ON ERROR when the
// document is malformed, a strict path finds no scalar, or the value
// cannot be converted to the RETURNING type; both default to NULL.
func (b *binder) bindJSONValue(e *ast.Call, args []expr.Node) (expr.Node, error) {
	p := b.p
	if len(args) != 2 {
		return nil, p.errorf(e.Name, "JSON_VALUE takes a JSON document and a path: JSON_VALUE(json, path [RETURNING type] [... ON EMPTY] [... ON ERROR])")
	}
	if e.Returning == nil && e.OnEmpty == nil && e.OnError == nil {
		out, err := p.builder.Call("JSON_VALUE", args...)
		if err != nil {
			return nil, p.errorf(e.Name, "%s", err.Error())
		}
		return out, b.checkConstants(e, out, args)
	}
	t := types.String
	if e.Returning != nil {
		var err error
		if t, err = p.convertType(e.Returning); err != nil {
			return nil, err
		}
	}
	t = t.WithNullable(true)
	full := append(args, &expr.Literal{V: types.NullValue, T: t})
	for _, beh := range []*ast.JSONBehavior{e.OnEmpty, e.OnError} {
		kind, def := expr.JSONNull, expr.Node(&expr.Literal{V: types.NullValue, T: t})
		if beh != nil {
			switch beh.Kind {
			case "ERROR":
				kind = expr.JSONError
			case "DEFAULT":
				kind = expr.JSONDefault
				d, err := b.bind(beh.Default)
				if err != nil {
					return nil, err
				}
				if !d.Type().SameKind(t) {
					if !expr.CanCast(d.Type(), t) {
						return nil, p.errorf(beh.Default, "the DEFAULT value of JSON_VALUE is %s, which cannot be converted to the RETURNING type %s", d.Type(), t.WithNullable(false))
					}
					if d, err = p.builder.Cast(d, t, false); err != nil {
						return nil, p.wrap(beh.Default, err)
					}
				}
				def = d
			}
		}
		full = append(full, &expr.Literal{V: types.IntValue(types.KindInt, int64(kind)), T: types.Int.WithNullable(false)}, def)
	}
	out, err := p.builder.Call("JSON_VALUE", full...)
	if err != nil {
		return nil, p.errorf(e.Name, "%s", err.Error())
	}
	return out, b.checkConstants(e, out, args)
}

// opNode positions an error at an operator.
type opNode struct{ pos token.Pos }

func (o *opNode) Pos() token.Pos { return o.pos }
func (o *opNode) End() token.Pos { return o.pos }

func notPrefix(not bool) string {
	if not {
		return "NOT "
	}
	return ""
}

func stringLit(s string) expr.Node {
	return &expr.Literal{V: types.StringValue(s), T: types.String.WithNullable(false)}
}

func columnText(c *ast.ColumnRef) string {
	parts := make([]string, len(c.Parts))
	for i, p := range c.Parts {
		parts[i] = p.Name
	}
	return strings.Join(parts, ".")
}

func (p *Planner) bindLiteral(e *ast.Literal) (expr.Node, error) {
	lit := func(v types.Value, t types.Type) (expr.Node, error) {
		return &expr.Literal{V: v, T: t}, nil
	}
	switch e.Kind {
	case ast.Number:
		s := e.Value
		if strings.ContainsAny(s, "eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, p.errorf(e, "invalid number %s", s)
			}
			return lit(types.DoubleValue(f), types.Double.WithNullable(false))
		}
		if !strings.Contains(s, ".") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				if n >= -1<<31 && n < 1<<31 {
					return lit(types.IntValue(types.KindInt, n), types.Int.WithNullable(false))
				}
				return lit(types.BigIntValue(n), types.BigInt.WithNullable(false))
			}
		}
		v, err := types.ParseDecimal(s)
		if err != nil {
			return nil, p.errorf(e, "invalid number %s: %v", s, err)
		}
		prec := len(strings.TrimLeft(strings.ReplaceAll(s, ".", ""), "0"))
		prec = max(prec, v.Scale(), 1)
		if prec > 38 {
			return nil, p.errorf(e, "number %s is out of range for DECIMAL(38)", s)
		}
		return lit(v, types.Decimal(prec, v.Scale()).WithNullable(false))
	case ast.String:
		return lit(types.CharValue(e.Value), types.Char(max(len([]rune(e.Value)), 1)).WithNullable(false))
	case ast.Bool:
		return lit(types.BoolValue(strings.EqualFold(e.Value, "TRUE")), types.Boolean.WithNullable(false))
	case ast.Null:
		return lit(types.NullValue, types.Null)
	case ast.Unknown:
		return lit(types.NullValue, types.Boolean)
	case ast.Hex:
		n, ok := new(big.Int).SetString(e.Value, 16)
		if !ok && e.Value != "" {
			return nil, p.errorf(e, "invalid hex literal")
		}
		var bs []byte
		if ok {
			bs = n.Bytes()
		}
		for len(bs)*2 < len(e.Value) {
			bs = append([]byte{0}, bs...)
		}
		return lit(types.BytesValue(bs), types.Type{Kind: types.KindBinary, Precision: max(len(bs), 1), NotNull: true})
	}
	return nil, p.errorf(e, "unsupported literal")
}

func (p *Planner) bindTypedLiteral(e *ast.TypedLiteral) (expr.Node, error) {
	fracDigits := func(s string) int {
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			return min(len(strings.TrimSpace(s[i+1:])), 9)
		}
		return 0
	}
	switch e.Type {
	case "DATE":
		d, err := types.ParseDate(e.Value)
		if err != nil {
			return nil, p.errorf(e, "invalid DATE literal '%s'", e.Value)
		}
		return &expr.Literal{V: types.DateValue(d), T: types.Date.WithNullable(false)}, nil
	case "TIME":
		t, err := types.ParseTime(e.Value)
		if err != nil {
			return nil, p.errorf(e, "invalid TIME literal '%s'", e.Value)
		}
		return &expr.Literal{V: types.TimeValue(t), T: types.Time(fracDigits(e.Value)).WithNullable(false)}, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		ts, err := types.ParseTimestamp(e.Value)
		if err != nil {
			return nil, p.errorf(e, "invalid %s literal '%s'", e.Type, e.Value)
		}
		if e.Type == "TIMESTAMP" {
			return &expr.Literal{V: types.TimestampValue(ts), T: types.Timestamp(fracDigits(e.Value)).WithNullable(false)}, nil
		}
		return &expr.Literal{V: types.TimestampLTZValue(ts), T: types.TimestampLTZ(fracDigits(e.Value)).WithNullable(false)}, nil
	}
	return nil, p.errorf(e, "unsupported literal type %s", e.Type)
}

// bindInterval turns an interval literal into microseconds (day-time) or
// months (year-month).
func (p *Planner) bindInterval(e *ast.IntervalLit) (expr.Node, error) {
	v, months, err := parseInterval(e.Value, e.From, e.To)
	if err != nil {
		return nil, p.errorf(e, "invalid interval literal '%s' %s: %v", e.Value, intervalUnits(e), err)
	}
	if months {
		return &expr.Literal{V: types.IntervalYearMonthValue(v), T: types.IntervalYM.WithNullable(false)}, nil
	}
	return &expr.Literal{V: types.IntervalDayTimeValue(v), T: types.IntervalDT.WithNullable(false)}, nil
}

func intervalUnits(e *ast.IntervalLit) string {
	if e.To != "" {
		return e.From + " TO " + e.To
	}
	return e.From
}
