package expr

import (
	"fmt"
	"regexp"
	resyntax "regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/sluicesql/sluice/types"
)

// Pattern matching. LIKE and SIMILAR TO translate their patterns to
// regular expressions exactly as Flink (Calcite) does; LIKE patterns made
// only of literal text and '%' are matched without a regular expression.
// Patterns that are constants are prepared once, at Compile time; others are
// cached per Eval instance.
//
// Regular expressions (REGEXP, REGEXP_EXTRACT, REGEXP_REPLACE, SIMILAR TO)
// use Go's RE2 syntax, which is close to Java's: character classes,
// groups, alternation, quantifiers, anchors, \d \w \s and (?i) flags are the
// same. Not supported: backreferences (\1), look-ahead and look-behind,
// possessive quantifiers (a*+), atomic groups and Java's \p{Alpha}-style
// POSIX names (use [[:alpha:]]). RE2 matches in linear time.

// matcher reports whether a string matches a prepared pattern.
type matcher func(s string) bool

// likePlan is a LIKE pattern prepared for matching: its literal pieces
// between '%' when it has no '_' (matched byte-exactly, without a regular
// expression), else the anchored regular expression it translates to.
type likePlan struct {
	pieces []string       // when re is nil
	re     *regexp.Regexp // when the pattern has a '_'
	src    string         // re's source
}

// prepareLike parses a LIKE pattern with an optional escape character (0
// for none).
func prepareLike(pattern string, escape rune) (likePlan, error) {
	// Split into literal pieces around '%' if the pattern has no '_'.
	// Pieces keep the pattern's bytes, so that matching is byte-exact.
	var pieces []string
	var cur strings.Builder
	simple := true
	for i := 0; i < len(pattern); {
		r, w := utf8.DecodeRuneInString(pattern[i:])
		switch {
		case escape != 0 && r == escape:
			if i+w == len(pattern) {
				return likePlan{}, fmt.Errorf("invalid escape sequence in LIKE pattern '%s' at %d", pattern, utf8.RuneCountInString(pattern[:i]))
			}
			n, nw := utf8.DecodeRuneInString(pattern[i+w:])
			if n != '_' && n != '%' && n != escape {
				return likePlan{}, fmt.Errorf("invalid escape sequence in LIKE pattern '%s' at %d", pattern, utf8.RuneCountInString(pattern[:i]))
			}
			cur.WriteString(pattern[i+w : i+w+nw])
			i += w + nw
			continue
		case r == '%':
			pieces = append(pieces, cur.String())
			cur.Reset()
		case r == '_':
			simple = false
		default:
			cur.WriteString(pattern[i : i+w])
		}
		i += w
	}
	pieces = append(pieces, cur.String())
	if simple {
		return likePlan{pieces: pieces}, nil
	}
	src := "^(?:" + sqlToRegexLike([]rune(pattern), escape) + ")$"
	re, err := regexp.Compile(src)
	if err != nil {
		return likePlan{}, fmt.Errorf("cannot compile LIKE pattern '%s': %w", pattern, err)
	}
	return likePlan{re: re, src: src}, nil
}

// likeMatcher prepares a LIKE pattern with an optional escape character
// (0 for none).
func likeMatcher(pattern string, escape rune) (matcher, error) {
	lp, err := prepareLike(pattern, escape)
	if err != nil {
		return nil, err
	}
	if lp.re == nil {
		return percentMatcher(lp.pieces), nil
	}
	return lp.re.MatchString, nil
}

// percentMatcher matches literal pieces separated by '%'.
func percentMatcher(pieces []string) matcher {
	switch len(pieces) {
	case 1:
		lit := pieces[0]
		return func(s string) bool { return s == lit }
	case 2:
		pre, suf := pieces[0], pieces[1]
		switch {
		case suf == "":
			return func(s string) bool { return strings.HasPrefix(s, pre) }
		case pre == "":
			return func(s string) bool { return strings.HasSuffix(s, suf) }
		}
		return func(s string) bool {
			return len(s) >= len(pre)+len(suf) && strings.HasPrefix(s, pre) && strings.HasSuffix(s, suf)
		}
	case 3:
		if pieces[0] == "" && pieces[2] == "" {
			mid := pieces[1]
			return func(s string) bool { return strings.Contains(s, mid) }
		}
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	mids := pieces[1 : len(pieces)-1]
	return func(s string) bool {
		if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
			return false
		}
		rest := s[len(first) : len(s)-len(last)]
		for _, m := range mids {
			i := strings.Index(rest, m)
			if i < 0 {
				return false
			}
			rest = rest[i+len(m):]
		}
		return true
	}
}

