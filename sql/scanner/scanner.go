package scanner

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicesql/sluice/sql/token"
)

// ErrorHandler is called for every error the scanner finds.
type ErrorHandler func(pos token.Position, msg string)

// Mode controls the scanner's behaviour.
type Mode uint

// The scanner modes.
const (
	ScanComments Mode = 1 << iota // return comments as COMMENT tokens
)

// Scanner holds the state of a scan over one source text. Initialise it
// with Init; the zero value is not usable.
type Scanner struct {
	file *token.File
	src  []byte
	// text is src as a string: literals are slices of it, not copies (a
	// rule set has hundreds of thousands of tokens).
	text string
	err  ErrorHandler
	mode Mode

	// hint is the offset of the '/*+' of the hint being scanned, or -1
	// outside hints.
	hint int

	ch       rune // current character; -1 at the end
	offset   int  // offset of ch
	rdOffset int  // offset after ch

	// ErrorCount is the number of errors reported.
	ErrorCount int
}

const bom = 0xFEFF

// Init prepares s to scan file's source. Errors go to err, which may be nil.
func (s *Scanner) Init(file *token.File, err ErrorHandler, mode Mode) {
	s.file = file
	s.src = file.Source()
	s.text = string(s.src)
	s.err = err
	s.mode = mode
	s.ch = ' '
	s.offset = 0
	s.rdOffset = 0
	s.ErrorCount = 0
	s.hint = -1
	s.next()
	if s.ch == bom {
		s.next()
	}
}

func (s *Scanner) next() {
	if s.rdOffset >= len(s.src) {
		s.offset = len(s.src)
		s.ch = -1
		return
	}
	s.offset = s.rdOffset
	r, w := rune(s.src[s.rdOffset]), 1
	if r >= utf8.RuneSelf {
		r, w = utf8.DecodeRune(s.src[s.rdOffset:])
		if r == utf8.RuneError && w == 1 {
			s.error(s.offset, "illegal UTF-8 encoding")
		}
	}
	s.rdOffset += w
	s.ch = r
}

func (s *Scanner) peek() byte {
	if s.rdOffset < len(s.src) {
		return s.src[s.rdOffset]
	}
	return 0
}

func (s *Scanner) error(offset int, msg string) {
	if s.err != nil {
		s.err(s.file.Position(token.PosOf(offset)), msg)
	}
	s.ErrorCount++
}

func isLetter(ch rune) bool {
	return 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || ch == '_' ||
		ch >= utf8.RuneSelf && unicode.IsLetter(ch)
}

func isDigit(ch rune) bool { return '0' <= ch && ch <= '9' }

func isIdentChar(ch rune) bool {
	return isLetter(ch) || isDigit(ch) || ch == '$' || ch >= utf8.RuneSelf && unicode.IsDigit(ch)
}

func isHex(ch rune) bool {
	return isDigit(ch) || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
}

func (s *Scanner) skipWhitespace() {
	for s.ch == ' ' || s.ch == '\t' || s.ch == '\n' || s.ch == '\r' || s.ch == '\f' {
		s.next()
	}
}

// Scan returns the next token: its position, kind and literal text. At the
// end of the source it returns EOF. Comments are skipped unless the mode
// asks for them.
func (s *Scanner) Scan() (pos token.Pos, tok token.Token, lit string) {
scanAgain:
	s.skipWhitespace()
	start := s.offset
	pos = token.PosOf(start)
	ch := s.ch
	switch {
	case ch == -1:
		if s.hint >= 0 {
			s.error(s.hint, "hint not terminated: a hint /*+ ... */ ends with */")
			s.hint = -1
		}
		return pos, token.EOF, ""
	case (ch == 'x' || ch == 'X') && s.peek() == '\'':
		s.next()
		return pos, token.HEX, s.scanHex(start)
	case isLetter(ch):
		for isIdentChar(s.ch) {
			s.next()
		}
		lit = s.text[start:s.offset]
		return pos, token.Lookup(lit), lit
	case isDigit(ch) || ch == '.' && isDigit(rune(s.peek())):
		tok, lit = s.scanNumber(start)
		return pos, tok, lit
	}
	s.next()
	switch ch {
	case '\'':
		return pos, token.STRING, s.scanString(start)
	case '`':
		return pos, token.QIDENT, s.scanQuoted(start)
	case '"':
		s.error(start, `unexpected '"': write 'text' for a string and `+"`name`"+` for a quoted identifier`)
		s.skipQuoted('"')
		return pos, token.ILLEGAL, s.text[start:s.offset]
	case '-':
		if s.ch == '-' {
			s.skipLineComment()
			if s.mode&ScanComments != 0 {
				return pos, token.COMMENT, s.text[start:s.offset]
			}
			goto scanAgain
		}
		return pos, token.SUB, "-"
	case '/':
		if s.ch == '*' && s.peek() == '+' && s.hint < 0 {
			// A hint, as in Flink (Calcite): its content is tokens,
			// read by the parser where hints belong.
			s.next()
			s.next()
			s.hint = start
			return pos, token.HINTBEG, "/*+"
		}
		if s.ch == '*' {
			s.next()
			s.skipBlockComment(start)
			if s.mode&ScanComments != 0 {
				return pos, token.COMMENT, s.text[start:s.offset]
			}
			goto scanAgain
		}
		return pos, token.QUO, "/"
	case '=':
		if s.ch == '>' {
			s.next()
			return pos, token.ARROW, "=>"
		}
		return pos, token.EQ, "="
	case '<':
		switch s.ch {
		case '=':
			s.next()
			return pos, token.LEQ, "<="
		case '>':
			s.next()
			return pos, token.NEQ, "<>"
		}
		return pos, token.LT, "<"
	case '>':
		if s.ch == '=' {
			s.next()
			return pos, token.GEQ, ">="
		}
		return pos, token.GT, ">"
	case '!':
		if s.ch == '=' {
			s.next()
			return pos, token.NEQ, "!="
		}
	case '|':
		if s.ch == '|' {
			s.next()
			return pos, token.CONCAT, "||"
		}
	case ':':
		if s.ch == ':' {
			s.next()
			return pos, token.DCOLON, "::"
		}
	case '+':
		return pos, token.ADD, "+"
	case '*':
		if s.hint >= 0 && s.ch == '/' {
			s.next()
			s.hint = -1
			return pos, token.HINTEND, "*/"
		}
		return pos, token.MUL, "*"
	case '%':
		return pos, token.REM, "%"
	case '.':
		return pos, token.PERIOD, "."
	case ',':
		return pos, token.COMMA, ","
	case ';':
		return pos, token.SEMICOLON, ";"
	case '(':
		return pos, token.LPAREN, "("
	case ')':
		return pos, token.RPAREN, ")"
	case '[':
		return pos, token.LBRACK, "["
	case ']':
		return pos, token.RBRACK, "]"
	}
	lit = s.text[start:s.offset]
	if ch == bom {
		s.error(start, "illegal byte order mark")
	} else if ch != utf8.RuneError {
		s.error(start, fmt.Sprintf("illegal character %q", ch))
	}
	return pos, token.ILLEGAL, lit
}

