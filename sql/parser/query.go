package parser

import (
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

// parseQuery parses [WITH ...] body [ORDER BY ...] [LIMIT ...] [OFFSET ...]
// [FETCH ...].
func (p *parser) parseQuery() *ast.Query {
	p.enter()
	defer p.leave()
	start := p.pos
	q := &ast.Query{}
	if p.got(token.WITH) {
		for {
			q.With = append(q.With, p.parseCTE())
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	q.Body = p.parseSetExpr()
	if p.tok == token.ORDER {
		p.next()
		p.expect(token.BY)
		q.OrderBy = p.parseOrderItems()
	}
	if p.got(token.LIMIT) {
		q.Limit = p.parseExpr()
	}
	if p.got(token.OFFSET) {
		q.Offset = p.parseExpr()
		if p.tok == token.ROWS || p.tok == token.ROW {
			p.next()
		}
	}
	if p.tok == token.FETCH {
		fpos := p.pos
		p.next()
		if !p.got(token.FIRST) && !p.got(token.NEXT) {
			p.errorExpected(p.pos, "FIRST or NEXT")
		}
		if q.Limit != nil {
			p.error(fpos, "LIMIT and FETCH cannot be used together")
		}
		q.Limit = p.parseExpr()
		if !p.got(token.ROWS) && !p.got(token.ROW) {
			p.errorExpected(p.pos, "ROWS")
		}
		p.expect(token.ONLY)
	}
	q.Span = p.span(start)
	return q
}

func (p *parser) parseCTE() *ast.CTE {
	start := p.pos
	c := &ast.CTE{Name: p.parseIdent()}
	if p.tok == token.LPAREN {
		c.Columns = p.parseIdentList()
	}
	p.expect(token.AS)
	p.expect(token.LPAREN)
	c.Query = p.parseQuery()
	p.expect(token.RPAREN)
	c.Span = p.span(start)
	return c
}

// parseSetExpr parses set operations: INTERSECT binds tighter than UNION and
// EXCEPT; all are left-associative.
func (p *parser) parseSetExpr() ast.QueryBody {
	x := p.parseSetTerm()
	for p.tok == token.UNION || p.tok == token.EXCEPT || p.tok == token.MINUS {
		op, pos := p.tok.String(), p.pos
		if p.tok == token.MINUS {
			// Flink's SQL conformance does not allow MINUS; it stays a
			// reserved word.
			p.error(pos, "MINUS is not allowed under the current SQL conformance level, as in Flink: use EXCEPT")
			op = "EXCEPT"
		}
		p.next()
		all := p.parseSetQuantifier()
		y := p.parseSetTerm()
		x = &ast.SetOp{Op: op, OpPos: pos, All: all, Left: x, Right: y}
	}
	return x
}

func (p *parser) parseSetTerm() ast.QueryBody {
	x := p.parseSetPrimary()
	for p.tok == token.INTERSECT {
		pos := p.pos
		p.next()
		all := p.parseSetQuantifier()
		y := p.parseSetPrimary()
		x = &ast.SetOp{Op: "INTERSECT", OpPos: pos, All: all, Left: x, Right: y}
	}
	return x
}

func (p *parser) parseSetQuantifier() bool {
	if p.got(token.ALL) {
		return true
	}
	p.got(token.DISTINCT)
	return false
}

func (p *parser) parseSetPrimary() ast.QueryBody {
	switch p.tok {
	case token.SELECT:
		return p.parseSelect()
	case token.VALUES:
		return p.parseValues()
	case token.LPAREN:
		p.next()
		q := p.parseQuery()
		p.expect(token.RPAREN)
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body
		}
		return q
	}
	p.errorExpected(p.pos, "SELECT, VALUES or '('")
	return nil
}

func (p *parser) parseValues() *ast.Values {
	start := p.expect(token.VALUES)
	v := &ast.Values{}
	for {
		var row []ast.Expr
		if p.tok == token.LPAREN {
			p.next()
			row = p.parseExprList()
			p.expect(token.RPAREN)
		} else if p.tok == token.ROW && p.peek(1) == token.LPAREN {
			p.next()
			p.next()
			row = p.parseExprList()
			p.expect(token.RPAREN)
		} else {
			row = []ast.Expr{p.parseExpr()}
		}
		v.Rows = append(v.Rows, row)
		if !p.got(token.COMMA) {
			break
		}
	}
	v.Span = p.span(start)
	return v
}

func (p *parser) parseExprList() []ast.Expr {
	var list []ast.Expr
	for {
		list = append(list, p.parseExpr())
		if !p.got(token.COMMA) {
			return list
		}
	}
}

func (p *parser) parseOrderItems() []*ast.OrderItem {
	var items []*ast.OrderItem
	for {
		start := p.pos
		it := &ast.OrderItem{Expr: p.parseExpr()}
		if p.got(token.DESC) {
			it.Desc = true
		} else {
			p.got(token.ASC)
		}
		if p.got(token.NULLS) {
			first := false
			switch p.tok {
			case token.FIRST:
				first = true
			case token.LAST:
			default:
				p.errorExpected(p.pos, "FIRST or LAST")
			}
			p.next()
			it.NullsFirst = &first
		}
		it.Span = p.span(start)
		items = append(items, it)
		if !p.got(token.COMMA) {
			return items
		}
	}
}

func (p *parser) parseSelect() *ast.Select {
	start := p.expect(token.SELECT)
	s := &ast.Select{Hints: p.parseHints()}
	if p.tok == token.DISTINCT {
		s.Distinct, s.DistinctPos = true, p.pos
		p.next()
	} else {
		p.got(token.ALL)
	}
	for {
		s.Items = append(s.Items, p.parseSelectItem())
		if !p.got(token.COMMA) {
			break
		}
	}
	switch p.tok {
	case token.IDENT, token.QIDENT, token.INT, token.DECIMAL, token.FLOAT, token.STRING:
		// Two names or values in a row: most likely a missing comma.
		p.errorExpected(p.pos, "',' or FROM")
	}
	if p.got(token.FROM) {
		s.From = p.parseFrom()
	}
	if p.got(token.WHERE) {
		s.Where = p.parseExpr()
	}
	if p.tok == token.GROUP {
		s.GroupByPos = p.pos
		p.next()
		p.expect(token.BY)
		for {
			s.GroupBy = append(s.GroupBy, p.parseGroupingElement())
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	if p.got(token.HAVING) {
		s.Having = p.parseExpr()
	}
	if p.got(token.WINDOW) {
		for {
			wstart := p.pos
			name := p.parseIdent()
			p.expect(token.AS)
			spec := p.parseWindowSpec()
			s.Windows = append(s.Windows, &ast.NamedWindow{Span: p.span(wstart), Name: name, Spec: spec})
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	s.Span = p.span(start)
	return s
}

// parseGroupingElement parses an expression, GROUPING SETS (...),
// ROLLUP (...), CUBE (...) or () (the empty grouping set).
func (p *parser) parseGroupingElement() ast.Expr {
	start := p.pos
	var kind string
	switch {
	case p.tok == token.LPAREN && p.peek(1) == token.RPAREN:
		p.next()
		p.next()
		return &ast.RowCtor{Span: p.span(start)}
	case p.tok == token.GROUPING && p.peek(1) == token.SETS:
		p.next()
		kind = "GROUPING SETS"
	case p.tok == token.ROLLUP && p.peek(1) == token.LPAREN:
		kind = "ROLLUP"
	case p.tok == token.CUBE && p.peek(1) == token.LPAREN:
		kind = "CUBE"
	default:
		return p.parseExpr()
	}
	p.next()
	p.expect(token.LPAREN)
	g := &ast.GroupingSet{Kind: kind}
	for {
		if p.tok == token.LPAREN && p.peek(1) == token.RPAREN {
			epos := p.pos
			p.next()
			p.next()
			g.Items = append(g.Items, &ast.RowCtor{Span: p.span(epos)})
		} else if kind == "GROUPING SETS" && (p.tok == token.ROLLUP || p.tok == token.CUBE || p.tok == token.GROUPING && p.peek(1) == token.SETS) {
			g.Items = append(g.Items, p.parseGroupingElement())
		} else {
			g.Items = append(g.Items, p.parseExpr())
		}
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	g.Span = p.span(start)
	return g
}

func (p *parser) parseSelectItem() *ast.SelectItem {
	start := p.pos
	if p.got(token.MUL) {
		return &ast.SelectItem{Span: p.span(start), Star: true}
	}
	// t.* and db.t.*: a dotted name ending in '.*'.
	if isIdent(p.tok) {
		n := 1
		for p.peek(n) == token.PERIOD && isIdent(p.peek(n+1)) {
			n += 2
		}
		if p.peek(n) == token.PERIOD && p.peek(n+1) == token.MUL {
			q := p.parseObjectName()
			p.expect(token.PERIOD)
			p.expect(token.MUL)
			return &ast.SelectItem{Span: p.span(start), Star: true, Qualifier: q}
		}
	}
	it := &ast.SelectItem{Expr: p.parseExpr()}
	it.Alias = p.parseOptAlias()
	it.Span = p.span(start)
	return it
}

// parseOptAlias parses an optional [AS] alias.
func (p *parser) parseOptAlias() *ast.Ident {
	if p.got(token.AS) {
		return p.parseIdent()
	}
	if isIdent(p.tok) {
		return p.parseIdent()
	}
	return nil
}

// parseTableAlias parses [AS] alias [(col, ...)].
func (p *parser) parseTableAlias() (*ast.Ident, []*ast.Ident) {
	alias := p.parseOptAlias()
	if alias != nil && p.tok == token.LPAREN {
		return alias, p.parseIdentList()
	}
	return alias, nil
}

// parseFrom parses table expressions joined by commas and JOINs; a comma
// binds more loosely than JOIN.
func (p *parser) parseFrom() ast.TableExpr {
	x := p.parseJoined()
	for p.tok == token.COMMA {
		at := p.pos
		p.next()
		y := p.parseJoined()
		x = &ast.Join{Kind: "COMMA", Left: x, Right: y, EndPos: p.prevEnd(), JoinPos: at}
	}
	return x
}

func (p *parser) parseJoined() ast.TableExpr {
	x := p.parseTablePrimary()
	for {
		natural, at := false, p.pos
		if p.tok == token.NATURAL {
			natural = true
			p.next()
		}
		kind := ""
		switch p.tok {
		case token.JOIN:
			kind = "INNER"
		case token.INNER:
			kind = "INNER"
			p.next()
		case token.LEFT, token.RIGHT, token.FULL:
			kind = p.tok.String()
			p.next()
			p.got(token.OUTER)
		case token.CROSS:
			kind = "CROSS"
			p.next()
		default:
			if natural {
				p.errorExpected(p.pos, "JOIN")
			}
			return x
		}
		p.expect(token.JOIN)
		j := &ast.Join{Kind: kind, Natural: natural, Left: x, Right: p.parseTablePrimary(), JoinPos: at}
		if kind != "CROSS" && !natural {
			switch p.tok {
			case token.ON:
				p.next()
				j.On = p.parseExpr()
			case token.USING:
				p.next()
				j.Using = p.parseIdentList()
			default:
				p.errorExpected(p.pos, "ON or USING")
			}
		}
		j.EndPos = p.prevEnd()
		x = j
	}
}

func (p *parser) parseTablePrimary() ast.TableExpr {
	p.enter()
	defer p.leave()
	start := p.pos
	switch p.tok {
	case token.LATERAL:
		p.next()
		switch p.tok {
		case token.TABLE:
			return p.parseTableFunc(start, true)
		case token.LPAREN:
			p.next()
			q := p.parseQuery()
			p.expect(token.RPAREN)
			t := &ast.SubqueryTable{Query: q, Lateral: true}
			t.Alias, t.ColumnAliases = p.parseTableAlias()
			t.Span = p.span(start)
			return t
		}
		p.errorExpected(p.pos, "TABLE or '(' after LATERAL")
	case token.TABLE:
		return p.parseTableFunc(start, false)
	case token.UNNEST:
		p.next()
		p.expect(token.LPAREN)
		u := &ast.Unnest{Exprs: p.parseExprList()}
		p.expect(token.RPAREN)
		if p.tok == token.WITH && p.peek(1) == token.ORDINALITY {
			p.next()
			p.next()
			u.WithOrdinality = true
		}
		u.Alias, u.ColumnAliases = p.parseTableAlias()
		u.Span = p.span(start)
		return u
	case token.LPAREN:
		if p.isQueryStart(1) {
			p.next()
			q := p.parseQuery()
			p.expect(token.RPAREN)
			t := &ast.SubqueryTable{Query: q}
			t.Alias, t.ColumnAliases = p.parseTableAlias()
			t.Span = p.span(start)
			return t
		}
		p.next()
		x := p.parseFrom()
		p.expect(token.RPAREN)
		return x
	}
	if !isIdent(p.tok) {
		p.errorReserved("table name")
	}
	t := &ast.TableName{Name: p.parseObjectName()}
	t.Hints = p.parseHints()
	if p.tok == token.FOR {
		p.next()
		p.expect(token.SYSTEM_TIME)
		p.expect(token.AS)
		if !p.isWord("OF") {
			p.errorExpected(p.pos, "OF")
		}
		p.next()
		t.SystemTime = p.parseConcat()
	}
	t.Alias, t.ColumnAliases = p.parseTableAlias()
	t.Span = p.span(start)
	return t
}

// parseTableFunc parses TABLE(f(args)) [AS] alias [(cols)]; start is at
// LATERAL for a lateral call.
func (p *parser) parseTableFunc(start token.Pos, lateral bool) *ast.TableFunc {
	p.expect(token.TABLE)
	p.expect(token.LPAREN)
	if !isIdent(p.tok) {
		p.errorExpected(p.pos, "table function call")
	}
	tf := &ast.TableFunc{Name: p.parseObjectName(), Lateral: lateral}
	p.expect(token.LPAREN)
	if p.tok != token.RPAREN {
		for {
			tf.Args = append(tf.Args, p.parseFuncArg())
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	p.expect(token.RPAREN)
	p.expect(token.RPAREN)
	tf.Alias, tf.ColumnAliases = p.parseTableAlias()
	tf.Span = p.span(start)
	return tf
}

// parseFuncArg parses [name =>] value, where value may be a table argument
// (TABLE t [PARTITION BY ...]) or a DESCRIPTOR.
func (p *parser) parseFuncArg() *ast.FuncArg {
	a := &ast.FuncArg{}
	if (isIdent(p.tok) || p.tok.IsKeyword()) && p.peek(1) == token.ARROW {
		a.Name = &ast.Ident{NamePos: p.pos, Name: p.lit, Quoted: p.tok == token.QIDENT}
		p.next()
		p.next()
	}
	if p.tok == token.TABLE {
		start := p.pos
		p.next()
		ta := &ast.TableArg{Name: p.parseObjectName()}
		if p.tok == token.PARTITION {
			p.next()
			p.expect(token.BY)
			// PARTITION BY k or PARTITION BY (k1, k2): without parentheses a
			// comma ends the table argument.
			if p.tok == token.LPAREN && !p.isQueryStart(1) {
				p.next()
				ta.PartitionBy = p.parseExprList()
				p.expect(token.RPAREN)
			} else {
				ta.PartitionBy = []ast.Expr{p.parseExpr()}
			}
		}
		ta.Span = p.span(start)
		a.Value = ta
		return a
	}
	a.Value = p.parseExpr()
	return a
}

// parseHints parses the hint blocks /*+ hint [, hint]* */ at the current
// token, if any, as Flink (Calcite) writes them: after SELECT (query
// hints) and after a table's name (table hints).
func (p *parser) parseHints() []*ast.Hint {
	var hints []*ast.Hint
	for p.tok == token.HINTBEG {
		p.next()
		for {
			hints = append(hints, p.parseHint())
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.HINTEND)
	}
	return hints
}

// parseHint parses name, name(option, ...) or name('k' = 'v', ...).
func (p *parser) parseHint() *ast.Hint {
	if p.tok != token.IDENT && p.tok != token.QIDENT && !p.tok.IsKeyword() {
		p.errorExpected(p.pos, "hint name")
	}
	h := &ast.Hint{Name: &ast.Ident{NamePos: p.pos, Name: p.lit, Quoted: p.tok == token.QIDENT}}
	h.Start = p.pos
	p.next()
	if p.got(token.LPAREN) {
		for {
			switch {
			case (p.tok == token.STRING || isIdent(p.tok)) && p.peek(1) == token.EQ:
				o := &ast.Option{KeyPos: p.pos, Key: p.lit}
				p.next()
				p.expect(token.EQ)
				o.Value, o.ValuePos = p.parseString("hint option value string")
				o.EndPos = p.prevEnd()
				h.KeyValues = append(h.KeyValues, o)
			case p.tok == token.STRING || p.tok == token.INT || isIdent(p.tok):
				h.List = append(h.List, &ast.Ident{NamePos: p.pos, Name: p.lit})
				p.next()
			default:
				p.errorExpected(p.pos, "hint option")
			}
			if len(h.KeyValues) > 0 && len(h.List) > 0 {
				p.error(p.pos, "a hint's options are either all 'key' = 'value' or none")
			}
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.RPAREN)
	}
	h.Stop = p.prevEnd()
	return h
}
