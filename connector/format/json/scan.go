package json

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects, so that hostile input
// cannot exhaust the stack.
const maxDepth = 1000

var errDepth = errors.New("JSON nesting is too deep")

// scanner is a cursor over one JSON record.
type scanner struct {
	data []byte
	pos  int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ws skips whitespace.
func (s *scanner) ws() {
	if s.pos < len(s.data) && s.data[s.pos] > ' ' {
		return
	}
	for s.pos < len(s.data) && isSpace(s.data[s.pos]) {
		s.pos++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// syntaxError describes malformed JSON at the cursor.
func (s *scanner) syntaxError(want string) error {
	if s.pos >= len(s.data) {
		return fmt.Errorf("invalid JSON: unexpected end of record, expected %s", want)
	}
	c := s.data[s.pos]
	if c < 0x20 || c >= 0x7f {
		return fmt.Errorf("invalid JSON at byte %d: unexpected byte 0x%02x, expected %s", s.pos, c, want)
	}
	return fmt.Errorf("invalid JSON at byte %d: unexpected %q, expected %s", s.pos, c, want)
}

// expect consumes byte c after optional whitespace.
func (s *scanner) expect(c byte, want string) error {
	if s.pos < len(s.data) && s.data[s.pos] == c { // the usual case: no space
		s.pos++
		return nil
	}
	if s.peek() != c {
		return s.syntaxError(want)
	}
	s.pos++
	return nil
}

// str scans a string whose opening quote is at the cursor. It returns the
// bounds of its raw contents (without quotes) and whether it holds escapes,
// leaving the cursor after the closing quote. Like most JSON readers in
// lenient mode it accepts raw control characters inside strings.
func (s *scanner) str() (start, end int, esc bool, err error) {
	start = s.pos + 1
	d := s.data
	// Strings are mostly short names and values: a plain loop does better
	// than bytes.IndexByte's call or an eight-bytes-at-a-time scan.
	for i := start; i < len(d); i++ {
		switch d[i] {
		case '"':
			s.pos = i + 1
			return start, i, esc, nil
		case '\\':
			esc = true
			i++
		}
	}
	s.pos = len(d)
	return 0, 0, false, errors.New("invalid JSON: unterminated string")
}

// skipStr moves the cursor, at a '"', past the string it opens, without
// looking at its contents: values that are skipped are often long (URLs,
// free text), where a search for the quote beats a loop over the bytes.
func (s *scanner) skipStr() error {
	d := s.data
	start := s.pos + 1
	for i := start; ; {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			s.pos = len(d)
			return errors.New("invalid JSON: unterminated string")
		}
		q := i + j
		k := q // an odd run of backslashes before it escapes the quote
		for k > start && d[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			s.pos = q + 1
			return nil
		}
		i = q + 1
	}
}

// unescape appends the decoded contents of the raw string src to dst.
func unescape(dst, src []byte) ([]byte, error) {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(src) {
			return dst, errors.New("invalid JSON: bad escape at end of string")
		}
		switch src[i] {
		case '"', '\\', '/':
			dst = append(dst, src[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(src[i+1:])
			if !ok {
				return dst, errors.New(`invalid JSON: bad \u escape`)
			}
			i += 4
			if r >= 0xd800 && r < 0xdc00 {
				// A high surrogate: pair it with the low one that follows.
				if i+6 < len(src) && src[i+1] == '\\' && src[i+2] == 'u' {
					if lo, ok := hex4(src[i+3:]); ok && lo >= 0xdc00 && lo < 0xe000 {
						r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xdc00 && r < 0xe000 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, fmt.Errorf("invalid JSON: bad escape '\\%c'", src[i])
		}
	}
	return dst, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number scans a JSON number at the cursor. It returns its end and whether
// it has a fraction or an exponent. On a malformed number the cursor is
// left at its start.
func (s *scanner) number() (end int, frac bool, ok bool) {
	d, i := s.data, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return 0, false, false
	}
	if i < len(d) && d[i] == '.' {
		frac = true
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			return 0, false, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		frac = true
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			return 0, false, false
		}
	}
	if i < len(d) && !isDelim(d[i]) {
		return 0, false, false
	}
	return i, frac, true
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ':' || isSpace(c)
}

// token returns the text from the cursor to the next delimiter, for error
// messages about a malformed scalar.
func (s *scanner) token() string {
	i := s.pos
	for i < len(s.data) && !isDelim(s.data[i]) && i-s.pos < 40 {
		i++
	}
	return string(s.data[s.pos:i])
}

// literal consumes the word lit (true, false, null) at the cursor.
func (s *scanner) literal(lit string) bool {
	end := s.pos + len(lit)
	if end > len(s.data) || string(s.data[s.pos:end]) != lit || (end < len(s.data) && !isDelim(s.data[end])) {
		return false
	}
	s.pos = end
	return true
}

// skip consumes one value of any kind, checking its syntax.
func (s *scanner) skip(depth int) error {
	switch c := s.peek(); c {
	case '"':
		return s.skipStr()
	case '{', '[':
		if depth >= maxDepth {
			return errDepth
		}
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		s.pos++
		if s.peek() == close {
			s.pos++
			return nil
		}
		for {
			if c == '{' {
				if s.peek() != '"' {
					return s.syntaxError("a field name")
				}
				if _, _, _, err := s.str(); err != nil {
					return err
				}
				if err := s.expect(':', "':'"); err != nil {
					return err
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case close:
				s.pos++
				return nil
			default:
				return s.syntaxError(fmt.Sprintf("',' or '%c'", close))
			}
		}
	case 't':
		if s.literal("true") {
			return nil
		}
	case 'f':
		if s.literal("false") {
			return nil
		}
	case 'n':
		if s.literal("null") {
			return nil
		}
	default:
		if end, _, ok := s.number(); ok {
			s.pos = end
			return nil
		}
		if c == '-' || c >= '0' && c <= '9' {
			return fmt.Errorf("invalid number %q", s.token())
		}
	}
	return s.syntaxError("a value")
}
