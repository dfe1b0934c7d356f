package sluice_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// rulesetEvents is the input of the ruleset tests, and rulesetRules three
// rules over it. Row by row (s, n): r_a (s LIKE '%a%') holds for 1 and 3
// (NULL for 4); r_b (n > 5) for 1, 3 and 4; r_c (s = 'abc') for 1. In
// priority order: r_c (0), r_b (1), r_a (2).
const rulesetEvents = `CREATE VIEW ev AS SELECT * FROM (VALUES
  (1, 'abc', 10), (2, 'xyz', 3), (3, 'a', 7), (4, CAST(NULL AS STRING), 9), (5, 'b', 1)) AS t(id, s, n);
`

const rulesetRules = `(
  RULE r_a WHEN s LIKE '%a%' SEVERITY 'low' PRIORITY 2 TAGS ('x'),
  RULE r_b WHEN n > 5 SEVERITY 'HIGH' PRIORITY 1 TAGS ('y', 'x'),
  RULE r_c WHEN s = 'abc'
)`

// runRuleset runs script (after rulesetEvents) whose INSERTs write into
// the print table out, and returns its rows sorted.
func runRuleset(t *testing.T, script string) []string {
	t.Helper()
	src := rulesetEvents + `CREATE TABLE out (id INT, rules ARRAY<STRING>, severity STRING, tags ARRAY<STRING>, version INT) WITH ('connector' = 'print');
` + script
	var buf bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Run(context.Background(), "rules.sql", []byte(src)); err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l != "" {
			rows = append(rows, l)
		}
	}
	slices.Sort(rows)
	return rows
}

const rulesetInsert = "INSERT INTO out SELECT id, matched_rules, alert_severity, alert_tags, ruleset_version FROM rs;\n"

// Each match policy raises the alerts it says, with the matched rules in
// priority order, the highest severity of theirs (the first's under
// FIRST) and their tags.
func TestRulesetPolicies(t *testing.T) {
	for _, c := range []struct {
		match string
		want  []string
	}{
		{"", []string{ // ANY, the default
			"+I[1, [r_c, r_b, r_a], high, [y, x], 1]",
			"+I[3, [r_b, r_a], high, [y, x], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
		{"MATCH ANY", []string{
			"+I[1, [r_c, r_b, r_a], high, [y, x], 1]",
			"+I[3, [r_b, r_a], high, [y, x], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
		{"MATCH ALL", []string{"+I[1, [r_c, r_b, r_a], high, [y, x], 1]"}},
		{"MATCH AT LEAST 2", []string{
			"+I[1, [r_c, r_b, r_a], high, [y, x], 1]",
			"+I[3, [r_b, r_a], high, [y, x], 1]",
		}},
		{"MATCH AT LEAST 4", nil},
		// 34 percent of 3 rules, rounded up, is 2; 33 percent is 1.
		{"MATCH AT LEAST 34 PERCENT", []string{
			"+I[1, [r_c, r_b, r_a], high, [y, x], 1]",
			"+I[3, [r_b, r_a], high, [y, x], 1]",
		}},
		{"MATCH AT LEAST 33 PERCENT", []string{
			"+I[1, [r_c, r_b, r_a], high, [y, x], 1]",
			"+I[3, [r_b, r_a], high, [y, x], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
		{"MATCH FIRST", []string{
			"+I[1, [r_c], medium, [], 1]",
			"+I[3, [r_b], high, [y, x], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
	} {
		t.Run(c.match, func(t *testing.T) {
			got := runRuleset(t, "CREATE RULESET rs ON ev "+c.match+" "+rulesetRules+";\n"+rulesetInsert)
			if !slices.Equal(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// A disabled rule matches nothing; ALTER RULESET makes new versions: a
// rule added, one enabled again, one dropped.
func TestRulesetVersions(t *testing.T) {
	disabled := strings.Replace(rulesetRules, "TAGS ('y', 'x'),", "TAGS ('y', 'x') DISABLED,", 1)
	got := runRuleset(t, "CREATE RULESET rs ON ev "+disabled+";\n"+rulesetInsert)
	want := []string{"+I[1, [r_c, r_a], medium, [x], 1]", "+I[3, [r_a], low, [x], 1]"}
	if !slices.Equal(got, want) {
		t.Errorf("disabled: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = runRuleset(t, "CREATE RULESET rs ON ev MATCH ALL "+disabled+`;
ALTER RULESET rs ADD RULE r_d WHEN id < 3 SEVERITY 'critical';
ALTER RULESET rs ENABLE RULE r_b;
ALTER RULESET rs DROP RULE r_c;
`+rulesetInsert)
	// Version 4: r_a, r_b and r_d, all of them.
	want = []string{"+I[1, [r_d, r_b, r_a], critical, [y, x], 4]"}
	if !slices.Equal(got, want) {
		t.Errorf("altered: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
