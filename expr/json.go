package expr

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluicesql/sluice/types"
)

// JSON_VALUE(json, path) extracts a scalar with a JSON path of the form
// [lax|strict] $.a.b, $.a[0], $['a'], $["a"]. It returns the scalar as
// STRING (numbers as written, true/false, strings unescaped), or of the
// RETURNING type. What is empty and what is an error is Flink's (see
// jsonValue); the ON EMPTY and ON ERROR behaviours default to NULL. The
// document is checked to be valid JSON, then
// scanned, not decoded into a tree: only the members on the path are read.

type jsonStep struct {
	key   string
	index int // -1 for a key step
}

// jsonPath is a parsed JSON path: its steps and its mode. In lax mode (the
// default) a member that is not there gives an empty result; in strict
// mode it is an error.
type jsonPath struct {
	steps  []jsonStep
	strict bool
}

func parseJSONPath(p string) (jsonPath, error) {
	s := strings.TrimSpace(p)
	low := strings.ToLower(s)
	strict := false
	switch {
	case strings.HasPrefix(low, "lax "):
		s = strings.TrimSpace(s[4:])
	case strings.HasPrefix(low, "strict "):
		s = strings.TrimSpace(s[7:])
		strict = true
	}
	steps, err := parseJSONSteps(p, s)
	return jsonPath{steps: steps, strict: strict}, err
}

