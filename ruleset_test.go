package sluice_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// rulesetEvents is the input of the ruleset tests, and rulesetRules three
// rules over it. Row by row (s, n): r_a (s LIKE '%a%') holds for 1 and 3
// (NULL for 4); r_b (n > 5) for 1, 3 and 4; r_c (s = 'abc') for 1. In
// priority order, higher first: r_a (2), r_b (1), r_c (0).
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
			"+I[1, [r_a, r_b, r_c], high, [x, y], 1]",
			"+I[3, [r_a, r_b], high, [x, y], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
		{"MATCH ANY", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 1]",
			"+I[3, [r_a, r_b], high, [x, y], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
		{"MATCH ALL", []string{"+I[1, [r_a, r_b, r_c], high, [x, y], 1]"}},
		{"MATCH AT LEAST 2", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 1]",
			"+I[3, [r_a, r_b], high, [x, y], 1]",
		}},
		{"MATCH AT LEAST 4", nil},
		// 34 percent of 3 rules, rounded up, is 2; 33 percent is 1.
		{"MATCH AT LEAST 34 PERCENT", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 1]",
			"+I[3, [r_a, r_b], high, [x, y], 1]",
		}},
		{"MATCH AT LEAST 33 PERCENT", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 1]",
			"+I[3, [r_a, r_b], high, [x, y], 1]",
			"+I[4, [r_b], high, [y, x], 1]",
		}},
		{"MATCH FIRST", []string{
			"+I[1, [r_a], low, [x], 1]",
			"+I[3, [r_a], low, [x], 1]",
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
	want := []string{"+I[1, [r_a, r_c], medium, [x], 1]", "+I[3, [r_a], low, [x], 1]"}
	if !slices.Equal(got, want) {
		t.Errorf("disabled: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = runRuleset(t, "CREATE RULESET rs ON ev MATCH ALL "+disabled+`;
ALTER RULESET rs ADD RULE r_d WHEN id < 3 SEVERITY 'critical';
ALTER RULESET rs ENABLE RULE r_b;
ALTER RULESET rs DROP RULE r_c;
`+rulesetInsert)
	// Version 4: r_a, r_b and r_d, all of them (tags in the rules' order).
	want = []string{"+I[1, [r_a, r_b, r_d], critical, [x, y], 4]"}
	if !slices.Equal(got, want) {
		t.Errorf("altered: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A rollback to version 1 makes version 5 of its rules: r_a and r_c
	// (r_b disabled), all of them.
	got = runRuleset(t, "CREATE RULESET rs ON ev MATCH ALL "+disabled+`;
ALTER RULESET rs ADD RULE r_d WHEN id < 3 SEVERITY 'critical';
ALTER RULESET rs ENABLE RULE r_b;
ALTER RULESET rs DROP RULE r_c;
ALTER RULESET rs ROLLBACK TO VERSION 1;
`+rulesetInsert)
	want = []string{"+I[1, [r_a, r_c], medium, [x], 5]"}
	if !slices.Equal(got, want) {
		t.Errorf("rolled back: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A ruleset's errors name the line, the column and what was expected,
// with the nearest name where one is unknown.
func TestRulesetErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"CREATE RULESET rs ON ev (RULE a WHEN sx = 'a');", "rules.sql:3:38: column 'sx' not found in any table (did you mean \"s\"?)"},
		{"CREATE RULESET rs ON evv (RULE a WHEN s = 'a');", "rules.sql:3:22: unknown table 'evv' (did you mean \"ev\"?)"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a' SEVERITY 'hihg');", "rules.sql:3:55: unknown severity 'hihg': a rule's severity is one of informational, low, medium, high, critical (did you mean \"high\"?)"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a', RULE A WHEN n = 1);", "rules.sql:3:52: ruleset 'rs' has two rules named 'A'"},
		{"CREATE RULESET rs ON ev MATCH AT LEAST 0 (RULE a WHEN s = 'a');", "rules.sql:3:31: MATCH AT LEAST needs 1 rule or more, not 0"},
		{"CREATE RULESET rs ON ev MATCH AT LEAST 101 PERCENT (RULE a WHEN s = 'a');", "rules.sql:3:31: MATCH AT LEAST n PERCENT needs n from 1 to 100, not 101"},
		{"CREATE RULESET rs ON ev MATCH SOME (RULE a WHEN s = 'a');", "rules.sql:3:31: expected ANY, ALL, FIRST or AT LEAST n [PERCENT] after MATCH, found 'SOME'"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s);", "rules.sql:3:38: WHEN condition must be BOOLEAN, but is"},
		{"CREATE RULESET rs ON ev (a WHEN s = 'a');", "rules.sql:3:26: expected RULE, found 'a'"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rs DROP RULE b;", "rules.sql:4:28: ruleset 'rs' has no rule 'b' (did you mean \"a\"?)"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rx DROP RULE a;", "rules.sql:4:15: unknown ruleset 'rx' (did you mean \"rs\"?)"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rs ADD RULE a WHEN n = 1;", "rules.sql:4:27: ruleset 'rs' already has a rule 'a'"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rs ADD RULE b WHEN nn = 1;", "rules.sql:4:34: column 'nn' not found in any table (did you mean \"n\"?)"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rs ROLLBACK TO VERSION 3;", "rules.sql:4:38: ruleset 'rs' has no version 3: it is at version 1, and keeps its earlier ones"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nDROP VIEW rs;", "rules.sql:4:11: 'rs' is a ruleset: drop it with DROP RULESET"},
		{"CREATE VIEW v2 AS SELECT id AS alert_severity FROM ev;\nCREATE RULESET rs ON v2 (RULE a WHEN alert_severity = 1);", "rules.sql:4:22: ruleset 'rs' adds a column 'alert_severity' to the rows of 'v2', which has one: rename it in a view"},
	} {
		src := rulesetEvents + c.script + "\n"
		e, err := sluice.Open(sluice.Options{Stdout: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		err = e.Run(context.Background(), "rules.sql", []byte(src))
		e.Close()
		if err == nil {
			t.Errorf("%s: no error", c.script)
			continue
		}
		if got := err.Error(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.script, got, c.want)
		}
	}
}

// DROP RULESET drops a ruleset (and only a ruleset).
func TestRulesetDrop(t *testing.T) {
	got := runRuleset(t, "CREATE RULESET rs ON ev "+rulesetRules+";\nDROP RULESET rs;\nCREATE RULESET rs ON ev (RULE only WHEN id = 2);\n"+rulesetInsert)
	if want := []string{"+I[2, [only], medium, [], 1]"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A ruleset of random rules (those of the shared-filter differential
// test: NULLs, non-ASCII text, patterns, functions of one column) raises,
// under MATCH ANY, an alert for exactly the rows some rule keeps alone,
// each naming exactly the rules that keep it, in order.
func TestRulesetDifferential(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 11))
		dir := t.TempDir()
		sfInput(t, rng, dir, 1, 400)
		conds := make([]string, 30)
		for i := range conds {
			conds[i] = sfCondition(rng, 3)
		}
		// Alone: each rule a job of its own, filters not shared.
		alone := sfRun(t, dir, conds, "SET 'pipeline.shared-filters' = 'false'")
		want := map[int][]string{}
		for i := range conds {
			for _, row := range alone[fmt.Sprintf("r%d", i)] {
				var id int
				if _, err := fmt.Sscanf(row, "+I[%d", &id); err != nil {
					t.Fatal(err)
				}
				want[id] = append(want[id], fmt.Sprintf("r%d", i))
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "CREATE TABLE ev (id BIGINT, s STRING, t STRING, n BIGINT, d DOUBLE, b BOOLEAN) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", dir)
		b.WriteString("CREATE TABLE out (id BIGINT, rules ARRAY<STRING>) WITH ('connector' = 'print');\nCREATE RULESET rs ON ev (\n")
		for i, c := range conds {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "  RULE r%d WHEN %s", i, c)
		}
		b.WriteString(");\nINSERT INTO out SELECT id, matched_rules FROM rs;\n")
		var out bytes.Buffer
		e, err := sluice.Open(sluice.Options{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		src := []byte(b.String())
		if err := e.Run(context.Background(), "rs.sql", src); err != nil {
			t.Fatal(sluice.FormatError(err, src))
		}
		e.Close()
		got := map[int][]string{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if l == "" {
				continue
			}
			var id int
			if _, err := fmt.Sscanf(l, "+I[%d,", &id); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			if _, dup := got[id]; dup {
				t.Errorf("seed %d: two alerts for row %d", seed, id)
			}
			list := l[strings.Index(l, "[r")+1 : strings.LastIndex(l, "]]")]
			got[id] = strings.Split(list, ", ")
		}
		for id, w := range want {
			if g := got[id]; !slices.Equal(g, w) {
				t.Errorf("seed %d: row %d: ruleset matched %v, the rules alone %v", seed, id, g, w)
			}
		}
		for id, g := range got {
			if _, ok := want[id]; !ok {
				t.Errorf("seed %d: row %d: ruleset matched %v, no rule alone", seed, id, g)
			}
		}
	}
}

// A ruleset keeps its last 100 versions for rollback.
func TestRulesetVersionsKept(t *testing.T) {
	var b strings.Builder
	b.WriteString(rulesetEvents + "CREATE RULESET rs ON ev (RULE a WHEN id = 1);\n")
	for i := range 120 {
		fmt.Fprintf(&b, "ALTER RULESET rs %s RULE a;\n", []string{"DISABLE", "ENABLE"}[i%2])
	}
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Exec(context.Background(), "v.sql", []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if rs := e.Rulesets(); len(rs) != 1 || rs[0].Version != 121 {
		t.Fatalf("rulesets: %+v", rs)
	}
	if _, err := e.Exec(context.Background(), "r.sql", []byte("ALTER RULESET rs ROLLBACK TO VERSION 21;")); err == nil || !strings.Contains(err.Error(), "no version 21") {
		t.Errorf("rollback past the kept versions: %v", err)
	}
	// Version 22 (the 21st ALTER's: odd ones disable) is kept.
	if _, err := e.Exec(context.Background(), "r.sql", []byte("ALTER RULESET rs ROLLBACK TO VERSION 22;")); err != nil {
		t.Fatal(err)
	}
	if rs := e.Rulesets(); rs[0].Version != 122 || rs[0].Rules[0].Enabled {
		t.Errorf("rolled back to 22: %+v", rs[0])
	}
}
