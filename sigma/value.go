package sigma

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A pattern is a Sigma string value: literal text, the wildcards * and ?,
// and the places where the windash modifier lets any dash stand.
type pattern []chunk

type chunkKind uint8

const (
	chunkLit  chunkKind = iota // text
	chunkStar                  // *: any run of characters
	chunkOne                   // ?: one character
	chunkDash                  // windash: one of - / – — ―
)

type chunk struct {
	kind chunkKind
	text string // chunkLit
}

// dashes are the characters windash makes interchangeable: hyphen-minus,
// slash, en dash, em dash and horizontal bar.
const dashes = "-/\u2013\u2014\u2015"

// parseString reads a Sigma string: * and ? are wildcards; a backslash
// before *, ? or another backslash makes it plain; any other backslash is
// itself.
func parseString(s string) pattern {
	var p pattern
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p = append(p, chunk{kind: chunkLit, text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '*' || s[i+1] == '?' || s[i+1] == '\\') {
				lit.WriteByte(s[i+1])
				i++
			} else {
				lit.WriteByte(c)
			}
		case '*':
			flush()
			p = append(p, chunk{kind: chunkStar})
		case '?':
			flush()
			p = append(p, chunk{kind: chunkOne})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return p
}

// literal returns the pattern's text when it has no wildcard.
func (p pattern) literal() (string, bool) {
	var b strings.Builder
	for _, c := range p {
		if c.kind != chunkLit {
			return "", false
		}
		b.WriteString(c.text)
	}
	return b.String(), true
}

func (p pattern) startsWithStar() bool { return len(p) > 0 && p[0].kind == chunkStar }
func (p pattern) endsWithStar() bool   { return len(p) > 0 && p[len(p)-1].kind == chunkStar }

// withStars puts a * before and/or after the pattern, unless one is there.
func (p pattern) withStars(before, after bool) pattern {
	q := pattern{}
	if before && !p.startsWithStar() {
		q = append(q, chunk{kind: chunkStar})
	}
	q = append(q, p...)
	if after && !q.endsWithStar() {
		q = append(q, chunk{kind: chunkStar})
	}
	return q
}

// lower lower-cases the literal text, as SQL's LOWER does.
func (p pattern) lower() pattern {
	q := make(pattern, len(p))
	for i, c := range p {
		if c.kind == chunkLit {
			c.text = strings.ToLower(c.text)
		}
		q[i] = c
	}
	return q
}

// windash marks the dashes where a command-line flag begins: a dash
// (one of dashes) that is not preceded by a word character and is
// followed by one, within a run of literal text (as pySigma's \B[-/]\b,
// with all five dashes).
func (p pattern) windash() pattern {
	var q pattern
	for _, c := range p {
		if c.kind != chunkLit {
			q = append(q, c)
			continue
		}
		runes := []rune(c.text)
		start := 0
		for i, r := range runes {
			if !strings.ContainsRune(dashes, r) {
				continue
			}
			if (i > 0 && isWordRune(runes[i-1])) || i+1 >= len(runes) || !isWordRune(runes[i+1]) {
				continue
			}
			if i > start {
				q = append(q, chunk{kind: chunkLit, text: string(runes[start:i])})
			}
			q = append(q, chunk{kind: chunkDash})
			start = i + 1
		}
		if start < len(runes) {
			q = append(q, chunk{kind: chunkLit, text: string(runes[start:])})
		}
	}
	return q
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// likeForm returns the pattern as a LIKE pattern, and whether it needs
// ESCAPE '\'; ok is false when LIKE cannot say it exactly (windash
// places, and ? — LIKE's _ does not match a line break).
func (p pattern) likeForm() (like string, escape, ok bool) {
	var b strings.Builder
	for _, c := range p {
		switch c.kind {
		case chunkStar:
			b.WriteByte('%')
		case chunkLit:
			if strings.ContainsAny(c.text, "%_") {
				escape = true
			}
		default:
			return "", false, false
		}
	}
	b.Reset()
	for _, c := range p {
		if c.kind == chunkStar {
			b.WriteByte('%')
			continue
		}
		for i := 0; i < len(c.text); i++ {
			if ch := c.text[i]; escape && (ch == '%' || ch == '_' || ch == '\\') {
				b.WriteByte('\\')
			}
			b.WriteByte(c.text[i])
		}
	}
	return b.String(), escape, true
}

// regexForm returns the pattern as an RE2 expression that matches the
// whole value, and whether its dots must match line breaks ((?s)).
func (p pattern) regexForm() (re string, dotall bool) {
	var b strings.Builder
	q := p
	if q.startsWithStar() {
		q = q[1:]
	} else {
		b.WriteByte('^')
	}
	end := "$"
	if q.endsWithStar() {
		q, end = q[:len(q)-1], ""
	}
	for _, c := range q {
		switch c.kind {
		case chunkLit:
			b.WriteString(regexp.QuoteMeta(c.text))
		case chunkStar:
			b.WriteString(".*")
			dotall = true
		case chunkOne:
			b.WriteByte('.')
			dotall = true
		case chunkDash:
			b.WriteString(`[\-/\x{2013}\x{2014}\x{2015}]`)
		}
	}
	b.WriteString(end)
	return b.String(), dotall
}

// matchesAll reports whether the pattern is * alone (any value).
func (p pattern) matchesAll() bool { return len(p) == 1 && p[0].kind == chunkStar }

// valueKind is what a field test compares the field with.
type valueKind uint8

const (
	valString   valueKind = iota // pat (a number or boolean as text too; num/boolean keep what it was)
	valRegex                     // re, with reFlags
	valCIDR                      // prefix
	valNull                      // field: null
	valExists                    // exists: the field is (not) there
	valCompare                   // op num: lt, lte, gt, gte
	valFieldRef                  // ref: another field
)

// value is one value of a field test, after its modifiers.
type value struct {
	kind    valueKind
	pat     pattern
	cased   bool
	num     string // the number, when the value was one (valString, valCompare)
	boolean string // "TRUE" or "FALSE", when the value was a boolean
	re      string
	reFlags string // of i, m, s
	prefix  netip.Prefix
	exists  bool
	op      string                               // valCompare: < <= > >=
	ref     string                               // valFieldRef: the field
	refPos  struct{ starBefore, starAfter bool } // valFieldRef: contains, startswith, endswith
	part    string                               // a time part (HOUR, ...) of the field to compare, "" for the field
}

// modifierNames lists the modifiers known, for suggestions.
var modifierNames = []string{"contains", "startswith", "endswith", "all", "base64", "base64offset",
	"wide", "utf16le", "utf16be", "utf16", "windash", "re", "i", "m", "s", "cidr", "cased", "exists",
	"lt", "lte", "gt", "gte", "neq", "expand", "fieldref", "minute", "hour", "day", "week", "month", "year"}

var timeParts = map[string]string{"minute": "MINUTE", "hour": "HOUR", "day": "DAY", "week": "WEEK", "month": "MONTH", "year": "YEAR"}

var placeholderName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// scalar is a YAML scalar of a rule: its text and YAML type.
type scalar struct {
	text string
	tag  string // !!str, !!int, !!float, !!bool, !!null
}

// applyModifiers turns one scalar into the values it stands for (more
// than one when a modifier expands it: base64offset, expand), applying
// mods in order.
func applyModifiers(s scalar, mods []string, placeholders map[string][]string) ([]value, error) {
	var v value
	switch s.tag {
	case "!!null":
		v = value{kind: valNull}
	case "!!int", "!!float":
		v = value{kind: valString, pat: pattern{{kind: chunkLit, text: s.text}}}
		v.num, _ = sqlNumber(s.text)
	case "!!bool":
		b := "FALSE"
		if strings.EqualFold(s.text, "true") {
			b = "TRUE"
		}
		v = value{kind: valString, pat: pattern{{kind: chunkLit, text: strings.ToLower(b)}}, boolean: b}
	default:
		v = value{kind: valString, pat: parseString(s.text)}
		if t, ok := v.pat.literal(); ok && t == s.text {
			v.num, _ = sqlNumber(t)
		}
	}
	vals := []value{v}
	for i, m := range mods {
		var next []value
		for _, v := range vals {
			out, err := applyModifier(m, i, v, s, placeholders)
			if err != nil {
				return nil, err
			}
			next = append(next, out...)
			if len(next) > maxExpansion {
				return nil, fmt.Errorf("the modifiers make more than %d values of one", maxExpansion)
			}
		}
		size := 0
		for _, v := range next {
			for _, c := range v.pat {
				size += len(c.text)
			}
		}
		if size > maxValueLen*4 {
			return nil, fmt.Errorf("the modifiers make values of more than %d bytes of one", maxValueLen*4)
		}
		vals = next
	}
	return vals, nil
}

// applyModifier applies modifier m (the i-th) to v, made from s.
func applyModifier(m string, i int, v value, s scalar, placeholders map[string][]string) ([]value, error) {
	one := func(v value) ([]value, error) { return []value{v}, nil }
	needString := func() error {
		if v.kind != valString {
			return fmt.Errorf("the %s modifier applies to strings", m)
		}
		return nil
	}
	plain := func() (string, error) {
		if err := needString(); err != nil {
			return "", err
		}
		t, ok := v.pat.literal()
		if !ok {
			return "", fmt.Errorf("the %s modifier needs a value without wildcards", m)
		}
		return t, nil
	}
	switch m {
	case "all", "neq":
		return one(v) // on the test, not the value
	case "contains", "startswith", "endswith":
		// startswith anchors the value's start, endswith its end,
		// contains neither.
		start, end := m == "startswith", m == "endswith"
		switch v.kind {
		case valString:
			v.pat = v.pat.withStars(!start, !end)
			v.num, v.boolean = "", ""
		case valRegex:
			// REGEXP finds the expression anywhere in the value.
			if start && !strings.HasPrefix(v.re, "^") {
				v.re = "^(?:" + v.re + ")"
			}
			if end && !strings.HasSuffix(v.re, "$") {
				v.re = "(?:" + v.re + ")$"
			}
		case valFieldRef:
			v.refPos.starBefore = v.refPos.starBefore || !start
			v.refPos.starAfter = v.refPos.starAfter || !end
		default:
			return nil, fmt.Errorf("the %s modifier applies to strings, regular expressions and field references", m)
		}
		return one(v)
	case "base64", "base64offset", "wide", "utf16le", "utf16be", "utf16":
		t, err := plain()
		if err != nil {
			return nil, err
		}
		if len(t) > maxValueLen {
			return nil, fmt.Errorf("the value is longer than %d bytes", maxValueLen)
		}
		var outs []string
		switch m {
		case "base64":
			outs = []string{base64.StdEncoding.EncodeToString([]byte(t))}
		case "base64offset":
			outs = base64Offsets(t)
		default:
			outs = []string{encodeUTF16(t, m)}
		}
		// Base64 text is matched with its case: a letter of another case
		// encodes other bytes.
		cased := v.cased || m == "base64" || m == "base64offset"
		var vals []value
		for _, o := range outs {
			vals = append(vals, value{kind: valString, pat: pattern{{kind: chunkLit, text: o}}, cased: cased})
		}
		return vals, nil
	case "windash":
		if err := needString(); err != nil {
			return nil, err
		}
		v.pat = v.pat.windash()
		return one(v)
	case "re":
		if i != 0 {
			return nil, fmt.Errorf("the re modifier must come first")
		}
		if s.tag == "!!null" {
			return nil, fmt.Errorf("the re modifier needs a regular expression, not null")
		}
		return one(value{kind: valRegex, re: s.text})
	case "i", "m", "s":
		if v.kind != valRegex {
			return nil, fmt.Errorf("the %s modifier follows re", m)
		}
		if !strings.Contains(v.reFlags, m) {
			v.reFlags += m
		}
		return one(v)
	case "cidr":
		if i != 0 {
			return nil, fmt.Errorf("the cidr modifier must come first")
		}
		p, err := netip.ParsePrefix(strings.TrimSpace(s.text))
		if err != nil {
			if a, aerr := netip.ParseAddr(strings.TrimSpace(s.text)); aerr == nil {
				p = netip.PrefixFrom(a, a.BitLen())
			} else {
				return nil, fmt.Errorf("%q is not a CIDR range: %v", s.text, err)
			}
		}
		return one(value{kind: valCIDR, prefix: p.Masked()})
	case "cased":
		if err := needString(); err != nil {
			return nil, err
		}
		v.cased = true
		return one(v)
	case "exists":
		if s.tag != "!!bool" {
			return nil, fmt.Errorf("the exists modifier takes true or false, not %q", s.text)
		}
		return one(value{kind: valExists, exists: strings.EqualFold(s.text, "true")})
	case "lt", "lte", "gt", "gte":
		if v.num == "" {
			return nil, fmt.Errorf("the %s modifier compares with a number, not %q", m, s.text)
		}
		v.kind, v.op = valCompare, map[string]string{"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}[m]
		return one(v)
	case "minute", "hour", "day", "week", "month", "year":
		if v.num == "" && v.kind != valCompare {
			return nil, fmt.Errorf("the %s modifier compares with a number, not %q", m, s.text)
		}
		v.part = timeParts[m]
		return one(v)
	case "expand":
		if err := needString(); err != nil {
			return nil, err
		}
		pats, err := expandPlaceholders(v.pat, placeholders)
		if err != nil {
			return nil, err
		}
		var vals []value
		for _, p := range pats {
			w := v
			w.pat, w.num, w.boolean = p, "", ""
			vals = append(vals, w)
		}
		return vals, nil
	case "fieldref":
		if i != 0 {
			return nil, fmt.Errorf("the fieldref modifier must come first")
		}
		if s.tag != "!!str" || s.text == "" {
			return nil, fmt.Errorf("the fieldref modifier takes a field name")
		}
		return one(value{kind: valFieldRef, ref: s.text})
	}
	return nil, fmt.Errorf("unknown modifier %q%s", m, hint(m, modifierNames))
}

// base64Offsets returns the three texts base64 gives for t wherever it
// sits in an encoded string (at an offset of 0, 1 or 2 bytes modulo 3),
// each without the characters that depend on the bytes around t.
func base64Offsets(t string) []string {
	starts := [3]int{0, 2, 3}
	var out []string
	for i := range 3 {
		enc := base64.StdEncoding.EncodeToString(append([]byte(strings.Repeat(" ", i)), t...))
		// Trailing characters mixed with the next bytes: none when the
		// shifted text ends on a 3-byte boundary, else the last 2 or 3
		// (the padding and the partial character).
		end := len(enc)
		switch (len(t) + i) % 3 {
		case 1:
			end -= 3
		case 2:
			end -= 2
		}
		if starts[i] < end {
			out = append(out, enc[starts[i]:end])
		}
	}
	return out
}

// encodeUTF16 encodes t as UTF-16, little endian for wide and utf16le,
// big endian for utf16be, little endian after a byte order mark for
// utf16.
func encodeUTF16(t, m string) string {
	var b []byte
	if m == "utf16" {
		b = append(b, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(t)) {
		if m == "utf16be" {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

// expandPlaceholders replaces each %name% of the pattern's literal text
// by each of the placeholder's values (Sigma strings themselves).
func expandPlaceholders(p pattern, placeholders map[string][]string) ([]pattern, error) {
	out := []pattern{{}}
	for _, c := range p {
		if c.kind != chunkLit {
			for i := range out {
				out[i] = append(out[i], c)
			}
			continue
		}
		text := c.text
		for text != "" {
			i := strings.IndexByte(text, '%')
			j := -1
			if i >= 0 {
				j = strings.IndexByte(text[i+1:], '%')
			}
			if i < 0 || j < 0 || !placeholderName.MatchString(text[i+1:i+1+j]) {
				for k := range out {
					out[k] = append(out[k], chunk{kind: chunkLit, text: text})
				}
				break
			}
			if i > 0 {
				for k := range out {
					out[k] = append(out[k], chunk{kind: chunkLit, text: text[:i]})
				}
			}
			name := text[i+1 : i+1+j]
			vals, ok := placeholders[name]
			if !ok {
				known := make([]string, 0, len(placeholders))
				for k := range placeholders {
					known = append(known, k)
				}
				return nil, fmt.Errorf("the placeholder %%%s%% has no values in the mapping's placeholders%s", name, hint(name, known))
			}
			if len(vals) == 0 {
				return nil, fmt.Errorf("the placeholder %%%s%% has an empty list of values", name)
			}
			if len(out)*len(vals) > maxExpansion {
				return nil, fmt.Errorf("the placeholders expand into more than %d values", maxExpansion)
			}
			var next []pattern
			for _, o := range out {
				for _, v := range vals {
					next = append(next, append(append(pattern{}, o...), parseString(v)...))
				}
			}
			out = next
			text = text[i+2+j:]
		}
	}
	return out, nil
}

// sqlNumber returns text, a YAML number (0x1F, 1_000, 2.5e3), as a SQL
// numeric literal.
func sqlNumber(text string) (string, bool) {
	t := strings.ReplaceAll(strings.TrimSpace(text), "_", "")
	base := 10 // a leading 0 is not octal
	if l := strings.ToLower(strings.TrimLeft(t, "+-")); strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0o") || strings.HasPrefix(l, "0b") {
		base = 0
	}
	if i, err := strconv.ParseInt(t, base, 64); err == nil {
		return strconv.FormatInt(i, 10), true
	}
	if u, err := strconv.ParseUint(t, base, 64); err == nil {
		return strconv.FormatUint(u, 10), true
	}
	if decimalRE.MatchString(t) {
		return t, true
	}
	return "", false
}

var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// maxExpansion bounds the values one value may expand into, and
// maxValueLen the length of a value an encoding modifier encodes (each
// makes it longer, and they may be chained).
const (
	maxExpansion = 10000
	maxValueLen  = 1 << 16
)

// checkRegex checks that re, a Sigma regular expression, means the same
// in RE2 (Go's regexp, which REGEXP uses), and says what to do if not.
func checkRegex(re string) error {
	for _, c := range []struct{ seq, what string }{
		{"(?=", "lookahead"}, {"(?!", "negative lookahead"}, {"(?<=", "lookbehind"}, {"(?<!", "negative lookbehind"},
		{"(?>", "an atomic group"}, {"(?#", "a comment"}, {"(?x", "extended mode"}, {"(?|", "a branch reset group"},
	} {
		if strings.Contains(re, c.seq) {
			return fmt.Errorf("the regular expression %q uses %s (%s), which RE2 does not have", re, c.what, c.seq)
		}
	}
	if _, err := syntax.Parse(re, syntax.Perl); err != nil {
		var why string
		if se, ok := err.(*syntax.Error); ok {
			why = describeRE2Error(se)
		}
		return fmt.Errorf("the regular expression %q is not RE2: %v%s", re, err, why)
	}
	if !utf8.ValidString(re) {
		return fmt.Errorf("the regular expression %q is not valid UTF-8", re)
	}
	return nil
}

func describeRE2Error(e *syntax.Error) string {
	switch {
	case e.Code == syntax.ErrInvalidEscape && regexp.MustCompile(`^\\[1-9]`).MatchString(e.Expr):
		return " (a backreference, which RE2 does not have)"
	case e.Code == syntax.ErrInvalidEscape && (e.Expr == `\Z` || e.Expr == `\G` || e.Expr == `\R` || e.Expr == `\h` || e.Expr == `\K`):
		return " (a PCRE escape RE2 does not have)"
	case e.Code == syntax.ErrInvalidRepeatOp || e.Code == syntax.ErrInvalidRepeatSize:
		return " (possessive quantifiers such as a*+ and repeats over 1000 are not RE2)"
	}
	return ""
}
