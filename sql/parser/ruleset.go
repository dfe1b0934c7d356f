package parser

import (
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

// parseCreateRuleset parses CREATE RULESET after CREATE:
//
//	CREATE RULESET [IF NOT EXISTS] name ON source
//	  [MATCH ANY | ALL | FIRST | AT LEAST n [PERCENT]] [COMMENT 'text']
//	  (RULE name WHEN condition [SEVERITY 'level'] [PRIORITY n] [TAGS ('tag', ...)] [DISABLED], ...)
func (p *parser) parseCreateRuleset(start token.Pos) *ast.CreateRuleset {
	p.next() // RULESET
	rs := &ast.CreateRuleset{}
	rs.IfNotExists = p.parseIfNotExists()
	rs.Name = p.parseObjectName()
	p.expect(token.ON)
	rs.Source = p.parseObjectName()
	if p.isWord("MATCH") {
		p.next()
		rs.Match = p.parseRulesetMatch()
	}
	if p.got(token.COMMENT_KW) {
		rs.Comment, _ = p.parseString("comment string")
	}
	p.expect(token.LPAREN)
	for {
		rs.Rules = append(rs.Rules, p.parseRuleDef())
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	rs.Span = p.span(start)
	return rs
}

// parseRulesetMatch parses the policy after MATCH.
func (p *parser) parseRulesetMatch() ast.RulesetMatch {
	m := ast.RulesetMatch{At: p.pos}
	switch {
	case p.tok == token.ALL:
		m.Kind = "ALL"
		p.next()
	case p.isWord("ANY"):
		m.Kind = "ANY"
		p.next()
	case p.tok == token.FIRST:
		m.Kind = "FIRST"
		p.next()
	case p.isWord("AT"):
		p.next()
		if !p.isWord("LEAST") {
			p.errorExpected(p.pos, "LEAST after MATCH AT")
		}
		p.next()
		m.Kind = "AT LEAST"
		m.N = p.parseCount("number of rules")
		if p.isWord("PERCENT") {
			p.next()
			m.Kind = "AT LEAST PERCENT"
		}
	default:
		p.errorExpected(p.pos, "ANY, ALL, FIRST or AT LEAST n [PERCENT] after MATCH")
	}
	return m
}

// parseCount parses a non-negative integer literal.
func (p *parser) parseCount(what string) int64 {
	if p.tok != token.INT {
		p.errorExpected(p.pos, what)
	}
	n, err := strconv.ParseInt(p.lit, 10, 64)
	if err != nil {
		p.error(p.pos, what+" out of range: "+p.lit)
	}
	p.next()
	return n
}

// parseRuleDef parses RULE name WHEN condition and its attributes.
func (p *parser) parseRuleDef() *ast.RuleDef {
	start := p.pos
	if !p.isWord("RULE") {
		p.errorExpected(p.pos, "RULE")
	}
	p.next()
	r := &ast.RuleDef{Name: p.parseIdent()}
	p.expect(token.WHEN)
	r.When = p.parseExpr()
	for {
		switch {
		case p.isWord("SEVERITY"):
			p.next()
			r.Severity, r.SeverityPos = p.parseString("severity string ('informational', 'low', 'medium', 'high' or 'critical')")
			continue
		case p.isWord("PRIORITY"):
			p.next()
			neg := p.got(token.SUB)
			r.Priority = p.parseCount("priority (an integer)")
			if neg {
				r.Priority = -r.Priority
			}
			continue
		case p.isWord("TAGS"):
			p.next()
			p.expect(token.LPAREN)
			r.Tags = []string{}
			for p.tok != token.RPAREN {
				t, _ := p.parseString("tag string")
				r.Tags = append(r.Tags, t)
				if !p.got(token.COMMA) {
					break
				}
			}
			p.expect(token.RPAREN)
			continue
		case p.isWord("DISABLED"):
			p.next()
			r.Disabled = true
			continue
		}
		break
	}
	r.Span = p.span(start)
	return r
}

// parseAlterRuleset parses ALTER RULESET name ADD RULE ... | DROP RULE
// name | ENABLE RULE name | DISABLE RULE name.
func (p *parser) parseAlterRuleset() *ast.AlterRuleset {
	start := p.pos
	p.next() // ALTER
	if !p.isWord("RULESET") {
		p.errorExpected(p.pos, "RULESET after ALTER")
	}
	p.next()
	a := &ast.AlterRuleset{Name: p.parseObjectName()}
	switch {
	case p.isWord("ADD"):
		a.Action = "ADD"
		p.next()
		a.Rule = p.parseRuleDef()
	case p.tok == token.DROP, p.isWord("ENABLE"), p.isWord("DISABLE"):
		a.Action = "DROP"
		if p.tok != token.DROP {
			a.Action = strings.ToUpper(p.lit)
		}
		p.next()
		if !p.isWord("RULE") {
			p.errorExpected(p.pos, "RULE")
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
		p.errorExpected(p.pos, "ADD RULE, DROP RULE, ENABLE RULE, DISABLE RULE or ROLLBACK TO VERSION n")
	}
	a.Span = p.span(start)
	return a
}
