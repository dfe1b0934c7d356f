package parser

import (
	"strings"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

var typeNames = []string{
	"BOOLEAN", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "REAL", "DOUBLE",
	"DECIMAL", "DEC", "NUMERIC", "CHAR", "CHARACTER", "VARCHAR", "STRING", "BINARY",
	"VARBINARY", "BYTES", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "INTERVAL", "ARRAY",
	"MAP", "MULTISET", "ROW",
}

// parseType parses a data type with its NOT NULL / NULL suffix and any
// postfix ARRAY or MULTISET constructors.
func (p *parser) parseType() *ast.TypeExpr {
	p.enter()
	defer p.leave()
	t := p.parseBaseType()
	p.parseNullability(t)
	for p.tok == token.ARRAY || p.tok == token.MULTISET {
		name := p.tok.String()
		p.next()
		t = &ast.TypeExpr{TypePos: t.TypePos, Name: name, Elem: t}
		t.EndPos = p.prevEnd()
		p.parseNullability(t)
	}
	return t
}

func (p *parser) parseNullability(t *ast.TypeExpr) {
	switch {
	case p.tok == token.NOT && p.peek(1) == token.NULL:
		p.next()
		p.next()
		t.NotNull = true
		t.EndPos = p.prevEnd()
	case p.tok == token.NULL && p.peek(1) != token.ON: // not JSON_VALUE's NULL ON EMPTY
		p.next()
		t.EndPos = p.prevEnd()
	}
}

// parseParams parses an optional (n) or (n, m) with at most max numbers.
func (p *parser) parseParams(max int) []int {
	if p.tok != token.LPAREN {
		return nil
	}
	p.next()
	params := []int{p.parseSmallInt()}
	for max > 1 && p.got(token.COMMA) {
		params = append(params, p.parseSmallInt())
		max--
	}
	p.expect(token.RPAREN)
	return params
}

func (p *parser) parseBaseType() *ast.TypeExpr {
	start := p.pos
	if !isIdent(p.tok) && !p.tok.IsKeyword() || p.tok == token.QIDENT {
		p.errorExpected(p.pos, "type")
	}
	lit := p.lit
	word := strings.ToUpper(lit)
	t := &ast.TypeExpr{TypePos: start}
	p.next()
	switch word {
	case "BOOLEAN", "TINYINT", "SMALLINT", "BIGINT", "FLOAT", "STRING", "BYTES", "DATE":
		t.Name = word
	case "INT", "INTEGER":
		t.Name = "INT"
	case "REAL":
		t.Name = "FLOAT"
	case "DOUBLE":
		t.Name = "DOUBLE"
		p.got(token.PRECISION)
	case "DECIMAL", "DEC", "NUMERIC":
		t.Name = "DECIMAL"
		t.Params = p.parseParams(2)
	case "CHAR", "CHARACTER":
		t.Name = "CHAR"
		if p.isWord("VARYING") {
			p.next()
			t.Name = "VARCHAR"
		}
		t.Params = p.parseParams(1)
	case "VARCHAR":
		t.Name = "VARCHAR"
		t.Params = p.parseParams(1)
	case "BINARY":
		t.Name = "BINARY"
		if p.isWord("VARYING") {
			p.next()
			t.Name = "VARBINARY"
		}
		t.Params = p.parseParams(1)
	case "VARBINARY":
		t.Name = "VARBINARY"
		t.Params = p.parseParams(1)
	case "TIME":
		t.Name = "TIME"
		t.Params = p.parseParams(1)
		if p.tok == token.WITHOUT {
			p.next()
			p.expect(token.TIME)
			p.expect(token.ZONE)
		}
	case "TIMESTAMP":
		t.Name = "TIMESTAMP"
		t.Params = p.parseParams(1)
		switch p.tok {
		case token.WITHOUT:
			p.next()
			p.expect(token.TIME)
			p.expect(token.ZONE)
		case token.WITH:
			p.next()
			p.expect(token.LOCAL)
			p.expect(token.TIME)
			p.expect(token.ZONE)
			t.Name = "TIMESTAMP_LTZ"
		}
	case "TIMESTAMP_LTZ":
		t.Name = "TIMESTAMP_LTZ"
		t.Params = p.parseParams(1)
	case "INTERVAL":
		t.Name = "INTERVAL"
		lead, frac := -1, -1
		t.IntervalFrom = p.parseIntervalUnit()
		if p.got(token.LPAREN) {
			lead = p.parseSmallInt()
			if p.got(token.COMMA) {
				frac = p.parseSmallInt()
			}
			p.expect(token.RPAREN)
		}
		if p.got(token.TO) {
			t.IntervalTo = p.parseIntervalUnit()
			if p.got(token.LPAREN) {
				frac = p.parseSmallInt()
				p.expect(token.RPAREN)
			}
		}
		if lead >= 0 || frac >= 0 {
			t.Params = []int{lead, frac}
		}
	case "ARRAY", "MULTISET":
		t.Name = word
		p.expect(token.LT)
		t.Elem = p.parseType()
		p.expect(token.GT)
	case "MAP":
		t.Name = "MAP"
		p.expect(token.LT)
		t.Elem = p.parseType()
		p.expect(token.COMMA)
		t.Value = p.parseType()
		p.expect(token.GT)
	case "ROW":
		t.Name = "ROW"
		if p.tok == token.NEQ && p.lit == "<>" { // ROW<>, scanned as one token
			p.next()
			break
		}
		closing := token.GT
		switch p.tok {
		case token.LT:
		case token.LPAREN:
			closing = token.RPAREN
		default:
			p.errorExpected(p.pos, "'<' or '('")
		}
		p.next()
		if p.tok != closing {
			for {
				fstart := p.pos
				f := &ast.RowField{Name: p.parseIdent()}
				f.Type = p.parseType()
				if p.got(token.COMMENT_KW) {
					f.Comment, _ = p.parseString("comment string")
				} else if p.tok == token.STRING {
					f.Comment, _ = p.parseString("comment string")
				}
				f.Span = p.span(fstart)
				t.Fields = append(t.Fields, f)
				if !p.got(token.COMMA) {
					break
				}
			}
		}
		p.expect(closing)
	default:
		p.error(start, "expected type, found '"+truncate(lit)+"'"+suggest.Hint(word, typeNames))
	}
	t.EndPos = p.prevEnd()
	return t
}