// sqlToRegexLike translates a LIKE pattern as Calcite does: '_' is any
// character but a line terminator, '%' anything.
func sqlToRegexLike(p []rune, escape rune) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if escape != 0 && c == escape {
			b.WriteString(regexp.QuoteMeta(string(p[i+1])))
			i++
			continue
		}
		switch c {
		case '_':
			b.WriteString(".")
		case '%':
			b.WriteString("(?s:.*)")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

const similarSpecials = "[]()|^-+*_%?{}"

var posixClasses = []string{
	"[:ALPHA:]", "[:alpha:]", "[:alpha:]", "[:alpha:]",
	"[:UPPER:]", "[:upper:]", "[:upper:]", "[:upper:]",
	"[:LOWER:]", "[:lower:]", "[:lower:]", "[:lower:]",
	"[:DIGIT:]", `\d`, "[:digit:]", `\d`,
	"[:SPACE:]", " ", "[:space:]", " ",
	"[:WHITESPACE:]", `\s`, "[:whitespace:]", `\s`,
	"[:ALNUM:]", "[:alnum:]", "[:alnum:]", "[:alnum:]",
}

// sqlToRegexSimilar translates a SIMILAR TO pattern as Calcite does.
func sqlToRegexSimilar(pattern string, escape rune) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("invalid SIMILAR TO pattern '%s'", pattern)
	}
	p := []rune(pattern)
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if escape != 0 && c == escape {
			if i+1 == len(p) {
				return bad()
			}
			n := p[i+1]
			if strings.ContainsRune(similarSpecials, n) || n == escape {
				b.WriteString(regexp.QuoteMeta(string(n)))
			} else {
				return bad()
			}
			i++
			continue
		}
		if inClass {
			switch {
			case c == ']':
				b.WriteRune(']')
				inClass = false
			case c == '-' || c == '^':
				b.WriteRune(c)
			case c == '[' && i+1 < len(p) && p[i+1] == ':':
				found := false
				for j := 0; j < len(posixClasses); j += 2 {
					if strings.HasPrefix(string(p[i:]), posixClasses[j]) {
						b.WriteString(posixClasses[j+1])
						i += len([]rune(posixClasses[j])) - 1
						found = true
						break
					}
				}
				if !found {
					return bad()
				}
			case strings.ContainsRune(similarSpecials, c):
				return bad()
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
			continue
		}
		switch c {
		case '_':
			b.WriteString(".")
		case '%':
			b.WriteString("(?s:.*)")
		case '[':
			b.WriteRune('[')
			inClass = true
		case ']':
			return bad()
		case '\\':
			b.WriteString(`\\`)
		case '$':
			b.WriteString(`\$`)
		case '.':
			b.WriteString(`\.`)
		default:
			b.WriteRune(c)
		}
	}
	if inClass {
		return bad()
	}
	return b.String(), nil
}

// similarRegexp translates a SIMILAR TO pattern and compiles it, anchored
// at both ends; src is the compiled source.
func similarRegexp(pattern string, escape rune) (re *regexp.Regexp, src string, err error) {
	body, err := sqlToRegexSimilar(pattern, escape)
	if err != nil {
		return nil, "", err
	}
	src = "^(?:" + body + ")$"
	re, err = regexp.Compile(src)
	if err != nil {
		return nil, "", fmt.Errorf("cannot compile SIMILAR TO pattern '%s': %w", pattern, err)
	}
	return re, src, nil
}

func similarMatcher(pattern string, escape rune) (matcher, error) {
	re, _, err := similarRegexp(pattern, escape)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

func bindLike(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cString, cString), sig(cString, cString, cString)}
	for _, s := range sigs {
		if s.match(args) {
			return args, nullableIf(types.Boolean, args), nil
		}
	}
	return nil, types.Type{}, argError(name, args, sigs)
}

func escapeRune(v types.Value) (rune, error) {
	if v.IsNull() {
		return 0, nil
	}
	rs := []rune(v.Str())
	if len(rs) != 1 {
		return 0, fmt.Errorf("invalid escape character '%s': it must be one character", v.Str())
	}
	return rs[0], nil
}

