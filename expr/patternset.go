package expr

import (
	"fmt"
	"regexp"
	resyntax "regexp/syntax"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sluicesql/sluice/types"
)

// Multi-pattern matching. A rule set tests one string column against
// thousands of constant patterns (LIKE, SIMILAR TO, REGEXP, POSITION); a
// PatternSet answers all of them for one value in one pass, with the
// semantics of each function exactly as its own compiled form has them.
//
// How: a pattern that is a literal test (equals, starts with, ends with,
// contains) is decided without a regular expression; equality is one map
// lookup. Every other pattern has clauses of literals (requiredClauses:
// each match holds a literal of each clause). All literals go into one
// Aho-Corasick automaton (ahocorasick.go), run once over the value: a
// literal test is decided by its literal's occurrence (and the position,
// checked directly), and a pattern is verified with its own matcher only
// when a literal of each of its clauses occurred. Regular expressions are
// verified with an automaton built ahead of time (regexdfa.go) where they
// have one, else with Go's regexp; patterns without a literal are
// verified on every value.
//
// One automaton for all the verified expressions (as RE2's Set) was
// tried: eagerly built, 16 of the URL benchmark's expressions took 4,338
// states and 32 over 20,000, and it must run over every value, where the
// literals leave about 4 of 100 expressions to verify.

// PatternKind is the SQL function a Pattern stands for.
type PatternKind uint8

const (
	// Like is x LIKE 'Text' [ESCAPE 'Escape'].
	Like PatternKind = iota
	// SimilarTo is x SIMILAR TO 'Text' [ESCAPE 'Escape'].
	SimilarTo
	// Regexp is REGEXP(x, 'Text'): the regular expression matches
	// somewhere in x. An empty Text matches nothing, as in Flink.
	Regexp
	// Contains is POSITION('Text' IN x) > 0 (and its spellings with
	// LOCATE and INSTR): x contains Text.
	Contains
)

var patternKindNames = [...]string{Like: "LIKE", SimilarTo: "SIMILAR TO", Regexp: "REGEXP", Contains: "CONTAINS"}

// String names the kind.
func (k PatternKind) String() string {
	if int(k) < len(patternKindNames) {
		return patternKindNames[k]
	}
	return fmt.Sprintf("PatternKind(%d)", k)
}

// Pattern is one constant pattern of a string predicate.
type Pattern struct {
	Kind PatternKind
	Text string
	// Escape is the escape character of LIKE and SIMILAR TO; 0 for none.
	Escape rune
}

// String prints the pattern as the predicate it stands for, over x.
func (p Pattern) String() string {
	esc := ""
	if p.Escape != 0 {
		esc = " ESCAPE " + quote(string(p.Escape))
	}
	switch p.Kind {
	case Like, SimilarTo:
		return "x " + p.Kind.String() + " " + quote(p.Text) + esc
	case Regexp:
		return "REGEXP(x, " + quote(p.Text) + ")"
	case Contains:
		return "POSITION(" + quote(p.Text) + " IN x) > 0"
	}
	return p.Kind.String() + " " + quote(p.Text)
}