func (s *Scanner) skipLineComment() {
	for s.ch != '\n' && s.ch != -1 {
		s.next()
	}
}

func (s *Scanner) skipBlockComment(start int) {
	for {
		switch s.ch {
		case -1:
			s.error(start, "comment not terminated")
			return
		case '*':
			s.next()
			if s.ch == '/' {
				s.next()
				return
			}
		default:
			s.next()
		}
	}
}

// scanNumber scans 123, 1.5, .5, 1., 1e10, 1.5E-3. An exponent makes the
// number approximate (FLOAT); a decimal point without one makes it DECIMAL.
func (s *Scanner) scanNumber(start int) (token.Token, string) {
	tok := token.INT
	for isDigit(s.ch) {
		s.next()
	}
	if s.ch == '.' {
		tok = token.DECIMAL
		s.next()
		for isDigit(s.ch) {
			s.next()
		}
	}
	if s.ch == 'e' || s.ch == 'E' {
		p := s.peek()
		p2 := byte(0)
		if s.rdOffset+1 < len(s.src) {
			p2 = s.src[s.rdOffset+1]
		}
		if isDigit(rune(p)) || (p == '+' || p == '-') && isDigit(rune(p2)) {
			tok = token.FLOAT
			s.next()
			if s.ch == '+' || s.ch == '-' {
				s.next()
			}
			for isDigit(s.ch) {
				s.next()
			}
		}
	}
	return tok, s.text[start:s.offset]
}

// scanString scans the rest of a '...' literal whose quote is at start.
func (s *Scanner) scanString(start int) string {
	lit, _ := s.scanDelimited(start, '\'', "string literal not terminated")
	return lit
}

// scanDelimited scans the rest of a literal whose opening delimiter q is
// at start, up to the closing one (closed is false when the source ends
// first); a doubled q stands for one. Without a doubled q the text is a
// slice of the source.
func (s *Scanner) scanDelimited(start int, q rune, unterminated string) (lit string, closed bool) {
	var b strings.Builder
	doubled := false
	from := s.offset
	for {
		switch s.ch {
		case -1:
			s.error(start, unterminated)
			if !doubled {
				return s.text[from:s.offset], false
			}
			b.WriteString(s.text[from:s.offset])
			return b.String(), false
		case q:
			end := s.offset
			s.next()
			if s.ch != q {
				if !doubled {
					return s.text[from:end], true
				}
				b.WriteString(s.text[from:end])
				return b.String(), true
			}
			b.WriteString(s.text[from:end])
			doubled = true
			from = s.offset // keep one delimiter of the pair
			s.next()
		default:
			s.next()
		}
	}
}

// scanQuoted scans the rest of a `...` identifier whose quote is at start.
func (s *Scanner) scanQuoted(start int) string {
	lit, closed := s.scanDelimited(start, '`', "quoted identifier not terminated")
	if closed && lit == "" {
		s.error(start, "empty quoted identifier")
	}
	return lit
}

func (s *Scanner) skipQuoted(q rune) {
	for s.ch != q && s.ch != -1 && s.ch != '\n' {
		s.next()
	}
	if s.ch == q {
		s.next()
	}
}

// scanHex scans the rest of X'...' from its quote; start is the X.
func (s *Scanner) scanHex(start int) string {
	s.next() // the quote
	from := s.offset
	bad := false
	for s.ch != '\'' {
		if s.ch == -1 {
			s.error(start, "hex literal not terminated")
			return s.text[from:s.offset]
		}
		if !isHex(s.ch) && !bad {
			s.error(s.offset, fmt.Sprintf("invalid hex digit %q in hex literal", s.ch))
			bad = true
		}
		s.next()
	}
	lit := s.text[from:s.offset]
	s.next()
	if len(lit)%2 != 0 && !bad {
		s.error(start, "hex literal has an odd number of digits")
	}
	return lit
}

// Text returns the source as a string: the literals Scan returns are
// slices of it, save those that undo a doubled quote.
func (s *Scanner) Text() string { return s.text }

// Pos returns the position just after the last token scanned, before any
// white space or comment that follows it.
func (s *Scanner) Pos() token.Pos { return token.PosOf(s.offset) }
