package sigma

import (
	"fmt"
	"strconv"
	"strings"
)

// The ruleset form of a script (Script's default): the detections of
// each table are one CREATE RULESET over it, and each correlation a
// CREATE METRIC GROUP over the table, keyed by its group-by columns,
// with a metric per aggregate over a sliding window of its time span,
// and a CREATE RULESET over the metric group whose rule tests the
// condition on the events the correlation counts. INSERTs send the
// rulesets' alerts into the alerts tables.

// DefaultRuleset is the name of the detections' ruleset when neither
// the options nor the mapping give one.
const DefaultRuleset = "sigma"

// Alerts tables of the ruleset form: the ruleset and its version, the
// rules matched (a detection ruleset's, in priority order) or the
// correlation, the severity (the highest of the matched rules'), the
// tags, then for a correlation its group (field=value, ...) and the
// aggregate that met the condition, and the alert columns of the event.
const (
	rulesetAlertColumns     = "ruleset STRING, version INT, rules ARRAY<STRING>, severity STRING, tags ARRAY<STRING>"
	rulesetCorrelationAlert = "ruleset STRING, version INT, rule STRING, severity STRING, tags ARRAY<STRING>, group_key STRING, metric DOUBLE"
)

// rulesetName is the detections' ruleset name of o over rs's mapping.
func rulesetName(rs *Ruleset, o ScriptOptions) string {
	switch {
	case o.Ruleset != "":
		return o.Ruleset
	case rs.mapping().Ruleset != "":
		return rs.mapping().Ruleset
	}
	return DefaultRuleset
}

// rulesetObjects are the statements of the ruleset form for some
// queries: the CREATE statements, the INSERTs of their alerts, and the
// DROP statements that undo the CREATEs.
type rulesetObjects struct {
	creates []string
	inserts []string
	drops   []string
	used    map[string]bool // the objects' names
}

// name returns base, numbered if an object already has that name.
func (o *rulesetObjects) name(base string) string {
	name := base
	for n := 2; o.used[name]; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	o.used[name] = true
	return name
}

// rulesetStatements prints qs (alerting queries of rs) in the ruleset
// form, their objects' names beginning with base.
func rulesetStatements(rs *Ruleset, qs []*Query, base string) rulesetObjects {
	m := rs.mapping()
	o := rulesetObjects{used: map[string]bool{}}
	// The detections, a ruleset per table, in the order of first use.
	var tables []string
	byTable := map[string][]*Query{}
	for _, q := range qs {
		if q.Correlation != nil {
			continue
		}
		if _, ok := byTable[q.Table]; !ok {
			tables = append(tables, q.Table)
		}
		byTable[q.Table] = append(byTable[q.Table], q)
	}
	for _, table := range tables {
		name := base
		if len(tables) > 1 {
			name = base + "_" + slug(table)
		}
		name = o.name(name)
		var b strings.Builder
		fmt.Fprintf(&b, "CREATE RULESET %s ON %s MATCH ANY (\n", ident(name), table)
		for i, q := range byTable[table] {
			b.WriteString("  " + comment(q) + "\n")
			conds, names := []string{q.Condition}, []string{q.Name}
			if len(q.Parts) > 0 {
				conds, names = q.Parts, q.PartNames
			}
			for j := range conds {
				b.WriteString("  " + rule(names[j], conds[j], q))
				if i < len(byTable[table])-1 || j < len(conds)-1 {
					b.WriteString(",")
				}
				b.WriteString("\n")
			}
		}
		b.WriteString(");\n")
		o.creates = append(o.creates, b.String())
		sel := []string{"ruleset_name", "ruleset_version", "matched_rules", "alert_severity", "alert_tags"}
		for _, c := range m.alertColumns() {
			sel = append(sel, ident(c))
		}
		o.inserts = append(o.inserts, fmt.Sprintf("INSERT INTO %s SELECT %s FROM %s;\n", ident(m.alertsTable()), strings.Join(sel, ", "), ident(name)))
		o.drops = append(o.drops, "DROP RULESET "+ident(name)+";\n")
	}
	for _, q := range qs {
		if q.Correlation != nil {
			correlationStatements(m, q, base+"_"+q.Name, &o)
		}
	}
	return o
}

