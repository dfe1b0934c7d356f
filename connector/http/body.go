package http

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// A push request's body holds records in one of three layouts: one JSON
// object, a JSON array of them, or objects one after another (newline-
// delimited JSON, or concatenated). splitBody finds the records' bounds
// without decoding them; the json format's decoder then checks each
// record's syntax and decodes it.

// bodyError is a body whose layout is broken, so that it cannot be split
// into records: nothing of it is taken.
type bodyError struct {
	off int // byte offset in the body
	msg string
}

func (e *bodyError) Error() string { return e.msg }

// recordError is a record that does not decode.
type recordError struct {
	n   int // the record's number, from 1
	off int // its offset in the body
	err error
}

func (e *recordError) Error() string { return e.err.Error() }

// where says where in body the byte at off is, for people: its line and
// column (both from 1; the column counts bytes).
func where(body []byte, off int) string {
	off = min(off, len(body))
	line := 1 + bytes.Count(body[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(body[:off], '\n')
	return "line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col)
}

// describe renders a body or record error with its position in body.
func describe(body []byte, err error) string {
	switch e := err.(type) {
	case *bodyError:
		return fmt.Sprintf("invalid body at %s (byte %d): %s", where(body, e.off), e.off, e.msg)
	case *recordError:
		return fmt.Sprintf("record %d at %s: %v", e.n, where(body, e.off), e.err)
	}
	return err.Error()
}

// utf8BOM may start a body saved by some editors.
var utf8BOM = []byte("\xef\xbb\xbf")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// splitBody calls fn with each record of body, in order, with its number
// (from 1), its offset and its bytes. It returns a *bodyError when the
// body's layout is broken (an error of fn is returned as it is). fn sees
// the records before the layout is known to be whole: a caller that
// takes all or nothing keeps what fn gets until splitBody returns nil.
func splitBody(body []byte, fn func(n, off int, rec []byte) error) error {
	i := 0
	if bytes.HasPrefix(body, utf8BOM) {
		i = len(utf8BOM)
	}
	i = skipSpace(body, i)
	if i == len(body) {
		return &bodyError{off: i, msg: "the body is empty: send a JSON object, an array of objects or objects one a line"}
	}
	if body[i] == '[' {
		i = skipSpace(body, i+1)
		if i < len(body) && body[i] == ']' {
			return atEnd(body, i+1, "after the array")
		}
		for n := 1; ; n++ {
			if i == len(body) {
				return &bodyError{off: i, msg: "unexpected end of the body: the array is not closed"}
			}
			start := i
			end, err := skipValue(body, i)
			if err != nil {
				return err
			}
			if err := fn(n, start, body[start:end]); err != nil {
				return err
			}
			if i = skipSpace(body, end); i == len(body) {
				return &bodyError{off: i, msg: "unexpected end of the body: the array is not closed"}
			}
			switch body[i] {
			case ',':
				i = skipSpace(body, i+1)
				continue
			case ']':
				return atEnd(body, i+1, "after the array")
			}
			return &bodyError{off: i, msg: fmt.Sprintf("unexpected %s, expected ',' or ']'", quoteByte(body[i]))}
		}
	}
	for n := 1; i < len(body); n++ {
		if body[i] != '{' {
			return &bodyError{off: i, msg: fmt.Sprintf("unexpected %s, expected a JSON object ('{') or an array ('[')", quoteByte(body[i]))}
		}
		end, err := skipValue(body, i)
		if err != nil {
			return err
		}
		if err := fn(n, i, body[i:end]); err != nil {
			return err
		}
		i = skipSpace(body, end)
	}
	return nil
}

// atEnd checks that only white space follows offset i.
func atEnd(body []byte, i int, what string) error {
	if i = skipSpace(body, i); i < len(body) {
		return &bodyError{off: i, msg: fmt.Sprintf("unexpected %s %s, expected the end of the body", quoteByte(body[i]), what)}
	}
	return nil
}

// skipValue returns the offset just past the JSON value that starts at
// b[i]. It finds where an object, an array or a string ends, not whether
// what it holds is valid JSON (the record's decoder says that); a
// scalar runs to the next delimiter.
func skipValue(b []byte, i int) (int, error) {
	switch c := b[i]; c {
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		what := "object"
		if c == '[' {
			what = "array"
		}
		return 0, &bodyError{off: i, msg: fmt.Sprintf("unexpected end of the body: the %s that starts here is not closed", what)}
	case '"':
		return skipString(b, i)
	case ',', ']', '}', ':':
		return 0, &bodyError{off: i, msg: fmt.Sprintf("unexpected %s, expected a value", quoteByte(c))}
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && strings.IndexByte(",]}{[\":", b[j]) < 0 {
		j++
	}
	return j, nil
}

// skipString returns the offset just past the string whose opening quote
// is at b[i].
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, &bodyError{off: i, msg: "unexpected end of the body: the string that starts here is not closed"}
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return strconv.QuoteRune(rune(c))
}
