package sigma

import (
	"fmt"
	"strings"
)

// A condition is parsed into a tree of condNodes. The grammar, from the
// least binding operator to the most:
//
//	expr    = and { "or" and }
//	and     = unary { "and" unary }
//	unary   = "not" unary | primary
//	primary = "(" expr ")" | quant "of" ( "them" | pattern ) | identifier
//	quant   = "1" | "any" | "all"
//
// Keywords are matched without case; identifiers and patterns (an
// identifier with * wildcards) are runs of characters other than blanks,
// parentheses and '|'. A '|' begins a Sigma 1 aggregation (count() by
// ...), which is reported as such.

type condOp uint8

const (
	condIdent condOp = iota // name
	condOf                  // all: all of / 1 of; name: the pattern ("" for them)
	condAnd
	condOr
	condNot
)

type condNode struct {
	op   condOp
	name string
	all  bool // condOf: all of (else 1 of)
	kids []*condNode
	pos  int // byte offset in the condition text
}

// condError is a syntax error at an offset of the condition.
type condError struct {
	pos int
	msg string
}

func (e *condError) Error() string { return fmt.Sprintf("column %d: %s", e.pos+1, e.msg) }

type condToken struct {
	text string // "(" ")" or a word; "" at the end
	pos  int
}

type condParser struct {
	toks []condToken
	i    int
	src  string
}

// parseCondition parses one condition string.
func parseCondition(src string) (*condNode, error) {
	p := &condParser{src: src}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			p.toks = append(p.toks, condToken{string(c), i})
			i++
		case c == '|':
			return nil, &condError{i, "aggregations in conditions (| count() ..., near) are Sigma 1 syntax that Sigma 2 replaced with correlation rules; write a correlation rule"}
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\n\r()|", rune(src[j])) {
				j++
			}
			p.toks = append(p.toks, condToken{src[i:j], i})
			i = j
		}
	}
	p.toks = append(p.toks, condToken{"", len(src)})
	if len(p.toks) == 1 {
		return nil, &condError{0, "the condition is empty"}
	}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.text != "" {
		return nil, &condError{t.pos, fmt.Sprintf("unexpected %q: expected and, or, or the end of the condition", t.text)}
	}
	return n, nil
}

// maxCondDepth bounds nesting, so that a hostile condition cannot
// exhaust the stack.
const maxCondDepth = 200

func (p *condParser) peek() condToken { return p.toks[p.i] }

func (p *condParser) next() condToken {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func isWord(t condToken, w string) bool { return strings.EqualFold(t.text, w) }

func (p *condParser) expr(depth int) (*condNode, error) {
	if depth > maxCondDepth {
		return nil, &condError{p.peek().pos, "the condition nests too deeply"}
	}
	x, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for isWord(p.peek(), "or") {
		t := p.next()
		y, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		x = join(condOr, x, y, t.pos)
	}
	return x, nil
}

func (p *condParser) and(depth int) (*condNode, error) {
	x, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for isWord(p.peek(), "and") {
		t := p.next()
		y, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		x = join(condAnd, x, y, t.pos)
	}
	return x, nil
}

// join makes x op y, flattening a chain of one operator.
func join(op condOp, x, y *condNode, pos int) *condNode {
	if x.op == op {
		x.kids = append(x.kids, y)
		return x
	}
	return &condNode{op: op, kids: []*condNode{x, y}, pos: pos}
}

func (p *condParser) unary(depth int) (*condNode, error) {
	if depth > maxCondDepth {
		return nil, &condError{p.peek().pos, "the condition nests too deeply"}
	}
	t := p.peek()
	if isWord(t, "not") {
		p.next()
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &condNode{op: condNot, kids: []*condNode{x}, pos: t.pos}, nil
	}
	return p.primary(depth)
}

func (p *condParser) primary(depth int) (*condNode, error) {
	t := p.next()
	switch {
	case t.text == "":
		return nil, &condError{t.pos, "the condition ends where a search identifier, not, 1 of or ( was expected"}
	case t.text == "(":
		x, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.text != ")" {
			return nil, &condError{c.pos, fmt.Sprintf("expected ) to close the ( at column %d", t.pos+1)}
		}
		return x, nil
	case t.text == ")":
		return nil, &condError{t.pos, "unexpected )"}
	case isWord(p.peek(), "of"):
		all := false
		switch {
		case t.text == "1" || isWord(t, "any"):
		case isWord(t, "all"):
			all = true
		default:
			return nil, &condError{t.pos, fmt.Sprintf("%q of: only 1 of and all of are Sigma", t.text)}
		}
		p.next()
		target := p.next()
		switch {
		case target.text == "" || target.text == "(" || target.text == ")":
			return nil, &condError{target.pos, "expected them or a search identifier pattern after of"}
		case isWord(target, "them"):
			return &condNode{op: condOf, all: all, pos: t.pos}, nil
		}
		return &condNode{op: condOf, all: all, name: target.text, pos: t.pos}, nil
	}
	for _, kw := range []string{"and", "or", "of", "them"} {
		if isWord(t, kw) {
			return nil, &condError{t.pos, fmt.Sprintf("unexpected %q where a search identifier was expected", t.text)}
		}
	}
	return &condNode{op: condIdent, name: t.text, pos: t.pos}, nil
}

// matchPattern reports whether the search identifier name matches the
// pattern of a "1 of" (its * match any run of characters).
func matchPattern(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(name, mid)
		if i < 0 {
			return false
		}
		name = name[i+len(mid):]
	}
	return len(name) >= len(last) && strings.HasSuffix(name, last)
}