// rule prints the RULE clause of a detection's condition cond, named
// name.
func rule(name, cond string, q *Query) string {
	s := "RULE " + ident(name) + " WHEN " + cond + " SEVERITY " + quote(rulesetSeverity(q))
	if len(q.Tags) > 0 {
		tags := make([]string, len(q.Tags))
		for i, t := range q.Tags {
			tags[i] = quote(t)
		}
		s += " TAGS (" + strings.Join(tags, ", ") + ")"
	}
	return s
}

// rulesetSeverity is a query's severity in a ruleset: its level, else
// medium (a ruleset's default).
func rulesetSeverity(q *Query) string {
	if q.Severity == "" {
		return "medium"
	}
	return q.Severity
}

// metric is a metric of a correlation's group: its name and aggregate.
type metric struct{ name, agg string }

// correlationStatements prints correlation q as a view of the events
// it counts (with the keys that are not plain columns, if any), a metric
// group over the view and a ruleset over the group, named after base,
// and the INSERT of its alerts.
//
// The view, not a FILTER of each metric, selects the events: its WHERE
// is evaluated as the rules' conditions are (per distinct value, with
// the other rules over the table), and the group keeps only the events
// counted (a LAST window keeps every row it folds in until the row
// leaves the span). The group's rows are the counted events, so the
// rule tests the metrics alone.
func correlationStatements(m *Mapping, q *Query, base string, o *rulesetObjects) {
	c := q.Correlation
	where := c.Conditions[0]
	if len(c.Conditions) > 1 {
		where = strings.Join(parenAll(c.Conditions), " OR ")
	}
	window := " WINDOW LAST(" + c.Interval + ")"
	span := slug(c.Span)
	var metrics []metric
	var value, test string // the aggregate the condition tests, and the test
	switch c.Type {
	case "event_count":
		metrics = []metric{{"events_" + span, "COUNT(*)" + window}}
	case "value_count":
		metrics = []metric{{"distinct_" + snake(c.FieldName) + "_" + span, "COUNT(DISTINCT " + c.Field + ")" + window}}
	case "value_sum":
		metrics = []metric{{"sum_" + snake(c.FieldName) + "_" + span, "SUM(" + c.Field + ")" + window}}
	case "value_avg":
		metrics = []metric{{"avg_" + snake(c.FieldName) + "_" + span, "AVG(" + c.Field + ")" + window}}
	case "temporal":
		// The events of each rule in the span; the condition counts
		// the rules that have some.
		var seen []string
		for i, r := range c.Rules {
			name := uniqueMetric(metrics, r+"_"+span)
			metrics = append(metrics, metric{name, "COUNT(*) FILTER (WHERE " + c.Conditions[i] + ")" + window})
			seen = append(seen, ident(name)+" > 0")
		}
		value = kinds(seen)
		if len(c.Compare) == 1 && c.Compare[0].Op == ">=" && c.Compare[0].Number == strconv.Itoa(len(c.Rules)) {
			test = strings.Join(seen, " AND ")
		}
	case "temporal_ordered":
		// Two rules: the first's earliest event in the span before the
		// second's latest.
		first, last := "first_"+c.Rules[0]+"_"+span, "last_"+c.Rules[1]+"_"+span
		metrics = []metric{
			{first, "MIN(" + c.Time + ") FILTER (WHERE " + c.Conditions[0] + ")" + window},
			{last, "MAX(" + c.Time + ") FILTER (WHERE " + c.Conditions[1] + ")" + window},
		}
		value = kinds([]string{ident(first) + " IS NOT NULL", ident(last) + " IS NOT NULL"})
		order := ident(first) + " < " + ident(last)
		if len(c.Compare) == 1 && c.Compare[0].Op == ">=" && c.Compare[0].Number == "2" {
			test = order
		} else {
			test = compare(value, c.Compare) + " AND " + order
		}
	}
	if value == "" {
		value = ident(metrics[0].name)
	}
	if test == "" {
		test = compare(value, c.Compare)
	}
	// The keys: plain columns of the table, or columns the view adds.
	var keys, extra []string
	for i, g := range c.GroupBy {
		if plainColumn(g.Column) {
			keys = append(keys, g.Column)
			continue
		}
		k := "sigma_key_" + strconv.Itoa(i+1)
		extra = append(extra, g.Column+" AS "+k)
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		extra = append(extra, "0 AS sigma_key")
		keys = append(keys, "sigma_key")
	}
	var b strings.Builder
	b.WriteString(comment(q) + "\n")
	view, group, ruleset := o.name(base+"_events"), o.name(base+"_metrics"), o.name(base)
	fmt.Fprintf(&b, "CREATE VIEW %s AS SELECT %s FROM %s WHERE %s;\n", ident(view), strings.Join(append([]string{"*"}, extra...), ", "), q.Table, where)
	fmt.Fprintf(&b, "CREATE METRIC GROUP %s ON %s KEY BY (%s) (\n", ident(group), ident(view), strings.Join(keys, ", "))
	for i, mt := range metrics {
		sep := ","
		if i == len(metrics)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  METRIC %s AS %s%s\n", ident(mt.name), mt.agg, sep)
	}
	b.WriteString(");\n")
	fmt.Fprintf(&b, "CREATE RULESET %s ON %s (\n  %s\n);\n", ident(ruleset), ident(group), rule(q.Name, test, q))
	o.creates = append(o.creates, b.String())
	sel := []string{"ruleset_name", "ruleset_version", quote(q.Name) + " AS rule", "alert_severity", "alert_tags",
		groupKey(c) + " AS group_key", "CAST(" + value + " AS DOUBLE) AS metric"}
	for _, col := range m.alertColumns() {
		sel = append(sel, ident(col))
	}
	o.inserts = append(o.inserts, fmt.Sprintf("INSERT INTO %s SELECT %s FROM %s;\n", ident(m.correlationAlertsTable()), strings.Join(sel, ", "), ident(ruleset)))
	o.drops = append(o.drops, "DROP RULESET "+ident(ruleset)+";\n", "DROP METRIC GROUP "+ident(group)+";\n", "DROP VIEW "+ident(view)+";\n")
}

