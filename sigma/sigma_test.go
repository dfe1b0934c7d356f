package sigma_test

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/sigma"
)

var rewrite = flag.Bool("rewrite", false, "write the expected outputs of the tests anew")

// eventsDDL declares the sample events (testdata/events.jsonl) as the
// table the mapping (testdata/mapping.yml) names.
const eventsDDL = `CREATE TABLE events (
  id BIGINT, ts TIMESTAMP(3), host STRING, user_name STRING, image STRING, parent_image STRING,
  command_line STRING, event_id INT, dst_ip STRING, pid BIGINT, integrity_level STRING, product STRING,
  script STRING, bytes_out BIGINT, original_name STRING,
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = 'testdata/events.jsonl', 'format' = 'json');
`

// wantAlerts are the events each sample rule alerts on, worked out from
// the rules and events.jsonl by hand (the comments say why).
var wantAlerts = map[string][]int{
	// modifiers.yml
	"m_equal":        {1, 2},       // Alice, ALICE; not alice2, not a missing user
	"m_list":         {5, 6},       // CMD.EXE and X.exe, case aside
	"m_wildcard":     {7, 9},       // C:\ * \t?ol.exe: tool.exe, sub\TOOL.EXE; not tl.exe (? is one character)
	"m_escape":       {10, 12},     // lit*star is literal (not litXstar); dir\\* is dir\ then anything
	"m_contains":     {15},         // Invoke-Mimikatz
	"m_contains_all": {13},         // -nop and hidden; 14 has only -nop
	"m_startswith":   {16},         // net user...; not cmd /c net user
	"m_endswith":     {18},         // RUNDLL32.exe
	"m_re":           {19},         // the regex is case-sensitive: not ABC.exe
	"m_re_i":         {21},         // Invoke-WebRequest, with |i
	"m_windash":      {22, 23, 24}, // /s, en dash s, -s; not " s "
	"m_cidr4":        {26, 27},     // 10.1.2.3, 192.168.1.200 (in /25 from .128); not .20, not 110.1.2.3
	"m_cidr6":        {30, 31, 32}, // 2001:DB8::1, 2001:0db8:0:0::5, fe80::1%eth0; not fec0::1, not 2001:db9::1
	"m_null":         {4, 48},      // the events without a user
	"m_exists":       {35},         // the event without a parent image
	"m_numeric":      {36},         // 4688 with pid 2000; not pid 500
	"m_cased":        {38},         // SeDebug with its case; not sedebug
	"m_base64offset": {40, 41, 42}, // http:// encoded at offsets 0, 1, 2; not hxxp://
	"m_base64":       {44},         // base64 of whoami
	"m_wide":         {45},         // UTF-16LE iex, base64-encoded
	"m_neq":          {47, 48},     // whoami.exe by bob, and by a missing user; not by root
	"m_fieldref":     {49},         // the parent image is the image, case aside
	"m_expand":       {46, 50},     // %Admins%: root, adm_*
	"m_keywords":     {51, 52},     // lsadump in the script, event::clear in the command line
	"m_keywords_all": {53},         // vssadmin and shadows; not vssadmin alone
	"m_hour":         {55},         // at 23:30
	"m_lt":           {56},         // 5 bytes; not 10
	"m_any":          {57},         // the one event with an original file name
	// conditions.yml
	"c_and":            {60},     // h60 and High; not h60 and Low
	"c_or":             {62, 63}, // h62, p63
	"c_not":            {65, 66}, // h64 without product ok: product bad, and no product at all
	"c_paren":          {67, 68}, // h67 and (High or p)
	"c_precedence":     {71, 73}, // h71, or h72 and High
	"c_one_of":         {74, 75}, // selection_a, selection_b; not other
	"c_all_of":         {77},     // h77 and System
	"c_one_of_them":    {79},     // not _helper's h80
	"c_all_of_them":    {81},     // h81 and p81
	"c_not_one_of":     {85},     // h83, neither fa nor Low
	"c_condition_list": {86, 87}, // either condition
	"c_list_of_maps":   {88, 89}, // h88 and High, or p89
	"c_not_not":        {91},
	// correlations.yml: recon_a and recon_b alert on their own too
	// (corr_recon has generate: true); failed_login, successful_login
	// and upload only count in their correlations.
	"recon_a": {110, 112},
	"recon_b": {111, 113},
}

