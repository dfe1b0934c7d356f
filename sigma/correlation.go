package sigma

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Correlation is a translated correlation rule: an aggregate over the
// events of the rules it refers to, per group and over its time span,
// and the condition on it that raises an alert.
//
// The ruleset form (Script's default) computes the aggregate over a
// sliding window: per event, over the group's events of the time span
// that ends with it (a metric group's LAST window). The statement-set
// form tumbles: fixed intervals of Timespan, so events that fall on both
// sides of a boundary are not counted together.
type Correlation struct {
	// Type is event_count, value_count, temporal, temporal_ordered,
	// value_sum or value_avg.
	Type string
	// Rules are the names of the queries whose events it counts, and
	// Conditions their conditions (SQL), in the same order.
	Rules      []string
	Conditions []string
	// Timespan is the window size; Interval says it as a SQL interval,
	// Span as the rule does (10m).
	Timespan time.Duration
	Interval string
	Span     string
	// Time is the event-time column, as SQL; TimeType its SQL type.
	Time     string
	TimeType string
	// GroupBy lists the group's fields and their columns.
	GroupBy []GroupField
	// Field is the column of the condition's field (value_count,
	// value_sum, value_avg), as SQL, and FieldName its Sigma name.
	Field     string
	FieldName string
	// Compare is the condition: comparisons of the aggregate, ANDed.
	Compare []Comparison
	// Value is the aggregate the condition tests (COUNT(*), ...) over a
	// window of events, as SQL (the statement-set form).
	Value string
	// Having is the condition on the aggregates, as SQL (the
	// statement-set form).
	Having string
}

// Comparison is one comparison of a correlation's condition: the
// aggregate Op (>, >=, <, <=, = or <>) Number (SQL).
type Comparison struct {
	Op     string
	Number string
}

// GroupField is a field a correlation groups by, and its column (SQL).
type GroupField struct {
	Field  string
	Column string
}

var timespanRE = regexp.MustCompile(`^([0-9]+)([smhdw])$`)

// correlation translates a correlation rule.
func (t *translator) correlation(d *Document) {
	q, err := t.correlate(d)
	if err != nil {
		t.failErr(d, err)
		return
	}
	t.queries[d] = q
}

