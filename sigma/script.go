package sigma

import (
	"fmt"
	"sort"
	"strings"
)

// ScriptOptions say what a script holds beside the rules' INSERTs.
type ScriptOptions struct {
	// CreateAlerts adds CREATE TABLE statements for the alerts tables,
	// with the mapping's alerts_with options (default: the print
	// connector).
	CreateAlerts bool
}

// Alerts tables. A detection's alert is the rule's name and severity and
// the alert columns of the event; a correlation's is the rule's name and
// severity, the window, the group (field=value, ...) and the aggregate
// that crossed the threshold.
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
// prelude, the alerts tables if asked, and one statement set with an
// INSERT per alerting rule. Rules not translated are listed in comments
// at the end.
func Script(rs *Ruleset, o ScriptOptions) string {
	qs := rs.Alerting()
	var b strings.Builder
	detections, correlations := 0, 0
	for _, q := range qs {
		if q.Correlation != nil {
			correlations++
		} else {
			detections++
		}
	}
	fmt.Fprintf(&b, "-- Sigma rules translated by sluice sigma: %s, %s", plural(detections, "detection"), plural(correlations, "correlation"))
	if len(rs.Failures) > 0 {
		fmt.Fprintf(&b, "; %d not translated (listed at the end)", len(rs.Failures))
	}
	b.WriteString(".\n")
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
	if len(rs.Failures) > 0 {
		b.WriteString("\n-- Not translated:\n")
		for _, f := range rs.Failures {
			b.WriteString("-- " + oneLine(f.String()) + "\n")
		}
	}
	return b.String()
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
		defs := []string{"rule STRING", "severity STRING"}
		for _, c := range m.alertColumns() {
			defs = append(defs, ident(lastPart(c))+" "+m.columnType(c))
		}
		fmt.Fprintf(&b, "%s %s (%s) WITH (%s);\n", create, ident(m.alertsTable()), strings.Join(defs, ", "), withClause(m.AlertsWith))
		for _, q := range rs.Alerting() {
			if q.Correlation != nil {
				fmt.Fprintf(&b, "%s %s (%s) WITH (%s);\n", create, ident(m.correlationAlertsTable()), correlationColumns, withClause(m.AlertsWith))
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

// Check gives each alerting query's INSERT to check (after the preamble,
// once, with the alerts tables unless the prelude creates them) and
// reports the queries it refuses as failures, with its error, so that
// one rule the engine cannot plan (a column the table lacks) does not
// stop the others. An error of the preamble is returned: no query can be
// checked then.
func Check(rs *Ruleset, check func(sql string) error) error {
	if err := check(preamble(rs, ScriptOptions{CreateAlerts: true}, "CREATE TABLE IF NOT EXISTS")); err != nil {
		return err
	}
	var kept []*Query
	var refused []Failure
	for _, q := range rs.Queries {
		if q.Referenced {
			kept = append(kept, q)
			continue
		}
		if err := check(Insert(rs, q)); err != nil {
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