func parseJSONSteps(p, s string) ([]jsonStep, error) {
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

// jsonResult says what a JSON path found.
type jsonResult int

const (
	jsonFound jsonResult = iota // a scalar
	jsonEmpty                   // nothing (lax mode), or a JSON null
	jsonError                   // a malformed document; nothing, or no scalar, in strict mode
)

// jsonValue follows path through doc and returns the scalar found, as
// Flink's JSON_VALUE (Calcite's) does: a malformed document is an error;
// a member or element that is not there, or a value that is no scalar (an
// object or an array), is empty in lax mode and an error in strict mode;
// a JSON null is empty.
func jsonValue(doc string, path jsonPath) (string, jsonResult) {
	if !json.Valid([]byte(doc)) {
		return "", jsonError
	}
	missing := jsonEmpty
	if path.strict {
		missing = jsonError
	}
	j := &jsonScanner{s: doc}
	for _, st := range path.steps {
		j.ws()
		if j.i >= len(j.s) {
			return "", missing
		}
		if st.index < 0 {
			if j.s[j.i] != '{' {
				return "", missing
			}
			j.i++
			found := false
			for !found {
				j.ws()
				if j.i >= len(j.s) || j.s[j.i] != '"' {
					return "", missing
				}
				k, ok := j.readString()
				if !ok {
					return "", jsonError
				}
				j.ws()
				if j.i >= len(j.s) || j.s[j.i] != ':' {
					return "", jsonError
				}
				j.i++
				if k == st.key {
					found = true
					break
				}
				if !j.skip() {
					return "", jsonError
				}
				j.ws()
				if j.i < len(j.s) && j.s[j.i] == ',' {
					j.i++
					continue
				}
				return "", missing
			}
			continue
		}
		if j.s[j.i] != '[' {
			return "", missing
		}
		j.i++
		for n := 0; ; n++ {
			j.ws()
			if j.i >= len(j.s) || j.s[j.i] == ']' {
				return "", missing
			}
			if n == st.index {
				break
			}
			if !j.skip() {
				return "", jsonError
			}
			j.ws()
			if j.i < len(j.s) && j.s[j.i] == ',' {
				j.i++
				continue
			}
			return "", missing
		}
	}
	j.ws()
	if j.i >= len(j.s) {
		return "", missing
	}
	switch c := j.s[j.i]; {
	case c == '"':
		v, ok := j.readString()
		if !ok {
			return "", jsonError
		}
		return v, jsonFound
	case c == '{' || c == '[':
		return "", missing
	default:
		start := j.i
		if !j.skip() {
			return "", jsonError
		}
		lit := j.s[start:j.i]
		if lit == "null" {
			return "", jsonEmpty
		}
		return lit, jsonFound
	}
}

// The behaviours of JSON_VALUE's ON EMPTY and ON ERROR clauses, as the
// INT literals the planner passes for them.
const (
	JSONNull    = 0 // NULL ON ...: the result is NULL (the default)
	JSONError   = 1 // ERROR ON ...: the job fails
	JSONDefault = 2 // DEFAULT x ON ...: the result is x
)

// bindJSONValue binds JSON_VALUE(json, path), whose result is a STRING,
// and the form the planner builds for RETURNING, ON EMPTY and ON ERROR:
// JSON_VALUE(json, path, CAST(NULL AS type), emptyBehaviour, emptyDefault,
// errorBehaviour, errorDefault), whose result is of the RETURNING type
// (the third argument's) and whose defaults are of that type.
func bindJSONValue(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	base := typed(always(types.String), sig(cString, cString))
	if len(args) == 2 {
		return base(b, name, args)
	}
	if len(args) != 7 {
		return nil, types.Type{}, argError(name, args, []signature{sig(cString, cString)})
	}
	if _, _, err := base(b, name, args[:2]); err != nil {
		return nil, types.Type{}, err
	}
	t := args[2].Type().WithoutTimeAttr().WithNullable(true)
	for _, i := range []int{3, 5} {
		if v, ok := constArg(&Call{Args: args}, i); !ok || v.Kind() != types.KindInt {
			return nil, types.Type{}, fmt.Errorf("cannot apply '%s': argument %d must be an INT literal", name, i+1)
		}
	}
	out := slices.Clone(args)
	for _, i := range []int{4, 6} {
		if !args[i].Type().SameKind(t) {
			c, err := b.Cast(args[i], t, false)
			if err != nil {
				return nil, types.Type{}, fmt.Errorf("cannot apply '%s': the DEFAULT value: %w", name, err)
			}
			out[i] = c
		}
	}
	return out, t, nil
}

func compileJSONValue(c *compiler, call *Call, args []Eval) (Eval, error) {
	var fixed *jsonPath
	if v, ok := constArg(call, 1); ok && !v.IsNull() {
		p, err := parseJSONPath(v.Str())
		if err != nil {
			return nil, fmt.Errorf("cannot apply 'JSON_VALUE': %w", err)
		}
		fixed = &p
	}
	to := types.String
	onEmpty, onError := int64(JSONNull), int64(JSONNull)
	var emptyDefault, errorDefault Eval
	if len(args) == 7 {
		to = call.T
		e, _ := constArg(call, 3)
		onEmpty, emptyDefault = e.Int(), args[4]
		e, _ = constArg(call, 5)
		onError, errorDefault = e.Int(), args[6]
	}
	// behave gives the result of the clause for what (EMPTY or ERROR).
	behave := func(row []types.Value, what string, kind int64, def Eval, cause error) (types.Value, error) {
		switch kind {
		case JSONError:
			if cause == nil {
				cause = fmt.Errorf("the JSON path %s found no value", call.Args[1])
			}
			return types.NullValue, fmt.Errorf("JSON_VALUE (ERROR ON %s): %w", what, cause)
		case JSONDefault:
			return def(row)
		}
		return types.NullValue, nil
	}
	cache := make(map[string]jsonPath)
	return func(row []types.Value) (types.Value, error) {
		doc, err := args[0](row)
		if err != nil || doc.IsNull() {
			return types.NullValue, err
		}
		pv, err := args[1](row)
		if err != nil || pv.IsNull() {
			return types.NullValue, err
		}
		var path jsonPath
		if fixed != nil {
			path = *fixed
		} else if p, ok := cache[pv.Str()]; ok {
			path = p
		} else {
			p, err := parseJSONPath(pv.Str())
			if err != nil {
				return behave(row, "ERROR", onError, errorDefault, err)
			}
			if len(cache) >= maxCachedPatterns {
				clear(cache)
			}
			cache[pv.Str()] = p
			path = p
		}
		s, res := jsonValue(doc.Str(), path)
		switch res {
		case jsonEmpty:
			return behave(row, "EMPTY", onEmpty, emptyDefault, nil)
		case jsonError:
			return behave(row, "ERROR", onError, errorDefault, jsonErrorCause(doc.Str(), path, pv.Str()))
		}
		if len(args) == 2 {
			return str(s), nil
		}
		v, err := types.Cast(str(s), types.String, to)
		if err != nil {
			return behave(row, "ERROR", onError, errorDefault, fmt.Errorf("cannot convert '%s' to %s: %w", s, to.WithNullable(false), err))
		}
		return v, nil
	}, nil
}

// jsonErrorCause says why a path gave an error, for ERROR ON ERROR.
func jsonErrorCause(doc string, path jsonPath, text string) error {
	if !json.Valid([]byte(doc)) {
		return fmt.Errorf("the document is not valid JSON")
	}
	return fmt.Errorf("the strict JSON path '%s' found no scalar value", text)
}