func (t *translator) correlate(d *Document) (*Query, error) {
	c := d.correlation
	if d.Level != "" && !levels[d.Level] {
		return nil, fmt.Errorf("the level %q is not one of informational, low, medium, high and critical", d.Level)
	}
	typ := scalarValue(mapGet(c, "type"))
	switch typ {
	case "event_count", "value_count", "temporal", "temporal_ordered", "value_sum", "value_avg":
	case "value_percentile":
		return nil, errorAt(mapGet(c, "type"), "value_percentile correlations need a percentile aggregate, which Sluice does not have")
	case "":
		return nil, errorAt(c, "the correlation has no type")
	default:
		return nil, errorAt(mapGet(c, "type"), "unknown correlation type %q%s", typ,
			hint(typ, []string{"event_count", "value_count", "temporal", "temporal_ordered", "value_sum", "value_avg"}))
	}
	if a := mapGet(c, "aliases"); a != nil {
		return nil, errorAt(a, "field name aliases of correlations are not supported")
	}
	if t.m.Time == "" {
		return nil, errorAt(c, "a correlation counts events per window of time: set time: (the event-time column) in the mapping")
	}
	// The rules it counts.
	rulesNode := mapGet(c, "rules")
	var refs []*yaml.Node
	switch {
	case rulesNode == nil:
		return nil, errorAt(c, "the correlation has no rules")
	case rulesNode.Kind == yaml.ScalarNode:
		refs = []*yaml.Node{rulesNode}
	case rulesNode.Kind == yaml.SequenceNode && len(rulesNode.Content) > 0:
		refs = rulesNode.Content
	default:
		return nil, errorAt(rulesNode, "the correlation's rules is %s, not a list of rule ids or names", nodeKind(rulesNode))
	}
	var qs []*Query
	var docs []*Document
	for _, r := range refs {
		rd, err := t.lookup(r.Value)
		if err != nil {
			return nil, errorAt(r, "the correlation %v", err)
		}
		switch rd.Kind() {
		case "correlation":
			return nil, errorAt(r, "the correlation refers to the correlation %q: chains of correlations are not supported", r.Value)
		case "detection":
		default:
			return nil, errorAt(r, "the correlation refers to %q, which is a %s, not a detection rule", r.Value, rd.Kind())
		}
		q := t.queries[rd]
		if q == nil {
			return nil, errorAt(r, "the correlation refers to %q (%s), which is not translated: %s", r.Value, rd.Pos, t.failed[rd])
		}
		if len(qs) > 0 && q.Table != qs[0].Table {
			return nil, errorAt(r, "the correlation's rules read different tables (%s and %s)", qs[0].Table, q.Table)
		}
		qs = append(qs, q)
		docs = append(docs, rd)
	}
	// The window.
	span := scalarValue(mapGet(c, "timespan"))
	m := timespanRE.FindStringSubmatch(span)
	if m == nil {
		return nil, errorAt(orNodeOf(mapGet(c, "timespan"), c), "the timespan %q is not a number followed by s, m, h, d or w", span)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 || n > 100000 {
		return nil, errorAt(mapGet(c, "timespan"), "the timespan %q is out of range", span)
	}
	unit := map[string]string{"s": "SECOND", "m": "MINUTE", "h": "HOUR", "d": "DAY", "w": "DAY"}[m[2]]
	dur := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
	if m[2] == "w" {
		n *= 7
	}
	corr := &Correlation{Type: typ, Timespan: time.Duration(n) * dur, Interval: interval(n, unit), Span: span,
		Time: ident(t.m.Time), TimeType: t.m.columnType(t.m.Time)}
	for _, q := range qs {
		corr.Rules = append(corr.Rules, q.Name)
		corr.Conditions = append(corr.Conditions, q.Condition)
	}
	// The groups, mapped as the first rule's fields are.
	ls, _ := t.m.logsource(docs[0].Logsource)
	if g := mapGet(c, "group-by"); g != nil {
		var fields []*yaml.Node
		switch g.Kind {
		case yaml.ScalarNode:
			if g.Tag != "!!null" {
				fields = []*yaml.Node{g}
			}
		case yaml.SequenceNode:
			fields = g.Content
		default:
			return nil, errorAt(g, "group-by is %s, not a list of fields", nodeKind(g))
		}
		for _, f := range fields {
			col, ok := t.m.column(f.Value, ls)
			if !ok || f.Kind != yaml.ScalarNode {
				return nil, errorAt(f, "the group-by field %s has no column in the mapping%s", f.Value, hint(f.Value, t.m.fieldNames(ls)))
			}
			corr.GroupBy = append(corr.GroupBy, GroupField{Field: f.Value, Column: ident(col)})
		}
	}
	// The aggregate, and the condition on it.
	condNode := mapGet(c, "condition")
	field := scalarValue(mapGet(condNode, "field"))
	// column returns the column of the condition's field, as SQL, and
	// whether it is a number.
	column := func() (string, bool, error) {
		f := mapGet(condNode, "field")
		if f == nil || f.Kind != yaml.ScalarNode || field == "" {
			return "", false, errorAt(orNodeOf(f, c), "a %s correlation needs the field of its condition (one field)", typ)
		}
		col, ok := t.m.column(field, ls)
		if !ok {
			return "", false, errorAt(f, "the condition's field %s has no column in the mapping%s", field, hint(field, t.m.fieldNames(ls)))
		}
		return ident(col), classOf(t.m.columnType(col)) == classNumber, nil
	}
	var extra string // a condition beside the count's (the order of temporal_ordered)
	switch typ {
	case "event_count":
		corr.Value = "COUNT(*)"
	case "value_count":
		col, _, err := column()
		if err != nil {
			return nil, err
		}
		corr.Field, corr.FieldName = col, field
		corr.Value = "COUNT(DISTINCT " + col + ")"
	case "value_sum", "value_avg":
		col, number, err := column()
		if err != nil {
			return nil, err
		}
		if !number {
			col = "TRY_CAST(" + col + " AS DOUBLE)"
		}
		corr.Field, corr.FieldName = col, field
		corr.Value = map[string]string{"value_sum": "SUM(", "value_avg": "AVG("}[typ] + col + ")"
	case "temporal", "temporal_ordered":
		var seen []string
		for _, q := range qs {
			seen = append(seen, "MAX(CASE WHEN "+paren(q.Condition)+" THEN 1 ELSE 0 END)")
		}
		corr.Value = strings.Join(seen, " + ")
		if len(seen) > 1 {
			corr.Value = "(" + corr.Value + ")"
		}
		if typ == "temporal_ordered" {
			if len(qs) != 2 {
				return nil, errorAt(rulesNode, "temporal_ordered correlations of %d rules are not supported (of two they are)", len(qs))
			}
			extra = "MIN(CASE WHEN " + paren(qs[0].Condition) + " THEN " + corr.Time + " END) < MAX(CASE WHEN " +
				paren(qs[1].Condition) + " THEN " + corr.Time + " END)"
		}
	}
	cmp, err := correlationCondition(condNode, typ, len(qs))
	if err != nil {
		return nil, err
	}
	corr.Compare = cmp
	having := compare(corr.Value, cmp)
	if extra != "" {
		having += " AND " + extra
	}
	corr.Having = having
	var where []string
	for _, q := range qs {
		where = append(where, paren(q.Condition))
	}
	// The rules it counts alert on their own only if it, or another
	// correlation that refers to them, says so.
	for _, q := range qs {
		if generates(d) {
			t.generated[q] = true
		}
		q.Referenced = !t.generated[q]
	}
	return &Query{ID: d.ID, Title: d.Title, Severity: d.Level, Tags: d.Tags, Pos: d.Pos, Table: qs[0].Table,
		Condition: strings.Join(where, " OR "), Name: baseName(d), Correlation: corr}, nil
}

// generates reports whether a correlation's rules alert on their own
// (generate: true, in the correlation section or beside it).
func generates(d *Document) bool {
	for _, n := range []*yaml.Node{mapGet(d.correlation, "generate"), mapGet(d.root, "generate")} {
		if n != nil && n.ShortTag() == "!!bool" && strings.EqualFold(n.Value, "true") {
			return true
		}
	}
	return false
}

// correlationCondition translates the condition of a correlation (gt,
// gte, lt, lte, eq, neq: numbers, ANDed). A temporal correlation
// without one needs all of its rules.
func correlationCondition(c *yaml.Node, typ string, rules int) ([]Comparison, error) {
	all := []Comparison{{">=", strconv.Itoa(rules)}}
	if c == nil {
		if typ == "temporal" || typ == "temporal_ordered" {
			return all, nil
		}
		return nil, fmt.Errorf("a %s correlation needs a condition (gt, gte, lt, lte, eq or neq)", typ)
	}
	if c.Kind != yaml.MappingNode {
		return nil, errorAt(c, "the correlation's condition is %s, not a mapping", nodeKind(c))
	}
	ops := map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "eq": "=", "neq": "<>"}
	var cmp []Comparison
	for i := 0; i+1 < len(c.Content); i += 2 {
		k, v := c.Content[i], c.Content[i+1]
		if k.Value == "field" {
			continue
		}
		op, ok := ops[k.Value]
		if !ok {
			return nil, errorAt(k, "unknown operator %q in the correlation's condition%s", k.Value,
				hint(k.Value, []string{"gt", "gte", "lt", "lte", "eq", "neq"}))
		}
		num, ok := sqlNumber(v.Value)
		if v.Kind != yaml.ScalarNode || !ok {
			return nil, errorAt(v, "the correlation's condition %s compares with %s, not a number", k.Value, nodeKind(v))
		}
		cmp = append(cmp, Comparison{op, num})
	}
	if len(cmp) == 0 {
		if typ == "temporal" || typ == "temporal_ordered" {
			return all, nil
		}
		return nil, errorAt(c, "the correlation's condition has no comparison (gt, gte, lt, lte, eq or neq)")
	}
	return cmp, nil
}

// compare prints the comparisons of value, ANDed.
func compare(value string, cmp []Comparison) string {
	parts := make([]string, len(cmp))
	for i, c := range cmp {
		parts[i] = value + " " + c.Op + " " + c.Number
	}
	return strings.Join(parts, " AND ")
}

// interval prints n units as a SQL interval literal, with the leading
// precision a number of more than two digits needs.
func interval(n int, unit string) string {
	s := strconv.Itoa(n)
	if len(s) > 2 {
		return fmt.Sprintf("INTERVAL '%s' %s(%d)", s, unit, len(s))
	}
	return fmt.Sprintf("INTERVAL '%s' %s", s, unit)
}

// paren parenthesizes a condition.
func paren(cond string) string { return "(" + cond + ")" }

// orNodeOf returns n, or else when n is nil.
func orNodeOf(n, elseNode *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return elseNode
}