// wantCorrelations are the correlation alerts of the statement-set
// form (tumbling windows): rule, window start, group, metric.
var wantCorrelations = []string{
	"corr_brute 2024-05-01 12:00:00.000 User=dave 3.0",      // three failures of dave in [12:00, 12:10); erin's two are in two windows
	"corr_multi_host 2024-05-01 12:00:00.000 User=dave 2.0", // dave from hA and hB within the hour; erin from hA only
	"corr_recon 2024-05-01 12:30:00.000 Computer=hR 2.0",    // both recon rules on hR in [12:30, 12:35); hS's fall in two windows
	"corr_ordered 2024-05-01 12:00:00.000 User=dave 2.0",    // dave failed (12:01) before he succeeded (12:05); erin succeeded first
	"corr_bytes 2024-05-01 13:00:00.000 Computer=hU 1100.0", // 400 + 700 bytes from hU; hV's 900 are not over 1000
}

// wantRulesetCorrelations are the correlation alerts of the ruleset
// form (each event a correlation counts, over the time span that ends
// with it): rule, group, metric, the event's id.
var wantRulesetCorrelations = []string{
	"corr_brute User=dave 3.0 102",      // dave's third failure within 10 minutes (12:01, 12:02, 12:03); erin's two are 11 minutes apart
	"corr_multi_host User=dave 2.0 107", // dave from hB (12:20) after hA (12:05); erin from hA only
	"corr_recon Computer=hR 2.0 111",    // ipconfig on hR 2 minutes after systeminfo
	"corr_recon Computer=hS 2.0 113",    // on hS 5 minutes after: at most the time span apart (no fixed window boundary between them)
	"corr_ordered User=dave 2.0 106",    // dave failed (12:01) before he succeeded (12:05); erin succeeded first
	"corr_bytes Computer=hU 1100.0 116", // 400 + 700 bytes from hU within the hour; hV's 900 are not over 1000
}

// wantSeverity and wantTags are the alerts' severities and tags where
// they are not medium (a rule without a level) and none.
var (
	wantSeverity = map[string]string{"m_equal": "low", "m_contains": "high"}
	wantTags     = map[string]string{"m_contains": "attack.execution, attack.t1059.001"}
)

// TestSampleRules translates the sample rules, runs the script over the
// sample events and checks exactly which events each rule alerts on, in
// both forms: rulesets and a statement set.
func TestSampleRules(t *testing.T) {
	m, err := sigma.LoadMapping("testdata/mapping.yml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := sigma.Load("testdata/rules")
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	for _, f := range rs.Failures {
		t.Errorf("not translated: %s", f)
	}
	for _, form := range []string{"ruleset", "statement-set"} {
		t.Run(form, func(t *testing.T) {
			script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true, StatementSet: form == "statement-set"})
			var got map[string][]int
			var gotCorr, wantCorr []string
			if form == "ruleset" {
				got, gotCorr = runRulesets(t, rs, eventsDDL+script, "alert> ")
				wantCorr = wantRulesetCorrelations
			} else {
				got, gotCorr = runStatementSet(t, eventsDDL+script)
				wantCorr = wantCorrelations
			}
			for rule, ids := range got {
				if want := wantAlerts[rule]; !slices.Equal(ids, want) {
					t.Errorf("%s alerts on %v, want %v", rule, ids, want)
				}
			}
			for rule, want := range wantAlerts {
				if _, ok := got[rule]; !ok {
					t.Errorf("%s alerts on nothing, want %v", rule, want)
				}
			}
			sort.Strings(gotCorr)
			want := slices.Clone(wantCorr)
			sort.Strings(want)
			if !slices.Equal(gotCorr, want) {
				t.Errorf("correlation alerts:\n%s\nwant:\n%s", strings.Join(gotCorr, "\n"), strings.Join(want, "\n"))
			}
			if t.Failed() {
				t.Logf("script:\n%s", script)
			}
		})
	}
}

// runStatementSet runs a script of the statement-set form and returns
// the ids each detection alerts on (sorted), and the correlation alerts
// as rule, window start, group and metric.
func runStatementSet(t *testing.T, src string) (map[string][]int, []string) {
	t.Helper()
	got := map[string][]int{}
	var corr []string
	for _, line := range runScript(t, src) {
		row, ok := strings.CutPrefix(line, "alert> +I[")
		if !ok {
			t.Fatalf("line %q: not an alert", line)
		}
		f := strings.Split(strings.TrimSuffix(row, "]"), ", ")
		switch len(f) {
		case 3: // rule, severity, id
			var id int
			if _, err := fmt.Sscan(f[2], &id); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			got[f[0]] = append(got[f[0]], id)
		case 6: // rule, severity, window_start, window_end, group_key, metric
			corr = append(corr, strings.Join([]string{f[0], f[2], f[4], f[5]}, " "))
		default:
			t.Fatalf("line %q: not an alert", line)
		}
	}
	for _, ids := range got {
		sort.Ints(ids)
	}
	return got, corr
}

