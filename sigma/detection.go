package sigma

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/sluicesql/sluice/sql/token"
)

// posError is a reason a rule cannot be translated, at a node of its
// file.
type posError struct {
	node *yaml.Node
	msg  string
}

func (e *posError) Error() string { return e.msg }

func errorAt(n *yaml.Node, format string, args ...any) error {
	return &posError{node: n, msg: fmt.Sprintf(format, args...)}
}

// detector translates the detection section of one document.
type detector struct {
	doc *Document
	m   *Mapping
	ls  *Logsource
}

// condition translates the section det (a detection, or a filter's
// filter section, whose rules key lists the rules it applies to) into a
// tree.
func (t *detector) condition(det *yaml.Node) (*node, error) {
	ids := map[string]*node{}
	var names []string
	var cond *yaml.Node
	for i := 0; i+1 < len(det.Content); i += 2 {
		k, v := det.Content[i], det.Content[i+1]
		switch k.Value {
		case "condition":
			cond = v
			continue
		case "timeframe":
			// The window of Sigma 1 aggregations, which are refused
			// where the condition has one.
			continue
		case "rules":
			if det == t.doc.filter {
				continue
			}
		}
		n, err := t.search(k.Value, v)
		if err != nil {
			return nil, err
		}
		ids[k.Value] = n
		names = append(names, k.Value)
	}
	if cond == nil {
		return nil, errorAt(det, "the detection has no condition")
	}
	var conds []*yaml.Node
	switch {
	case cond.Kind == yaml.ScalarNode && cond.Tag != "!!null":
		conds = []*yaml.Node{cond}
	case cond.Kind == yaml.SequenceNode && len(cond.Content) > 0:
		conds = cond.Content
	default:
		return nil, errorAt(cond, "the condition is %s, not a string or a list of strings", nodeKind(cond))
	}
	var alts []*node
	for _, c := range conds {
		if c.Kind != yaml.ScalarNode {
			return nil, errorAt(c, "a condition is %s, not a string", nodeKind(c))
		}
		ast, err := parseCondition(c.Value)
		if err != nil {
			return nil, errorAt(c, "the condition %q: %v", c.Value, err)
		}
		n, err := t.resolve(ast, c, ids, names)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return orNode(alts...), nil
}

// resolve builds the tree of a parsed condition over the search
// identifiers ids (names in the detection's order).
func (t *detector) resolve(c *condNode, at *yaml.Node, ids map[string]*node, names []string) (*node, error) {
	switch c.op {
	case condIdent:
		n, ok := ids[c.name]
		if !ok {
			return nil, errorAt(at, "the condition names %q, which is not a search identifier of the detection%s", c.name, hint(c.name, names))
		}
		return n, nil
	case condOf:
		var kids []*node
		for _, name := range names {
			if (c.name == "" && !strings.HasPrefix(name, "_")) || (c.name != "" && matchPattern(c.name, name)) {
				kids = append(kids, ids[name])
			}
		}
		if len(kids) == 0 {
			what := "them"
			if c.name != "" {
				what = c.name
			}
			return nil, errorAt(at, "the condition's %q of %s matches no search identifier", map[bool]string{true: "all", false: "1"}[c.all], what)
		}
		if c.all {
			return andNode(kids...), nil
		}
		return orNode(kids...), nil
	}
	kids := make([]*node, len(c.kids))
	for i, k := range c.kids {
		n, err := t.resolve(k, at, ids, names)
		if err != nil {
			return nil, err
		}
		kids[i] = n
	}
	switch c.op {
	case condAnd:
		return andNode(kids...), nil
	case condOr:
		return orNode(kids...), nil
	}
	return notNode(kids[0]), nil
}

// search translates one search identifier: a mapping of field tests
// (AND), a list of mappings (OR) or of keywords (OR), or one keyword.
func (t *detector) search(name string, v *yaml.Node) (*node, error) {
	switch v.Kind {
	case yaml.MappingNode:
		return t.fieldTests(v)
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			return nil, errorAt(v, "the search identifier %s is an empty list", name)
		}
		var kids []*node
		var keywords []*yaml.Node
		for _, x := range v.Content {
			switch x.Kind {
			case yaml.MappingNode:
				n, err := t.fieldTests(x)
				if err != nil {
					return nil, err
				}
				kids = append(kids, n)
			case yaml.ScalarNode:
				keywords = append(keywords, x)
			default:
				return nil, errorAt(x, "an item of the search identifier %s is %s, not a mapping of field tests or a keyword", name, nodeKind(x))
			}
		}
		if len(keywords) > 0 {
			n, err := t.test("", nil, keywords, v)
			if err != nil {
				return nil, err
			}
			kids = append(kids, n)
		}
		return orNode(kids...), nil
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, errorAt(v, "the search identifier %s is empty", name)
		}
		return t.test("", nil, []*yaml.Node{v}, v)
	}
	return nil, errorAt(v, "the search identifier %s is %s, not a mapping, a list or a keyword", name, nodeKind(v))
}

