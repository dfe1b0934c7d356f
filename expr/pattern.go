package expr

import (
	"regexp"
	resyntax "regexp/syntax"
	"strings"
	"unicode/utf8"
)

// pattern is a compiled regular expression of REGEXP, REGEXP_EXTRACT and
// REGEXP_REPLACE, with a literal that every match contains: a string
// without it cannot match, which strings.Contains tells much faster than
// running the expression (most rows of a rule's filter do not match).
type pattern struct {
	*regexp.Regexp
	must string // "" when no literal is required
}

// compilePattern compiles src as regexp.Compile does.
func compilePattern(src string) (*pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	p := &pattern{Regexp: re}
	if tree, err := resyntax.Parse(src, resyntax.Perl); err == nil {
		p.must = requiredLiteral(tree)
	}
	return p, nil
}

// requiredLiteral returns the longest literal that every string matching
// r contains, or "". Case-folded literals and ones holding U+FFFD (which
// also matches invalid UTF-8) are not used.
func requiredLiteral(r *resyntax.Regexp) string {
	switch r.Op {
	case resyntax.OpLiteral:
		if r.Flags&resyntax.FoldCase != 0 {
			return ""
		}
		s := string(r.Rune)
		if strings.ContainsRune(s, utf8.RuneError) {
			return ""
		}
		return s
	case resyntax.OpCapture, resyntax.OpPlus:
		return requiredLiteral(r.Sub[0])
	case resyntax.OpRepeat:
		if r.Min >= 1 {
			return requiredLiteral(r.Sub[0])
		}
	case resyntax.OpConcat:
		best := ""
		for _, sub := range r.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// cannotMatch reports whether s lacks the required literal.
func (p *pattern) cannotMatch(s string) bool {
	return p.must != "" && !strings.Contains(s, p.must)
}

// MatchString is regexp.MatchString, after the literal check.
func (p *pattern) MatchString(s string) bool {
	return !p.cannotMatch(s) && p.Regexp.MatchString(s)
}

// FindStringSubmatchIndex is regexp.FindStringSubmatchIndex, after the
// literal check.
func (p *pattern) FindStringSubmatchIndex(s string) []int {
	if p.cannotMatch(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatchIndex(s)
}

// ReplaceAllLiteralString is regexp.ReplaceAllLiteralString, after the
// literal check.
func (p *pattern) ReplaceAllLiteralString(src, repl string) string {
	if p.cannotMatch(src) {
		return src
	}
	return p.Regexp.ReplaceAllLiteralString(src, repl)
}
