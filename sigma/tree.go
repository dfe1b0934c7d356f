package sigma

import (
	"strings"
)

// A rule's condition is built as a tree of nodes over leaves (tests of
// one column, or a few), put in negation normal form (NOTs only on
// leaves), simplified, and printed as SQL.
//
// Sigma's logic is two-valued: a test of a missing field is false, and
// its negation true. SQL's is three-valued: a test of NULL is NULL, and
// so is its NOT. A positive formula (AND and OR of tests) is TRUE in SQL
// exactly when it is true in Sigma, since AND and OR treat NULL as they
// treat FALSE when the result is compared with TRUE; so only negated
// leaves need care, and they print as `test IS NOT TRUE`, which is TRUE
// for FALSE and NULL alike.

type nodeOp uint8

const (
	opLeaf nodeOp = iota
	opAnd
	opOr
	opNot
	opTrue
	opFalse
)

type node struct {
	op   nodeOp
	kids []*node
	leaf *leaf
}

// leaf is one test. A pattern leaf (subject set) tests one string
// expression against alternatives, any of which may match; any other
// leaf is a SQL predicate.
type leaf struct {
	subject string // the tested expression, as SQL
	alts    []alt
	sql     string // a predicate, when subject is ""
	// notSQL is the predicate's negation when it is never NULL (an IS
	// NULL test), else "".
	notSQL string
	neg    bool
	cols   []string // the columns the test reads
}

// alt is one alternative of a pattern leaf: the value equals exact
// (isExact), or matches re, an RE2 expression; like is its LIKE form
// when there is one.
type alt struct {
	exact    string
	isExact  bool
	unquoted bool   // exact is a SQL literal (a number, TRUE), not text
	re       string // always set
	dotall   bool   // re's dots must match line breaks
	alone    string // the expression to print when the alternative is alone, if not re
	like     string
	likeEsc  bool
	hasLike  bool
}

func leafNode(l *leaf) *node { return &node{op: opLeaf, leaf: l} }

func andNode(kids ...*node) *node { return &node{op: opAnd, kids: kids} }
func orNode(kids ...*node) *node  { return &node{op: opOr, kids: kids} }
func notNode(kid *node) *node     { return &node{op: opNot, kids: []*node{kid}} }

// nnf returns n in negation normal form, negated when neg: NOTs pushed
// to the leaves by De Morgan's laws, constants simplified away, chains
// of one operator flattened, and the pattern leaves of one subject
// merged where that keeps the meaning (under OR the positive ones,
// under AND the negated ones: not a and not b is not (a or b)).
func nnf(n *node, neg bool) *node {
	switch n.op {
	case opLeaf:
		l := *n.leaf
		l.neg = l.neg != neg
		return leafNode(&l)
	case opTrue, opFalse:
		if (n.op == opTrue) != neg {
			return &node{op: opTrue}
		}
		return &node{op: opFalse}
	case opNot:
		return nnf(n.kids[0], !neg)
	}
	op := n.op
	if neg {
		op = opAnd + opOr - op
	}
	// absorbing is the constant that decides op, neutral the one op drops.
	absorbing, neutral := opFalse, opTrue
	if op == opOr {
		absorbing, neutral = opTrue, opFalse
	}
	var kids []*node
	for _, k := range n.kids {
		k = nnf(k, neg)
		switch {
		case k.op == absorbing:
			return k
		case k.op == neutral:
		case k.op == op:
			kids = append(kids, k.kids...)
		default:
			kids = append(kids, k)
		}
	}
	kids = mergeLeaves(kids, op == opAnd)
	switch len(kids) {
	case 0:
		return &node{op: neutral}
	case 1:
		return kids[0]
	}
	return &node{op: op, kids: kids}
}

// mergeLeaves merges the pattern leaves of one subject among kids whose
// negation is neg into one leaf with all their alternatives, where the
// first of them was.
func mergeLeaves(kids []*node, neg bool) []*node {
	mergeable := func(k *node) bool { return k.op == opLeaf && k.leaf.subject != "" && k.leaf.neg == neg }
	count := map[string]int{}
	for _, k := range kids {
		if mergeable(k) {
			count[k.leaf.subject]++
		}
	}
	merged := map[string]*leaf{}
	var out []*node
	for _, k := range kids {
		if !mergeable(k) || count[k.leaf.subject] == 1 {
			out = append(out, k)
			continue
		}
		if l, ok := merged[k.leaf.subject]; ok {
			l.alts = append(l.alts, k.leaf.alts...)
			continue
		}
		l := *k.leaf
		l.alts = append([]alt(nil), l.alts...)
		merged[l.subject] = &l
		out = append(out, leafNode(&l))
	}
	return out
}

