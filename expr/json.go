package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluicesql/sluice/types"
)

// JSON_VALUE(json, path) extracts a scalar with a JSON path of the form
// [lax|strict] $.a.b, $.a[0], $['a'], $["a"]. It returns the scalar as
// STRING (numbers as written, true/false, strings unescaped); a missing
// member, a JSON null, an object or array, a malformed document or path give
// NULL, as Flink's default NULL ON EMPTY / NULL ON ERROR. The document is
// scanned, not decoded into a tree: only the members on the path are read.

type jsonStep struct {
	key   string
	index int // -1 for a key step
}

func parseJSONPath(p string) ([]jsonStep, error) {
	s := strings.TrimSpace(p)
	low := strings.ToLower(s)
	switch {
	case strings.HasPrefix(low, "lax "):
		s = strings.TrimSpace(s[4:])
	case strings.HasPrefix(low, "strict "):
		s = strings.TrimSpace(s[7:])
	}
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("invalid JSON path '%s': it must start with $", p)
	}
	var steps []jsonStep
	i := 1
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			if i < len(s) && s[i] == '"' {
				j := strings.IndexByte(s[i+1:], '"')
				if j < 0 {
					return nil, fmt.Errorf("invalid JSON path '%s': unterminated quote", p)
				}
				steps = append(steps, jsonStep{key: s[i+1 : i+1+j], index: -1})
				i += j + 2
				continue
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("invalid JSON path '%s': empty member name", p)
			}
			steps = append(steps, jsonStep{key: s[i:j], index: -1})
			i = j
		case '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("invalid JSON path '%s': missing ]", p)
			}
			inner := strings.TrimSpace(s[i+1 : i+j])
			i += j + 1
			if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] {
				steps = append(steps, jsonStep{key: inner[1 : len(inner)-1], index: -1})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("invalid JSON path '%s': bad subscript [%s]", p, inner)
			}
			steps = append(steps, jsonStep{index: n})
		default:
			return nil, fmt.Errorf("invalid JSON path '%s': unexpected %q", p, s[i])
		}
	}
	return steps, nil
}

type jsonScanner struct {
	s string
	i int
}

func (j *jsonScanner) ws() {
	for j.i < len(j.s) {
		switch j.s[j.i] {
		case ' ', '\t', '\n', '\r':
			j.i++
		default:
			return
		}
	}
}

// stringEnd returns the index after the closing quote of the string at
// j.i (which is at the opening quote), and whether it has escapes.
func (j *jsonScanner) stringEnd() (int, bool, bool) {
	esc := false
	for k := j.i + 1; k < len(j.s); k++ {
		switch j.s[k] {
		case '\\':
			esc = true
			k++
		case '"':
			return k + 1, esc, true
		}
	}
	return 0, false, false
}

// skip skips one value.
func (j *jsonScanner) skip() bool {
	j.ws()
	if j.i >= len(j.s) {
		return false
	}
	switch c := j.s[j.i]; c {
	case '"':
		end, _, ok := j.stringEnd()
		j.i = end
		return ok
	case '{', '[':
		depth := 0
		for j.i < len(j.s) {
			switch j.s[j.i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					j.i++
					return true
				}
			case '"':
				end, _, ok := j.stringEnd()
				if !ok {
					return false
				}
				j.i = end
				continue
			}
			j.i++
		}
		return false
	default:
		start := j.i
		for j.i < len(j.s) {
			c := j.s[j.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			j.i++
		}
		return j.i > start
	}
}

func unescapeJSON(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch s[i] {
		case '"', '\\', '/':
			b.WriteByte(s[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+4 >= len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", false
			}
			r := rune(n)
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if n2, err := strconv.ParseUint(s[i+3:i+7], 16, 16); err == nil {
					r = utf16.DecodeRune(r, rune(n2))
					i += 6
				}
			}
			var buf [4]byte
			b.Write(buf[:utf8.EncodeRune(buf[:], r)])
		default:
			return "", false
		}
	}
	return b.String(), true
}

// readString reads the string at j.i, unescaped.
func (j *jsonScanner) readString() (string, bool) {
	end, esc, ok := j.stringEnd()
	if !ok {
		return "", false
	}
	raw := j.s[j.i+1 : end-1]
	j.i = end
	if !esc {
		return raw, true
	}
	return unescapeJSON(raw)
}

// jsonValue follows steps through doc and returns the scalar found.
func jsonValue(doc string, steps []jsonStep) (string, bool) {
	j := &jsonScanner{s: doc}
	for _, st := range steps {
		j.ws()
		if j.i >= len(j.s) {
			return "", false
		}
		if st.index < 0 {
			if j.s[j.i] != '{' {
				return "", false
			}
			j.i++
			found := false
			for !found {
				j.ws()
				if j.i >= len(j.s) || j.s[j.i] == '}' || j.s[j.i] != '"' {
					return "", false
				}
				k, ok := j.readString()
				if !ok {
					return "", false
				}
				j.ws()
				if j.i >= len(j.s) || j.s[j.i] != ':' {
					return "", false
				}
				j.i++
				if k == st.key {
					found = true
					break
				}
				if !j.skip() {
					return "", false
				}
				j.ws()
				if j.i < len(j.s) && j.s[j.i] == ',' {
					j.i++
					continue
				}
				return "", false
			}
			continue
		}
		if j.s[j.i] != '[' {
			return "", false
		}
		j.i++
		for n := 0; ; n++ {
			j.ws()
			if j.i >= len(j.s) || j.s[j.i] == ']' {
				return "", false
			}
			if n == st.index {
				break
			}
			if !j.skip() {
				return "", false
			}
			j.ws()
			if j.i < len(j.s) && j.s[j.i] == ',' {
				j.i++
				continue
			}
			return "", false
		}
	}
	j.ws()
	if j.i >= len(j.s) {
		return "", false
	}
	switch c := j.s[j.i]; {
	case c == '"':
		return j.readString()
	case c == '{' || c == '[':
		return "", false
	default:
		start := j.i
		if !j.skip() {
			return "", false
		}
		lit := j.s[start:j.i]
		if lit == "null" {
			return "", false
		}
		return lit, true
	}
}

func compileJSONValue(c *compiler, call *Call, args []Eval) (Eval, error) {
	var fixed []jsonStep
	if v, ok := constArg(call, 1); ok && !v.IsNull() {
		st, err := parseJSONPath(v.Str())
		if err != nil {
			return nil, fmt.Errorf("cannot apply 'JSON_VALUE': %w", err)
		}
		fixed = st
	}
	cache := make(map[string][]jsonStep)
	return strict2(args[0], args[1], func(doc, path types.Value) (types.Value, error) {
		steps := fixed
		if steps == nil {
			var ok bool
			if steps, ok = cache[path.Str()]; !ok {
				st, err := parseJSONPath(path.Str())
				if err != nil {
					return types.NullValue, nil
				}
				if len(cache) >= maxCachedPatterns {
					clear(cache)
				}
				cache[path.Str()] = st
				steps = st
			}
		}
		s, ok := jsonValue(doc.Str(), steps)
		if !ok {
			return types.NullValue, nil
		}
		return str(s), nil
	}), nil
}
