package sluice_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// suppressEvents are alerts-to-be (every row matches rule all) of hosts
// and users, at minutes of 2026-01-01 00:00.
func suppressEvents(rows ...string) string {
	var b strings.Builder
	for _, r := range rows {
		var id, m int
		var host, usr string
		fmt.Sscanf(r, "%d %s %s %d", &id, &host, &usr, &m)
		fmt.Fprintf(&b, `{"id":%d,"host":"%s","usr":"%s","ts":"2026-01-01 %02d:%02d:00"}`+"\n", id, host, usr, m/60, m%60)
	}
	return b.String()
}

// suppressScript is a ruleset over $DIR/ev.json (event time ts) with
// the given SUPPRESS BY, into a print sink of id, host and the count.
func suppressScript(suppress string) string {
	return `CREATE TABLE ev (id INT, host STRING, usr STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/ev.json', 'format' = 'json');
CREATE TABLE out (id INT, host STRING, n BIGINT) WITH ('connector' = 'print');
CREATE RULESET rs ON ev ` + suppress + ` (RULE all_rows WHEN id > 0);
INSERT INTO out SELECT id, host, suppressed_count FROM rs;
`
}

func printedRows(out string) []string {
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "+I") {
			rows = append(rows, l)
		}
	}
	slices.Sort(rows)
	return rows
}

