package sigma

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ScriptOptions say which form a script takes and what it holds beside
// the rules.
type ScriptOptions struct {
	// CreateAlerts adds CREATE TABLE statements for the alerts tables,
	// with the mapping's alerts_with options (default: the print
	// connector).
	CreateAlerts bool
	// StatementSet prints the statement-set form: an INSERT into the
	// alerts table per rule (per part of a split condition), and a
	// windowed aggregation per correlation. Without it, the ruleset
	// form: a CREATE RULESET of the detections per table, a metric
	// group and a ruleset per correlation (see ruleset.go).
	StatementSet bool
	// Ruleset names the detections' ruleset in the ruleset form (else
	// the mapping's ruleset, else DefaultRuleset); the names of the
	// correlations' objects begin with it.
	Ruleset string
}

// Alerts tables of the statement-set form. A detection's alert is the
// rule's name and severity and the alert columns of the event; a
// correlation's is the rule's name and severity, the window, the group
// (field=value, ...) and the aggregate that crossed the threshold.
const correlationColumns = "rule STRING, severity STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), group_key STRING, metric DOUBLE"

// alertsTable is the detection alerts' table.
func (m *Mapping) alertsTable() string {
	if m.Alerts != "" {
		return m.Alerts
	}
	return "alerts"
}

// correlationAlertsTable is the correlation alerts' table.
func (m *Mapping) correlationAlertsTable() string {
	if m.CorrelationAlerts != "" {
		return m.CorrelationAlerts
	}
	return m.alertsTable() + "_correlations"
}

// alertColumns are the columns a detection's alert carries: the
// mapping's alert_columns, else its time column and the columns of its
// fields, in the mapping's order.
func (m *Mapping) alertColumns() []string {
	if m.AlertColumns != nil {
		return m.AlertColumns
	}
	var cols []string
	seen := map[string]bool{}
	add := func(c string) {
		if c != "" && !seen[c] {
			seen[c] = true
			cols = append(cols, c)
		}
	}
	add(m.Time)
	for _, f := range m.FieldOrder {
		add(m.Fields[f])
	}
	return cols
}

// Script prints rs as a SQL script that Sluice runs: the mapping's
// prelude, the alerts tables if asked, and the rules in the form o
// says (by default, rulesets). Rules not translated are listed in
// comments at the end.
func Script(rs *Ruleset, o ScriptOptions) string {
	if !o.StatementSet {
		return rulesetScript(rs, o)
	}
	qs := rs.Alerting()
	var b strings.Builder
	header(&b, rs, qs)
	if pre := Preamble(rs, o); pre != "" {
		b.WriteString("\n" + pre)
	}
	if len(qs) > 0 {
		b.WriteString("\nEXECUTE STATEMENT SET BEGIN\n")
		for _, q := range qs {
			b.WriteString("\n" + comment(q) + "\n")
			b.WriteString(Insert(rs, q))
		}
		b.WriteString("\nEND;\n")
	}
	footer(&b, rs)
	return b.String()
}

// header writes the script's first line: what it holds.
func header(b *strings.Builder, rs *Ruleset, qs []*Query) {
	detections, correlations := 0, 0
	for _, q := range qs {
		if q.Correlation != nil {
			correlations++
		} else {
			detections++
		}
	}
	fmt.Fprintf(b, "-- Sigma rules translated by sluice sigma: %s, %s", plural(detections, "detection"), plural(correlations, "correlation"))
	if len(rs.Failures) > 0 {
		fmt.Fprintf(b, "; %d not translated (listed at the end)", len(rs.Failures))
	}
	b.WriteString(".\n")
}

// footer lists the rules not translated, in comments.
func footer(b *strings.Builder, rs *Ruleset) {
	if len(rs.Failures) > 0 {
		b.WriteString("\n-- Not translated:\n")
		for _, f := range rs.Failures {
			b.WriteString("-- " + oneLine(f.String()) + "\n")
		}
	}
}

// Preamble prints what a script has before its statement set: the
// mapping's prelude and, if asked, the alerts tables.
func Preamble(rs *Ruleset, o ScriptOptions) string { return preamble(rs, o, "CREATE TABLE") }

// preamble is Preamble with create the words that create a table.
func preamble(rs *Ruleset, o ScriptOptions, create string) string {
	m := rs.mapping()
	var b strings.Builder
	if p := strings.TrimSpace(m.Prelude); p != "" {
		b.WriteString(p + "\n")
	}
	if o.CreateAlerts {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		var cols []string
		for _, c := range m.alertColumns() {
			cols = append(cols, ident(lastPart(c))+" "+m.columnType(c))
		}
		detections, correlations := "rule STRING, severity STRING", correlationColumns
		if !o.StatementSet {
			detections, correlations = rulesetAlertColumns, rulesetCorrelationAlert
			if len(cols) > 0 {
				correlations += ", " + strings.Join(cols, ", ")
			}
		}
		if len(cols) > 0 {
			detections += ", " + strings.Join(cols, ", ")
		}
		fmt.Fprintf(&b, "%s %s (%s) WITH (%s);\n", create, ident(m.alertsTable()), detections, withClause(m.AlertsWith))
		for _, q := range rs.Alerting() {
			if q.Correlation != nil {
				fmt.Fprintf(&b, "%s %s (%s) WITH (%s);\n", create, ident(m.correlationAlertsTable()), correlations, withClause(m.AlertsWith))
				break
			}
		}
	}
	return b.String()
}

