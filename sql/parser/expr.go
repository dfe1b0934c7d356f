package parser

import (
	"math"
	"strings"

	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

// Operator precedence, from loosest to tightest:
//
//	OR
//	AND
//	NOT
//	comparison: = <> < <= > >=, IS, BETWEEN, IN, LIKE, SIMILAR TO
//	||
//	+ -
//	* / %
//	unary + -
//	member access a.b, a[i], a::type

func (p *parser) parseExpr() ast.Expr {
	p.enter()
	defer p.leave()
	return p.parseOr()
}

func (p *parser) parseOr() ast.Expr {
	x := p.parseAnd()
	for p.tok == token.OR {
		pos := p.pos
		p.next()
		x = &ast.Binary{X: x, OpPos: pos, Op: "OR", Y: p.parseAnd()}
	}
	return x
}

func (p *parser) parseAnd() ast.Expr {
	x := p.parseNot()
	for p.tok == token.AND {
		pos := p.pos
		p.next()
		x = &ast.Binary{X: x, OpPos: pos, Op: "AND", Y: p.parseNot()}
	}
	return x
}

func (p *parser) parseNot() ast.Expr {
	if p.tok == token.NOT {
		pos := p.pos
		p.next()
		p.enter()
		defer p.leave()
		return &ast.Unary{OpPos: pos, Op: "NOT", X: p.parseNot()}
	}
	return p.parseComparison()
}

func (p *parser) parseComparison() ast.Expr {
	x := p.parseConcat()
	for {
		switch p.tok {
		case token.EQ, token.NEQ, token.LT, token.LEQ, token.GT, token.GEQ:
			pos, op := p.pos, p.tok.String()
			p.next()
			x = &ast.Binary{X: x, OpPos: pos, Op: op, Y: p.parseConcat()}
			continue
		case token.IS:
			x = p.parseIs(x)
			continue
		}
		not := false
		if p.tok == token.NOT {
			switch p.peek(1) {
			case token.BETWEEN, token.IN, token.LIKE, token.SIMILAR:
				not = true
				p.next()
			default:
				p.next()
				p.errorExpected(p.pos, "BETWEEN, IN, LIKE or SIMILAR TO after NOT")
			}
		}
		switch p.tok {
		case token.BETWEEN:
			p.next()
			b := &ast.Between{X: x, Not: not}
			if p.got(token.SYMMETRIC) {
				b.Symmetric = true
			} else {
				p.got(token.ASYMMETRIC)
			}
			b.Lo = p.parseConcat()
			p.expect(token.AND)
			b.Hi = p.parseConcat()
			x = b
		case token.IN:
			p.next()
			in := &ast.In{X: x, Not: not}
			p.expect(token.LPAREN)
			if p.isQueryStart(0) {
				in.Query = p.parseQuery()
			} else {
				in.List = p.parseExprList()
			}
			p.expect(token.RPAREN)
			in.EndPos = p.prevEnd()
			x = in
		case token.LIKE, token.SIMILAR:
			l := &ast.Like{X: x, Not: not, Similar: p.tok == token.SIMILAR}
			p.next()
			if l.Similar {
				p.expect(token.TO)
			}
			l.Pattern = p.parseConcat()
			if p.got(token.ESCAPE) {
				l.Escape = p.parseConcat()
			}
			x = l
		default:
			return x
		}
	}
}

// parseIs parses IS [NOT] NULL|TRUE|FALSE|UNKNOWN|DISTINCT FROM y.
func (p *parser) parseIs(x ast.Expr) ast.Expr {
	pos := p.expect(token.IS)
	not := p.got(token.NOT)
	switch p.tok {
	case token.NULL, token.TRUE, token.FALSE, token.UNKNOWN:
		what := p.tok.String()
		p.next()
		return &ast.IsExpr{X: x, Not: not, What: what, EndPos: p.prevEnd()}
	case token.DISTINCT:
		p.next()
		p.expect(token.FROM)
		op := "IS DISTINCT FROM"
		if not {
			op = "IS NOT DISTINCT FROM"
		}
		return &ast.Binary{X: x, OpPos: pos, Op: op, Y: p.parseConcat()}
	}
	p.errorExpected(p.pos, "NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS")
	return nil
}

func (p *parser) parseConcat() ast.Expr {
	x := p.parseAdditive()
	for p.tok == token.CONCAT {
		pos := p.pos
		p.next()
		x = &ast.Binary{X: x, OpPos: pos, Op: "||", Y: p.parseAdditive()}
	}
	return x
}

func (p *parser) parseAdditive() ast.Expr {
	x := p.parseMultiplicative()
	for p.tok == token.ADD || p.tok == token.SUB {
		pos, op := p.pos, p.tok.String()
		p.next()
		x = &ast.Binary{X: x, OpPos: pos, Op: op, Y: p.parseMultiplicative()}
	}
	return x
}

func (p *parser) parseMultiplicative() ast.Expr {
	x := p.parseUnary()
	for p.tok == token.MUL || p.tok == token.QUO || p.tok == token.REM {
		pos, op := p.pos, p.tok.String()
		p.next()
		x = &ast.Binary{X: x, OpPos: pos, Op: op, Y: p.parseUnary()}
	}
	return x
}

func (p *parser) parseUnary() ast.Expr {
	if p.tok == token.SUB || p.tok == token.ADD {
		pos, op := p.pos, p.tok.String()
		p.next()
		p.enter()
		defer p.leave()
		return &ast.Unary{OpPos: pos, Op: op, X: p.parseUnary()}
	}
	return p.parsePostfix(p.parsePrimary())
}

// parsePostfix parses member access, subscripts and :: casts after x.
func (p *parser) parsePostfix(x ast.Expr) ast.Expr {
	for {
		switch p.tok {
		case token.LBRACK:
			p.next()
			i := p.parseExpr()
			p.expect(token.RBRACK)
			x = &ast.Index{X: x, Index: i, EndPos: p.prevEnd()}
		case token.PERIOD:
			p.next()
			x = &ast.FieldAccess{X: x, Name: p.parseIdent()}
		case token.DCOLON:
			p.next()
			t := p.parseType()
			x = &ast.Cast{Span: ast.Span{Start: x.Pos(), Stop: p.prevEnd()}, X: x, Type: t}
		default:
			return x
		}
	}
}

// niladic are the functions called without parentheses.
func isNiladic(t token.Token) bool {
	switch t {
	case token.CURRENT_TIMESTAMP, token.CURRENT_DATE, token.CURRENT_TIME, token.LOCALTIMESTAMP, token.LOCALTIME:
		return true
	}
	return false
}

func (p *parser) parsePrimary() ast.Expr {
	start := p.pos
	switch p.tok {
	case token.INT, token.DECIMAL, token.FLOAT:
		lit := &ast.Literal{ValuePos: start, Kind: ast.Number, Value: p.lit}
		p.next()
		lit.EndPos = p.prevEnd()
		return lit
	case token.STRING:
		s, _ := p.parseString("string")
		return &ast.Literal{ValuePos: start, EndPos: p.prevEnd(), Kind: ast.String, Value: s}
	case token.HEX:
		lit := &ast.Literal{ValuePos: start, Kind: ast.Hex, Value: p.lit}
		p.next()
		lit.EndPos = p.prevEnd()
		return lit
	case token.TRUE, token.FALSE:
		lit := &ast.Literal{ValuePos: start, Kind: ast.Bool, Value: p.tok.String()}
		p.next()
		lit.EndPos = p.prevEnd()
		return lit
	case token.NULL:
		p.next()
		return &ast.Literal{ValuePos: start, EndPos: p.prevEnd(), Kind: ast.Null, Value: "NULL"}
	case token.UNKNOWN:
		p.next()
		return &ast.Literal{ValuePos: start, EndPos: p.prevEnd(), Kind: ast.Unknown, Value: "UNKNOWN"}
	case token.DATE, token.TIME, token.TIMESTAMP, token.TIMESTAMP_LTZ:
		if p.peek(1) == token.STRING {
			typ := p.tok.String()
			p.next()
			v, _ := p.parseString("string")
			return &ast.TypedLiteral{Span: p.span(start), Type: typ, Value: v}
		}
	case token.INTERVAL:
		return p.parseInterval()
	case token.CASE:
		return p.parseCase()
	case token.CAST, token.TRY_CAST:
		try := p.tok == token.TRY_CAST
		p.next()
		p.expect(token.LPAREN)
		x := p.parseExpr()
		p.expect(token.AS)
		t := p.parseType()
		p.expect(token.RPAREN)
		return &ast.Cast{Span: p.span(start), X: x, Type: t, Try: try}
	case token.EXISTS:
		p.next()
		p.expect(token.LPAREN)
		q := p.parseQuery()
		p.expect(token.RPAREN)
		return &ast.Exists{Span: p.span(start), Query: q}
	case token.ARRAY:
		p.next()
		p.expect(token.LBRACK)
		a := &ast.ArrayCtor{}
		if p.tok != token.RBRACK {
			a.Elems = p.parseExprList()
		}
		p.expect(token.RBRACK)
		a.Span = p.span(start)
		return a
	case token.MAP:
		p.next()
		p.expect(token.LBRACK)
		m := &ast.MapCtor{}
		if p.tok != token.RBRACK {
			m.Elems = p.parseExprList()
		}
		if len(m.Elems)%2 != 0 {
			p.error(p.pos, "MAP constructor needs an even number of elements (key, value, ...)")
		}
		p.expect(token.RBRACK)
		m.Span = p.span(start)
		return m
	case token.ROW:
		p.next()
		p.expect(token.LPAREN)
		r := &ast.RowCtor{}
		if p.tok != token.RPAREN {
			r.Args = p.parseExprList()
		}
		p.expect(token.RPAREN)
		r.Span = p.span(start)
		return r
	case token.LPAREN:
		if p.isQueryStart(1) && p.peek(1) != token.LPAREN {
			p.next()
			q := p.parseQuery()
			p.expect(token.RPAREN)
			return &ast.SubqueryExpr{Span: p.span(start), Query: q}
		}
		p.next()
		list := p.parseExprList()
		p.expect(token.RPAREN)
		if len(list) == 1 {
			return list[0]
		}
		return &ast.RowCtor{Span: p.span(start), Args: list}
	case token.DESCRIPTOR:
		if p.peek(1) == token.LPAREN {
			p.next()
			cols := p.parseIdentList()
			return &ast.Descriptor{Span: p.span(start), Columns: cols}
		}
	}
	if (p.tok == token.LEFT || p.tok == token.RIGHT) && p.peek(1) == token.LPAREN {
		// LEFT(s, n) and RIGHT(s, n): functions, as in Flink, though
		// their names are the join keywords.
		name := &ast.ObjectName{Parts: []*ast.Ident{{NamePos: p.pos, Name: p.tok.String()}}}
		p.next()
		return p.parseCall(name)
	}
	if isNiladic(p.tok) {
		name := &ast.ObjectName{Parts: []*ast.Ident{{NamePos: p.pos, Name: p.tok.String()}}}
		p.next()
		return &ast.Call{Name: name, EndPos: p.prevEnd()}
	}
	if !isIdent(p.tok) {
		p.errorReserved("expression")
	}
	parts := []*ast.Ident{p.parseIdent()}
	for p.tok == token.PERIOD && isIdent(p.peek(1)) {
		p.next()
		parts = append(parts, p.parseIdent())
	}
	if p.tok == token.LPAREN {
		return p.parseCall(&ast.ObjectName{Parts: parts})
	}
	return &ast.ColumnRef{Parts: parts}
}

// parseInterval parses INTERVAL 'value' unit [(p[, s])] [TO unit [(s)]]. A
// number may stand for the quoted value, with an optional sign.
func (p *parser) parseInterval() *ast.IntervalLit {
	start := p.expect(token.INTERVAL)
	iv := &ast.IntervalLit{}
	sign := ""
	if p.tok == token.SUB || p.tok == token.ADD {
		if p.tok == token.SUB {
			sign = "-"
		}
		p.next()
	}
	switch p.tok {
	case token.STRING:
		v, _ := p.parseString("interval value")
		if sign == "-" {
			if strings.HasPrefix(v, "-") {
				v = v[1:]
			} else {
				v = "-" + v
			}
		}
		iv.Value = v
	case token.INT, token.DECIMAL:
		iv.Value = sign + p.lit
		p.next()
	default:
		p.errorExpected(p.pos, "interval value string")
	}
	var lead, frac = -1, -1
	iv.From = p.parseIntervalUnit()
	// A '(' not followed by a number is not a precision: the rules of a
	// ruleset follow SUPPRESS BY (...) FOR INTERVAL '1' MINUTE.
	if p.tok == token.LPAREN && p.peek(1) == token.INT {
		p.next()
		lead = p.parseSmallInt()
		if p.got(token.COMMA) {
			frac = p.parseSmallInt()
		}
		p.expect(token.RPAREN)
	}
	if p.got(token.TO) {
		iv.To = p.parseIntervalUnit()
		if p.tok == token.LPAREN && p.peek(1) == token.INT {
			p.next()
			frac = p.parseSmallInt()
			p.expect(token.RPAREN)
		}
	}
	if lead >= 0 || frac >= 0 {
		iv.Precision = []int{lead, frac}
	}
	iv.Span = p.span(start)
	return iv
}

func (p *parser) parseIntervalUnit() string {
	if isIdent(p.tok) || p.tok.IsKeyword() {
		if u, ok := token.TimeUnit(p.lit); ok && token.IsIntervalUnit(u) {
			p.next()
			return u
		}
	}
	p.errorExpected(p.pos, "interval unit (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND)")
	return ""
}

// parseTimeUnit parses a time unit word as a TimeUnit expression.
func (p *parser) parseTimeUnit() *ast.TimeUnit {
	start := p.pos
	if isIdent(p.tok) && p.tok != token.QIDENT {
		if u, ok := token.TimeUnit(p.lit); ok {
			p.next()
			return &ast.TimeUnit{Span: p.span(start), Unit: u}
		}
	}
	p.errorExpected(p.pos, "time unit")
	return nil
}

// parseSmallInt parses a non-negative integer literal such as a precision.
func (p *parser) parseSmallInt() int {
	if p.tok != token.INT {
		p.errorExpected(p.pos, "integer")
	}
	// Lengths go up to 2147483647 (Flink's VARCHAR(2147483647), the
	// length of STRING).
	n := 0
	for _, c := range p.lit {
		n = n*10 + int(c-'0')
		if n > math.MaxInt32 {
			p.error(p.pos, "integer "+truncate(p.lit)+" is too large")
			n = math.MaxInt32
			break
		}
	}
	p.next()
	return n
}

func (p *parser) parseCase() *ast.Case {
	start := p.expect(token.CASE)
	c := &ast.Case{}
	if p.tok != token.WHEN {
		c.Operand = p.parseExpr()
	}
	if p.tok != token.WHEN {
		p.errorExpected(p.pos, "WHEN")
	}
	for p.tok == token.WHEN {
		wpos := p.pos
		p.next()
		cond := p.parseExpr()
		p.expect(token.THEN)
		res := p.parseExpr()
		c.Whens = append(c.Whens, &ast.When{Span: p.span(wpos), Cond: cond, Result: res})
	}
	if p.got(token.ELSE) {
		c.Else = p.parseExpr()
	}
	p.expect(token.END)
	c.Span = p.span(start)
	return c
}

// specialName returns the upper-case name of a function with special
// argument syntax, or "".
func specialName(n *ast.ObjectName) string {
	if len(n.Parts) != 1 || n.Parts[0].Quoted {
		return ""
	}
	switch u := strings.ToUpper(n.Parts[0].Name); u {
	case "EXTRACT", "POSITION", "TRIM", "SUBSTRING", "OVERLAY", "FLOOR", "CEIL", "CEILING",
		"TIMESTAMPADD", "TIMESTAMPDIFF", "JSON_VALUE":
		return u
	}
	return ""
}

func (p *parser) parseCall(name *ast.ObjectName) ast.Expr {
	c := &ast.Call{Name: name, Lparen: p.expect(token.LPAREN)}
	special := specialName(name)
	if special != "" {
		name.Parts[0].Name = special
	}
	switch special {
	case "EXTRACT":
		unit := p.parseTimeUnit()
		p.expect(token.FROM)
		c.Args = []ast.Expr{unit, p.parseExpr()}
	case "POSITION":
		a := p.parseConcat()
		if !p.got(token.IN) {
			p.expect(token.COMMA)
		}
		c.Args = []ast.Expr{a, p.parseExpr()}
	case "TRIM":
		c.Args = p.parseTrimArgs()
	case "SUBSTRING":
		s := p.parseExpr()
		if p.got(token.FROM) {
			c.Args = []ast.Expr{s, p.parseExpr()}
			if p.got(token.FOR) {
				c.Args = append(c.Args, p.parseExpr())
			}
		} else {
			p.expect(token.COMMA)
			c.Args = append([]ast.Expr{s}, p.parseExprList()...)
		}
	case "OVERLAY":
		s := p.parseExpr()
		if p.isWord("PLACING") {
			p.next()
			r := p.parseExpr()
			p.expect(token.FROM)
			c.Args = []ast.Expr{s, r, p.parseExpr()}
			if p.got(token.FOR) {
				c.Args = append(c.Args, p.parseExpr())
			}
		} else {
			p.expect(token.COMMA)
			c.Args = append([]ast.Expr{s}, p.parseExprList()...)
		}
	case "FLOOR", "CEIL", "CEILING":
		x := p.parseExpr()
		c.Args = []ast.Expr{x}
		if p.got(token.TO) {
			c.Args = append(c.Args, p.parseTimeUnit())
		} else if p.got(token.COMMA) {
			c.Args = append(c.Args, p.parseExprList()...)
		}
	case "TIMESTAMPADD", "TIMESTAMPDIFF":
		unit := p.parseTimeUnit()
		p.expect(token.COMMA)
		c.Args = append([]ast.Expr{unit}, p.parseExprList()...)
	case "JSON_VALUE":
		c.Args = p.parseExprList()
		p.parseJSONValueClauses(c)
	default:
		switch {
		case p.tok == token.MUL && p.peek(1) == token.RPAREN:
			p.next()
			c.Star = true
		case p.tok == token.RPAREN:
		default:
			if p.got(token.DISTINCT) {
				c.Distinct = true
			} else {
				p.got(token.ALL)
			}
			c.Args = p.parseExprList()
		}
	}
	c.Rparen = p.expect(token.RPAREN)
	if p.tok == token.FILTER && p.peek(1) == token.LPAREN {
		p.next()
		p.next()
		p.expect(token.WHERE)
		c.Filter = p.parseExpr()
		p.expect(token.RPAREN)
	}
	if p.got(token.OVER) {
		if p.tok == token.LPAREN {
			c.Over = p.parseWindowSpec()
		} else {
			c.OverName = p.parseIdent()
		}
	}
	c.EndPos = p.prevEnd()
	return c
}

// parseTrimArgs parses the arguments of TRIM([BOTH|LEADING|TRAILING]
// [chars] FROM s) and TRIM(s) into [mode, chars, s].
func (p *parser) parseTrimArgs() []ast.Expr {
	mode := &ast.Literal{ValuePos: p.pos, EndPos: p.pos, Kind: ast.String, Value: "BOTH"}
	if (p.isWord("BOTH") || p.isWord("LEADING") || p.isWord("TRAILING")) &&
		p.peek(1) != token.COMMA && p.peek(1) != token.RPAREN {
		mode.Value = strings.ToUpper(p.lit)
		p.next()
		mode.EndPos = p.prevEnd()
	}
	chars := ast.Expr(&ast.Literal{ValuePos: p.pos, EndPos: p.pos, Kind: ast.String, Value: " "})
	if p.got(token.FROM) {
		return []ast.Expr{mode, chars, p.parseExpr()}
	}
	x := p.parseExpr()
	if p.got(token.FROM) {
		return []ast.Expr{mode, x, p.parseExpr()}
	}
	if p.got(token.COMMA) {
		// TRIM(s, chars) as some dialects write it.
		return []ast.Expr{mode, p.parseExpr(), x}
	}
	return []ast.Expr{mode, chars, x}
}

// parseJSONValueClauses parses [RETURNING type] [behaviour ON EMPTY]
// [behaviour ON ERROR].
func (p *parser) parseJSONValueClauses(c *ast.Call) {
	if p.got(token.RETURNING) {
		c.Returning = p.parseType()
	}
	for i := 0; i < 2 && (p.tok == token.NULL || p.tok == token.ERROR || p.tok == token.DEFAULT); i++ {
		start := p.pos
		b := &ast.JSONBehavior{Kind: p.tok.String()}
		p.next()
		if b.Kind == "DEFAULT" {
			b.Default = p.parseExpr()
		}
		p.expect(token.ON)
		b.Span = p.span(start)
		switch {
		case p.tok == token.EMPTY && c.OnEmpty == nil && c.OnError == nil:
			c.OnEmpty = b
		case p.tok == token.ERROR && c.OnError == nil:
			c.OnError = b
		default:
			p.errorExpected(p.pos, "EMPTY or ERROR")
		}
		p.next()
	}
}

// parseWindowSpec parses ([name] [PARTITION BY ...] [ORDER BY ...] [frame]).
func (p *parser) parseWindowSpec() *ast.WindowSpec {
	start := p.expect(token.LPAREN)
	w := &ast.WindowSpec{}
	if isIdent(p.tok) && p.tok != token.RANGE {
		w.Name = p.parseIdent()
	}
	if p.tok == token.PARTITION {
		p.next()
		p.expect(token.BY)
		w.PartitionBy = p.parseExprList()
	}
	if p.tok == token.ORDER {
		p.next()
		p.expect(token.BY)
		w.OrderBy = p.parseOrderItems()
	}
	if p.tok == token.ROWS || p.tok == token.RANGE {
		f := &ast.Frame{FramePos: p.pos, Rows: p.tok == token.ROWS}
		p.next()
		if p.got(token.BETWEEN) {
			f.Start = p.parseFrameBound()
			p.expect(token.AND)
			f.End = p.parseFrameBound()
		} else {
			f.Start = p.parseFrameBound()
		}
		w.Frame = f
	}
	p.expect(token.RPAREN)
	w.Span = p.span(start)
	return w
}

func (p *parser) parseFrameBound() *ast.FrameBound {
	start := p.pos
	b := &ast.FrameBound{}
	switch {
	case p.tok == token.UNBOUNDED:
		p.next()
		switch p.tok {
		case token.PRECEDING:
			b.Kind = "UNBOUNDED PRECEDING"
		case token.FOLLOWING:
			b.Kind = "UNBOUNDED FOLLOWING"
		default:
			p.errorExpected(p.pos, "PRECEDING or FOLLOWING")
		}
		p.next()
	case p.tok == token.CURRENT:
		p.next()
		p.expect(token.ROW)
		b.Kind = "CURRENT ROW"
	default:
		b.Offset = p.parseConcat()
		switch p.tok {
		case token.PRECEDING:
			b.Kind = "PRECEDING"
		case token.FOLLOWING:
			b.Kind = "FOLLOWING"
		default:
			p.errorExpected(p.pos, "PRECEDING or FOLLOWING")
		}
		p.next()
	}
	b.Span = p.span(start)
	return b
}