// AsPattern recognizes a predicate that tests a string expression against
// one constant pattern: x [NOT] LIKE 'p' [ESCAPE 'e'], x [NOT] SIMILAR TO
// 'p' [ESCAPE 'e'], REGEXP(x, 'p'), POSITION('p' IN x) > 0 (or <> 0,
// >= 1, 0 < POSITION(...), and = 0, < 1, <= 0 negated; LOCATE('p', x)
// and INSTR(x, 'p') likewise, with a start of 1), and NOT of any of them.
// It returns the tested expression, the pattern, and whether the
// predicate is the pattern's negation. For a NULL x the predicate is
// NULL, negated or not; the caller handles that.
//
// The pattern and escape must be literals, not NULL, and must compile:
// anything else gives ok false and stays on the normal evaluation path,
// where its errors surface as before. Fold the predicate first (Fold) so
// that constant expressions are literals.
func AsPattern(n Node) (subject Node, p Pattern, negated bool, ok bool) {
	call, isCall := n.(*Call)
	if !isCall || call.Fn == nil || call.Fn.builtin == nil {
		return nil, Pattern{}, false, false
	}
	switch call.Name {
	case "NOT":
		subject, p, negated, ok = AsPattern(call.Args[0])
		return subject, p, !negated, ok
	case "LIKE", "NOT LIKE", "SIMILAR TO", "NOT SIMILAR TO":
		text, isStr := stringLiteral(call.Args[1])
		if !isStr {
			break
		}
		p = Pattern{Kind: Like, Text: text}
		if strings.HasSuffix(call.Name, "SIMILAR TO") {
			p.Kind = SimilarTo
		}
		if len(call.Args) > 2 {
			e, isStr := stringLiteral(call.Args[2])
			if !isStr {
				break
			}
			esc, err := escapeRune(types.StringValue(e))
			if err != nil {
				break
			}
			p.Escape = esc
		}
		if checkSetPattern(p) != nil {
			break
		}
		return call.Args[0], p, strings.HasPrefix(call.Name, "NOT "), true
	case "REGEXP":
		text, isStr := stringLiteral(call.Args[1])
		if !isStr {
			break
		}
		p = Pattern{Kind: Regexp, Text: text}
		if checkSetPattern(p) != nil {
			break
		}
		return call.Args[0], p, false, true
	case "=", "<>", "<", "<=", ">", ">=":
		op := call.Name
		x, y := call.Args[0], call.Args[1]
		if _, isLit := x.(*Literal); isLit {
			x, y = y, x
			op = mirrorCompare[op]
		}
		k, isInt := intLiteral(y)
		if !isInt {
			break
		}
		subject, text, isPos := containsTest(x)
		if !isPos {
			break
		}
		// POSITION is 0 when x lacks the text, else at least 1: the
		// comparison must split exactly there.
		switch {
		case op == ">" && k == 0, op == ">=" && k == 1, op == "<>" && k == 0:
			return subject, Pattern{Kind: Contains, Text: text}, false, true
		case op == "=" && k == 0, op == "<" && k == 1, op == "<=" && k == 0:
			return subject, Pattern{Kind: Contains, Text: text}, true, true
		}
	}
	return nil, Pattern{}, false, false
}

// mirrorCompare gives the comparison with its operands swapped.
var mirrorCompare = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// containsTest recognizes POSITION('p' IN x), LOCATE('p', x[, 1]) and
// INSTR(x, 'p'[, 1[, 1]]), which are 0 when x lacks p and positive
// otherwise, possibly under a widening integer CAST.
func containsTest(n Node) (subject Node, text string, ok bool) {
	if c, isCast := n.(*Cast); isCast && !c.Try && c.X.Type().Kind == types.KindInt &&
		(c.T.Kind == types.KindInt || c.T.Kind == types.KindBigInt) {
		n = c.X
	}
	call, isCall := n.(*Call)
	if !isCall || call.Fn == nil || call.Fn.builtin == nil {
		return nil, "", false
	}
	one := func(i int) bool {
		k, isInt := intLiteral(call.Args[i])
		return isInt && k == 1
	}
	var sub Node
	switch call.Name {
	case "POSITION":
		sub, subject = call.Args[0], call.Args[1]
	case "LOCATE":
		// From 1 or less searches from the first character.
		if len(call.Args) > 2 {
			k, isInt := intLiteral(call.Args[2])
			if !isInt || k > 1 {
				return nil, "", false
			}
		}
		sub, subject = call.Args[0], call.Args[1]
	case "INSTR":
		for i := 2; i < len(call.Args); i++ {
			if !one(i) {
				return nil, "", false
			}
		}
		sub, subject = call.Args[1], call.Args[0]
	default:
		return nil, "", false
	}
	text, ok = stringLiteral(sub)
	return subject, text, ok
}