// Alerts of the ruleset form as the print connector writes them, with
// one alert column (the id): ruleset, version, rules, severity, tags,
// id; and ruleset, version, rule, severity, tags, group, metric, id.
var (
	detectionAlertRE   = regexp.MustCompile(`^\+I\[(\w+), (\d+), \[([^\]]*)\], (\w+), \[([^\]]*)\], (-?\d+)\]$`)
	correlationAlertRE = regexp.MustCompile(`^\+I\[(\w+), (\d+), (\w+), (\w+), \[([^\]]*)\], (.*), (\S+), (-?\d+)\]$`)
)

// runRulesets runs a script of the ruleset form for rs, whose print
// tables write lines that begin with prefix, and returns the ids each
// detection alerts on (sorted; a part's alerts are its rule's) and the
// correlation alerts as rule, group, metric and id. It checks each
// alert's ruleset, version, severity and tags on the way.
func runRulesets(t *testing.T, rs *sigma.Ruleset, src, prefix string) (map[string][]int, []string) {
	t.Helper()
	ruleOf := map[string]*sigma.Query{}
	for _, q := range rs.Queries {
		ruleOf[q.Name] = q
		for _, p := range q.PartNames {
			ruleOf[p] = q
		}
	}
	got := map[string][]int{}
	var corr []string
	for _, line := range runScript(t, src) {
		line, ok := strings.CutPrefix(line, prefix)
		if !ok {
			t.Fatalf("line %q: not an alert", line)
		}
		if f := detectionAlertRE.FindStringSubmatch(line); f != nil {
			if f[1] != sigma.DefaultRuleset || f[2] != "1" {
				t.Errorf("line %q: ruleset %s version %s", line, f[1], f[2])
			}
			var id int
			fmt.Sscan(f[6], &id)
			severity, tags := "", ""
			for _, name := range strings.Split(f[3], ", ") {
				q := ruleOf[name]
				if q == nil {
					t.Fatalf("line %q: no rule %s", line, name)
				}
				got[q.Name] = append(got[q.Name], id)
				severity = max(severity, cmp.Or(wantSeverity[q.Name], "medium")) // one rule a line, but for m_null and m_neq
				tags = wantTags[q.Name]
			}
			if f[4] != severity || f[5] != tags {
				t.Errorf("line %q: severity %s, tags [%s]; want %s, [%s]", line, f[4], f[5], severity, tags)
			}
			continue
		}
		f := correlationAlertRE.FindStringSubmatch(line)
		if f == nil {
			t.Fatalf("line %q: not an alert", line)
		}
		q := ruleOf[f[3]]
		if q == nil || q.Correlation == nil || f[1] != sigma.DefaultRuleset+"_"+q.Name || f[4] != cmp.Or(q.Severity, "medium") {
			t.Errorf("line %q: not the alert of a correlation of that name and severity", line)
		}
		corr = append(corr, strings.Join([]string{f[3], f[6], f[7], f[8]}, " "))
	}
	for _, ids := range got {
		sort.Ints(ids)
	}
	return got, corr
}

