package expr

import (
	"regexp"
	resyntax "regexp/syntax"
	"slices"
	"strings"
	"unicode"
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
	if l := requiredLits(r, false, 1); len(l) == 1 {
		return l[0].s
	}
	return ""
}

// reqLit is a literal that a match contains. A folded one is lower-case
// ASCII and stands for every string equal to it under ASCII case folding.
type reqLit struct {
	s    string
	fold bool
}

// requiredLits returns literals one of which every string matching r
// contains (nil when there are none): the best such set by litsScore, of
// at most maxAlts literals (alternations give several). Case-folded
// literals are used only when fold is set, and then only their ASCII runs
// (see foldRun). Runs holding U+FFFD are cut there: the regular
// expression's U+FFFD also matches each byte of invalid UTF-8.
func requiredLits(r *resyntax.Regexp, fold bool, maxAlts int) []reqLit {
	switch r.Op {
	case resyntax.OpLiteral:
		if r.Flags&resyntax.FoldCase != 0 {
			if !fold {
				return nil
			}
			if s := foldRun(r.Rune); s != "" {
				return []reqLit{{s: s, fold: true}}
			}
			return nil
		}
		best, start := "", 0
		for i := 0; i <= len(r.Rune); i++ {
			if i == len(r.Rune) || r.Rune[i] == utf8.RuneError {
				if i-start > utf8.RuneCountInString(best) {
					best = string(r.Rune[start:i])
				}
				start = i + 1
			}
		}
		if best == "" {
			return nil
		}
		return []reqLit{{s: best}}
	case resyntax.OpCapture, resyntax.OpPlus:
		return requiredLits(r.Sub[0], fold, maxAlts)
	case resyntax.OpRepeat:
		if r.Min >= 1 {
			return requiredLits(r.Sub[0], fold, maxAlts)
		}
	case resyntax.OpConcat:
		var best []reqLit
		for _, sub := range r.Sub {
			if l := requiredLits(sub, fold, maxAlts); litsScore(l) > litsScore(best) {
				best = l
			}
		}
		return best
	case resyntax.OpAlternate:
		if maxAlts < 2 {
			return nil
		}
		var out []reqLit
		for _, sub := range r.Sub {
			l := requiredLits(sub, fold, maxAlts)
			if l == nil {
				return nil
			}
			for _, x := range l {
				if !slices.Contains(out, x) {
					out = append(out, x)
				}
			}
			if len(out) > maxAlts {
				return nil
			}
		}
		return out
	}
	return nil
}

// requiredClauses returns sets of literals every string matching r
// contains one of, each set as requiredLits makes it: a conjunction of
// disjunctions, best first, at most maxClauses of them.
func requiredClauses(r *resyntax.Regexp, fold bool, maxAlts, maxClauses int) [][]reqLit {
	var out [][]reqLit
	switch r.Op {
	case resyntax.OpCapture, resyntax.OpPlus:
		return requiredClauses(r.Sub[0], fold, maxAlts, maxClauses)
	case resyntax.OpRepeat:
		if r.Min >= 1 {
			return requiredClauses(r.Sub[0], fold, maxAlts, maxClauses)
		}
		return nil
	case resyntax.OpConcat:
		for _, sub := range r.Sub {
		next:
			for _, c := range requiredClauses(sub, fold, maxAlts, maxClauses) {
				for _, o := range out {
					if slices.Equal(o, c) {
						continue next
					}
				}
				out = append(out, c)
			}
		}
	default:
		if l := requiredLits(r, fold, maxAlts); l != nil {
			out = [][]reqLit{l}
		}
	}
	slices.SortStableFunc(out, func(a, b []reqLit) int { return litsScore(b) - litsScore(a) })
	if len(out) > maxClauses {
		out = out[:maxClauses]
	}
	return out
}

// litsScore rates a set of required literals as a filter: its shortest
// literal's length, a folded one counting a little less.
func litsScore(l []reqLit) int {
	if len(l) == 0 {
		return 0
	}
	best := -1
	for _, x := range l {
		v := 2 * len(x.s)
		if x.fold {
			v--
		}
		if best < 0 || v < best {
			best = v
		}
	}
	return best
}

// foldRun returns the longest run of ASCII characters of a case-folded
// literal, lower-cased. Every match holds that run up to ASCII case, but
// for the few ASCII letters with a non-ASCII case variant (k and the
// Kelvin sign, s and the long s): see foldUnsafe.
func foldRun(rs []rune) string {
	best, start := 0, 0
	bestAt := 0
	for i := 0; i <= len(rs); i++ {
		if i == len(rs) || rs[i] >= utf8.RuneSelf {
			if i-start > best {
				best, bestAt = i-start, start
			}
			start = i + 1
		}
	}
	b := make([]byte, best)
	for i, r := range rs[bestAt : bestAt+best] {
		b[i] = lowerASCII(byte(r))
	}
	return string(b)
}

// lowerASCII lower-cases an ASCII letter and leaves other bytes alone.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldUnsafe marks the ASCII characters that a case-insensitive regular
// expression also matches with a non-ASCII character (k: U+212A KELVIN
// SIGN; s: U+017F LATIN SMALL LETTER LONG S), computed from Unicode's
// simple case folding, which Go's regexp uses.
var foldUnsafe = func() (t [utf8.RuneSelf]bool) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				t[lowerASCII(byte(c))] = true
			}
		}
	}
	return t
}()

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