// kinds prints the number of the tests that hold.
func kinds(tests []string) string {
	parts := make([]string, len(tests))
	for i, t := range tests {
		parts[i] = "CASE WHEN " + t + " THEN 1 ELSE 0 END"
	}
	return "(" + strings.Join(parts, " + ") + ")"
}

// uniqueMetric returns name, numbered if a metric of ms has it.
func uniqueMetric(ms []metric, name string) string {
	taken := func(n string) bool {
		for _, m := range ms {
			if m.name == n {
				return true
			}
		}
		return false
	}
	n := name
	for i := 2; taken(n); i++ {
		n = name + "_" + strconv.Itoa(i)
	}
	return n
}

// groupKey prints a correlation's group as field=value, ... (SQL).
func groupKey(c *Correlation) string {
	if len(c.GroupBy) == 0 {
		return "''"
	}
	var parts []string
	for _, g := range c.GroupBy {
		parts = append(parts, fmt.Sprintf("CONCAT(%s, COALESCE(CAST(%s AS STRING), ''))", quote(g.Field+"="), g.Column))
	}
	return "CONCAT_WS(', ', " + strings.Join(parts, ", ") + ")"
}

// plainColumn reports whether col (SQL) names a column of a table, not
// a field of one.
func plainColumn(col string) bool {
	if strings.HasPrefix(col, "`") {
		return strings.Count(col, "`") == 2 && strings.HasSuffix(col, "`")
	}
	return !strings.Contains(col, ".")
}

func parenAll(conds []string) []string {
	out := make([]string, len(conds))
	for i, c := range conds {
		out[i] = paren(c)
	}
	return out
}

// snake makes a Sigma field name (CamelCase) a part of an identifier:
// words in lower case joined by _ (BytesOut: bytes_out).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			if p := s[i-1]; p >= 'a' && p <= 'z' || p >= '0' && p <= '9' {
				b.WriteByte('_')
			}
		}
		b.WriteRune(r)
	}
	return slug(b.String())
}

// slug makes s a part of an identifier: lower case, letters, digits and
// _.
func slug(s string) string {
	return strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

// rulesetScript prints rs in the ruleset form.
func rulesetScript(rs *Ruleset, o ScriptOptions) string {
	qs := rs.Alerting()
	var b strings.Builder
	header(&b, rs, qs)
	if pre := preamble(rs, o, "CREATE TABLE"); pre != "" {
		b.WriteString("\n" + pre)
	}
	objs := rulesetStatements(rs, qs, rulesetName(rs, o))
	for _, c := range objs.creates {
		b.WriteString("\n" + c)
	}
	switch len(objs.inserts) {
	case 0:
	case 1:
		b.WriteString("\n" + objs.inserts[0])
	default:
		b.WriteString("\nEXECUTE STATEMENT SET BEGIN\n")
		for _, ins := range objs.inserts {
			b.WriteString(ins)
		}
		b.WriteString("END;\n")
	}
	footer(&b, rs)
	return b.String()
}