// runScript runs src and returns the lines its print tables write.
func runScript(t *testing.T, src string) []string {
	t.Helper()
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Run(context.Background(), "rules.sql", []byte(src)); err != nil {
		t.Fatalf("%s\n%s", sluice.FormatError(err, []byte(src)), src)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestCheck: the queries the engine refuses to plan (here, over a column
// the table lacks) become failures and the others stay, in both forms;
// a prelude that creates the alerts table itself is fine.
func TestCheck(t *testing.T) {
	for _, statementSet := range []bool{false, true} {
		prelude := `  CREATE TABLE events (image STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
  CREATE TABLE alerts (ruleset STRING, version INT, rules ARRAY<STRING>, severity STRING, tags ARRAY<STRING>, image STRING) WITH ('connector' = 'blackhole');
`
		if statementSet {
			prelude = strings.Replace(prelude, "ruleset STRING, version INT, rules ARRAY<STRING>, severity STRING, tags ARRAY<STRING>", "rule STRING, severity STRING", 1)
		}
		m, err := sigma.ParseMapping("m.yml", []byte(`table: events
time: ts
fields: {Image: image, Gone: no_such_column}
columns: {ts: TIMESTAMP(3)}
alert_columns: [image]
prelude: |
`+prelude))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := sigma.Parse("r.yml", []byte(`title: Fine
name: fine
detection: {s: {Image|endswith: x.exe}, condition: s}
---
title: Over a missing column
detection: {s: {Gone: x}, condition: s}
---
title: Counted fine
correlation: {type: event_count, rules: [fine], group-by: [Image], timespan: 1m, condition: {gte: 2}, generate: true}
---
title: Counted by a missing column
correlation: {type: event_count, rules: [fine], group-by: [Gone], timespan: 1m, condition: {gte: 2}}
`))
		if err != nil {
			t.Fatal(err)
		}
		rs := sigma.Translate(docs, m)
		e, err := sluice.Open(sluice.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := sigma.Check(rs, sigma.ScriptOptions{StatementSet: statementSet}, func(sql string) error {
			_, err := e.Explain("check.sql", []byte(sql))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, q := range rs.Queries {
			kept = append(kept, q.Title)
		}
		if !slices.Equal(kept, []string{"Fine", "Counted fine"}) {
			t.Errorf("statement set %v: queries kept: %v", statementSet, kept)
		}
		if len(rs.Failures) != 2 || rs.Failures[0].Rule != "Over a missing column" || !strings.Contains(rs.Failures[0].Reason, "no_such_column") ||
			rs.Failures[1].Rule != "Counted by a missing column" || !strings.Contains(rs.Failures[1].Reason, "no_such_column") {
			t.Errorf("statement set %v: failures: %v", statementSet, rs.Failures)
		}
		// What is kept plans, over the tables the check created.
		rs.Mapping.Prelude = ""
		if _, err := e.Explain("rules.sql", []byte(sigma.Script(rs, sigma.ScriptOptions{StatementSet: statementSet}))); err != nil {
			t.Errorf("statement set %v: %v", statementSet, err)
		}
	}
}

// TestExample: the example of docs/sigma.md (testdata/example) prints as
// testdata/example/script.sql says, and runs over events of its own.
// With -rewrite, the file is written anew.
func TestExample(t *testing.T) {
	m, err := sigma.LoadMapping("testdata/example/mapping.yml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile("testdata/example/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := sigma.Parse("rules.yml", rules)
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true})
	if *rewrite {
		if err := os.WriteFile("testdata/example/script.sql", []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/example/script.sql")
	if err != nil {
		t.Fatal(err)
	}
	if script != string(want) {
		t.Errorf("script:\n%s\nwant (testdata/example/script.sql; -rewrite writes it):\n%s", script, want)
	}
	// docs/sigma.md shows the rules, the mapping and the script.
	doc, err := os.ReadFile("../docs/sigma.md")
	if err != nil {
		t.Fatal(err)
	}
	mapping, err := os.ReadFile("testdata/example/mapping.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{"rules.yml": rules, "mapping.yml": mapping, "script.sql": want} {
		if !bytes.Contains(doc, text) {
			t.Errorf("docs/sigma.md does not show testdata/example/%s as it is", name)
		}
	}
	// Over a file of events: PowerShell encoded by bob alerts, by
	// SYSTEM not; carol's fifth failure within 5 minutes alerts, dave's
	// (over 6 minutes) not.
	dir := t.TempDir()
	var lines []string
	add := func(at, user, image, cmd string, eventID int) {
		lines = append(lines, fmt.Sprintf(`{"event_time": "2026-12-02 10:%s", "host": "ws7", "user_name": %q, "image": %q, "command_line": %q, "event_id": %d}`, at, user, image, cmd, eventID))
	}
	add("00:00", "bob", `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "powershell -nop /enc SQBFAFgA", 4688)
	add("00:05", "SYSTEM", `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "powershell -enc SQBFAFgA", 4688)
	for i := range 5 {
		add(fmt.Sprintf("0%d:00", i+1), "carol", "", "", 4625)
		add(fmt.Sprintf("0%d:30", i*3/2), "dave", "", "", 4625)
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Prelude = "CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, image STRING, command_line STRING, event_id INT, WATERMARK FOR event_time AS event_time - INTERVAL '5' MINUTE)\n" +
		"WITH ('connector' = 'filesystem', 'path' = '" + dir + "/events.jsonl', 'format' = 'json');"
	got := runScript(t, sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true}))
	sort.Strings(got)
	wantAlerts := []string{
		"+I[sigma, 1, [encoded_powershell], high, [attack.execution, attack.t1059.001], 2026-12-02 10:00:00.000, ws7, bob, powershell -nop /enc SQBFAFgA]",
		"+I[sigma_brute_force, 1, brute_force, high, [attack.credential_access, attack.t1110], User=carol, 5.0, 2026-12-02 10:05:00.000, ws7, carol, ]",
	}
	if !slices.Equal(got, wantAlerts) {
		t.Errorf("alerts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantAlerts, "\n"))
	}
}