// SUPPRESS BY lets through the first alert of a key set, suppresses and
// counts the alerts of the key set within the interval it opens, and
// lets the next one after it through with the count; key sets of one,
// two and three columns.
func TestRulesetSuppress(t *testing.T) {
	events := suppressEvents(
		"1 a u 0",  // a: let through, opens [0, 10)
		"2 a v 3",  // suppressed
		"3 b u 4",  // b: let through, opens [4, 14)
		"4 a u 9",  // suppressed
		"5 a v 10", // a's interval is over: let through with 2, opens [10, 20)
		"6 b u 13", // suppressed
		"7 a u 19", // suppressed
		"8 b v 14", // let through with 1
		"9 a u 45", // let through with 1
	)
	for _, c := range []struct {
		suppress string
		want     []string
	}{
		{"SUPPRESS BY (host) FOR INTERVAL '10' MINUTE", []string{
			"+I[1, a, 0]", "+I[3, b, 0]", "+I[5, a, 2]", "+I[8, b, 1]", "+I[9, a, 1]"}},
		// (a, u): 1, 4 and 7 suppressed within [0, 10)? 7 is at 19: a new
		// interval with 1 suppressed (4); (a, v): 2, then 5 at 10 (after
		// [3, 13)? no: within it).
		{"SUPPRESS BY (host, usr) FOR INTERVAL '10' MINUTE", []string{
			"+I[1, a, 0]", "+I[2, a, 0]", "+I[3, b, 0]", "+I[7, a, 1]", "+I[8, b, 0]", "+I[9, a, 0]"}},
		{"SUPPRESS BY (host, usr, id) FOR INTERVAL '1' HOUR", []string{
			"+I[1, a, 0]", "+I[2, a, 0]", "+I[3, b, 0]", "+I[4, a, 0]", "+I[5, a, 0]", "+I[6, b, 0]", "+I[7, a, 0]", "+I[8, b, 0]", "+I[9, a, 0]"}},
		{"SUPPRESS BY (usr) FOR INTERVAL '1' HOUR", []string{"+I[1, a, 0]", "+I[2, a, 0]"}},
		{"", []string{ // no suppression: every alert, counts 0
			"+I[1, a, 0]", "+I[2, a, 0]", "+I[3, b, 0]", "+I[4, a, 0]", "+I[5, a, 0]", "+I[6, b, 0]", "+I[7, a, 0]", "+I[8, b, 0]", "+I[9, a, 0]"}},
	} {
		t.Run(c.suppress, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "ev.json", events)
			out, err := runSQL(t, nil, dir, suppressScript(c.suppress))
			if err != nil {
				t.Fatal(err)
			}
			if got := printedRows(out); !slices.Equal(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// Without an event-time attribute, alerts are timed by the clock: a run
// shorter than the interval lets one alert per key set through.
func TestRulesetSuppressProcessingTime(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ev.json", suppressEvents("1 a u 0", "2 a v 30", "3 b u 40", "4 a u 50", "5 b u 59"))
	src := `CREATE TABLE ev (id INT, host STRING, usr STRING, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '$DIR/ev.json', 'format' = 'json');
CREATE TABLE out (id INT, host STRING, n BIGINT) WITH ('connector' = 'print');
CREATE RULESET rs ON ev SUPPRESS BY (host) FOR INTERVAL '1' HOUR (RULE all_rows WHEN id > 0);
INSERT INTO out SELECT id, host, suppressed_count FROM rs;
EXPLAIN INSERT INTO out SELECT id, host, suppressed_count FROM rs;
`
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := printedRows(out), []string{"+I[1, a, 0]", "+I[3, b, 0]"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if !strings.Contains(out, "Suppress(ruleset=[rs], keys=[host], interval=[1 h], time=[PROCTIME])") {
		t.Errorf("EXPLAIN does not show the suppression:\n%s", out)
	}
}

// A job with a durable state, stopped (its input ended) and run again
// over more input, neither lets through an alert the state suppresses
// nor loses a count: its two runs emit what one run over the whole
// input emits. The state is kept across a new version of the rules.
func TestRulesetSuppressResume(t *testing.T) {
	first := suppressEvents("1 a u 0", "2 a u 3", "3 b u 4")
	second := suppressEvents(
		"4 a u 5",  // suppressed by the first run's interval of a: a has 2
		"5 b u 13", // suppressed: b has 1
		"6 a u 12", // let through with 2
		"7 b u 20", // let through with 1
		"8 a u 15", // suppressed
		"9 a u 40", // let through with 1
	)
	script := func(dir, alter string) string {
		return `SET 'state.dir' = '` + filepath.Join(dir, "state") + `';
SET 'pipeline.name' = 'alerts';
` + strings.Replace(suppressScript("SUPPRESS BY (host) FOR INTERVAL '10' MINUTE"), "INSERT", alter+"INSERT", 1)
	}
	whole := t.TempDir()
	writeFile(t, whole, "ev.json", first+second)
	out, err := runSQL(t, nil, whole, suppressScript("SUPPRESS BY (host) FOR INTERVAL '10' MINUTE"))
	if err != nil {
		t.Fatal(err)
	}
	want := printedRows(out)
	if w := []string{"+I[1, a, 0]", "+I[3, b, 0]", "+I[6, a, 2]", "+I[7, b, 1]", "+I[9, a, 1]"}; !slices.Equal(want, w) {
		t.Fatalf("one run: %v, want %v", want, w)
	}
	for _, alter := range []string{"", "ALTER RULESET rs ADD RULE other WHEN id < 0;\nALTER RULESET rs SET SUPPRESS BY (host) FOR INTERVAL '10' MINUTE;\n"} {
		dir := t.TempDir()
		writeFile(t, dir, "ev.json", first)
		out1, err := runSQL(t, nil, dir, script(dir, ""))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, "ev.json"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(second)
		f.Close()
		out2, err := runSQL(t, nil, dir, script(dir, alter))
		if err != nil {
			t.Fatalf("second run (%q): %v", alter, err)
		}
		got := printedRows(out1 + out2)
		if !slices.Equal(got, want) {
			t.Errorf("two runs (%q): got\n%s\nwant\n%s\nfirst run:\n%ssecond run:\n%s", alter, strings.Join(got, "\n"), strings.Join(want, "\n"), out1, out2)
		}
	}
}

// SUPPRESS BY's errors name the line, the column and the nearest name.
func TestRulesetSuppressErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"CREATE RULESET rs ON ev SUPPRESS BY (ss) FOR INTERVAL '1' MINUTE (RULE a WHEN s = 'a');", "test.sql:3:38: column 'ss' not found in any table (did you mean \"s\"?)"},
		{"CREATE RULESET rs ON ev SUPPRESS BY (s, suppressed_count) FOR INTERVAL '1' MINUTE (RULE a WHEN s = 'a');", "test.sql:3:41: SUPPRESS BY cannot key by suppressed_count, which it computes"},
		{"CREATE RULESET rs ON ev SUPPRESS BY (s, n, s) FOR INTERVAL '1' MINUTE (RULE a WHEN s = 'a');", "test.sql:3:44: column 's' is twice in SUPPRESS BY"},
		{"CREATE RULESET rs ON ev SUPPRESS BY (s) FOR INTERVAL '1' YEAR (RULE a WHEN s = 'a');", "test.sql:3:45: SUPPRESS BY ... FOR takes an interval of days, hours, minutes or seconds, not of months or years"},
		{"CREATE RULESET rs ON ev SUPPRESS BY (s) FOR INTERVAL '0' SECOND (RULE a WHEN s = 'a');", "test.sql:3:45: SUPPRESS BY ... FOR takes a positive interval"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rs SET SUPPRESS BY (nn) FOR INTERVAL '1' MINUTE;", "test.sql:4:35: column 'nn' not found in any table (did you mean \"n\"?)"},
		{"CREATE RULESET rs ON ev (RULE a WHEN s = 'a');\nALTER RULESET rs DROP SUPPRESS;", "test.sql:4:18: ruleset 'rs' has no SUPPRESS BY to drop"},
	} {
		checkRulesetError(t, c.script, c.want)
	}
}

// checkRulesetError runs script after rulesetEvents and checks that it
// fails with an error that begins with want.
func checkRulesetError(t *testing.T, script, want string) {
	t.Helper()
	_, err := runSQL(t, nil, "", rulesetEvents+script+"\n")
	if err == nil {
		t.Errorf("%s: no error", script)
		return
	}
	if got := err.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", script, got, want)
	}
}
