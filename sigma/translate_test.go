package sigma_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/sigma"
)

// TestUntranslatable: each rule of testdata/untranslatable is reported
// with its position and a reason that says what is wrong; none is
// dropped silently, and the rules around them still translate.
func TestUntranslatable(t *testing.T) {
	m, err := sigma.LoadMapping("testdata/mapping.yml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := sigma.Load("testdata/untranslatable")
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	want := map[string]string{
		"Lookbehind":                  "uses lookbehind",
		"Backreference":               "a backreference",
		"Possessive quantifier":       "possessive",
		"Unmapped field":              `the field Imagee has no column in the mapping (did you mean "Image"?)`,
		"Unknown modifier":            `unknown modifier "endwith" (did you mean "endswith"?)`,
		"Condition syntax":            "column 8: the condition ends where a search identifier",
		"Aggregation":                 "write a correlation rule",
		"Unknown identifier":          `names "selectoin", which is not a search identifier of the detection (did you mean "selection"?)`,
		"No identifier matches":       `"1" of filter_* matches no search identifier`,
		"No condition":                "the detection has no condition",
		"IPv6 zero group":             "::1/128 has a zero group",
		"Not a range":                 `"10.0.0.0/33" is not a CIDR range`,
		"Bad level":                   `the level "severe" is not one of`,
		"UTF-16 without base64":       "bytes that are not text",
		"Base64 of a wildcard":        "needs a value without wildcards",
		"Unknown placeholder":         "the placeholder %Nobody% has no values",
		"Regex not first":             "the re modifier must come first",
		"Comparison with a word":      `the gt modifier compares with a number, not "many"`,
		"Nested list":                 "is a list, not a string, number, boolean or null",
		"No sections":                 "no detection, correlation or filter section",
		"Percentile":                  "percentile aggregate",
		"Chained":                     "chains of correlations are not supported",
		"Unknown rule":                `refers to "base_rul", which is not the id or name of a rule read (did you mean "base_rule"?)`,
		"Ordered three":               "temporal_ordered correlations of 3 rules are not supported",
		"Aliases":                     "aliases of correlations are not supported",
		"Over an untranslatable rule": `refers to "broken_rule"`,
		"Broken rule":                 "the field Nope has no column",
		"Bad timespan":                `the timespan "1 hour" is not a number`,
		"Count without condition":     "a event_count correlation needs a condition",
	}
	got := map[string]sigma.Failure{}
	for _, f := range rs.Failures {
		if _, dup := got[f.Rule]; dup {
			t.Errorf("%s reported twice", f.Rule)
		}
		got[f.Rule] = f
	}
	for rule, reason := range want {
		f, ok := got[rule]
		switch {
		case !ok:
			t.Errorf("%s: not reported", rule)
		case !strings.Contains(f.Reason, reason):
			t.Errorf("%s: reason %q, want it to hold %q", rule, f.Reason, reason)
		case f.Pos.File == "" || f.Pos.Line == 0:
			t.Errorf("%s: no position: %s", rule, f)
		}
	}
	for rule, f := range got {
		if _, ok := want[rule]; !ok {
			t.Errorf("unexpected failure: %s", f)
		}
	}
	// The rules the failures are among: base_rule only counts in
	// counting_base; base_rule2 and base_rule3 alert on their own, as
	// the correlations over them are not translated.
	var names []string
	for _, q := range rs.Alerting() {
		names = append(names, q.Name)
	}
	if want := []string{"base_rule2", "base_rule3", "counting_base"}; !slices.Equal(sorted(names), want) {
		t.Errorf("alerting rules %v, want %v", names, want)
	}
	// A position points at the offending line.
	if f := got["Unmapped field"]; f.Pos.Line != 24 || f.Pos.Col != 5 {
		t.Errorf("Unmapped field reported at %s, want line 24, column 5", f.Pos)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// translateOne translates a rule over a small mapping and returns its
// condition, or its failure's reason.
func translateOne(t *testing.T, mapping, rule string) (cond, failure string) {
	t.Helper()
	m, err := sigma.ParseMapping("mapping.yml", []byte(mapping))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := sigma.Parse("rule.yml", []byte(rule))
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	if len(rs.Failures) > 0 {
		return "", rs.Failures[0].Reason
	}
	if len(rs.Queries) != 1 {
		t.Fatalf("%d queries", len(rs.Queries))
	}
	return rs.Queries[0].Condition, ""
}

const smallMapping = `
table: events
fields:
  CommandLine: command_line
  Image: image
  User: user_name
  EventID: event_id
  Pid: pid
  Ip: ip
  Ok: ok
  UtcTime: ts
columns: {event_id: INT, pid: BIGINT, ok: BOOLEAN, ts: TIMESTAMP(3)}
keywords: [command_line]
`

// TestConditions: how detections and conditions print as SQL.
func TestConditions(t *testing.T) {
	for _, c := range []struct{ detection, want string }{
		// Values: case-insensitive equality, IN, LIKE, REGEXP for what
		// LIKE cannot say, one REGEXP for several patterns.
		{"s: {User: Bob}\ncondition: s", "LOWER(user_name) = 'bob'"},
		{"s: {User: [a, B]}\ncondition: s", "LOWER(user_name) IN ('a', 'b')"},
		{"s: {Image: 'x*y'}\ncondition: s", "LOWER(image) LIKE 'x%y'"},
		{"s: {Image: 'x?y'}\ncondition: s", "REGEXP(LOWER(image), '(?s)^x.y$')"},
		{"s: {Image: '100%_x*'}\ncondition: s", `LOWER(image) LIKE '100\%\_x%' ESCAPE '\'`},
		{"s: {Image: 'a\\b*'}\ncondition: s", `LOWER(image) LIKE 'a\b%'`},
		{"s: {Image: 'a\\*b'}\ncondition: s", `LOWER(image) = 'a*b'`},
		{"s: {Image|contains: ['a', 'b']}\ncondition: s", `REGEXP(LOWER(image), 'a|b')`},
		{"s: {Image|endswith: ['.exe', 'x.dll'], }\ncondition: s", `REGEXP(LOWER(image), '\.exe$|x\.dll$')`},
		{"s: {Image|contains|all: ['a', 'b']}\ncondition: s", `LOWER(image) LIKE '%a%' AND LOWER(image) LIKE '%b%'`},
		{"s: {Image: ['a', 'b*']}\ncondition: s", `REGEXP(LOWER(image), '^a$|^b')`},
		{"s: {Image: 'it''s'}\ncondition: s", `LOWER(image) = 'it''s'`},
		{"s: {Image: '*'}\ncondition: s", `image IS NOT NULL`},
		{"s: {Image|cased: 'A*'}\ncondition: s", `image LIKE 'A%'`},
		{"s: {Image|re: 'a.b'}\ncondition: s", `REGEXP(image, 'a.b')`},
		{"s: {Image|re|i|s: 'a.b'}\ncondition: s", `REGEXP(image, '(?is)a.b')`},
		{"s: {Image|re|startswith: 'a|b'}\ncondition: s", `REGEXP(image, '^(?:a|b)')`},
		{"s: {Image|re: ['a', 'b']}\ncondition: s", `REGEXP(image, '(?-ims:a)|(?-ims:b)')`},
		{"s: {Image|re: ''}\ncondition: s", `image IS NOT NULL`},
		{"s: {Image|windash: '-x'}\ncondition: s", `REGEXP(LOWER(image), '^[\-/\x{2013}\x{2014}\x{2015}]x$')`},
		{"s: {Image|windash: 'a-x'}\ncondition: s", `LOWER(image) = 'a-x'`},
		// Types: numbers and booleans of typed columns; a number on a
		// string column is text.
		{"s: {EventID: 4688}\ncondition: s", `event_id = 4688`},
		{"s: {EventID: [1, 2]}\ncondition: s", `event_id IN (1, 2)`},
		{"s: {EventID: 0x10}\ncondition: s", `event_id = 16`},
		{"s: {EventID: '46*'}\ncondition: s", `LOWER(CAST(event_id AS STRING)) LIKE '46%'`},
		{"s: {User: 4688}\ncondition: s", `LOWER(user_name) = '4688'`},
		{"s: {Ok: true}\ncondition: s", `ok = TRUE`},
		{"s: {Pid|gte: 4}\ncondition: s", `pid >= 4`},
		{"s: {User|lt: 4}\ncondition: s", `TRY_CAST(user_name AS DOUBLE) < 4`},
		{"s: {UtcTime|hour: 3}\ncondition: s", `EXTRACT(HOUR FROM ts) = 3`},
		{"s: {User: null}\ncondition: s", `user_name IS NULL`},
		{"s: {User|exists: true}\ncondition: s", `user_name IS NOT NULL`},
		{"s: {User: ''}\ncondition: s", `LOWER(user_name) = ''`},
		{"s: {User|fieldref: Image}\ncondition: s", `LOWER(user_name) = LOWER(image)`},
		{"s: {User|fieldref|contains: Image}\ncondition: s", `POSITION(LOWER(image) IN LOWER(user_name)) > 0`},
		{"s: {User|fieldref|startswith: Image}\ncondition: s", `POSITION(LOWER(image) IN LOWER(user_name)) = 1`},
		{"s: {User|fieldref|endswith: Image}\ncondition: s", `RIGHT(LOWER(user_name), CHAR_LENGTH(LOWER(image))) = LOWER(image)`},
		{"s: {Ip|cidr: 10.0.0.0/8}\ncondition: s", `REGEXP(ip, '^10\.')`},
		// Keywords look in the keyword columns.
		{"k: [a, b]\ncondition: k", `REGEXP(LOWER(command_line), 'a|b')`},
		// Conditions: NOT becomes IS NOT TRUE on the tests (De Morgan),
		// tests of one column under OR merge, an AND inside an OR is
		// parenthesized.
		{"a: {User: x}\nb: {Image: y}\ncondition: a and not b", `LOWER(user_name) = 'x' AND (LOWER(image) = 'y') IS NOT TRUE`},
		{"a: {User: x}\nb: {Image: y}\ncondition: not (a or b)", `(LOWER(user_name) = 'x') IS NOT TRUE AND (LOWER(image) = 'y') IS NOT TRUE`},
		{"a: {User: x}\nb: {Image: y}\ncondition: not (a and b)", `(LOWER(user_name) = 'x') IS NOT TRUE OR (LOWER(image) = 'y') IS NOT TRUE`},
		{"a: {User: x}\nb: {User: y}\ncondition: not a and not b", `(LOWER(user_name) IN ('x', 'y')) IS NOT TRUE`},
		{"a: {User: x}\nb: {User: 'y*'}\ncondition: a or b", `REGEXP(LOWER(user_name), '^x$|^y')`},
		{"a: {User: x}\nb: {Image|contains: y}\ncondition: not a and not b", `(LOWER(user_name) = 'x') IS NOT TRUE AND (LOWER(image) LIKE '%y%') IS NOT TRUE`},
		{"a: {Image|contains: [y, z]}\ncondition: not a", `REGEXP(LOWER(image), 'y|z') IS NOT TRUE`},
		{"a: {User: null}\ncondition: not a", `user_name IS NOT NULL`},
		{"a: {User|neq: x}\ncondition: a", `(LOWER(user_name) = 'x') IS NOT TRUE`},
		{"a: {User: x}\nb: {Image: y}\nc: {Pid: 1}\ncondition: a or b and c", `LOWER(user_name) = 'x' OR (LOWER(image) = 'y' AND pid = 1)`},
		{"a: {User: x}\nb: {Image: y}\nc: {Pid: 1}\ncondition: (a or b) and c", `(LOWER(user_name) = 'x' OR LOWER(image) = 'y') AND pid = 1`},
		{"sel_a: {User: x}\nsel_b: {Image: y}\ncondition: all of sel_*", `LOWER(user_name) = 'x' AND LOWER(image) = 'y'`},
		{"sel_a: {User: x}\nsel_b: {Image: y}\ncondition: 1 of sel_*", `LOWER(user_name) = 'x' OR LOWER(image) = 'y'`},
		{"sel_a: {User: x}\n_b: {Image: y}\ncondition: all of them", `LOWER(user_name) = 'x'`},
		{"a: {User: x}\ncondition: NOT NOT a", `LOWER(user_name) = 'x'`},
		{"a: {User: x}\ncondition: not not not a", `(LOWER(user_name) = 'x') IS NOT TRUE`},
		{"a: {User: x, Image: y}\ncondition: a", `LOWER(user_name) = 'x' AND LOWER(image) = 'y'`},
		{"a: [{User: x}, {Image: y}]\ncondition: a", `LOWER(user_name) = 'x' OR LOWER(image) = 'y'`},
		{"a: {User: x}\nb: {Image: y}\ncondition: [a, b]", `LOWER(user_name) = 'x' OR LOWER(image) = 'y'`},
	} {
		rule := "title: t\ndetection:\n  " + strings.ReplaceAll(c.detection, "\n", "\n  ") + "\n"
		got, failure := translateOne(t, smallMapping, rule)
		if failure != "" {
			t.Errorf("%s:\nnot translated: %s", c.detection, failure)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.detection, got, c.want)
		}
	}
}

// TestLogsources: a logsource of the mapping adds its condition and may
// change the table and the fields; a rule no logsource fits is reported.
func TestLogsources(t *testing.T) {
	mapping := smallMapping + `
logsources:
  - category: process_creation
    product: windows
    condition: "event_type = 'proc'"
  - category: dns
    table: dns_log
    fields:
      QueryName: query
`
	for _, c := range []struct{ rule, want, failure string }{
		{"logsource: {category: process_creation, product: Windows}\ndetection: {s: {Image: x}, condition: s}",
			"(event_type = 'proc') AND LOWER(image) = 'x'", ""},
		{"logsource: {category: process_creation, product: windows}\ndetection: {s: {Image: x}, t: {User: y}, condition: s or t}",
			"(event_type = 'proc') AND (LOWER(image) = 'x' OR LOWER(user_name) = 'y')", ""},
		{"logsource: {category: dns}\ndetection: {s: {QueryName: x}, condition: s}", "LOWER(query) = 'x'", ""},
		{"logsource: {category: file_event, product: windows}\ndetection: {s: {Image: x}, condition: s}", "",
			"no logsource of the mapping fits the rule's logsource {category: file_event, product: windows}"},
	} {
		m, err := sigma.ParseMapping("m.yml", []byte(mapping))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := sigma.Parse("r.yml", []byte("title: t\n"+c.rule))
		if err != nil {
			t.Fatal(err)
		}
		rs := sigma.Translate(docs, m)
		switch {
		case c.failure != "":
			if len(rs.Failures) != 1 || !strings.Contains(rs.Failures[0].Reason, c.failure) {
				t.Errorf("%s: failures %v, want %q", c.rule, rs.Failures, c.failure)
			}
		case len(rs.Queries) != 1:
			t.Errorf("%s: %v", c.rule, rs.Failures)
		case rs.Queries[0].Condition != c.want:
			t.Errorf("%s:\n got %s\nwant %s", c.rule, rs.Queries[0].Condition, c.want)
		}
	}
	// The dns rule reads the logsource's table.
	m, _ := sigma.ParseMapping("m.yml", []byte(mapping))
	docs, _ := sigma.Parse("r.yml", []byte("title: t\nlogsource: {category: dns}\ndetection: {s: {QueryName: x}, condition: s}"))
	if rs := sigma.Translate(docs, m); len(rs.Queries) != 1 || rs.Queries[0].Table != "dns_log" {
		t.Errorf("the dns rule reads %v", rs.Queries)
	}
}

// TestFilters: a Sigma filter adds its condition to the rules it names
// (as pySigma does: the rule's condition and the filter's).
func TestFilters(t *testing.T) {
	rules := `title: Rule one
id: r1
detection: {s: {Image|endswith: '\x.exe'}, condition: s}
---
title: Rule two
name: r2
detection: {s: {Image|endswith: '\y.exe'}, condition: s}
---
title: Admins are fine
filter:
  rules: [r1, r2]
  admin:
    User|startswith: adm_
  condition: not admin
`
	m, _ := sigma.ParseMapping("m.yml", []byte(smallMapping))
	docs, err := sigma.Parse("r.yml", []byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	if len(rs.Failures) > 0 || len(rs.Queries) != 2 {
		t.Fatalf("%v %v", rs.Failures, rs.Queries)
	}
	for i, want := range []string{
		`LOWER(image) LIKE '%\x.exe' AND (LOWER(user_name) LIKE 'adm\_%' ESCAPE '\') IS NOT TRUE`,
		`LOWER(image) LIKE '%\y.exe' AND (LOWER(user_name) LIKE 'adm\_%' ESCAPE '\') IS NOT TRUE`,
	} {
		if got := rs.Queries[i].Condition; got != want {
			t.Errorf("rule %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestLegacyCollections: action: global is merged into the documents
// after it, action: repeat repeats the previous one with changes.
func TestLegacyCollections(t *testing.T) {
	rules := `action: global
title: Tools
detection:
  condition: s
---
detection:
  s: {Image: a.exe}
---
action: repeat
title: Tools again
detection:
  s: {Image: b.exe}
`
	m, _ := sigma.ParseMapping("m.yml", []byte(smallMapping))
	docs, err := sigma.Parse("r.yml", []byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	var got []string
	for _, q := range rs.Queries {
		got = append(got, q.Title+": "+q.Condition)
	}
	want := []string{"Tools: LOWER(image) = 'a.exe'", "Tools again: LOWER(image) = 'b.exe'"}
	if !slices.Equal(got, want) || len(rs.Failures) > 0 {
		t.Errorf("got %v %v, want %v", got, rs.Failures, want)
	}
}

// TestMalformed: text that is not YAML, or a document that is not a
// mapping, is an error of the file; a mapping file's unknown key too.
func TestMalformed(t *testing.T) {
	for _, src := range []string{
		"title: [unclosed\n",
		"- a list\n- of things\n",
		"title: x\n---\njust text\n",
		"action: frobnicate\ntitle: x\n",
	} {
		if _, err := sigma.Parse("bad.yml", []byte(src)); err == nil {
			t.Errorf("%q: no error", src)
		} else if !strings.HasPrefix(err.Error(), "bad.yml") {
			t.Errorf("%q: the error %q does not name the file", src, err)
		}
	}
	if _, err := sigma.ParseMapping("m.yml", []byte("table: t\nfeilds: {a: b}\n")); err == nil || !strings.Contains(err.Error(), "feilds") {
		t.Errorf("a misspelt mapping key: %v", err)
	}
	if _, err := sigma.ParseMapping("m.yml", []byte("columns: {a: 'INT; DROP'}\n")); err == nil {
		t.Errorf("a column type that is not a type: no error")
	}
	// A keyword search needs keyword columns.
	if _, failure := translateOne(t, "table: t\n", "title: k\ndetection: {k: [x], condition: k}"); !strings.Contains(failure, "keywords:") {
		t.Errorf("a keyword search without keyword columns: %q", failure)
	}
}

// TestNames: rule names are made of name, title or id, and unique.
func TestNames(t *testing.T) {
	rules := `title: Some Rule!
detection: {s: {User: x}, condition: s}
---
title: some rule
detection: {s: {User: y}, condition: s}
---
id: 5f1c-77
detection: {s: {User: z}, condition: s}
---
title: Ignored for the name
name: my_rule
detection: {s: {User: w}, condition: s}
`
	m, _ := sigma.ParseMapping("m.yml", []byte(smallMapping))
	docs, _ := sigma.Parse("r.yml", []byte(rules))
	var got []string
	for _, q := range sigma.Translate(docs, m).Queries {
		got = append(got, q.Name)
	}
	if want := []string{"some_rule", "some_rule_2", "r_5f1c_77", "my_rule"}; !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}

// TestRulesetNames: in a ruleset, a rule whose name is a reserved word
// is quoted, the parts of a split condition are named after their rule
// (numbered past another rule's name), and the script plans.
func TestRulesetNames(t *testing.T) {
	rules := `title: Select
level: low
detection: {s: {User: x}, condition: s}
---
title: X
detection: {a: {User: x}, b: {Image: y}, condition: a or b}
---
title: X part1
detection: {s: {User: y}, condition: s}
`
	m, _ := sigma.ParseMapping("m.yml", []byte(smallMapping))
	docs, _ := sigma.Parse("r.yml", []byte(rules))
	rs := sigma.Translate(docs, m)
	var got []string
	for _, q := range rs.Queries {
		got = append(got, strings.Join(append([]string{q.Name}, q.PartNames...), " "))
	}
	if want := []string{"select", "x x_part1_2 x_part2", "x_part1"}; !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
	script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true})
	for _, want := range []string{"RULE `select` WHEN LOWER(user_name) = 'x' SEVERITY 'low',", "RULE x_part1_2 WHEN", "RULE x_part2 WHEN", "RULE x_part1 WHEN LOWER(user_name) = 'y' SEVERITY 'medium'"} {
		if !strings.Contains(script, want) {
			t.Errorf("the script has no %q:\n%s", want, script)
		}
	}
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := "CREATE TABLE events (command_line STRING, image STRING, user_name STRING, event_id INT, pid BIGINT, ip STRING, ok BOOLEAN, ts TIMESTAMP(3)) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n" + script
	if _, err := e.Explain("rules.sql", []byte(src)); err != nil {
		t.Errorf("%s\n%s", sluice.FormatError(err, []byte(src)), src)
	}
}

// TestParts: a condition whose ORs test several columns is split into
// parts, each with a test of one column and without the rows of the
// parts before it; others are not.
func TestParts(t *testing.T) {
	for _, c := range []struct {
		detection string
		want      []string
	}{
		{"a: {User: x}\nb: {Image: y}\ncondition: a or b",
			[]string{"LOWER(user_name) = 'x'", "LOWER(image) = 'y' AND (LOWER(user_name) = 'x') IS NOT TRUE"}},
		{"a: {User: x}\nb: {User: 'y*'}\ncondition: a or b", nil}, // one column: one test
		{"a: {User: x}\nb: {Image: y}\nc: {Pid: 1}\ncondition: c and (a or b)", nil},
		{"a: {User: x}\nb: {Image: y}\nc: {Pid: 1}\nd: {Ip: z}\ncondition: (a or b) and (c or d)", []string{
			"LOWER(user_name) = 'x' AND (pid = 1 OR LOWER(ip) = 'z')",
			"LOWER(image) = 'y' AND (LOWER(user_name) = 'x') IS NOT TRUE AND (pid = 1 OR LOWER(ip) = 'z')"}},
		{"a: [{User: x}, {Image: y}]\nb: {Pid: 1}\ncondition: a or not b", []string{
			"LOWER(user_name) = 'x'",
			"LOWER(image) = 'y' AND (LOWER(user_name) = 'x') IS NOT TRUE",
			"(pid = 1) IS NOT TRUE AND (LOWER(user_name) = 'x') IS NOT TRUE AND (LOWER(image) = 'y') IS NOT TRUE"}},
	} {
		m, _ := sigma.ParseMapping("m.yml", []byte(smallMapping))
		docs, err := sigma.Parse("r.yml", []byte("title: t\ndetection:\n  "+strings.ReplaceAll(c.detection, "\n", "\n  ")+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		rs := sigma.Translate(docs, m)
		if len(rs.Queries) != 1 {
			t.Fatalf("%s: %v", c.detection, rs.Failures)
		}
		if got := rs.Queries[0].Parts; !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.detection, got, c.want)
		}
	}
	// Past 16 parts, the condition stays whole.
	var det strings.Builder
	var names []string
	for i := range 20 {
		fmt.Fprintf(&det, "s%d: {%s: v%d}\n", i, []string{"User", "Image"}[i%2], i)
		names = append(names, fmt.Sprintf("(s%d and s%d)", i, (i+1)%20))
	}
	det.WriteString("condition: " + strings.Join(names, " or "))
	m, _ := sigma.ParseMapping("m.yml", []byte(smallMapping))
	docs, _ := sigma.Parse("r.yml", []byte("title: t\ndetection:\n  "+strings.ReplaceAll(det.String(), "\n", "\n  ")))
	if rs := sigma.Translate(docs, m); len(rs.Queries) != 1 || rs.Queries[0].Parts != nil {
		t.Errorf("20 alternatives: %v %v", rs.Failures, rs.Queries)
	}
}