// stringLiteral returns the text of a non-NULL character string literal.
func stringLiteral(n Node) (string, bool) {
	l, ok := n.(*Literal)
	if !ok || l.V.IsNull() || !l.V.Kind().IsString() {
		return "", false
	}
	return l.V.Str(), true
}

// intLiteral returns the value of a non-NULL integer literal.
func intLiteral(n Node) (int64, bool) {
	l, ok := n.(*Literal)
	if !ok || l.V.IsNull() || !l.V.Kind().IsInteger() {
		return 0, false
	}
	return l.V.Int(), true
}

// setOp is how a PatternSet decides one pattern.
type setOp uint8

const (
	opNever    setOp = iota // matches nothing
	opAlways                // matches every string
	opEquals                // the string is lit
	opPrefix                // the string starts with lit
	opSuffix                // the string ends with lit
	opContains              // the string contains lit
	opVerify                // m decides, when one of lits occurs
)

// setPattern is a pattern prepared for a PatternSet.
type setPattern struct {
	op  setOp
	lit string  // opEquals ... opContains
	m   matcher // opVerify
	// dfa is m's automaton, when it has one: patterns a literal
	// triggers together run as one product of their automata.
	dfa *regexDFA
	// pending, until resolved, holds what m and dfa are made of: a set
	// of thousands of regular expressions builds the automaton (or
	// compiles the regexp) of each as a literal of it first occurs, and
	// most of a rule set's never do.
	pending *pendingRegex
	// clauses (opVerify): every match holds a literal of each clause.
	// The first is the best filter: the pattern is verified when one of
	// its literals occurs and every other clause has one that occurs.
	// None: verified on every string.
	clauses [][]reqLit
	// checks are the literals of clauses[1:], by their index in the
	// PatternSet.
	checks [][]int32
	// minLen (opVerify) is the fewest bytes a match spans: a shorter
	// string cannot match ([A-Za-z0-9+/]{200,} in a short command line).
	minLen int
}

// maxAltLiterals bounds the literals of one clause taken from an
// alternation: beyond it the alternation gives no clause.
const maxAltLiterals = 8

// maxClauses bounds the clauses of one pattern.
const maxClauses = 4

// setDFABudget bounds the automata of a PatternSet's regular expressions,
// in transitions (4 bytes each); the expressions past it are verified
// with Go's regexp.
const setDFABudget = 1 << 22

// dfaBudget is what the automata of a PatternSet's regular expressions may
// still take, in transitions (see setDFABudget), and the scratch space
// that building them one after another reuses.
type dfaBudget struct {
	left    int
	scratch dfaScratch
}

// pendingRegex is a regular expression whose matcher is yet to be made:
// its simplified tree and how to compile Go's regexp of it.
type pendingRegex struct {
	simple  *resyntax.Regexp
	compile func() (matcher, error)
}

// resolve makes sp's matcher: its automaton (regexDFA) when dfaBudget
// allows (nil builds none), else Go's regexp. The regexp compiles: its
// source parsed, and regexp.Compile fails only where parsing does.
func (sp *setPattern) resolve(dfaBudget *dfaBudget) error {
	pr := sp.pending
	if pr == nil {
		return nil
	}
	if dfaBudget != nil && dfaBudget.left > 0 {
		if d := regexDFAOf(pr.simple, &dfaBudget.scratch); d != nil && len(d.next) <= dfaBudget.left {
			dfaBudget.left -= len(d.next)
			sp.m, sp.dfa = d.MatchString, d
		}
	}
	if sp.m == nil {
		m, err := pr.compile()
		if err != nil {
			return err
		}
		sp.m = m
	}
	sp.pending = nil
	return nil
}

// compileSetPattern prepares p with the same matcher its SQL function
// compiles to, and finds how much of it literals decide. A regular
// expression is given an automaton (regexDFA) when dfaBudget allows; nil
// builds none.
func compileSetPattern(p Pattern, dfaBudget *dfaBudget) (setPattern, error) {
	sp, err := prepareSetPattern(p)
	if err == nil {
		err = sp.resolve(dfaBudget)
	}
	return sp, err
}

