package sigma_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/sigma"
	"github.com/sluicesql/sluice/sql/parser"
)

// fuzzSeeds are the documents of the sample rules, one by one.
func fuzzSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			f.Add(doc)
		}
	}
	for _, s := range []string{
		"title: t\ndetection: {s: {User|re: '(((('}, condition: s}",
		"title: t\ndetection: {s: {Ip|cidr: '::/0'}, condition: 'not ((s'}",
		"title: t\ndetection: {s: {User|expand|windash: '%a%-%a%'}, condition: all of them}",
		"title: t\ndetection: {s: &x {User: 1}, t: *x, condition: s or t}",
		"title: t\ncorrelation: {type: temporal, rules: [t], timespan: 99999d, group-by: x}",
		"action: global\n---\naction: repeat\n",
	} {
		f.Add(s)
	}
}

// fuzzMapping maps a few fields and has keywords, placeholders and a
// time column, so that most of the translator is reached.
const fuzzMapping = `
table: events
time: ts
fields: {User: user_name, Image: image, CommandLine: command_line, Ip: ip, EventID: event_id, Computer: host}
columns: {event_id: INT, ts: TIMESTAMP(3)}
keywords: [command_line]
placeholders: {a: [x, 'y*'], b: ['-z']}
`

// FuzzTranslate: no rule file makes the translator panic, and whatever
// it translates is SQL that parses.
func FuzzTranslate(f *testing.F) {
	fuzzSeeds(f)
	m, err := sigma.ParseMapping("m.yml", []byte(fuzzMapping))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		docs, err := sigma.Parse("r.yml", []byte(src))
		if err != nil {
			return
		}
		rs := sigma.Translate(docs, m)
		if len(rs.Alerting()) == 0 {
			return
		}
		for _, statementSet := range []bool{false, true} {
			script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true, StatementSet: statementSet})
			if _, err := parser.ParseFile("rules.sql", []byte(script)); err != nil {
				t.Fatalf("the script does not parse: %s\n%s", parser.FormatError(err, []byte(script)), script)
			}
		}
	})
}

// FuzzCondition: no condition makes the translator panic, and one it
// translates parses as a SQL expression.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{"a", "a and not b", "1 of sel_*", "all of them", "(a or b) and not (c)",
		"not not not a", "a | count() > 5", "((((", "all of", "1 of *", "a and", "c_* or all of a*b"} {
		f.Add(s)
	}
	m, err := sigma.ParseMapping("m.yml", []byte(fuzzMapping))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cond string) {
		rule := "title: t\ndetection:\n  a: {User: x}\n  b: {Image|contains: [y, z]}\n  c_1: {Ip|cidr: 10.0.0.0/9}\n  _d: [k]\n  condition: " +
			quoteYAML(cond) + "\n"
		docs, err := sigma.Parse("r.yml", []byte(rule))
		if err != nil {
			return
		}
		rs := sigma.Translate(docs, m)
		for _, q := range rs.Queries {
			if _, err := parser.ParseExpr(q.Condition); err != nil {
				t.Fatalf("condition %q: %s does not parse: %v", cond, q.Condition, err)
			}
		}
	})
}

// quoteYAML writes s as a single-quoted YAML scalar.
func quoteYAML(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, "'", "''"), "\n", " ") + "'"
}
