package parser

import (
	"strings"

	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

// parseCreateMetricGroup parses CREATE METRIC GROUP after CREATE:
//
//	CREATE METRIC GROUP [IF NOT EXISTS] name ON source KEY BY (column, ...)
//	  [COMMENT 'text']
//	  (METRIC name AS aggregate [WINDOW TUMBLE|HOP|SESSION|LAST (interval[, interval])], ...)
func (p *parser) parseCreateMetricGroup(start token.Pos) *ast.CreateMetricGroup {
	p.next() // METRIC
	p.parseWords("GROUP")
	g := &ast.CreateMetricGroup{}
	g.IfNotExists = p.parseIfNotExists()
	g.Name = p.parseObjectName()
	p.expect(token.ON)
	g.Source = p.parseObjectName()
	p.expect(token.KEY)
	p.expect(token.BY)
	p.expect(token.LPAREN)
	for {
		g.Keys = append(g.Keys, p.parseIdent())
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	if p.got(token.COMMENT_KW) {
		g.Comment, _ = p.parseString("comment string")
	}
	p.expect(token.LPAREN)
	for {
		g.Metrics = append(g.Metrics, p.parseMetricDef())
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	g.Span = p.span(start)
	return g
}

// parseMetricDef parses METRIC name AS aggregate [WINDOW ...].
func (p *parser) parseMetricDef() *ast.MetricDef {
	start := p.pos
	if !p.isWord("METRIC") {
		p.errorExpected(p.pos, "METRIC")
	}
	p.next()
	m := &ast.MetricDef{Name: p.parseIdent()}
	p.expect(token.AS)
	m.Agg = p.parseExpr()
	if p.tok == token.WINDOW {
		m.Window.At = p.pos
		p.next()
		switch {
		case p.tok == token.LAST:
			m.Window.Kind = "LAST"
		case p.isWord("TUMBLE"), p.isWord("HOP"), p.isWord("SESSION"):
			m.Window.Kind = strings.ToUpper(p.lit)
		default:
			p.errorExpected(p.pos, "TUMBLE, HOP, SESSION or LAST after WINDOW")
		}
		p.next()
		p.expect(token.LPAREN)
		m.Window.Size = p.parseWindowInterval()
		if m.Window.Kind == "HOP" {
			p.expect(token.COMMA)
			m.Window.Slide, m.Window.Size = m.Window.Size, p.parseWindowInterval()
		}
		p.expect(token.RPAREN)
	}
	m.Span = p.span(start)
	return m
}

// parseWindowInterval parses the INTERVAL literal of a metric's window.
func (p *parser) parseWindowInterval() *ast.IntervalLit {
	if p.tok != token.INTERVAL {
		p.errorExpected(p.pos, "an INTERVAL literal (e.g. INTERVAL '5' MINUTE)")
	}
	return p.parseInterval()
}

// parseAlterMetricGroup parses ALTER METRIC GROUP name ADD METRIC ... |
// ALTER METRIC ... | DROP METRIC name | ROLLBACK TO VERSION n.
func (p *parser) parseAlterMetricGroup(start token.Pos) *ast.AlterMetricGroup {
	p.next() // METRIC
	p.parseWords("GROUP")
	a := &ast.AlterMetricGroup{Name: p.parseObjectName()}
	switch {
	case p.isWord("ADD"):
		a.Action = "ADD"
		p.next()
		a.Metric = p.parseMetricDef()
	case p.isWord("ALTER"):
		a.Action = "ALTER"
		p.next()
		a.Metric = p.parseMetricDef()
	case p.tok == token.DROP:
		a.Action = "DROP"
		p.next()
		if !p.isWord("METRIC") {
			p.errorExpected(p.pos, "METRIC")
		}
		p.next()
		a.Target = p.parseIdent()
	case p.isWord("ROLLBACK"):
		a.Action = "ROLLBACK"
		p.next()
		p.expect(token.TO)
		if !p.isWord("VERSION") {
			p.errorExpected(p.pos, "VERSION")
		}
		p.next()
		a.VersionPos = p.pos
		a.Version = p.parseCount("version number")
	default:
		p.errorExpected(p.pos, "ADD METRIC, ALTER METRIC, DROP METRIC or ROLLBACK TO VERSION n")
	}
	a.Span = p.span(start)
	return a
}