// prepareSetPattern is compileSetPattern leaving a regular expression's
// matcher pending.
func prepareSetPattern(p Pattern) (setPattern, error) {
	switch p.Kind {
	case Contains:
		return literalTest(opContains, p.Text), nil
	case Like:
		lp, err := prepareLike(p.Text, p.Escape)
		if err != nil {
			return setPattern{}, err
		}
		if lp.re != nil {
			return regexSetPattern(lp.src, nil, compiled(lp.re))
		}
		pc := lp.pieces
		switch {
		case len(pc) == 1:
			return setPattern{op: opEquals, lit: pc[0]}, nil
		case len(pc) == 2 && pc[1] == "":
			return literalTest(opPrefix, pc[0]), nil
		case len(pc) == 2 && pc[0] == "":
			return literalTest(opSuffix, pc[1]), nil
		case len(pc) == 3 && pc[0] == "" && pc[2] == "":
			return literalTest(opContains, pc[1]), nil
		}
		sp := setPattern{op: opVerify, m: percentMatcher(pc)}
		for _, x := range pc {
			if x != "" && !slices.ContainsFunc(sp.clauses, func(c []reqLit) bool { return c[0].s == x }) {
				sp.clauses = append(sp.clauses, []reqLit{{s: x}})
			}
		}
		slices.SortStableFunc(sp.clauses, func(a, b []reqLit) int { return len(b[0].s) - len(a[0].s) })
		if len(sp.clauses) > maxClauses {
			sp.clauses = sp.clauses[:maxClauses]
		}
		return sp, nil
	case SimilarTo:
		re, src, err := similarRegexp(p.Text, p.Escape)
		if err != nil {
			return setPattern{}, err
		}
		return regexSetPattern(src, nil, compiled(re))
	case Regexp:
		if p.Text == "" {
			return setPattern{op: opNever}, nil // REGEXP(x, '') is FALSE
		}
		// Parsed once: the tree gives the literals and the automaton, and
		// Go's regexp (which parses on its own) is compiled only for an
		// expression left without an automaton. Parse fails where
		// regexp.Compile does, with its error.
		tree, err := resyntax.Parse(p.Text, resyntax.Perl)
		if err != nil {
			return setPattern{}, fmt.Errorf("cannot compile regular expression '%s' in REGEXP: %w", p.Text, err)
		}
		return regexSetPattern(p.Text, tree, func() (matcher, error) {
			re, err := regexp.Compile(p.Text)
			if err != nil {
				return nil, fmt.Errorf("cannot compile regular expression '%s' in REGEXP: %w", p.Text, err)
			}
			return re.MatchString, nil
		})
	}
	return setPattern{}, fmt.Errorf("unknown pattern kind %d", p.Kind)
}

// checkSetPattern returns the error compileSetPattern returns for p,
// without preparing p: AsPattern takes only the patterns a PatternSet
// accepts, and a rule set has thousands.
func checkSetPattern(p Pattern) error {
	switch p.Kind {
	case Like:
		_, err := prepareLike(p.Text, p.Escape)
		return err
	case SimilarTo:
		_, _, err := similarRegexp(p.Text, p.Escape)
		return err
	case Regexp:
		if p.Text == "" {
			return nil
		}
		if _, err := resyntax.Parse(p.Text, resyntax.Perl); err != nil {
			return fmt.Errorf("cannot compile regular expression '%s' in REGEXP: %w", p.Text, err)
		}
		return nil
	case Contains:
		return nil
	}
	return fmt.Errorf("unknown pattern kind %d", p.Kind)
}

// compiled returns a compiled regular expression as regexSetPattern takes
// its matcher.
func compiled(re *regexp.Regexp) func() (matcher, error) {
	return func() (matcher, error) { return re.MatchString, nil }
}