// fieldTests translates a mapping of field tests, all of which must hold.
func (t *detector) fieldTests(m *yaml.Node) (*node, error) {
	if len(m.Content) == 0 {
		return nil, errorAt(m, "a search identifier is an empty mapping")
	}
	var kids []*node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		parts := strings.Split(k.Value, "|")
		var vals []*yaml.Node
		switch v.Kind {
		case yaml.ScalarNode:
			vals = []*yaml.Node{v}
		case yaml.SequenceNode:
			if len(v.Content) == 0 {
				return nil, errorAt(v, "the field test %s has an empty list of values", k.Value)
			}
			for _, x := range v.Content {
				if x.Kind != yaml.ScalarNode {
					return nil, errorAt(x, "a value of the field test %s is %s, not a string, number, boolean or null", k.Value, nodeKind(x))
				}
			}
			vals = v.Content
		default:
			return nil, errorAt(v, "the value of the field test %s is %s, not a value or a list of values", k.Value, nodeKind(v))
		}
		n, err := t.test(parts[0], parts[1:], vals, k)
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	return andNode(kids...), nil
}

// test translates one field test: field (empty for a keyword search)
// with modifiers mods against vals; at is where it is written.
func (t *detector) test(field string, mods []string, vals []*yaml.Node, at *yaml.Node) (*node, error) {
	all, neg := false, false
	for _, m := range mods {
		all = all || m == "all"
		neg = neg || m == "neq"
	}
	name := testName(field, mods)
	var cols []string
	if field == "" {
		if len(t.m.Keywords) == 0 {
			return nil, errorAt(at, "a keyword search (values without a field) needs the columns to look in: set keywords: in the mapping")
		}
		cols = t.m.Keywords
		if !slices.ContainsFunc(mods, func(m string) bool {
			switch m {
			case "contains", "startswith", "endswith", "re", "cidr", "exists", "fieldref", "lt", "lte", "gt", "gte":
				return true
			}
			return false
		}) {
			// A keyword is found anywhere in the event's text.
			mods = append(slices.Clip(mods), "contains")
		}
	} else {
		col, ok := t.m.column(field, t.ls)
		if !ok {
			return nil, errorAt(at, "the field %s has no column in the mapping%s", field, hint(field, t.m.fieldNames(t.ls)))
		}
		cols = []string{col}
	}
	var groups []*node // one per value: its alternatives, any of which may hold
	for _, v := range vals {
		s := scalar{text: v.Value, tag: v.ShortTag()}
		alts, err := applyModifiers(s, mods, t.m.Placeholders)
		if err != nil {
			return nil, errorAt(v, "%s: %v", name, err)
		}
		var kids []*node
		for _, a := range alts {
			for _, col := range cols {
				n, err := t.valueTest(col, a)
				if err != nil {
					return nil, errorAt(v, "%s: %v", name, err)
				}
				kids = append(kids, n)
			}
		}
		groups = append(groups, orNode(kids...))
	}
	var n *node
	if all {
		n = andNode(groups...)
	} else {
		n = orNode(groups...)
	}
	if neg {
		n = notNode(n)
	}
	return n, nil
}

// testName names a field test in messages, as it is written.
func testName(field string, mods []string) string {
	if field == "" && len(mods) == 0 {
		return "a keyword"
	}
	return strings.Join(append([]string{field}, mods...), "|")
}

// valueTest translates the test of column col against one value.
func (t *detector) valueTest(col string, v value) (*node, error) {
	n, err := t.columnTest(col, v)
	if err != nil {
		return nil, err
	}
	n.leaf.cols = []string{col}
	if v.kind == valFieldRef {
		rcol, _ := t.m.column(v.ref, t.ls)
		n.leaf.cols = append(n.leaf.cols, rcol)
	}
	return n, nil
}

