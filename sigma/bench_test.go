package sigma_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/sigma"
)

// Words of generated detection rules: tools and arguments that the
// procgen model's benign activity rarely has.
var (
	benchTools = []string{"mimikatz", "sekurlsa", "procdump", "lsass", "psexec", "bloodhound", "sharphound", "rubeus",
		"kerberoast", "downloadstring", "frombase64string", "bitsadmin", "regsvr32", "mshta", "wscript", "cscript",
		"vssadmin", "wbadmin", "bcdedit", "ntdsutil", "comsvcs", "minidump", "adfind", "nltest", "dsquery", "cmstp",
		"installutil", "msbuild", "odbcconf", "pcalua", "forfiles", "wevtutil", "fsutil", "cipher", "icacls", "takeown"}
	benchArgs = []string{"-enc", "/c", "-nop", "-w hidden", "/s /q", "delete shadows", "-ma", "privilege::debug",
		"logonpasswords", "/transfer", "-urlcache", "scrobj.dll", "javascript:"}
)

// benchRules writes n Sigma rules over process creation events: 40%
// an image and command-line contents, 20% contains|all, 15% a regular
// expression, a parent and image with a filter, `1 of` over the image
// and the command line (the share cross, whose conditions are ORs of two
// columns), and an integrity level with a prefix.
func benchRules(n int, cross float64, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	ind := func() string { return fmt.Sprintf("'%s %s%d'", pick(benchTools), pick(benchArgs), rng.IntN(1000)) }
	exe := func() string { return fmt.Sprintf(`'\%s%d.exe'`, pick(benchTools), rng.IntN(100)) }
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "title: Rule %d\nid: r-%d\nlevel: %s\ndetection:\n", i, i, pick([]string{"low", "medium", "high", "critical"}))
		switch u := rng.Float64(); {
		case u < 0.40:
			fmt.Fprintf(&b, "  selection:\n    Image|endswith: [%s, %s]\n    CommandLine|contains: [%s, %s, %s]\n  condition: selection\n",
				exe(), exe(), ind(), ind(), ind())
		case u < 0.60:
			fmt.Fprintf(&b, "  selection:\n    CommandLine|contains|all: ['%s%d', '%s']\n  condition: selection\n",
				pick(benchTools), rng.IntN(1000), pick(benchArgs))
		case u < 0.75:
			fmt.Fprintf(&b, "  selection:\n    CommandLine|re: '%s[0-9]{2,4} +%s'\n  condition: selection\n",
				pick(benchTools), pick([]string{"-[a-z]+", "/[a-z]", "[0-9a-f]{8}"}))
		case u < 0.90-cross:
			fmt.Fprintf(&b, "  selection:\n    ParentImage|endswith: %s\n    Image|endswith: %s\n  filter:\n    User: SYSTEM\n  condition: selection and not filter\n",
				exe(), exe())
		case u < 0.90:
			fmt.Fprintf(&b, "  selection_img:\n    Image|endswith: %s\n  selection_cli:\n    CommandLine|contains: %s\n  condition: 1 of selection_*\n",
				exe(), ind())
		default:
			fmt.Fprintf(&b, "  selection:\n    IntegrityLevel: System\n    CommandLine|startswith: '%s%d'\n  condition: selection\n",
				pick(benchTools), rng.IntN(1000))
		}
	}
	return b.String()
}

// benchMapping maps the rules onto a procgen table of events rows;
// alerts go to a blackhole.
func benchMapping(events int) string {
	return fmt.Sprintf(`table: events
fields: {Image: image, ParentImage: parent_image, CommandLine: command_line, User: user_name, IntegrityLevel: integrity_level}
alert_columns: [host, user_name]
alerts_with: {connector: blackhole}
prelude: |
  CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING, image STRING, command_line STRING, integrity_level STRING)
  WITH ('connector' = 'procgen', 'events.num' = '%d', 'seed' = '3');
`, events)
}

func benchRun(b *testing.B, script string) {
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.Run(context.Background(), "rules.sql", []byte(script)); err != nil {
		b.Fatal(sluice.FormatError(err, []byte(script)))
	}
}