// literalTest is a test of a literal; an empty one holds for every
// string.
func literalTest(op setOp, lit string) setPattern {
	if lit == "" {
		return setPattern{op: opAlways}
	}
	return setPattern{op: op, lit: lit}
}

// regexSetPattern prepares a regular expression of source src (which
// compiles, so it parses), of parse tree tree (nil: parsed here), matched
// by what compile returns or, where resolve can build one, by its
// automaton (regexDFA); the matcher is left pending.
func regexSetPattern(src string, tree *resyntax.Regexp, compile func() (matcher, error)) (setPattern, error) {
	if tree == nil {
		var err error
		if tree, err = resyntax.Parse(src, resyntax.Perl); err != nil {
			m, err := compile()
			return setPattern{op: opVerify, m: m}, err
		}
	}
	simple := tree.Simplify()
	if op, lit, ok := regexLiteralTest(simple); ok {
		if op == opEquals {
			return setPattern{op: opEquals, lit: lit}, nil
		}
		return literalTest(op, lit), nil
	}
	return setPattern{op: opVerify, pending: &pendingRegex{simple: simple, compile: compile},
		clauses: requiredClauses(tree, true, maxAltLiterals, maxClauses), minLen: minMatchBytes(tree)}, nil
}

// minMatchBytes returns a lower bound of the bytes any match of r spans:
// each rune a match holds takes at least one byte.
func minMatchBytes(r *resyntax.Regexp) int {
	switch r.Op {
	case resyntax.OpLiteral:
		return len(r.Rune)
	case resyntax.OpCharClass, resyntax.OpAnyChar, resyntax.OpAnyCharNotNL:
		return 1
	case resyntax.OpCapture, resyntax.OpPlus:
		return minMatchBytes(r.Sub[0])
	case resyntax.OpRepeat:
		return r.Min * minMatchBytes(r.Sub[0])
	case resyntax.OpConcat:
		n := 0
		for _, sub := range r.Sub {
			n += minMatchBytes(sub)
		}
		return n
	case resyntax.OpAlternate:
		n := -1
		for _, sub := range r.Sub {
			if m := minMatchBytes(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // empty, anchors, boundaries, *, ?
}

// regexLiteralTest recognizes a regular expression that only tests a
// literal: text between optional anchors (^ and $ without (?m), \A, \z),
// with leading or trailing .* where they change nothing. Literals that
// are case-folded or hold U+FFFD (which also matches invalid UTF-8) are
// not tests of bytes, and are not recognized.
func regexLiteralTest(r *resyntax.Regexp) (op setOp, lit string, ok bool) {
	for r.Op == resyntax.OpCapture {
		r = r.Sub[0]
	}
	var parts []*resyntax.Regexp
	if r.Op == resyntax.OpConcat {
		for _, s := range r.Sub {
			for s.Op == resyntax.OpCapture {
				s = s.Sub[0]
			}
			if s.Op != resyntax.OpEmptyMatch {
				parts = append(parts, s)
			}
		}
	} else if r.Op != resyntax.OpEmptyMatch {
		parts = []*resyntax.Regexp{r}
	}
	start, end := false, false
	if len(parts) > 0 && parts[0].Op == resyntax.OpBeginText {
		start, parts = true, parts[1:]
	}
	if len(parts) > 0 && parts[len(parts)-1].Op == resyntax.OpEndText {
		end, parts = true, parts[:len(parts)-1]
	}
	// (?s:.*) next to an anchor, or .* at an open end, matches anything
	// there.
	anything := func(p *resyntax.Regexp, anchored bool) bool {
		return p.Op == resyntax.OpStar && (p.Sub[0].Op == resyntax.OpAnyChar ||
			(!anchored && p.Sub[0].Op == resyntax.OpAnyCharNotNL))
	}
	if len(parts) > 0 && anything(parts[0], start) {
		start, parts = false, parts[1:]
	}
	if len(parts) > 0 && anything(parts[len(parts)-1], end) {
		end, parts = false, parts[:len(parts)-1]
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Op != resyntax.OpLiteral || p.Flags&resyntax.FoldCase != 0 {
			return 0, "", false
		}
		for _, c := range p.Rune {
			if c == utf8.RuneError {
				return 0, "", false
			}
			b.WriteRune(c)
		}
	}
	switch {
	case start && end:
		return opEquals, b.String(), true
	case start:
		return opPrefix, b.String(), true
	case end:
		return opSuffix, b.String(), true
	}
	return opContains, b.String(), true
}

// PatternSet matches a string against many patterns at once. It is
// immutable and safe for concurrent use.
type PatternSet struct {
	n         int
	pats      []setPattern
	base      []uint64           // the patterns that match every string
	equals    map[string][]int32 // opEquals patterns by their literal
	verifyAll []int32            // opVerify patterns with no literal
	ac        *acAutomaton       // over the keys; nil when there are none
	// Literals: keyLits[keyOff[k]:keyOff[k+1]] are the literals whose key
	// (lower-cased) is automaton key k; litUsers likewise the patterns
	// of each literal.
	keyOff, keyLits  []int32
	lits             []reqLit
	litKey           []int32
	litOff, litUsers []int32
	unsafe           []int32 // folded literals a non-ASCII string may hold unseen (see foldUnsafe)
	// litProd[l] runs the patterns with automata that literal l
	// triggers, when there are several (nil otherwise); allProd those of
	// verifyAll.
	litProd []*dfaProduct
	allProd *dfaProduct
	scratch sync.Pool
	// The patterns of literal l are resolved, and litProd[l] built, as
	// l first occurs (litReady[l] then holds), under mu; dfaBudget is
	// what automata may still take.
	mu        sync.Mutex
	litReady  []atomic.Bool
	dfaBudget dfaBudget
}

// psScratch is the per-call state of Match.
type psScratch struct {
	seen     []uint64 // automaton keys found
	hits     []acHit
	occ      []uint64 // literals that occur
	occurred []int32
}

// NewPatternSet prepares ps for matching; pattern i is bit i of Match's
// result. A pattern that does not compile is an error.
func NewPatternSet(ps []Pattern) (*PatternSet, error) {
	s := &PatternSet{
		n:      len(ps),
		pats:   make([]setPattern, len(ps)),
		base:   make([]uint64, (len(ps)+63)/64),
		equals: map[string][]int32{},
	}
	litID := map[reqLit]int32{}
	var users [][]int32
	// addLit registers a literal, and p (unless negative) as its user.
	addLit := func(l reqLit, p int32) int32 {
		id, ok := litID[l]
		if !ok {
			id = int32(len(s.lits))
			litID[l] = id
			s.lits = append(s.lits, l)
			users = append(users, nil)
		}
		if u := users[id]; p >= 0 && (len(u) == 0 || u[len(u)-1] != p) {
			users[id] = append(u, p)
		}
		return id
	}
	s.dfaBudget.left = setDFABudget
	for i, p := range ps {
		sp, err := prepareSetPattern(p)
		if err != nil {
			return nil, fmt.Errorf("cannot prepare pattern %d (%s): %w", i, p, err)
		}
		s.pats[i] = sp
		id := int32(i)
		switch sp.op {
		case opAlways:
			s.base[i>>6] |= 1 << (i & 63)
		case opEquals:
			s.equals[sp.lit] = append(s.equals[sp.lit], id)
		case opPrefix, opSuffix, opContains:
			addLit(reqLit{s: sp.lit}, id)
		case opVerify:
			if len(sp.clauses) == 0 {
				s.verifyAll = append(s.verifyAll, id)
				break
			}
			for _, l := range sp.clauses[0] {
				addLit(l, id)
			}
			for _, c := range sp.clauses[1:] {
				ids := make([]int32, len(c))
				for j, l := range c {
					ids[j] = addLit(l, -1)
				}
				s.pats[i].checks = append(s.pats[i].checks, ids)
			}
		}
	}
	// Keys: the literals lower-cased, distinct.
	keyID := map[string]int32{}
	var keys []string
	var keyLits [][]int32
	s.litKey = make([]int32, len(s.lits))
	for i, l := range s.lits {
		k := l.s
		if !l.fold {
			b := []byte(k)
			for j := range b {
				b[j] = lowerASCII(b[j])
			}
			k = string(b)
		} else if hasUnsafe(k) {
			s.unsafe = append(s.unsafe, int32(i))
		}
		id, ok := keyID[k]
		if !ok {
			id = int32(len(keys))
			keyID[k] = id
			keys = append(keys, k)
			keyLits = append(keyLits, nil)
		}
		keyLits[id] = append(keyLits[id], int32(i))
		s.litKey[i] = id
	}
	s.keyOff, s.keyLits = flatten(keyLits)
	s.litOff, s.litUsers = flatten(users)
	s.litProd = make([]*dfaProduct, len(s.lits))
	s.litReady = make([]atomic.Bool, len(s.lits))
	for _, p := range s.verifyAll {
		if err := s.pats[p].resolve(&s.dfaBudget); err != nil {
			return nil, fmt.Errorf("cannot prepare pattern %d (%s): %w", p, ps[p], err)
		}
	}
	s.allProd = s.product(s.verifyAll)
	if len(keys) > 0 {
		s.ac = newACAutomaton(keys, acDenseBudget)
	}
	keyWords, litWords := (len(keys)+63)/64, (len(s.lits)+63)/64
	s.scratch.New = func() any {
		return &psScratch{seen: make([]uint64, keyWords), occ: make([]uint64, litWords)}
	}
	return s, nil
}

// product returns the product of the automata of those of patterns that
// have one, or nil when there are fewer than two.
func (s *PatternSet) product(patterns []int32) *dfaProduct {
	var dfas []*regexDFA
	var ids []int32
	for _, p := range patterns {
		if sp := &s.pats[p]; sp.op == opVerify && sp.dfa != nil {
			dfas = append(dfas, sp.dfa)
			ids = append(ids, p)
		}
	}
	if len(dfas) < 2 {
		return nil
	}
	return newDFAProduct(dfas, ids)
}

func hasUnsafe(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] < utf8.RuneSelf && foldUnsafe[k[i]] {
			return true
		}
	}
	return false
}

// flatten packs lists into offsets and one slice.
func flatten(lists [][]int32) (off, all []int32) {
	off = make([]int32, len(lists)+1)
	for i, l := range lists {
		all = append(all, l...)
		off[i+1] = int32(len(all))
	}
	return off, all
}

// Len is the number of patterns.
func (s *PatternSet) Len() int { return s.n }

// Match sets bit i of dst (bit i%64 of word i/64) when pattern i matches
// str, and clears the others; dst must have (Len()+63)/64 words. str is
// the subject's value: a NULL subject and negation are the caller's.
func (s *PatternSet) Match(str string, dst []uint64) {
	dst = dst[:len(s.base)]
	copy(dst, s.base)
	if ids, ok := s.equals[str]; ok {
		for _, p := range ids {
			dst[p>>6] |= 1 << (p & 63)
		}
	}
	if s.allProd != nil {
		s.allProd.match(str, dst)
	}
	for _, p := range s.verifyAll {
		if sp := &s.pats[p]; (s.allProd == nil || sp.dfa == nil) && len(str) >= sp.minLen && sp.m(str) {
			dst[p>>6] |= 1 << (p & 63)
		}
	}
	if s.ac == nil {
		return
	}
	sc := s.scratch.Get().(*psScratch)
	m := matching{s: s, str: str, dst: dst, occ: sc.occ}
	// Which literals occur: the automaton finds their keys (up to case),
	// the exact ones are confirmed.
	sc.hits = s.ac.scan(str, sc.seen, sc.hits[:0])
	occurred := sc.occurred[:0]
	for _, h := range sc.hits {
		for _, l := range s.keyLits[s.keyOff[h.key]:s.keyOff[h.key+1]] {
			if lit := &s.lits[l]; !lit.fold {
				// The key occurred first at h.end: the literal, if
				// anywhere, is there or later.
				start := h.end + 1 - len(lit.s)
				if str[start:h.end+1] != lit.s && !strings.Contains(str[start+1:], lit.s) {
					continue
				}
			}
			occurred = append(occurred, l)
		}
	}
	if len(s.unsafe) > 0 && !isASCII(str) {
		for _, l := range s.unsafe {
			if k := s.litKey[l]; sc.seen[k>>6]&(1<<(k&63)) == 0 {
				occurred = append(occurred, l)
			}
		}
	}
	for _, l := range occurred {
		sc.occ[l>>6] |= 1 << (l & 63)
	}
	for _, l := range occurred {
		m.decide(l)
	}
	for _, l := range occurred {
		sc.occ[l>>6] &^= 1 << (l & 63)
	}
	for _, h := range sc.hits {
		sc.seen[h.key>>6] &^= 1 << (h.key & 63)
	}
	sc.occurred = occurred
	s.scratch.Put(sc)
}

// matching is one call of Match, once the literals that occur are known.
type matching struct {
	s   *PatternSet
	str string
	dst []uint64
	occ []uint64 // the literals that occur
}

// occurs reports whether literal l occurs in the string.
func (m *matching) occurs(l int32) bool { return m.occ[l>>6]&(1<<(l&63)) != 0 }

// ready resolves the patterns of literal l and builds their product.
func (s *PatternSet) ready(l int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.litReady[l].Load() {
		return
	}
	users := s.litUsers[s.litOff[l]:s.litOff[l+1]]
	for _, p := range users {
		if err := s.pats[p].resolve(&s.dfaBudget); err != nil {
			// The source parsed, and Go's regexp fails to compile only
			// what does not parse.
			panic(fmt.Sprintf("regular expression of pattern %d parsed but does not compile: %v", p, err))
		}
	}
	s.litProd[l] = s.product(users)
	s.litReady[l].Store(true)
}

// decide tests the patterns of literal l, which occurs in the string.
func (m *matching) decide(l int32) {
	s, str, dst := m.s, m.str, m.dst
	if !s.litReady[l].Load() {
		s.ready(l)
	}
	users := s.litUsers[s.litOff[l]:s.litOff[l+1]]
	prod := s.litProd[l]
	if prod != nil {
		// The product scans once for all its members; it pays when two
		// or more are candidates (their other literals occur, the string
		// is long enough), else they run alone.
		n := 0
		for _, p := range users {
			if sp := &s.pats[p]; sp.dfa != nil && dst[p>>6]&(1<<(p&63)) == 0 && m.candidate(sp) {
				if n++; n == 2 {
					break
				}
			}
		}
		if n < 2 {
			prod = nil
		} else {
			prod.match(str, dst)
		}
	}
	for _, p := range users {
		w, b := p>>6, uint64(1)<<(p&63)
		if dst[w]&b != 0 {
			continue // an alternation's other literal decided it
		}
		sp := &s.pats[p]
		if prod != nil && sp.dfa != nil {
			continue // the product decided it
		}
		var ok bool
		switch sp.op {
		case opContains:
			ok = true
		case opPrefix:
			ok = strings.HasPrefix(str, sp.lit)
		case opSuffix:
			ok = strings.HasSuffix(str, sp.lit)
		case opVerify:
			ok = m.candidate(sp) && sp.m(str)
		}
		if ok {
			dst[w] |= b
		}
	}
}

// candidate reports whether verifying sp can find a match: a literal of
// each of its other clauses occurs and the string is long enough.
func (m *matching) candidate(sp *setPattern) bool {
	if len(m.str) < sp.minLen {
		return false
	}
	for _, c := range sp.checks {
		if !slices.ContainsFunc(c, m.occurs) {
			return false
		}
	}
	return true
}