func compileLike(c *compiler, call *Call) (triEval, error) {
	not := strings.HasPrefix(call.Name, "NOT ")
	similar := strings.HasSuffix(call.Name, "SIMILAR TO")
	prepare := func(pattern string, escape rune) (matcher, error) {
		if similar {
			return similarMatcher(pattern, escape)
		}
		return likeMatcher(pattern, escape)
	}
	x, err := c.compile(call.Args[0])
	if err != nil {
		return nil, err
	}
	pv, pconst := constArg(call, 1)
	ev, econst := types.NullValue, true
	if len(call.Args) > 2 {
		ev, econst = constArg(call, 2)
	}
	result := func(m bool) tri {
		return triOf(m != not)
	}
	if pconst && econst {
		if pv.IsNull() || (len(call.Args) > 2 && ev.IsNull()) {
			return c.nullTri(call.Args...)
		}
		esc, err := escapeRune(ev)
		if err != nil {
			return nil, err
		}
		m, err := prepare(pv.Str(), esc)
		if err != nil {
			return nil, err
		}
		if col, ok := call.Args[0].(*Column); ok {
			idx := col.Index
			return func(row []types.Value) (tri, error) {
				v := row[idx]
				if v.IsNull() {
					return triNull, nil
				}
				return result(m(v.Str())), nil
			}, nil
		}
		return func(row []types.Value) (tri, error) {
			v, err := x(row)
			if err != nil || v.IsNull() {
				return triNull, err
			}
			return result(m(v.Str())), nil
		}, nil
	}
	rest, err := c.compileAll(call.Args[1:])
	if err != nil {
		return nil, err
	}
	cache := newMatcherCache()
	return func(row []types.Value) (tri, error) {
		v, err := x(row)
		if err != nil || v.IsNull() {
			return triNull, err
		}
		p, err := rest[0](row)
		if err != nil || p.IsNull() {
			return triNull, err
		}
		var esc rune
		key := p.Str()
		if len(rest) > 1 {
			e, err := rest[1](row)
			if err != nil || e.IsNull() {
				return triNull, err
			}
			if esc, err = escapeRune(e); err != nil {
				return triNull, evalErr(call, err)
			}
			key = string(esc) + "\x00" + key
		}
		m, err := cache.get(key, func() (matcher, error) { return prepare(p.Str(), esc) })
		if err != nil {
			return triNull, evalErr(call, err)
		}
		return result(m(v.Str())), nil
	}, nil
}

// matcherCache keeps prepared patterns for patterns that are not constant.
// It is bounded: when full it starts over.
type matcherCache struct {
	m map[string]matcher
}

const maxCachedPatterns = 64

func newMatcherCache() *matcherCache { return &matcherCache{m: make(map[string]matcher)} }

func (c *matcherCache) get(key string, build func() (matcher, error)) (matcher, error) {
	if m, ok := c.m[key]; ok {
		return m, nil
	}
	m, err := build()
	if err != nil {
		return nil, err
	}
	if len(c.m) >= maxCachedPatterns {
		clear(c.m)
	}
	c.m[key] = m
	return m, nil
}

// regexCache caches compiled regular expressions for patterns that are not
// constant; bounded like matcherCache.
type regexCache struct {
	m map[string]*pattern
}

func newRegexCache() *regexCache { return &regexCache{m: make(map[string]*pattern)} }

func (c *regexCache) get(src string) (*pattern, error) {
	if re, ok := c.m[src]; ok {
		return re, nil
	}
	re, err := compilePattern(src)
	if err != nil {
		return nil, err
	}
	if len(c.m) >= maxCachedPatterns {
		clear(c.m)
	}
	c.m[src] = re
	return re, nil
}

// regexArg returns a function giving the compiled regular expression of
// argument i: compiled once when it is a constant, cached otherwise. A
// constant pattern that does not compile is an error; a non-constant one
// makes get return a nil Regexp (the function then returns NULL or FALSE,
// as Flink does).
func regexArg(c *compiler, call *Call, i int) (get func(v types.Value) *pattern, err error) {
	if v, ok := constArg(call, i); ok && !v.IsNull() {
		if c.check {
			// Parse fails where regexp.Compile does, with its error.
			if _, err := resyntax.Parse(v.Str(), resyntax.Perl); err != nil {
				return nil, fmt.Errorf("cannot compile regular expression '%s' in %s: %w", v.Str(), call.Name, err)
			}
			return func(types.Value) *pattern { return nil }, nil
		}
		re, err := compilePattern(v.Str())
		if err != nil {
			return nil, fmt.Errorf("cannot compile regular expression '%s' in %s: %w", v.Str(), call.Name, err)
		}
		return func(types.Value) *pattern { return re }, nil
	}
	cache := newRegexCache()
	return func(v types.Value) *pattern {
		re, err := cache.get(v.Str())
		if err != nil {
			return nil
		}
		return re
	}, nil
}