// BenchmarkSigmaRules runs 1,000 translated rules over 300,000 procgen
// events: with the rules whose conditions are ORs of two columns split
// into parts (as the script writes them), whole, and a set without such
// rules.
//
//	go test ./sigma -run '^$' -bench SigmaRules -benchtime 1x
func BenchmarkSigmaRules(b *testing.B) {
	const events = 300000
	for _, c := range []struct {
		name  string
		cross float64
		whole bool
	}{{"split", 0.1, false}, {"whole", 0.1, true}, {"no-or", 0, false}} {
		b.Run(c.name, func(b *testing.B) {
			m, err := sigma.ParseMapping("m.yml", []byte(benchMapping(events)))
			if err != nil {
				b.Fatal(err)
			}
			docs, err := sigma.Parse("rules.yml", []byte(benchRules(1000, c.cross, 1)))
			if err != nil {
				b.Fatal(err)
			}
			rs := sigma.Translate(docs, m)
			if len(rs.Failures) > 0 {
				b.Fatal(rs.Failures)
			}
			if c.whole {
				for _, q := range rs.Queries {
					q.Parts = nil
				}
			}
			script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true})
			for b.Loop() {
				benchRun(b, script)
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkListForm runs 500 rules of three contains values each over
// 300,000 procgen events, written as one REGEXP of the alternatives (as
// the translator writes them) and as an OR of LIKEs.
//
//	go test ./sigma -run '^$' -bench ListForm -benchtime 1x
func BenchmarkListForm(b *testing.B) {
	const events = 300000
	for _, form := range []string{"regexp", "or"} {
		b.Run(form, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var s strings.Builder
			fmt.Fprintf(&s, "CREATE TABLE events (host STRING, command_line STRING) WITH ('connector' = 'procgen', 'events.num' = '%d', 'seed' = '3');\n", events)
			s.WriteString("CREATE TABLE bh (rule STRING, host STRING) WITH ('connector' = 'blackhole');\nEXECUTE STATEMENT SET BEGIN\n")
			for i := range 500 {
				var vals []string
				for range 3 {
					vals = append(vals, fmt.Sprintf("%s %s%d", benchTools[rng.IntN(len(benchTools))], benchArgs[rng.IntN(len(benchArgs))], rng.IntN(1000)))
				}
				var cond string
				if form == "regexp" {
					cond = "REGEXP(LOWER(command_line), '" + strings.Join(vals, "|") + "')"
				} else {
					cond = "(LOWER(command_line) LIKE '%" + strings.Join(vals, "%' OR LOWER(command_line) LIKE '%") + "%')"
				}
				fmt.Fprintf(&s, "INSERT INTO bh SELECT 'r%d', host FROM events WHERE %s;\n", i, cond)
			}
			s.WriteString("END;\n")
			for b.Loop() {
				benchRun(b, s.String())
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkTranslate reads, translates and prints 10,000 rules.
//
//	go test ./sigma -run '^$' -bench Translate -benchtime 3x
func BenchmarkTranslate(b *testing.B) {
	rules := []byte(benchRules(10000, 0.1, 2))
	m, err := sigma.ParseMapping("m.yml", []byte(benchMapping(1)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		docs, err := sigma.Parse("rules.yml", rules)
		if err != nil {
			b.Fatal(err)
		}
		rs := sigma.Translate(docs, m)
		if len(rs.Failures) > 0 {
			b.Fatal(rs.Failures)
		}
		_ = sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true})
	}
	b.ReportMetric(10000*float64(b.N)/b.Elapsed().Seconds(), "rules/s")
}

// benchNoisy are strings of the procgen model's benign activity that a
// few rules look for, as real rule sets have noisy rules.
var benchNoisy = []string{"-encodedcommand", "certutil", "schtasks", "/create", "net user", "rundll32", "--type=renderer", "curl -fssl"}

// sigmaStyleRules writes n Sigma rules, mostly contains on the command
// line, as real process-creation rule sets are: 50% one value, 15% a
// list of values, 10% contains|all, 10% an image and a command line,
// 5% a regular expression, 5% a parent, an image and a filter, 5% `1
// of` over the image and the command line (a condition the translator
// splits). One in a hundred values is a string of the benign activity.
// Each has a level and ATT&CK tags.
func sigmaStyleRules(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 3))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	ind := func() string {
		if rng.IntN(100) == 0 {
			return "'" + pick(benchNoisy) + "'"
		}
		return fmt.Sprintf("'%s %s%d'", pick(benchTools), pick(benchArgs), rng.IntN(1000))
	}
	exe := func() string { return fmt.Sprintf(`'\%s%d.exe'`, pick(benchTools), rng.IntN(100)) }
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "title: Rule %d\nid: r-%d\nlevel: %s\ntags: [attack.execution, attack.t%04d]\nlogsource: {category: process_creation, product: windows}\ndetection:\n",
			i, i, pick([]string{"informational", "low", "medium", "high", "critical"}), 1000+rng.IntN(600))
		switch u := rng.IntN(100); {
		case u < 50:
			fmt.Fprintf(&b, "  selection:\n    CommandLine|contains: %s\n  condition: selection\n", ind())
		case u < 65:
			fmt.Fprintf(&b, "  selection:\n    CommandLine|contains: [%s, %s, %s]\n  condition: selection\n", ind(), ind(), ind())
		case u < 75:
			fmt.Fprintf(&b, "  selection:\n    CommandLine|contains|all: ['%s%d', '%s']\n  condition: selection\n", pick(benchTools), rng.IntN(1000), pick(benchArgs))
		case u < 85:
			fmt.Fprintf(&b, "  selection:\n    Image|endswith: %s\n    CommandLine|contains: %s\n  condition: selection\n", exe(), ind())
		case u < 90:
			fmt.Fprintf(&b, "  selection:\n    CommandLine|re: '%s[0-9]{2,4} +%s'\n  condition: selection\n",
				pick(benchTools), pick([]string{"-[a-z]+", "/[a-z]", "[0-9a-f]{8}"}))
		case u < 95:
			fmt.Fprintf(&b, "  selection:\n    ParentImage|endswith: %s\n    Image|endswith: %s\n  filter:\n    User: SYSTEM\n  condition: selection and not filter\n", exe(), exe())
		default:
			fmt.Fprintf(&b, "  selection_img:\n    Image|endswith: %s\n  selection_cli:\n    CommandLine|contains: %s\n  condition: 1 of selection_*\n", exe(), ind())
		}
	}
	return b.String()
}

// BenchmarkSigmaRuleset translates 1,000 Sigma-style rules
// (sigmaStyleRules: mostly contains on the command line) and runs the
// script sluice sigma writes over SLUICE_RULES_EVENTS procgen events
// (default 300,000; 80% of command lines repeat), the alerts into a
// blackhole: as one ruleset (the default form), as a statement set of
// an INSERT per rule, and as a ruleset with 10 correlations besides
// (event_count by host over 5 minutes of the events of a rule of its
// own that looks for a string of the benign activity). It reports events per CPU second, the engine's
// setup (parsing, planning) included and the translation not, and
// alerts per event:
//
//	GOMAXPROCS=1 SLUICE_RULES_EVENTS=1000000 go test ./sigma -run '^$' -bench '^BenchmarkSigmaRuleset$' -benchtime 1x
func BenchmarkSigmaRuleset(b *testing.B) {
	events := 300_000
	if s := os.Getenv("SLUICE_RULES_EVENTS"); s != "" {
		var err error
		if events, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	m, err := sigma.ParseMapping("m.yml", []byte(fmt.Sprintf(`table: events
time: event_time
columns: {event_time: TIMESTAMP(3)}
fields: {Image: image, ParentImage: parent_image, CommandLine: command_line, User: user_name, IntegrityLevel: integrity_level, Computer: host}
alert_columns: [host, user_name, command_line]
alerts_with: {connector: blackhole}
prelude: |
  CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING, image STRING, command_line STRING, integrity_level STRING,
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND)
  WITH ('connector' = 'procgen', 'events.num' = '%d');
`, events)))
	if err != nil {
		b.Fatal(err)
	}
	rules := sigmaStyleRules(1000, 1)
	var corr strings.Builder
	for i := range 10 {
		fmt.Fprintf(&corr, "---\ntitle: Seen %d\nname: seen_%d\ndetection: {s: {CommandLine|contains: '%s'}, condition: s}\n", i, i, benchNoisy[i%len(benchNoisy)])
		fmt.Fprintf(&corr, "---\ntitle: Burst %d\ncorrelation: {type: event_count, rules: [seen_%d], group-by: [Computer], timespan: 5m, condition: {gte: %d}}\n", i, i, 3+i)
	}
	for _, form := range []string{"ruleset", "statement-set", "ruleset+correlations"} {
		b.Run(form, func(b *testing.B) {
			src := rules
			if form == "ruleset+correlations" {
				src += corr.String()
			}
			docs, err := sigma.Parse("rules.yml", []byte(src))
			if err != nil {
				b.Fatal(err)
			}
			rs := sigma.Translate(docs, m)
			if len(rs.Failures) > 0 || len(rs.Queries) != len(docs) {
				b.Fatalf("%d translated, not: %v", len(rs.Queries), rs.Failures)
			}
			script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true, StatementSet: form == "statement-set"})
			cpu := cputime.Seconds()
			var alerts int64
			for b.Loop() {
				e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				res, err := e.Exec(context.Background(), "rules.sql", []byte(script))
				if err != nil {
					b.Fatal(sluice.FormatError(err, []byte(script)))
				}
				job := res[len(res)-1].Job
				if err := job.Wait(); err != nil {
					b.Fatal(err)
				}
				alerts += job.Metrics.RowsOut.Load()
				e.Close()
			}
			if c := cputime.Seconds() - cpu; c > 0 {
				b.ReportMetric(float64(events)*float64(b.N)/c, "events/cpu-s")
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(alerts)/float64(events)/float64(b.N), "alerts/event")
		})
	}
}
