package expr

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// String functions count characters (Unicode code points), as Flink counts
// Java chars; the two differ only for characters outside the Basic
// Multilingual Plane.

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runeLen returns the number of characters of s.
func runeLen(s string) int {
	if isASCII(s) {
		return len(s)
	}
	return utf8.RuneCountInString(s)
}

// runeSlice returns characters [from, to) of s (0-based, clamped).
func runeSlice(s string, from, to int) string {
	if from < 0 {
		from = 0
	}
	if isASCII(s) {
		to = min(to, len(s))
		if from >= to {
			return ""
		}
		return s[from:to]
	}
	start, end := len(s), len(s)
	i := 0
	for pos := range s {
		if i == from {
			start = pos
		}
		if i == to {
			end = pos
			break
		}
		i++
	}
	if start >= end {
		return ""
	}
	return s[start:end]
}

// runeIndex returns the character index of the first occurrence of sub in
// s at or after character from, or -1.
func runeIndex(s, sub string, from int) int {
	if from < 0 {
		from = 0
	}
	if isASCII(s) {
		if from > len(s) {
			return -1
		}
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return -1
		}
		return i + from
	}
	// Byte offset of character from.
	off, n := len(s), 0
	for pos := range s {
		if n == from {
			off = pos
			break
		}
		n++
	}
	if n < from {
		return -1
	}
	i := strings.Index(s[off:], sub)
	if i < 0 {
		return -1
	}
	return from + utf8.RuneCountInString(s[off:off+i])
}

func str(s string) types.Value { return types.StringValue(s) }

// maxResultChars bounds the strings REPEAT, LPAD and RPAD build, so that a
// bad argument fails the row instead of exhausting memory.
const maxResultChars = 1 << 28

func int32Value(n int) types.Value { return types.IntValue(types.KindInt, int64(n)) }

func compileCharLength(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		return int32Value(runeLen(v.Str())), nil
	}), nil
}

func compileUpper(c *compiler, call *Call, args []Eval) (Eval, error) {
	up := call.Name == "UPPER"
	conv := strings.ToLower
	if up {
		conv = func(s string) string {
			u := strings.ToUpper(s)
			if strings.Contains(u, "ß") {
				// Java upper-cases the sharp s to "SS".
				u = strings.ReplaceAll(u, "ß", "SS")
			}
			return u
		}
	}
	var cache caseCache
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		return str(cache.convert(v.Str(), conv)), nil
	}), nil
}

// caseCache remembers the last few short strings whose case conversion
// allocated: a column of a few distinct values ('Apple', 'Google' ...)
// then converts without allocating. Strings that convert to themselves
// allocate nothing anyway and are not kept.
type caseCache [8]struct{ in, out string }

// caseCacheMax is the longest string caseCache keeps.
const caseCacheMax = 64

func (c *caseCache) convert(s string, conv func(string) string) string {
	if len(s) == 0 || len(s) > caseCacheMax {
		return conv(s)
	}
	e := &c[(len(s)^int(s[0])^int(s[len(s)-1]))&7]
	if e.in == s {
		return e.out
	}
	out := conv(s)
	if unsafe.StringData(out) != unsafe.StringData(s) {
		// s may be part of a larger buffer (a decoded message): keep a
		// copy, not the buffer.
		e.in, e.out = strings.Clone(s), out
	}
	return out
}

// trimmer returns a function trimming the characters of chars from the
// chosen ends of a string.
func trimmer(mode string, chars string) func(s string) string {
	left := mode == "BOTH" || mode == "LEADING"
	right := mode == "BOTH" || mode == "TRAILING"
	return func(s string) string {
		if left {
			s = strings.TrimLeft(s, chars)
		}
		if right {
			s = strings.TrimRight(s, chars)
		}
		return s
	}
}

func bindTrim(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cLiteral, cString, cString)}
	if !sigs[0].match(args) {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	mode, _ := literalString(args[0])
	switch strings.ToUpper(mode) {
	case "BOTH", "LEADING", "TRAILING":
	default:
		return nil, types.Type{}, fmt.Errorf("cannot apply 'TRIM': mode must be BOTH, LEADING or TRAILING, not '%s'", mode)
	}
	return args, nullableIf(types.String, args[1:]), nil
}

func compileTrim(c *compiler, call *Call, args []Eval) (Eval, error) {
	mode, _ := literalString(call.Args[0])
	mode = strings.ToUpper(mode)
	if chars, ok := constArg(call, 1); ok && !chars.IsNull() {
		t := trimmer(mode, chars.Str())
		return strict1(args[2], func(v types.Value) (types.Value, error) { return str(t(v.Str())), nil }), nil
	}
	return strict2(args[1], args[2], func(chars, v types.Value) (types.Value, error) {
		return str(trimmer(mode, chars.Str())(v.Str())), nil
	}), nil
}