// render prints a tree in negation normal form as SQL. An OR inside an
// AND is parenthesized, and so is any OR unless top.
func render(n *node, top bool) string {
	switch n.op {
	case opTrue:
		return "TRUE"
	case opFalse:
		return "FALSE"
	case opLeaf:
		return n.leaf.render()
	case opAnd:
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			parts[i] = render(k, false)
		}
		return strings.Join(parts, " AND ")
	case opOr:
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			parts[i] = render(k, false)
			if k.op == opAnd {
				parts[i] = "(" + parts[i] + ")" // for the reader: SQL's AND binds tighter anyway
			}
		}
		s := strings.Join(parts, " OR ")
		if !top {
			s = "(" + s + ")"
		}
		return s
	}
	// opNot does not occur in negation normal form.
	return "NOT (" + render(n.kids[0], true) + ")"
}

// render prints the leaf as SQL.
func (l *leaf) render() string {
	if l.subject == "" {
		if l.neg {
			if l.notSQL != "" {
				return l.notSQL
			}
			return "(" + l.sql + ") IS NOT TRUE"
		}
		return l.sql
	}
	s, call := l.renderPattern()
	if l.neg {
		if !call {
			s = "(" + s + ")"
		}
		return s + " IS NOT TRUE"
	}
	return s
}

// renderPattern prints a pattern leaf: = or IN when every alternative
// is exact, LIKE for one alternative LIKE can say, else one REGEXP of
// all the alternatives (which the engine matches with the patterns of
// other rules in one pass; an OR of LIKEs it would test one by one).
// call reports whether the result is a function call.
func (l *leaf) renderPattern() (s string, call bool) {
	alts := dedupAlts(l.alts)
	exact := true
	for _, a := range alts {
		exact = exact && a.isExact
	}
	switch {
	case exact && len(alts) == 1:
		return l.subject + " = " + alts[0].literal(), false
	case exact:
		vals := make([]string, len(alts))
		for i, a := range alts {
			vals[i] = a.literal()
		}
		return l.subject + " IN (" + strings.Join(vals, ", ") + ")", false
	case len(alts) == 1 && alts[0].hasLike:
		s := l.subject + " LIKE " + quote(alts[0].like)
		if alts[0].likeEsc {
			s += ` ESCAPE '\'`
		}
		return s, false
	}
	if len(alts) == 1 && alts[0].alone != "" {
		return "REGEXP(" + l.subject + ", " + quote(alts[0].alone) + ")", true
	}
	var b strings.Builder
	for _, a := range alts {
		if a.dotall {
			b.WriteString("(?s)")
			break
		}
	}
	for i, a := range alts {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(a.re)
	}
	return "REGEXP(" + l.subject + ", " + quote(b.String()) + ")", true
}

// literal prints an exact alternative's value as SQL.
func (a alt) literal() string {
	if a.unquoted {
		return a.exact
	}
	return quote(a.exact)
}

func dedupAlts(alts []alt) []alt {
	seen := map[string]bool{}
	var out []alt
	for _, a := range alts {
		k := a.re
		if a.dotall {
			k = "(?s)" + k
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}

// quote prints s as a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// columns adds the columns n reads to set.
func columns(n *node, set map[string]bool) {
	if n.op == opLeaf {
		for _, c := range n.leaf.cols {
			set[c] = true
		}
	}
	for _, k := range n.kids {
		columns(k, set)
	}
}

// oneColumn reports whether n reads exactly one column.
func oneColumn(n *node) bool {
	set := map[string]bool{}
	columns(n, set)
	return len(set) == 1
}

// guarded reports whether n, a condition in negation normal form, has a
// conjunct that reads one column: the engine's shared filters (see
// package exec/filterset) evaluate such a conjunct once per distinct
// value and consider the rule only for the rows it holds for; a rule
// without one is evaluated on every row.
func guarded(n *node) bool {
	if n.op != opAnd {
		return oneColumn(n)
	}
	for _, k := range n.kids {
		if oneColumn(k) {
			return true
		}
	}
	return false
}

// maxParts bounds the parts split makes of one condition.
const maxParts = 16

// split returns conditions whose disjunction is n (in negation normal
// form) and of which no row satisfies two, each guarded where n's ORs
// allow: an OR of tests of several columns becomes one part per
// alternative, the i-th with the negations of those before it (so that
// a row that satisfies two gives one alert); an AND without a one-column
// conjunct is distributed over one of its ORs. When that would make more
// than maxParts parts, n is its only part.
func split(n *node) []*node {
	parts := splitParts(n)
	if len(parts) > maxParts {
		return []*node{n}
	}
	return parts
}

func splitParts(n *node) []*node {
	if guarded(n) {
		return []*node{n}
	}
	switch n.op {
	case opOr:
		var parts, before []*node
		for _, k := range n.kids {
			for _, p := range splitParts(k) {
				kids := append([]*node{p}, before...)
				parts = append(parts, nnf(andNode(kids...), false))
				if len(parts) > maxParts {
					return parts
				}
			}
			before = append(before, nnf(k, true))
		}
		return parts
	case opAnd:
		for i, k := range n.kids {
			if k.op != opOr {
				continue
			}
			var parts []*node
			for _, p := range splitParts(k) {
				kids := append([]*node{p}, n.kids[:i]...)
				kids = append(kids, n.kids[i+1:]...)
				parts = append(parts, nnf(andNode(kids...), false))
				if len(parts) > maxParts {
					return parts
				}
			}
			return parts
		}
	}
	return []*node{n}
}
