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
//	  [MATCH ANY | ALL | FIRST | AT LEAST n [PERCENT]] [EXCEPT WHEN condition] [COMMENT 'text']
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
	if p.got(token.EXCEPT) {
		p.expect(token.WHEN)
		rs.Except = p.parseExpr()
	}
	if p.isWord("SUPPRESS") {
		rs.Suppress = p.parseSuppress()
	}
	if p.got(token.COMMENT_KW) {
		rs.Comment, _ = p.parseString("comment string")
	}
	rs.Rules = p.parseRuleList()
	rs.Span = p.span(start)
	return rs
}

// parseRuleList parses (RULE ..., ...).
func (p *parser) parseRuleList() []*ast.RuleDef {
	p.expect(token.LPAREN)
	var rules []*ast.RuleDef
	for {
		rules = append(rules, p.parseRuleDef(false))
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	return rules
}

// maxSuppressKeys is how many columns a SUPPRESS BY key set may have.
const maxSuppressKeys = 3

// parseSuppress parses SUPPRESS BY (col[, col[, col]]) FOR INTERVAL
// 'n' unit.
func (p *parser) parseSuppress() *ast.RulesetSuppress {
	start := p.pos
	p.next() // SUPPRESS
	p.expect(token.BY)
	s := &ast.RulesetSuppress{}
	if p.tok != token.LPAREN {
		p.errorExpected(p.pos, "'(' and the columns of the key set (1 to 3)")
	}
	lparen := p.pos
	s.Keys = p.parseIdentList()
	if len(s.Keys) > maxSuppressKeys {
		p.error(s.Keys[maxSuppressKeys].Pos(), "SUPPRESS BY takes 1 to 3 columns, not "+strconv.Itoa(len(s.Keys)))
	}
	if len(s.Keys) == 0 {
		p.error(lparen, "SUPPRESS BY takes 1 to 3 columns, not 0")
	}
	p.expect(token.FOR)
	if p.tok != token.INTERVAL {
		p.errorExpected(p.pos, "INTERVAL 'n' unit after SUPPRESS BY (...) FOR")
	}
	s.Interval = p.parseInterval()
	s.Span = p.span(start)
	return s
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

// parseRuleDef parses RULE name WHEN condition and its attributes; a
// rule's new definition (ALTER RULE) does not take DISABLED.
func (p *parser) parseRuleDef(altered bool) *ast.RuleDef {
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
			if altered {
				p.error(p.pos, "ALTER RULE replaces a rule's condition, severity, priority and tags, and keeps it enabled or disabled: use DISABLE RULE")
			}
			p.next()
			r.Disabled = true
			continue
		}
		break
	}
	r.Span = p.span(start)
	return r
}

// parseAlterRuleset parses ALTER RULESET name and its change (see
// ast.AlterRuleset).
func (p *parser) parseAlterRuleset() *ast.AlterRuleset {
	start := p.pos
	p.next() // ALTER
	if !p.isWord("RULESET") {
		p.errorExpected(p.pos, "RULESET after ALTER")
	}
	p.next()
	a := &ast.AlterRuleset{Name: p.parseObjectName()}
	a.ActionPos = p.pos
	switch {
	case p.isWord("ADD"):
		a.Action = "ADD"
		p.next()
		a.Rule = p.parseRuleDef(false)
	case p.isWord("ALTER"):
		a.Action = "ALTER"
		p.next()
		a.Rule = p.parseRuleDef(true)
	case p.tok == token.DROP && p.peek(1) == token.EXCEPT:
		a.Action = "DROP EXCEPT"
		p.next()
		p.next()
	case p.tok == token.DROP && p.peekWord(1, "SUPPRESS"), p.tok == token.DROP && p.peekWord(1, "SHADOW"):
		p.next()
		a.Action = "DROP " + strings.ToUpper(p.lit)
		p.next()
	case p.tok == token.DROP, p.isWord("ENABLE"), p.isWord("DISABLE"):
		a.Action = "DROP"
		if p.tok != token.DROP {
			a.Action = strings.ToUpper(p.lit)
		}
		p.next()
		if !p.isWord("RULE") {
			if a.Action == "DROP" {
				p.errorExpected(p.pos, "RULE, EXCEPT, SUPPRESS or SHADOW after DROP")
			}
			p.errorExpected(p.pos, "RULE")
		}
		p.next()
		a.Target = p.parseIdent()
	case p.isWord("ROLLBACK"):
		a.Action = "ROLLBACK"
		p.next()
		p.expect(token.TO)
		a.Version, a.VersionPos = p.parseVersion()
	case p.tok == token.SET:
		p.next()
		switch {
		case p.isWord("MATCH"):
			a.Action = "SET MATCH"
			p.next()
			a.Match = p.parseRulesetMatch()
		case p.tok == token.EXCEPT:
			a.Action = "SET EXCEPT"
			p.next()
			p.expect(token.WHEN)
			a.Except = p.parseExpr()
		case p.isWord("SUPPRESS"):
			a.Action = "SET SUPPRESS"
			a.Suppress = p.parseSuppress()
		default:
			p.errorExpected(p.pos, "MATCH, EXCEPT WHEN or SUPPRESS BY after SET")
		}
	case p.isWord("SHADOW"):
		a.Action = "SHADOW"
		p.next()
		if p.isWord("VERSION") {
			a.Version, a.VersionPos = p.parseVersion()
		} else {
			if p.isWord("MATCH") {
				p.next()
				a.Match = p.parseRulesetMatch()
			}
			if p.got(token.EXCEPT) {
				p.expect(token.WHEN)
				a.Except = p.parseExpr()
			}
			if p.isWord("SUPPRESS") {
				a.Suppress = p.parseSuppress()
			}
			if p.tok != token.LPAREN {
				p.errorExpected(p.pos, "VERSION n or the shadow's rules, (RULE ..., ...), after SHADOW")
			}
			a.Rules = p.parseRuleList()
		}
		p.expect(token.INTO)
		a.Into = p.parseObjectName()
	case p.isWord("PROMOTE"):
		a.Action = "PROMOTE SHADOW"
		p.next()
		if !p.isWord("SHADOW") {
			p.errorExpected(p.pos, "SHADOW after PROMOTE")
		}
		p.next()
	default:
		p.errorExpected(p.pos, "ADD RULE, ALTER RULE, DROP RULE, ENABLE RULE, DISABLE RULE, SET, DROP, SHADOW, PROMOTE SHADOW or ROLLBACK TO VERSION n")
	}
	a.Span = p.span(start)
	return a
}

// parseVersion parses VERSION n.
func (p *parser) parseVersion() (int64, token.Pos) {
	if !p.isWord("VERSION") {
		p.errorExpected(p.pos, "VERSION")
	}
	p.next()
	pos := p.pos
	return p.parseCount("version number"), pos
}