func compileLRTrim(c *compiler, call *Call, args []Eval) (Eval, error) {
	mode := "LEADING"
	if call.Name == "RTRIM" {
		mode = "TRAILING"
	}
	if len(args) == 1 {
		t := trimmer(mode, " ")
		return strict1(args[0], func(v types.Value) (types.Value, error) { return str(t(v.Str())), nil }), nil
	}
	return strict2(args[0], args[1], func(v, chars types.Value) (types.Value, error) {
		return str(trimmer(mode, chars.Str())(v.Str())), nil
	}), nil
}

// substring implements Flink's SUBSTRING(s, pos[, len]) on characters:
// pos is 1-based, a negative pos counts from the end, 0 means 1; a negative
// length gives NULL.
func substring(s string, pos, length int64) (string, bool) {
	if length < 0 {
		return "", false
	}
	if s == "" {
		return "", true
	}
	n := int64(runeLen(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
		if start >= n {
			return "", true
		}
	case pos < 0:
		start = n + pos
		if start < 0 {
			return "", true
		}
	}
	end := n
	if n-start >= length {
		end = start + length
	}
	return runeSlice(s, int(start), int(end)), true
}

func compileSubstring(c *compiler, call *Call, args []Eval) (Eval, error) {
	if len(args) == 2 {
		return strict2(args[0], args[1], func(s, p types.Value) (types.Value, error) {
			r, _ := substring(s.Str(), p.Int(), 1<<62)
			return str(r), nil
		}), nil
	}
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		r, ok := substring(vs[0].Str(), vs[1].Int(), vs[2].Int())
		if !ok {
			return types.NullValue, nil
		}
		return str(r), nil
	}), nil
}

func compileConcat(c *compiler, call *Call, args []Eval) (Eval, error) {
	if len(args) == 2 {
		return strict2(args[0], args[1], func(a, b types.Value) (types.Value, error) {
			return str(a.Str() + b.Str()), nil
		}), nil
	}
	var buf []byte
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		buf = buf[:0]
		for _, v := range vs {
			buf = append(buf, v.Str()...)
		}
		return str(string(buf)), nil
	}), nil
}

func compileConcatWS(c *compiler, call *Call, args []Eval) (Eval, error) {
	var buf []byte
	return lazyN(args, func(vs []types.Value) (types.Value, error) {
		if vs[0].IsNull() {
			return types.NullValue, nil
		}
		sep := vs[0].Str()
		buf = buf[:0]
		first := true
		for _, v := range vs[1:] {
			if v.IsNull() {
				continue
			}
			if !first {
				buf = append(buf, sep...)
			}
			first = false
			buf = append(buf, v.Str()...)
		}
		return str(string(buf)), nil
	}), nil
}

func compileReplace(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		return str(strings.ReplaceAll(vs[0].Str(), vs[1].Str(), vs[2].Str())), nil
	}), nil
}

func compilePosition(c *compiler, call *Call, args []Eval) (Eval, error) {
	// POSITION(sub IN s), LOCATE(sub, s[, from])
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		from := int64(1)
		if len(vs) > 2 {
			from = vs[2].Int()
		}
		i := runeIndex(vs[1].Str(), vs[0].Str(), int(max(from-1, 0)))
		return int32Value(i + 1), nil
	}), nil
}

// instr implements Flink's INSTR(s, sub, start, nth).
func instr(s, sub string, start, nth int64) (int, error) {
	if nth <= 0 {
		return 0, fmt.Errorf("nthAppearance must be positive")
	}
	switch {
	case start == 0:
		return 0, nil
	case start > 0:
		idx := 0
		from := start
		for i := int64(0); i < nth; i++ {
			idx = runeIndex(s, sub, int(from-1)) + 1
			if idx == 0 {
				return 0, nil
			}
			from = int64(idx) + 1
		}
		return idx, nil
	}
	pos, err := instr(reverse(s), reverse(sub), -start, nth)
	if err != nil || pos == 0 {
		return 0, err
	}
	return runeLen(s) + 2 - pos - runeLen(sub), nil
}

func compileInstr(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		start, nth := int64(1), int64(1)
		if len(vs) > 2 {
			start = vs[2].Int()
		}
		if len(vs) > 3 {
			nth = vs[3].Int()
		}
		i, err := instr(vs[0].Str(), vs[1].Str(), start, nth)
		if err != nil {
			return types.NullValue, evalErr(call, err)
		}
		return int32Value(i), nil
	}), nil
}

// pad implements Flink's LPAD and RPAD: NULL for a negative length or an
// empty pad; the result is exactly n characters.
func pad(s string, n int64, p string, left bool) (string, bool) {
	if n < 0 || p == "" {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	rs, ps := []rune(s), []rune(p)
	out := make([]rune, 0, n)
	if left {
		fill := max(int(n)-len(rs), 0)
		for i := 0; i < fill; i++ {
			out = append(out, ps[i%len(ps)])
		}
		for i := 0; len(out) < int(n) && i < len(rs); i++ {
			out = append(out, rs[i])
		}
		return string(out), true
	}
	for i := 0; i < len(rs) && len(out) < int(n); i++ {
		out = append(out, rs[i])
	}
	for i := 0; len(out) < int(n); i++ {
		out = append(out, ps[i%len(ps)])
	}
	return string(out), true
}

func compilePad(c *compiler, call *Call, args []Eval) (Eval, error) {
	left := call.Name == "LPAD"
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		if vs[1].Int() > maxResultChars {
			return types.NullValue, evalErr(call, fmt.Errorf("result too large"))
		}
		r, ok := pad(vs[0].Str(), vs[1].Int(), vs[2].Str(), left)
		if !ok {
			return types.NullValue, nil
		}
		return str(r), nil
	}), nil
}

func compileSplitIndex(c *compiler, call *Call, args []Eval) (Eval, error) {
	byChar := call.Args[1].Type().Kind.IsInteger()
	sepOf := func(v types.Value) (string, bool) {
		if !byChar {
			return v.Str(), true
		}
		if ch := v.Int(); ch >= 1 && ch <= 255 {
			return string(rune(ch)), true
		}
		return "", false
	}
	lsep, ok1 := call.Args[1].(*Literal)
	lidx, ok2 := call.Args[2].(*Literal)
	if ok1 && ok2 && !lsep.V.IsNull() && !lidx.V.IsNull() {
		// Constant separator and index (as usual): one closure call and
		// no argument copies per row.
		sep, ok := sepOf(lsep.V)
		idx := lidx.V.Int()
		return strict1(args[0], func(v types.Value) (types.Value, error) {
			if !ok {
				return types.NullValue, nil
			}
			return splitIndex(v.Str(), sep, idx), nil
		}), nil
	}
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		sep, ok := sepOf(vs[1])
		if !ok {
			return types.NullValue, nil
		}
		return splitIndex(vs[0].Str(), sep, vs[2].Int()), nil
	}), nil
}

// splitIndex returns the part of s at idx (from 0) when s is split at
// every sep (at runs of white space when sep is empty); NULL when there
// is no such part or s is empty.
func splitIndex(s, sep string, idx int64) types.Value {
	if idx < 0 || s == "" {
		return types.NullValue
	}
	if sep == "" {
		parts := strings.FieldsFunc(s, unicode.IsSpace)
		if idx >= int64(len(parts)) {
			return types.NullValue
		}
		return str(parts[idx])
	}
	// Skip idx separators and cut at the next one: the part of
	// strings.Split(s, sep) at idx, without building the others.
	for ; idx > 0; idx-- {
		i := strings.Index(s, sep)
		if i < 0 {
			return types.NullValue
		}
		s = s[i+len(sep):]
	}
	if i := strings.Index(s, sep); i >= 0 {
		s = s[:i]
	}
	return str(s)
}

func compileRegexp(c *compiler, call *Call, args []Eval) (Eval, error) {
	get, err := regexArg(c, call, 1)
	if err != nil {
		return nil, err
	}
	return strict2(args[0], args[1], func(s, p types.Value) (types.Value, error) {
		if p.Str() == "" {
			return types.BoolValue(false), nil
		}
		re := get(p)
		if re == nil {
			return types.BoolValue(false), nil
		}
		return types.BoolValue(re.MatchString(s.Str())), nil
	}), nil
}

func compileRegexpExtract(c *compiler, call *Call, args []Eval) (Eval, error) {
	get, err := regexArg(c, call, 1)
	if err != nil {
		return nil, err
	}
	var loc []int
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		re := get(vs[1])
		if re == nil {
			return types.NullValue, nil
		}
		group := int64(0)
		if len(vs) > 2 {
			group = vs[2].Int()
		}
		if group < 0 || group > int64(re.NumSubexp()) {
			return types.NullValue, nil
		}
		s := vs[0].Str()
		loc = re.FindStringSubmatchIndex(s)
		if loc == nil || loc[2*group] < 0 {
			return types.NullValue, nil
		}
		return str(s[loc[2*group]:loc[2*group+1]]), nil
	}), nil
}

func compileRegexpReplace(c *compiler, call *Call, args []Eval) (Eval, error) {
	get, err := regexArg(c, call, 1)
	if err != nil {
		return nil, err
	}
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		re := get(vs[1])
		if re == nil {
			return types.NullValue, nil
		}
		return str(re.ReplaceAllLiteralString(vs[0].Str(), vs[2].Str())), nil
	}), nil
}

