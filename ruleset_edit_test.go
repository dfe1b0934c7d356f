package sluice_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// ALTER RULESET edits a ruleset, each change a new version: a rule's
// definition replaced (keeping it enabled or disabled), the policy, the
// exceptions set and dropped.
func TestRulesetEdit(t *testing.T) {
	for _, c := range []struct {
		name, alter string
		want        []string
	}{
		{"alter rule", "ALTER RULESET rs ALTER RULE r_c WHEN id = 5 SEVERITY 'critical' PRIORITY 9 TAGS ('z');", []string{
			// r_c (id 5 only, now first in priority order): rows 1, 3 and 4
			// lose it, row 5 gains it.
			"+I[1, [r_a, r_b], high, [x, y], 2]",
			"+I[3, [r_a, r_b], high, [x, y], 2]",
			"+I[4, [r_b], high, [y, x], 2]",
			"+I[5, [r_c], critical, [z], 2]",
		}},
		{"alter a disabled rule", "ALTER RULESET rs DISABLE RULE r_b;\nALTER RULESET rs ALTER RULE r_b WHEN id = 2;", []string{
			// r_b stays disabled: version 3 matches as r_a and r_c.
			"+I[1, [r_a, r_c], medium, [x], 3]",
			"+I[3, [r_a], low, [x], 3]",
		}},
		{"set match", "ALTER RULESET rs SET MATCH AT LEAST 2;", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 2]",
			"+I[3, [r_a, r_b], high, [x, y], 2]",
		}},
		{"set match first", "ALTER RULESET rs SET MATCH AT LEAST 2;\nALTER RULESET rs SET MATCH FIRST;", []string{
			"+I[1, [r_a], low, [x], 3]",
			"+I[3, [r_a], low, [x], 3]",
			"+I[4, [r_b], high, [y, x], 3]",
		}},
		{"set except", "ALTER RULESET rs SET EXCEPT WHEN id = 3 OR s IS NULL;", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 2]",
		}},
		{"drop except", "ALTER RULESET rs SET EXCEPT WHEN id = 3;\nALTER RULESET rs DROP EXCEPT;", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 3]",
			"+I[3, [r_a, r_b], high, [x, y], 3]",
			"+I[4, [r_b], high, [y, x], 3]",
		}},
		{"rollback restores the policy and exceptions", "ALTER RULESET rs SET MATCH ALL;\nALTER RULESET rs SET EXCEPT WHEN id = 1;\nALTER RULESET rs ROLLBACK TO VERSION 1;", []string{
			"+I[1, [r_a, r_b, r_c], high, [x, y], 4]",
			"+I[3, [r_a, r_b], high, [x, y], 4]",
			"+I[4, [r_b], high, [y, x], 4]",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runRuleset(t, "CREATE RULESET rs ON ev "+rulesetRules+";\n"+c.alter+"\n"+rulesetInsert)
			if !slices.Equal(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// The edits' errors name the line, the column and what was expected,
// with the nearest name where one is unknown; a change whose condition
// is written in another statement than the ruleset points into it.
func TestRulesetEditErrors(t *testing.T) {
	const create = "CREATE RULESET rs ON ev (RULE alpha WHEN s = 'a', RULE beta WHEN n > 1);\n"
	for _, c := range []struct{ script, want string }{
		{create + "ALTER RULESET rs ALTER RULE alpah WHEN s = 'b';", "test.sql:4:29: ruleset 'rs' has no rule 'alpah' (did you mean \"alpha\"?)"},
		{create + "ALTER RULESET rs ALTER RULE alpha WHEN ss = 'b';", "test.sql:4:40: column 'ss' not found in any table (did you mean \"s\"?)"},
		{create + "ALTER RULESET rs ALTER RULE alpha WHEN s = 'b' SEVERITY 'hgh';", "test.sql:4:57: unknown severity 'hgh'"},
		{create + "ALTER RULESET rs ALTER RULE alpha WHEN s = 'b' DISABLED;", "test.sql:4:48: ALTER RULE replaces a rule's condition, severity, priority and tags, and keeps it enabled or disabled: use DISABLE RULE"},
		{create + "ALTER RULESET rs ENABLE RULE bta;", "test.sql:4:30: ruleset 'rs' has no rule 'bta' (did you mean \"beta\"?)"},
		{create + "ALTER RULESET rs SET MATCH AT LEAST 0;", "test.sql:4:28: MATCH AT LEAST needs 1 rule or more, not 0"},
		{create + "ALTER RULESET rs SET MATCH AT LEAST 200 PERCENT;", "test.sql:4:28: MATCH AT LEAST n PERCENT needs n from 1 to 100, not 200"},
		{create + "ALTER RULESET rs SET MATCH SOME;", "test.sql:4:28: expected ANY, ALL, FIRST or AT LEAST n [PERCENT] after MATCH, found 'SOME'"},
		{create + "ALTER RULESET rs SET EXCEPT WHEN nn = 1;", "test.sql:4:34: column 'nn' not found in any table (did you mean \"n\"?)"},
		{create + "ALTER RULESET rs SET EXCEPT WHEN s;", "test.sql:4:34: EXCEPT WHEN condition must be BOOLEAN"},
		{create + "ALTER RULESET rs DROP EXCEPT;", "test.sql:4:18: ruleset 'rs' has no EXCEPT WHEN to drop"},
		{create + "ALTER RULESET rss SET MATCH ALL;", "test.sql:4:15: unknown ruleset 'rss' (did you mean \"rs\"?)"},
		{create + "ALTER RULESET rs SET POLICY ALL;", "test.sql:4:22: expected MATCH, EXCEPT WHEN or SUPPRESS BY after SET, found 'POLICY'"},
	} {
		checkRulesetError(t, c.script, c.want)
	}
}

// The catalog describes each version as its DDL says it.
func TestRulesetDescribe(t *testing.T) {
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := rulesetEvents + `CREATE RULESET rs ON ev MATCH AT LEAST 2 EXCEPT WHEN id = 3 SUPPRESS BY (s, n) FOR INTERVAL '10' MINUTE COMMENT 'c' ` + rulesetRules + `;
ALTER RULESET rs ALTER RULE r_c WHEN s = 'abd' SEVERITY 'low';
ALTER RULESET rs DROP SUPPRESS;
`
	if _, err := e.Exec(context.Background(), "d.sql", []byte(src)); err != nil {
		t.Fatal(err)
	}
	rs, ok := e.RulesetInfo("rs")
	if !ok || rs.Version != 3 || rs.Match != "AT LEAST 2" || rs.Except != "id = 3" || rs.Suppress != nil || rs.Comment != "c" || len(rs.Rules) != 3 {
		t.Fatalf("rs: %+v", rs)
	}
	if r := rs.Rules[2]; r.Name != "r_c" || r.When != "s = 'abd'" || r.Severity != "low" || !r.Enabled {
		t.Errorf("r_c: %+v", r)
	}
	vs, ok := e.RulesetVersions("rs")
	if !ok || len(vs) != 3 || vs[0].Version != 1 || vs[2].Version != 3 {
		t.Fatalf("versions: %+v", vs)
	}
	if s := vs[0].Suppress; s == nil || !slices.Equal(s.Keys, []string{"s", "n"}) || s.Interval != "INTERVAL '10' MINUTE" {
		t.Errorf("version 1's suppression: %+v", s)
	}
	if vs[1].Rules[2].When != "s = 'abd'" || vs[0].Rules[2].When != "s = 'abc'" {
		t.Errorf("the rule's versions: %q, %q", vs[0].Rules[2].When, vs[1].Rules[2].When)
	}
}
