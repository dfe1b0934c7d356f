package json

import (
	"fmt"
	"strconv"
)

// Members calls fn for each member of the JSON object in data, in order,
// with its name (unescaped; valid only during the call) and the raw bytes
// of its value (a sub-slice of data, without surrounding space). It checks
// the syntax of the whole object, so formats that wrap rows in an envelope
// (debezium-json, canal-json, ...) can find their fields and hand each
// row's bytes to a Decoder. An error from fn stops the walk and is
// returned as is.
func Members(data []byte, fn func(name, value []byte) error) error {
	s := scanner{data: data}
	if s.peek() != '{' {
		return s.syntaxError("a JSON object")
	}
	s.pos++
	var buf []byte
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			if s.peek() != '"' {
				return s.syntaxError("a field name")
			}
			start, end, esc, err := s.str()
			if err != nil {
				return err
			}
			name := data[start:end]
			if esc {
				if buf, err = unescape(buf[:0], name); err != nil {
					return err
				}
				name = buf
			}
			if err := s.expect(':', "':'"); err != nil {
				return err
			}
			s.ws()
			vstart := s.pos
			if err := s.skip(1); err != nil {
				return inField(string(name), err)
			}
			if err := fn(name, data[vstart:s.pos]); err != nil {
				return err
			}
			if c := s.peek(); c == ',' {
				s.pos++
				continue
			} else if c == '}' {
				s.pos++
				break
			}
			return s.syntaxError("',' or '}'")
		}
	}
	if s.ws(); s.pos != len(data) {
		return s.syntaxError("the end of the record")
	}
	return nil
}

// Elements calls fn with the raw bytes of each element of the JSON array
// in data, in order. Like Members it checks the syntax of the whole array.
func Elements(data []byte, fn func(i int, elem []byte) error) error {
	s := scanner{data: data}
	if s.peek() != '[' {
		return s.syntaxError("a JSON array")
	}
	s.pos++
	if s.peek() == ']' {
		s.pos++
	} else {
		for i := 0; ; i++ {
			s.ws()
			start := s.pos
			if err := s.skip(1); err != nil {
				return inField("["+strconv.Itoa(i)+"]", err)
			}
			if err := fn(i, data[start:s.pos]); err != nil {
				return err
			}
			if c := s.peek(); c == ',' {
				s.pos++
				continue
			} else if c == ']' {
				s.pos++
				break
			}
			return s.syntaxError("',' or ']'")
		}
	}
	if s.ws(); s.pos != len(data) {
		return s.syntaxError("the end of the array")
	}
	return nil
}

// IsNull reports whether the raw value is the literal null.
func IsNull(value []byte) bool { return string(value) == "null" }

// AppendText appends the contents of the raw JSON string value to dst,
// unescaped. A value that is not a string is an error.
func AppendText(dst, value []byte) ([]byte, error) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		if len(value) > 40 {
			value = append(value[:40:40], "..."...)
		}
		return dst, fmt.Errorf("expected a JSON string, got %s", value)
	}
	return unescape(dst, value[1:len(value)-1])
}

// AppendString appends s to dst as a quoted JSON string, escaped as the
// encoder escapes strings.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }
