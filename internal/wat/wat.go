// Package wat assembles the WebAssembly text format into the binary format,
// for the subset that Sluice's own test and example modules are written in:
// imported and defined functions, one memory, globals, exports and active
// data segments; instructions in the flat form (block ... end) and in the
// folded form ((i32.add (local.get $a) (i32.const 1))), with symbolic names
// for functions, locals, globals and labels.
//
// It exists so that the modules under testdata and examples can be rebuilt
// from their source by `go generate` with nothing but the Go toolchain. The
// output is a pure function of the input: the same text gives the same
// bytes. It is not a validator: wazero validates what it loads.
package wat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Assemble translates a module in the text format into the binary format.
// Errors carry the line and column of the offending token.
func Assemble(src []byte) ([]byte, error) {
	toks, err := lex(string(src))
	if err != nil {
		return nil, err
	}
	r := &reader{toks: toks}
	root, err := r.list()
	if err != nil {
		return nil, err
	}
	if r.pos < len(r.toks) {
		return nil, r.toks[r.pos].errorf("unexpected text after the module")
	}
	if len(root.items) == 0 || root.items[0].atom != "module" {
		return nil, root.errorf("expected (module ...)")
	}
	m := &module{funcIdx: map[string]int{}, globalIdx: map[string]int{}, memIdx: map[string]int{}}
	if err := m.declare(root.items[1:]); err != nil {
		return nil, err
	}
	return m.encode()
}

// token and node: a tiny S-expression reader.

type token struct {
	text      string // "(", ")", an atom, or a string with its quotes
	line, col int
}

func (t token) errorf(format string, args ...any) error {
	return fmt.Errorf("%d:%d: %s", t.line, t.col, fmt.Sprintf(format, args...))
}

func lex(s string) ([]token, error) {
	var out []token
	line, col := 1, 1
	i := 0
	adv := func(n int) {
		for k := 0; k < n && i < len(s); k++ {
			if s[i] == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i++
		}
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			adv(1)
		case strings.HasPrefix(s[i:], ";;"):
			for i < len(s) && s[i] != '\n' {
				adv(1)
			}
		case strings.HasPrefix(s[i:], "(;"):
			l, c0 := line, col
			end := strings.Index(s[i:], ";)")
			if end < 0 {
				return nil, token{line: l, col: c0}.errorf("unterminated block comment")
			}
			adv(end + 2)
		case c == '(' || c == ')':
			out = append(out, token{text: string(c), line: line, col: col})
			adv(1)
		case c == '"':
			l, c0 := line, col
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, token{line: l, col: c0}.errorf("unterminated string")
			}
			out = append(out, token{text: s[i : j+1], line: l, col: c0})
			adv(j + 1 - i)
		default:
			l, c0 := line, col
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n()\";", rune(s[j])) {
				j++
			}
			out = append(out, token{text: s[i:j], line: l, col: c0})
			adv(j - i)
		}
	}
	return out, nil
}

// node is an atom or a list.
type node struct {
	tok   token
	atom  string // set for atoms (strings keep their quotes)
	list  bool
	items []*node
}

func (n *node) errorf(format string, args ...any) error { return n.tok.errorf(format, args...) }

// head returns the first atom of a list, or "".
func (n *node) head() string {
	if n.list && len(n.items) > 0 && !n.items[0].list {
		return n.items[0].atom
	}
	return ""
}

type reader struct {
	toks []token
	pos  int
}

func (r *reader) list() (*node, error) {
	if r.pos >= len(r.toks) || r.toks[r.pos].text != "(" {
		if r.pos < len(r.toks) {
			return nil, r.toks[r.pos].errorf("expected '('")
		}
		return nil, fmt.Errorf("empty input")
	}
	n := &node{tok: r.toks[r.pos], list: true}
	r.pos++
	for {
		if r.pos >= len(r.toks) {
			return nil, n.errorf("unclosed '('")
		}
		t := r.toks[r.pos]
		switch t.text {
		case ")":
			r.pos++
			return n, nil
		case "(":
			c, err := r.list()
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		default:
			n.items = append(n.items, &node{tok: t, atom: t.text})
			r.pos++
		}
	}
}

// The module being assembled.

type valType byte

const (
	tI32 valType = 0x7f
	tI64 valType = 0x7e
	tF32 valType = 0x7d
	tF64 valType = 0x7c
)

func parseValType(n *node) (valType, error) {
	switch n.atom {
	case "i32":
		return tI32, nil
	case "i64":
		return tI64, nil
	case "f32":
		return tF32, nil
	case "f64":
		return tF64, nil
	}
	return 0, n.errorf("expected a value type (i32, i64, f32, f64), found %q", n.atom)
}

type funcType struct{ params, results []valType }

func (t funcType) key() string { return string(bytesOf(t.params)) + "|" + string(bytesOf(t.results)) }

func bytesOf(ts []valType) []byte {
	b := make([]byte, len(ts))
	for i, t := range ts {
		b[i] = byte(t)
	}
	return b
}

type function struct {
	name       string
	typ        funcType
	importMod  string // set for imports
	importName string
	paramNames []string
	locals     []valType
	localNames []string
	body       []*node
}

type global struct {
	typ  valType
	mut  bool
	init *node
}

type export struct {
	name string
	kind byte // 0 func, 2 memory, 3 global
	ref  *node
}

type data struct {
	offset *node
	bytes  []byte
}

type module struct {
	funcs     []*function // imports first
	funcIdx   map[string]int
	globals   []global
	globalIdx map[string]int
	memory    *[2]int64 // min, max (-1: none)
	memIdx    map[string]int
	exports   []export
	datas     []data
}

func (m *module) declare(fields []*node) error {
	// Imports come first in the function index space, whatever their
	// place in the text.
	for _, f := range fields {
		if f.head() == "import" {
			if err := m.declareImport(f); err != nil {
				return err
			}
		}
	}
	for _, f := range fields {
		switch f.head() {
		case "import":
		case "func":
			if err := m.declareFunc(f); err != nil {
				return err
			}
		case "memory":
			if err := m.declareMemory(f); err != nil {
				return err
			}
		case "global":
			if err := m.declareGlobal(f); err != nil {
				return err
			}
		case "export":
			if len(f.items) != 3 || !isString(f.items[1]) || !f.items[2].list || len(f.items[2].items) != 2 {
				return f.errorf("expected (export \"name\" (func|memory|global ref))")
			}
			kinds := map[string]byte{"func": 0, "memory": 2, "global": 3}
			k, ok := kinds[f.items[2].head()]
			if !ok {
				return f.items[2].errorf("cannot export %q", f.items[2].head())
			}
			name, err := unquote(f.items[1])
			if err != nil {
				return err
			}
			m.exports = append(m.exports, export{name: string(name), kind: k, ref: f.items[2].items[1]})
		case "data":
			if len(f.items) < 2 || !f.items[1].list {
				return f.errorf("expected (data (i32.const offset) \"bytes\"...)")
			}
			d := data{offset: f.items[1]}
			for _, s := range f.items[2:] {
				b, err := unquote(s)
				if err != nil {
					return err
				}
				d.bytes = append(d.bytes, b...)
			}
			m.datas = append(m.datas, d)
		default:
			return f.errorf("unsupported module field %q", f.head())
		}
	}
	return nil
}

func (m *module) addFuncName(f *function, at *node) error {
	if f.name != "" {
		if _, dup := m.funcIdx[f.name]; dup {
			return at.errorf("function %s is defined twice", f.name)
		}
		m.funcIdx[f.name] = len(m.funcs)
	}
	m.funcs = append(m.funcs, f)
	return nil
}

func (m *module) declareImport(f *node) error {
	if len(f.items) != 4 || !isString(f.items[1]) || !isString(f.items[2]) || f.items[3].head() != "func" {
		return f.errorf("expected (import \"module\" \"name\" (func $id (param ...) (result ...)))")
	}
	mod, err := unquote(f.items[1])
	if err != nil {
		return err
	}
	name, err := unquote(f.items[2])
	if err != nil {
		return err
	}
	fn := &function{importMod: string(mod), importName: string(name)}
	if err := m.signature(fn, f.items[3].items[1:], false); err != nil {
		return err
	}
	return m.addFuncName(fn, f)
}

// signature reads an optional $name, inline (export "x"), params, results
// and (with body) locals; the rest is the body.
func (m *module) signature(fn *function, items []*node, body bool) error {
	i := 0
	if i < len(items) && !items[i].list && strings.HasPrefix(items[i].atom, "$") {
		fn.name = items[i].atom
		i++
	}
	for ; i < len(items); i++ {
		it := items[i]
		switch it.head() {
		case "export":
			if !body || len(it.items) != 2 {
				return it.errorf("unexpected (export ...) here")
			}
			name, err := unquote(it.items[1])
			if err != nil {
				return err
			}
			ref := &node{tok: it.tok, atom: strconv.Itoa(len(m.funcs))}
			m.exports = append(m.exports, export{name: string(name), kind: 0, ref: ref})
		case "param", "local":
			names, ts, err := typedNames(it)
			if err != nil {
				return err
			}
			if it.head() == "param" {
				if len(fn.locals) > 0 {
					return it.errorf("params must come before locals")
				}
				fn.typ.params = append(fn.typ.params, ts...)
				fn.paramNames = append(fn.paramNames, names...)
			} else {
				if !body {
					return it.errorf("an import has no locals")
				}
				fn.locals = append(fn.locals, ts...)
				fn.localNames = append(fn.localNames, names...)
			}
		case "result":
			for _, t := range it.items[1:] {
				vt, err := parseValType(t)
				if err != nil {
					return err
				}
				fn.typ.results = append(fn.typ.results, vt)
			}
		default:
			if !body {
				return it.errorf("unexpected %q in an import", it.tok.text)
			}
			fn.body = items[i:]
			return nil
		}
	}
	return nil
}

// typedNames reads (param $a i32) or (param i32 i64).
func typedNames(n *node) ([]string, []valType, error) {
	items := n.items[1:]
	if len(items) == 2 && strings.HasPrefix(items[0].atom, "$") {
		t, err := parseValType(items[1])
		return []string{items[0].atom}, []valType{t}, err
	}
	var names []string
	var ts []valType
	for _, it := range items {
		t, err := parseValType(it)
		if err != nil {
			return nil, nil, err
		}
		names = append(names, "")
		ts = append(ts, t)
	}
	return names, ts, nil
}

func (m *module) declareFunc(f *node) error {
	fn := &function{}
	if err := m.signature(fn, f.items[1:], true); err != nil {
		return err
	}
	return m.addFuncName(fn, f)
}

func (m *module) declareMemory(f *node) error {
	if m.memory != nil {
		return f.errorf("only one memory is supported")
	}
	mem := [2]int64{0, -1}
	items := f.items[1:]
	if len(items) > 0 && strings.HasPrefix(items[0].atom, "$") {
		m.memIdx[items[0].atom] = 0
		items = items[1:]
	}
	var nums []int64
	for _, it := range items {
		if it.head() == "export" && len(it.items) == 2 {
			name, err := unquote(it.items[1])
			if err != nil {
				return err
			}
			m.exports = append(m.exports, export{name: string(name), kind: 2, ref: &node{tok: it.tok, atom: "0"}})
			continue
		}
		v, err := strconv.ParseInt(it.atom, 0, 64)
		if err != nil {
			return it.errorf("expected a page count, found %q", it.tok.text)
		}
		nums = append(nums, v)
	}
	if len(nums) < 1 || len(nums) > 2 {
		return f.errorf("expected (memory min [max])")
	}
	mem[0] = nums[0]
	if len(nums) == 2 {
		mem[1] = nums[1]
	}
	m.memory = &mem
	return nil
}

func (m *module) declareGlobal(f *node) error {
	items := f.items[1:]
	if len(items) > 0 && strings.HasPrefix(items[0].atom, "$") {
		m.globalIdx[items[0].atom] = len(m.globals)
		items = items[1:]
	}
	if len(items) != 2 {
		return f.errorf("expected (global $id type (init))")
	}
	g := global{init: items[1]}
	t := items[0]
	if t.head() == "mut" && len(t.items) == 2 {
		g.mut = true
		t = t.items[1]
	}
	vt, err := parseValType(t)
	if err != nil {
		return err
	}
	g.typ = vt
	m.globals = append(m.globals, g)
	return nil
}

func isString(n *node) bool { return !n.list && strings.HasPrefix(n.atom, "\"") }

// unquote decodes a string literal: \n \t \\ \' \" and \hh escapes.
func unquote(n *node) ([]byte, error) {
	if !isString(n) {
		return nil, n.errorf("expected a string")
	}
	s := n.atom[1 : len(n.atom)-1]
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		if i >= len(s) {
			return nil, n.errorf("bad escape at the end of a string")
		}
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case '\\', '\'', '"':
			out = append(out, s[i])
		default:
			if i+1 >= len(s) {
				return nil, n.errorf("bad escape in a string")
			}
			v, err := strconv.ParseUint(s[i:i+2], 16, 8)
			if err != nil {
				return nil, n.errorf("bad escape \\%s in a string", s[i:i+2])
			}
			out = append(out, byte(v))
			i++
		}
	}
	return out, nil
}

// Encoding.

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func name(b []byte, s string) []byte { return append(uleb(b, uint64(len(s))), s...) }

func section(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = uleb(out, uint64(len(body)))
	return append(out, body...)
}

func vec(b []byte, n int) []byte { return uleb(b, uint64(n)) }

func (m *module) encode() ([]byte, error) {
	// Types, deduplicated in order of first use.
	var types []funcType
	typeIdx := map[string]int{}
	typeOf := func(t funcType) int {
		k := t.key()
		if i, ok := typeIdx[k]; ok {
			return i
		}
		typeIdx[k] = len(types)
		types = append(types, t)
		return len(types) - 1
	}
	for _, f := range m.funcs {
		typeOf(f.typ)
	}
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}

	var b []byte
	b = vec(b, len(types))
	for _, t := range types {
		b = append(b, 0x60)
		b = vec(b, len(t.params))
		b = append(b, bytesOf(t.params)...)
		b = vec(b, len(t.results))
		b = append(b, bytesOf(t.results)...)
	}
	out = section(out, 1, b)

	var imports, defined []*function
	for _, f := range m.funcs {
		if f.importMod != "" {
			imports = append(imports, f)
		} else {
			defined = append(defined, f)
		}
	}
	if len(imports) > 0 {
		b = vec(nil, len(imports))
		for _, f := range imports {
			b = name(b, f.importMod)
			b = name(b, f.importName)
			b = append(b, 0)
			b = uleb(b, uint64(typeOf(f.typ)))
		}
		out = section(out, 2, b)
	}
	b = vec(nil, len(defined))
	for _, f := range defined {
		b = uleb(b, uint64(typeOf(f.typ)))
	}
	out = section(out, 3, b)
	if m.memory != nil {
		b = vec(nil, 1)
		if m.memory[1] < 0 {
			b = append(b, 0)
			b = uleb(b, uint64(m.memory[0]))
		} else {
			b = append(b, 1)
			b = uleb(b, uint64(m.memory[0]))
			b = uleb(b, uint64(m.memory[1]))
		}
		out = section(out, 5, b)
	}
	if len(m.globals) > 0 {
		b = vec(nil, len(m.globals))
		for _, g := range m.globals {
			b = append(b, byte(g.typ))
			if g.mut {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
			fc := &funcCtx{m: m, locals: map[string]int{}}
			if err := fc.instr(g.init); err != nil {
				return nil, err
			}
			b = append(b, fc.code...)
			b = append(b, 0x0b)
		}
		out = section(out, 6, b)
	}
	b = vec(nil, len(m.exports))
	for _, e := range m.exports {
		b = name(b, e.name)
		b = append(b, e.kind)
		var idx int
		var err error
		switch e.kind {
		case 0:
			idx, err = m.index(e.ref, m.funcIdx, "function")
		case 2:
			idx, err = m.index(e.ref, m.memIdx, "memory")
		case 3:
			idx, err = m.index(e.ref, m.globalIdx, "global")
		}
		if err != nil {
			return nil, err
		}
		b = uleb(b, uint64(idx))
	}
	out = section(out, 7, b)

	b = vec(nil, len(defined))
	for _, f := range defined {
		body, err := m.funcBody(f)
		if err != nil {
			return nil, err
		}
		b = uleb(b, uint64(len(body)))
		b = append(b, body...)
	}
	out = section(out, 10, b)

	if len(m.datas) > 0 {
		b = vec(nil, len(m.datas))
		for _, d := range m.datas {
			b = append(b, 0)
			fc := &funcCtx{m: m, locals: map[string]int{}}
			if err := fc.instr(d.offset); err != nil {
				return nil, err
			}
			b = append(b, fc.code...)
			b = append(b, 0x0b)
			b = uleb(b, uint64(len(d.bytes)))
			b = append(b, d.bytes...)
		}
		out = section(out, 11, b)
	}
	return out, nil
}

// index resolves $name or a number.
func (m *module) index(n *node, names map[string]int, what string) (int, error) {
	if strings.HasPrefix(n.atom, "$") {
		i, ok := names[n.atom]
		if !ok {
			return 0, n.errorf("unknown %s %s", what, n.atom)
		}
		return i, nil
	}
	v, err := strconv.ParseUint(n.atom, 10, 32)
	if err != nil {
		return 0, n.errorf("expected a %s index or $name, found %q", what, n.tok.text)
	}
	return int(v), nil
}

type funcCtx struct {
	m      *module
	locals map[string]int
	labels []string // innermost last
	code   []byte
}

func (m *module) funcBody(f *function) ([]byte, error) {
	fc := &funcCtx{m: m, locals: map[string]int{}}
	for i, n := range append(append([]string(nil), f.paramNames...), f.localNames...) {
		if n != "" {
			fc.locals[n] = i
		}
	}
	var b []byte
	// Locals, run-length encoded by type.
	var groups [][2]int
	for _, t := range f.locals {
		if len(groups) > 0 && groups[len(groups)-1][1] == int(t) {
			groups[len(groups)-1][0]++
		} else {
			groups = append(groups, [2]int{1, int(t)})
		}
	}
	b = vec(b, len(groups))
	for _, g := range groups {
		b = uleb(b, uint64(g[0]))
		b = append(b, byte(g[1]))
	}
	if err := fc.seq(f.body); err != nil {
		return nil, err
	}
	if len(fc.labels) != 0 {
		return nil, fmt.Errorf("function %s: a block is not closed with end", f.name)
	}
	b = append(b, fc.code...)
	return append(b, 0x0b), nil
}

// seq assembles a sequence of flat and folded instructions.
func (fc *funcCtx) seq(items []*node) error {
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.list {
			if err := fc.instr(it); err != nil {
				return err
			}
			continue
		}
		op := it.atom
		// Flat immediates: the atoms that follow, as the op takes them.
		n := immediates(op, items[i+1:])
		if err := fc.emit(it, op, items[i+1:i+1+n]); err != nil {
			return err
		}
		i += n
	}
	return nil
}

// immediates counts the atoms after op that are its immediates.
func immediates(op string, rest []*node) int {
	n := 0
	atom := func(k int) bool { return k < len(rest) && !rest[k].list }
	switch {
	case op == "block" || op == "loop" || op == "if":
		if atom(0) && strings.HasPrefix(rest[0].atom, "$") {
			n++
		}
		if n < len(rest) && rest[n].head() == "result" {
			n++
		}
		return n
	case op == "br_table":
		for atom(n) && !isOp(rest[n].atom) {
			n++
		}
		return n
	case strings.HasPrefix(op, "memory."):
		return 0
	case op == "end" || op == "else":
		if atom(0) && strings.HasPrefix(rest[0].atom, "$") {
			return 1
		}
		return 0
	case strings.HasSuffix(op, ".load") || strings.Contains(op, ".load") || strings.Contains(op, ".store"):
		for atom(n) && (strings.HasPrefix(rest[n].atom, "offset=") || strings.HasPrefix(rest[n].atom, "align=")) {
			n++
		}
		return n
	}
	if _, ok := noImm[op]; ok {
		return 0
	}
	if atom(0) {
		return 1
	}
	return 0
}

func isOp(s string) bool {
	if _, ok := noImm[s]; ok {
		return true
	}
	return strings.Contains(s, ".") || s == "br" || s == "br_if" || s == "call" || s == "block" || s == "loop" || s == "if" || s == "end"
}

// instr assembles one folded instruction: its operands, then itself.
func (fc *funcCtx) instr(n *node) error {
	if !n.list || len(n.items) == 0 || n.items[0].list {
		return n.errorf("expected an instruction")
	}
	op := n.items[0].atom
	rest := n.items[1:]
	switch op {
	case "block", "loop":
		k := immediates(op, rest)
		if err := fc.emit(n.items[0], op, rest[:k]); err != nil {
			return err
		}
		if err := fc.seq(rest[k:]); err != nil {
			return err
		}
		return fc.emit(n.items[0], "end", nil)
	case "if":
		k := immediates(op, rest)
		body := rest[k:]
		var then, els *node
		var conds []*node
		for _, b := range body {
			switch b.head() {
			case "then":
				then = b
			case "else":
				els = b
			default:
				conds = append(conds, b)
			}
		}
		if then == nil {
			return n.errorf("expected (then ...) in a folded if")
		}
		for _, c := range conds {
			if err := fc.instr(c); err != nil {
				return err
			}
		}
		if err := fc.emit(n.items[0], "if", rest[:k]); err != nil {
			return err
		}
		if err := fc.seq(then.items[1:]); err != nil {
			return err
		}
		if els != nil {
			if err := fc.emit(els, "else", nil); err != nil {
				return err
			}
			if err := fc.seq(els.items[1:]); err != nil {
				return err
			}
		}
		return fc.emit(n.items[0], "end", nil)
	}
	k := immediates(op, rest)
	for _, operand := range rest[k:] {
		if err := fc.instr(operand); err != nil {
			return err
		}
	}
	return fc.emit(n.items[0], op, rest[:k])
}

// label resolves a branch target: $name or a depth.
func (fc *funcCtx) label(n *node) (int, error) {
	if strings.HasPrefix(n.atom, "$") {
		for d := len(fc.labels) - 1; d >= 0; d-- {
			if fc.labels[d] == n.atom {
				return len(fc.labels) - 1 - d, nil
			}
		}
		return 0, n.errorf("unknown label %s", n.atom)
	}
	v, err := strconv.ParseUint(n.atom, 10, 32)
	if err != nil {
		return 0, n.errorf("expected a label, found %q", n.tok.text)
	}
	return int(v), nil
}

func (fc *funcCtx) emit(at *node, op string, imm []*node) error {
	if code, ok := noImm[op]; ok {
		if len(imm) != 0 {
			return at.errorf("%s takes no immediate", op)
		}
		fc.code = append(fc.code, code...)
		return nil
	}
	need := func(k int) error {
		if len(imm) != k {
			return at.errorf("%s takes %d immediate(s)", op, k)
		}
		return nil
	}
	switch op {
	case "block", "loop", "if":
		lbl := ""
		if len(imm) > 0 && !imm[0].list {
			lbl = imm[0].atom
			imm = imm[1:]
		}
		fc.labels = append(fc.labels, lbl)
		fc.code = append(fc.code, map[string]byte{"block": 0x02, "loop": 0x03, "if": 0x04}[op])
		if len(imm) == 1 && imm[0].head() == "result" && len(imm[0].items) == 2 {
			t, err := parseValType(imm[0].items[1])
			if err != nil {
				return err
			}
			fc.code = append(fc.code, byte(t))
		} else if len(imm) != 0 {
			return at.errorf("a block type is at most one (result type)")
		} else {
			fc.code = append(fc.code, 0x40)
		}
		return nil
	case "else":
		fc.code = append(fc.code, 0x05)
		return nil
	case "end":
		if len(fc.labels) == 0 {
			return at.errorf("end without a block")
		}
		fc.labels = fc.labels[:len(fc.labels)-1]
		fc.code = append(fc.code, 0x0b)
		return nil
	case "br", "br_if":
		if err := need(1); err != nil {
			return err
		}
		d, err := fc.label(imm[0])
		if err != nil {
			return err
		}
		fc.code = append(fc.code, map[string]byte{"br": 0x0c, "br_if": 0x0d}[op])
		fc.code = uleb(fc.code, uint64(d))
		return nil
	case "br_table":
		if len(imm) < 1 {
			return at.errorf("br_table needs at least a default label")
		}
		fc.code = append(fc.code, 0x0e)
		fc.code = vec(fc.code, len(imm)-1)
		for _, l := range imm {
			d, err := fc.label(l)
			if err != nil {
				return err
			}
			fc.code = uleb(fc.code, uint64(d))
		}
		return nil
	case "call":
		if err := need(1); err != nil {
			return err
		}
		i, err := fc.m.index(imm[0], fc.m.funcIdx, "function")
		if err != nil {
			return err
		}
		fc.code = append(fc.code, 0x10)
		fc.code = uleb(fc.code, uint64(i))
		return nil
	case "local.get", "local.set", "local.tee", "global.get", "global.set":
		if err := need(1); err != nil {
			return err
		}
		names := fc.locals
		what := "local"
		if strings.HasPrefix(op, "global") {
			names, what = fc.m.globalIdx, "global"
		}
		i, err := fc.m.index(imm[0], names, what)
		if err != nil {
			return err
		}
		fc.code = append(fc.code, map[string]byte{"local.get": 0x20, "local.set": 0x21, "local.tee": 0x22, "global.get": 0x23, "global.set": 0x24}[op])
		fc.code = uleb(fc.code, uint64(i))
		return nil
	case "i32.const", "i64.const":
		if err := need(1); err != nil {
			return err
		}
		s := strings.ReplaceAll(imm[0].atom, "_", "")
		var v int64
		if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			v = int64(u)
			if op == "i32.const" {
				if u > math.MaxUint32 {
					return imm[0].errorf("%s out of range for i32", imm[0].atom)
				}
				v = int64(int32(uint32(u)))
			}
		} else if sv, err := strconv.ParseInt(s, 0, 64); err == nil {
			v = sv
			if op == "i32.const" && (sv < math.MinInt32) {
				return imm[0].errorf("%s out of range for i32", imm[0].atom)
			}
		} else {
			return imm[0].errorf("expected an integer, found %q", imm[0].tok.text)
		}
		if op == "i32.const" {
			fc.code = append(fc.code, 0x41)
		} else {
			fc.code = append(fc.code, 0x42)
		}
		fc.code = sleb(fc.code, v)
		return nil
	case "f32.const", "f64.const":
		if err := need(1); err != nil {
			return err
		}
		s := strings.ReplaceAll(imm[0].atom, "_", "")
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return imm[0].errorf("expected a number, found %q", imm[0].tok.text)
		}
		if op == "f32.const" {
			fc.code = append(fc.code, 0x43)
			bits := math.Float32bits(float32(f))
			fc.code = append(fc.code, byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24))
		} else {
			fc.code = append(fc.code, 0x44)
			bits := math.Float64bits(f)
			for k := 0; k < 8; k++ {
				fc.code = append(fc.code, byte(bits>>(8*k)))
			}
		}
		return nil
	case "memory.size", "memory.grow":
		fc.code = append(fc.code, map[string]byte{"memory.size": 0x3f, "memory.grow": 0x40}[op], 0)
		return nil
	case "memory.copy":
		fc.code = append(fc.code, 0xfc, 10, 0, 0)
		return nil
	case "memory.fill":
		fc.code = append(fc.code, 0xfc, 11, 0)
		return nil
	}
	if mo, ok := memOps[op]; ok {
		align, offset := mo.align, uint64(0)
		for _, a := range imm {
			switch {
			case strings.HasPrefix(a.atom, "offset="):
				v, err := strconv.ParseUint(a.atom[len("offset="):], 0, 32)
				if err != nil {
					return a.errorf("bad offset %q", a.atom)
				}
				offset = v
			case strings.HasPrefix(a.atom, "align="):
				v, err := strconv.ParseUint(a.atom[len("align="):], 0, 32)
				if err != nil || v == 0 || v&(v-1) != 0 {
					return a.errorf("bad alignment %q", a.atom)
				}
				align = 0
				for v > 1 {
					align++
					v >>= 1
				}
			default:
				return a.errorf("expected offset= or align=, found %q", a.atom)
			}
		}
		fc.code = append(fc.code, mo.code)
		fc.code = uleb(fc.code, uint64(align))
		fc.code = uleb(fc.code, offset)
		return nil
	}
	return at.errorf("unknown or unsupported instruction %q", op)
}