// Insert prints the INSERT statement of one query of rs.
func Insert(rs *Ruleset, q *Query) string {
	m := rs.mapping()
	if q.Correlation != nil {
		return correlationInsert(m, q)
	}
	return detectionInsert(m, q, m.alertColumns())
}

func (rs *Ruleset) mapping() *Mapping {
	if rs.Mapping == nil {
		return &Mapping{}
	}
	return rs.Mapping
}

// Check gives the statements of each alerting query, in the form o
// says, to check (after the preamble, once, with the alerts tables
// unless the prelude creates them) and reports the queries it refuses
// as failures, with its error, so that one rule the engine cannot plan
// (a column the table lacks) does not stop the others. In the ruleset
// form a query's statements create objects of their own (a ruleset of
// the one rule, named sigma_check_N...) and drop them after the INSERT.
// An error of the preamble is returned: no query can be checked then.
func Check(rs *Ruleset, o ScriptOptions, check func(sql string) error) error {
	o.CreateAlerts = true
	if err := check(preamble(rs, o, "CREATE TABLE IF NOT EXISTS")); err != nil {
		return err
	}
	var kept []*Query
	var refused []Failure
	for i, q := range rs.Queries {
		if q.Referenced {
			kept = append(kept, q)
			continue
		}
		sql := ""
		if o.StatementSet {
			sql = Insert(rs, q)
		} else {
			objs := rulesetStatements(rs, []*Query{q}, "sigma_check_"+strconv.Itoa(i+1))
			sql = strings.Join(objs.creates, "") + strings.Join(objs.inserts, "") + strings.Join(objs.drops, "")
		}
		if err := check(sql); err != nil {
			rule := q.Title
			if rule == "" {
				rule = q.Name
			}
			refused = append(refused, Failure{Pos: q.Pos, Rule: rule, Reason: "the engine refuses its SQL: " + oneLine(err.Error())})
			continue
		}
		kept = append(kept, q)
	}
	rs.Queries = kept
	rs.Failures = append(rs.Failures, refused...)
	return nil
}

// comment describes a query in a SQL comment: its name, title, severity,
// tags and source.
func comment(q *Query) string {
	s := "-- " + q.Name
	if q.Title != "" {
		s += ": " + q.Title
	}
	if q.Severity != "" {
		s += " [" + q.Severity + "]"
	}
	if len(q.Tags) > 0 {
		s += " " + strings.Join(q.Tags, " ")
	}
	if q.Correlation != nil {
		s += " over " + strings.Join(q.Correlation.Rules, ", ")
	}
	s += " (" + q.Pos.String()
	if q.ID != "" {
		s += ", id " + q.ID
	}
	return oneLine(s + ")")
}

// severity prints a query's severity as a SQL value.
func severity(q *Query) string {
	if q.Severity == "" {
		return "CAST(NULL AS STRING)"
	}
	return quote(q.Severity)
}

// detectionInsert prints a detection's INSERT, or its INSERTs, one per
// part of its condition.
func detectionInsert(m *Mapping, q *Query, cols []string) string {
	sel := []string{quote(q.Name) + " AS rule", severity(q) + " AS severity"}
	for _, c := range cols {
		sel = append(sel, ident(c))
	}
	parts := q.Parts
	if len(parts) == 0 {
		parts = []string{q.Condition}
	}
	var b strings.Builder
	for _, cond := range parts {
		fmt.Fprintf(&b, "INSERT INTO %s SELECT %s FROM %s WHERE %s;\n", ident(m.alertsTable()), strings.Join(sel, ", "), q.Table, cond)
	}
	return b.String()
}

func correlationInsert(m *Mapping, q *Query) string {
	c := q.Correlation
	key := "''"
	if len(c.GroupBy) > 0 {
		var parts []string
		for _, g := range c.GroupBy {
			parts = append(parts, fmt.Sprintf("CONCAT(%s, COALESCE(CAST(%s AS STRING), ''))", quote(g.Field+"="), g.Column))
		}
		key = "CONCAT_WS(', ', " + strings.Join(parts, ", ") + ")"
	}
	group := []string{"window_start", "window_end"}
	for _, g := range c.GroupBy {
		group = append(group, g.Column)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s\n", ident(m.correlationAlertsTable()))
	fmt.Fprintf(&b, "SELECT %s AS rule, %s AS severity, window_start, window_end, %s AS group_key, CAST(%s AS DOUBLE) AS metric\n",
		quote(q.Name), severity(q), key, c.Value)
	fmt.Fprintf(&b, "FROM TABLE(TUMBLE(TABLE %s, DESCRIPTOR(%s), %s))\n", q.Table, c.Time, c.Interval)
	fmt.Fprintf(&b, "WHERE %s\n", q.Condition)
	fmt.Fprintf(&b, "GROUP BY %s\n", strings.Join(group, ", "))
	fmt.Fprintf(&b, "HAVING %s;\n", c.Having)
	return b.String()
}

// withClause prints table options, 'connector' first, the others sorted;
// without any, the print connector.
func withClause(opts map[string]string) string {
	if len(opts) == 0 {
		opts = map[string]string{"connector": "print"}
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "connector") != (keys[j] == "connector") {
			return keys[i] == "connector"
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = quote(k) + " = " + quote(opts[k])
	}
	return strings.Join(parts, ", ")
}

func lastPart(col string) string {
	if i := strings.LastIndexByte(col, '.'); i >= 0 && !strings.Contains(col, "`") {
		return col[i+1:]
	}
	return col
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// plural prints n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