// initcap upper-cases the first letter of each word and lower-cases the
// rest, ASCII letters only, as Calcite's INITCAP.
func initcap(s string) string {
	b := []byte(s)
	start := true
	for i, c := range b {
		isDigit := c >= '0' && c <= '9'
		isUpper := c >= 'A' && c <= 'Z'
		isLower := c >= 'a' && c <= 'z'
		if start {
			switch {
			case isDigit, isUpper:
				start = false
			case isLower:
				start = false
				b[i] = c - 32
			}
		} else {
			switch {
			case isUpper:
				b[i] = c + 32
			case isDigit, isLower:
			default:
				start = true
			}
		}
	}
	return string(b)
}

func reverse(s string) string {
	rs := []rune(s)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

func compileStrFunc(f func(s string) string) func(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(c *compiler, call *Call, args []Eval) (Eval, error) {
		return strict1(args[0], func(v types.Value) (types.Value, error) { return str(f(v.Str())), nil }), nil
	}
}

func compileRepeat(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict2(args[0], args[1], func(s, n types.Value) (types.Value, error) {
		if n.Int() <= 0 || s.Str() == "" {
			return str(""), nil
		}
		if n.Int() > maxResultChars || int64(len(s.Str()))*n.Int() > maxResultChars {
			return types.NullValue, evalErr(call, fmt.Errorf("result too large"))
		}
		return str(strings.Repeat(s.Str(), int(n.Int()))), nil
	}), nil
}

func compileLeftRight(c *compiler, call *Call, args []Eval) (Eval, error) {
	left := call.Name == "LEFT"
	return strict2(args[0], args[1], func(s, n types.Value) (types.Value, error) {
		k := n.Int()
		if k <= 0 {
			return str(""), nil
		}
		l := int64(runeLen(s.Str()))
		if k >= l {
			return s.WithKind(types.KindVarChar), nil
		}
		if left {
			return str(runeSlice(s.Str(), 0, int(k))), nil
		}
		return str(runeSlice(s.Str(), int(l-k), int(l))), nil
	}), nil
}

func compileHash(newHash func() hash.Hash) func(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(c *compiler, call *Call, args []Eval) (Eval, error) {
		h := newHash()
		var sum []byte
		return strict1(args[0], func(v types.Value) (types.Value, error) {
			h.Reset()
			h.Write([]byte(v.Str()))
			sum = h.Sum(sum[:0])
			return str(hex.EncodeToString(sum)), nil
		}), nil
	}
}

func compileSHA2(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict2(args[0], args[1], func(v, bits types.Value) (types.Value, error) {
		var h hash.Hash
		switch bits.Int() {
		case 224:
			h = sha256.New224()
		case 0, 256:
			h = sha256.New()
		case 384:
			h = sha512.New384()
		case 512:
			h = sha512.New()
		default:
			return types.NullValue, nil
		}
		h.Write([]byte(v.Str()))
		return str(hex.EncodeToString(h.Sum(nil))), nil
	}), nil
}

func compileToBase64(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		return str(base64.StdEncoding.EncodeToString([]byte(v.Str()))), nil
	}), nil
}

func compileFromBase64(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		b, err := base64.StdEncoding.DecodeString(v.Str())
		if err != nil {
			return types.NullValue, evalErr(call, fmt.Errorf("invalid base64 input: %w", err))
		}
		return str(string(b)), nil
	}), nil
}

func compileASCII(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		s := v.Str()
		if s == "" {
			return int32Value(0), nil
		}
		r, _ := utf8.DecodeRuneInString(s)
		return int32Value(int(r)), nil
	}), nil
}

func compileChr(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		n := v.Int()
		if n < 0 {
			return str(""), nil
		}
		return str(string(rune(n & 0xFF))), nil
	}), nil
}

// overlay implements Flink's OVERLAY(s PLACING r FROM start [FOR len]).
func overlay(s, r string, start, length int64) string {
	n := int64(runeLen(s))
	if start <= 0 || start > n {
		return s
	}
	out := runeSlice(s, 0, int(start-1)) + r
	if start+length <= n && length > 0 {
		out += runeSlice(s, int(start-1+length), int(n))
	}
	return out
}

func compileOverlay(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		length := int64(runeLen(vs[1].Str()))
		if len(vs) > 3 {
			length = vs[3].Int()
		}
		return str(overlay(vs[0].Str(), vs[1].Str(), vs[2].Int(), length)), nil
	}), nil
}

func compileUUID(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func([]types.Value) (types.Value, error) {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			return types.NullValue, evalErr(call, err)
		}
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		h := hex.EncodeToString(u[:])
		return str(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]), nil
	}, nil
}