type memOp struct {
	code  byte
	align int // natural alignment, log2
}

var memOps = map[string]memOp{
	"i32.load": {0x28, 2}, "i64.load": {0x29, 3}, "f32.load": {0x2a, 2}, "f64.load": {0x2b, 3},
	"i32.load8_s": {0x2c, 0}, "i32.load8_u": {0x2d, 0}, "i32.load16_s": {0x2e, 1}, "i32.load16_u": {0x2f, 1},
	"i64.load8_s": {0x30, 0}, "i64.load8_u": {0x31, 0}, "i64.load16_s": {0x32, 1}, "i64.load16_u": {0x33, 1},
	"i64.load32_s": {0x34, 2}, "i64.load32_u": {0x35, 2},
	"i32.store": {0x36, 2}, "i64.store": {0x37, 3}, "f32.store": {0x38, 2}, "f64.store": {0x39, 3},
	"i32.store8": {0x3a, 0}, "i32.store16": {0x3b, 1}, "i64.store8": {0x3c, 0}, "i64.store16": {0x3d, 1}, "i64.store32": {0x3e, 2},
}

// noImm are the instructions without immediates, with their encoding.
var noImm = map[string][]byte{
	"unreachable": {0x00}, "nop": {0x01}, "return": {0x0f}, "drop": {0x1a}, "select": {0x1b},
	"i32.eqz": {0x45}, "i32.eq": {0x46}, "i32.ne": {0x47}, "i32.lt_s": {0x48}, "i32.lt_u": {0x49},
	"i32.gt_s": {0x4a}, "i32.gt_u": {0x4b}, "i32.le_s": {0x4c}, "i32.le_u": {0x4d}, "i32.ge_s": {0x4e}, "i32.ge_u": {0x4f},
	"i64.eqz": {0x50}, "i64.eq": {0x51}, "i64.ne": {0x52}, "i64.lt_s": {0x53}, "i64.lt_u": {0x54},
	"i64.gt_s": {0x55}, "i64.gt_u": {0x56}, "i64.le_s": {0x57}, "i64.le_u": {0x58}, "i64.ge_s": {0x59}, "i64.ge_u": {0x5a},
	"f32.eq": {0x5b}, "f32.ne": {0x5c}, "f32.lt": {0x5d}, "f32.gt": {0x5e}, "f32.le": {0x5f}, "f32.ge": {0x60},
	"f64.eq": {0x61}, "f64.ne": {0x62}, "f64.lt": {0x63}, "f64.gt": {0x64}, "f64.le": {0x65}, "f64.ge": {0x66},
	"i32.clz": {0x67}, "i32.ctz": {0x68}, "i32.popcnt": {0x69}, "i32.add": {0x6a}, "i32.sub": {0x6b}, "i32.mul": {0x6c},
	"i32.div_s": {0x6d}, "i32.div_u": {0x6e}, "i32.rem_s": {0x6f}, "i32.rem_u": {0x70}, "i32.and": {0x71}, "i32.or": {0x72},
	"i32.xor": {0x73}, "i32.shl": {0x74}, "i32.shr_s": {0x75}, "i32.shr_u": {0x76}, "i32.rotl": {0x77}, "i32.rotr": {0x78},
	"i64.clz": {0x79}, "i64.ctz": {0x7a}, "i64.popcnt": {0x7b}, "i64.add": {0x7c}, "i64.sub": {0x7d}, "i64.mul": {0x7e},
	"i64.div_s": {0x7f}, "i64.div_u": {0x80}, "i64.rem_s": {0x81}, "i64.rem_u": {0x82}, "i64.and": {0x83}, "i64.or": {0x84},
	"i64.xor": {0x85}, "i64.shl": {0x86}, "i64.shr_s": {0x87}, "i64.shr_u": {0x88}, "i64.rotl": {0x89}, "i64.rotr": {0x8a},
	"f32.abs": {0x8b}, "f32.neg": {0x8c}, "f32.ceil": {0x8d}, "f32.floor": {0x8e}, "f32.trunc": {0x8f}, "f32.nearest": {0x90},
	"f32.sqrt": {0x91}, "f32.add": {0x92}, "f32.sub": {0x93}, "f32.mul": {0x94}, "f32.div": {0x95}, "f32.min": {0x96},
	"f32.max": {0x97}, "f32.copysign": {0x98},
	"f64.abs": {0x99}, "f64.neg": {0x9a}, "f64.ceil": {0x9b}, "f64.floor": {0x9c}, "f64.trunc": {0x9d}, "f64.nearest": {0x9e},
	"f64.sqrt": {0x9f}, "f64.add": {0xa0}, "f64.sub": {0xa1}, "f64.mul": {0xa2}, "f64.div": {0xa3}, "f64.min": {0xa4},
	"f64.max": {0xa5}, "f64.copysign": {0xa6},
	"i32.wrap_i64": {0xa7}, "i32.trunc_f32_s": {0xa8}, "i32.trunc_f32_u": {0xa9}, "i32.trunc_f64_s": {0xaa}, "i32.trunc_f64_u": {0xab},
	"i64.extend_i32_s": {0xac}, "i64.extend_i32_u": {0xad}, "i64.trunc_f32_s": {0xae}, "i64.trunc_f32_u": {0xaf},
	"i64.trunc_f64_s": {0xb0}, "i64.trunc_f64_u": {0xb1},
	"f32.convert_i32_s": {0xb2}, "f32.convert_i32_u": {0xb3}, "f32.convert_i64_s": {0xb4}, "f32.convert_i64_u": {0xb5},
	"f32.demote_f64": {0xb6}, "f64.convert_i32_s": {0xb7}, "f64.convert_i32_u": {0xb8}, "f64.convert_i64_s": {0xb9},
	"f64.convert_i64_u": {0xba}, "f64.promote_f32": {0xbb},
	"i32.reinterpret_f32": {0xbc}, "i64.reinterpret_f64": {0xbd}, "f32.reinterpret_i32": {0xbe}, "f64.reinterpret_i64": {0xbf},
}