// columnTest is valueTest's leaf, without the columns it reads.
func (t *detector) columnTest(col string, v value) (*node, error) {
	c := ident(col)
	class := classOf(t.m.columnType(col))
	if class == classOther {
		return nil, fmt.Errorf("the column %s is of type %s, which Sigma values are not compared with", col, t.m.columnType(col))
	}
	asString := c
	if class != classString {
		asString = "CAST(" + c + " AS STRING)"
	}
	isNull := &leaf{sql: c + " IS NULL", notSQL: c + " IS NOT NULL"}
	notNull := &leaf{sql: c + " IS NOT NULL", notSQL: c + " IS NULL"}
	if v.part != "" {
		return t.timePart(c, class, v)
	}
	switch v.kind {
	case valNull:
		return leafNode(isNull), nil
	case valExists:
		if v.exists {
			return leafNode(notNull), nil
		}
		return leafNode(isNull), nil
	case valCompare:
		x := c
		if class != classNumber {
			x = "TRY_CAST(" + asString + " AS DOUBLE)"
		}
		return leafNode(&leaf{sql: x + " " + v.op + " " + v.num}), nil
	case valFieldRef:
		return t.fieldRef(c, class, v)
	case valRegex:
		if err := checkRegex(v.re); err != nil {
			return nil, err
		}
		if v.re == "" {
			return leafNode(notNull), nil // the empty expression matches every value
		}
		return leafNode(&leaf{subject: asString, alts: []alt{regexAlt(v.re, v.reFlags)}}), nil
	case valCIDR:
		re, err := cidrRegex(v.prefix)
		if err != nil {
			return nil, err
		}
		return leafNode(&leaf{subject: asString, alts: []alt{{re: "(?:" + re + ")", alone: re}}}), nil
	}
	// A string, number or boolean.
	switch {
	case class == classNumber && v.num != "":
		return leafNode(&leaf{subject: c, alts: []alt{{isExact: true, exact: v.num, re: regexp.QuoteMeta(v.num), unquoted: true}}}), nil
	case class == classBoolean && v.boolean != "":
		return leafNode(&leaf{subject: c, alts: []alt{{isExact: true, exact: v.boolean, re: v.boolean, unquoted: true}}}), nil
	}
	p := v.pat
	subject := asString
	if !v.cased {
		p, subject = p.lower(), "LOWER("+asString+")"
	}
	if p.matchesAll() {
		return leafNode(notNull), nil
	}
	for _, ch := range p {
		if ch.kind == chunkLit && (!utf8.ValidString(ch.text) || strings.ContainsRune(ch.text, 0)) {
			return nil, fmt.Errorf("the value holds bytes that are not text (the utf16 and wide modifiers need base64 after them)")
		}
	}
	return leafNode(&leaf{subject: subject, alts: []alt{patternAlt(p)}}), nil
}

// patternAlt makes the alternative of a Sigma string pattern.
func patternAlt(p pattern) alt {
	re, dotall := p.regexForm()
	a := alt{re: re, dotall: dotall}
	if s, ok := p.literal(); ok {
		a.exact, a.isExact = s, true
	}
	a.like, a.likeEsc, a.hasLike = p.likeForm()
	return a
}

// regexAlt makes the alternative of a regular expression with the flags
// of the re modifier: alone, the flags lead it; among others, it is a
// group that sets its flags and clears the others (so that another
// alternative's (?s) does not reach it).
func regexAlt(re, flags string) alt {
	a := alt{alone: re}
	if flags != "" {
		a.alone = "(?" + flags + ")" + re
	}
	var clear string
	for _, f := range "ims" {
		if !strings.ContainsRune(flags, f) {
			clear += string(f)
		}
	}
	set := flags
	if clear != "" {
		set += "-" + clear
	}
	a.re = "(?" + set + ":" + re + ")"
	return a
}

// fieldRef tests col against another field's column: equal, or
// containing, beginning or ending with its value.
func (t *detector) fieldRef(c string, class typeClass, v value) (*node, error) {
	rcol, ok := t.m.column(v.ref, t.ls)
	if !ok {
		return nil, fmt.Errorf("the referenced field %s has no column in the mapping%s", v.ref, hint(v.ref, t.m.fieldNames(t.ls)))
	}
	str := func(x string, cl typeClass) string {
		if cl != classString {
			x = "CAST(" + x + " AS STRING)"
		}
		if !v.cased {
			x = "LOWER(" + x + ")"
		}
		return x
	}
	x, y := str(c, class), str(ident(rcol), classOf(t.m.columnType(rcol)))
	switch {
	case v.refPos.starBefore && v.refPos.starAfter:
		return leafNode(&leaf{sql: "POSITION(" + y + " IN " + x + ") > 0"}), nil
	case v.refPos.starAfter:
		return leafNode(&leaf{sql: "POSITION(" + y + " IN " + x + ") = 1"}), nil
	case v.refPos.starBefore:
		return leafNode(&leaf{sql: "RIGHT(" + x + ", CHAR_LENGTH(" + y + ")) = " + y}), nil
	}
	return leafNode(&leaf{sql: x + " = " + y}), nil
}

// timePart compares a part of a time column (EXTRACT) with a number.
func (t *detector) timePart(c string, class typeClass, v value) (*node, error) {
	x := c
	if class != classTime {
		x = "TRY_CAST(" + c + " AS TIMESTAMP(3))"
	}
	op := "="
	if v.kind == valCompare {
		op = v.op
	}
	if v.num == "" {
		return nil, fmt.Errorf("a time part compares with a number")
	}
	return leafNode(&leaf{sql: "EXTRACT(" + v.part + " FROM " + x + ") " + op + " " + v.num}), nil
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ident prints a column name as SQL: a dotted name (a field of a ROW
// column) part by part, each part quoted unless it is a plain word and
// not reserved; a name with a backquote is taken as written.
func ident(col string) string {
	if strings.Contains(col, "`") {
		return col
	}
	parts := strings.Split(col, ".")
	for i, p := range parts {
		if !plainIdent.MatchString(p) || token.IsReservedWord(p) {
			parts[i] = "`" + p + "`"
		}
	}
	return strings.Join(parts, ".")
}
