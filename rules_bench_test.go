package sluice_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/bench"
	"github.com/sluicesql/sluice/internal/cputime"
)

// Detection rule vocabulary: the tools, arguments and indicators real
// rule sets look for (rare in the procgen model's benign activity), and
// strings of that activity (which a few rules match, as real rule sets
// have noisy rules).
var (
	ruleTools = []string{"mimikatz", "sekurlsa", "procdump", "lsass", "psexec", "bloodhound", "sharphound", "rubeus",
		"kerberoast", "downloadstring", "frombase64string", "bitsadmin", "regsvr32", "mshta", "wscript", "cscript",
		"vssadmin", "wbadmin", "bcdedit", "ntdsutil", "comsvcs", "minidump", "adfind", "nltest", "dsquery", "cmstp",
		"installutil", "msbuild", "odbcconf", "pcalua", "forfiles", "wevtutil", "fsutil", "cipher", "icacls", "takeown",
		"powercat", "nishang", "meterpreter", "ncat", "socat", "chisel", "ngrok", "plink", "anydesk", "rclone", "megasync",
		"certreq", "esentutl", "extrac32", "makecab", "mavinject", "msdt", "rasautou", "scriptrunner", "tttracer",
		"xwizard", "shred", "insmod", "crontab", "useradd", "iptables", "tcpdump", "nmap", "masscan", "hydra", "responder",
		"impacket", "secretsdump", "wmiexec", "smbexec", "dcsync", "lazagne", "seatbelt", "winpeas", "linpeas", "pspy"}
	ruleArgs = []string{"-enc", "/c", "-nop", "-w hidden", "/s /q", "delete shadows", "-ma", "privilege::debug",
		"logonpasswords", "/transfer", "/i:http", "-urlcache", "scrobj.dll", "javascript:", "vbscript:", "/add", "-p 4444",
		"-e /bin/sh", "--config", "-decode", "/grant Everyone:F", "cl System", "usn deletejournal", "/w:C:", "-l -p",
		"reverse", "-R 8080", "copy remote:", "save HKLM\\SAM", "/domain_trusts", "-DumpCreds", "asreproast", "-hashes"}
	ruleExes  = []string{"mimikatz", "procdump64", "psexesvc", "rubeus", "sharphound", "adfind", "nc64", "plink", "rclone", "chisel", "ngrok", "anydesk", "winpeas", "lazagne", "pwdump"}
	ruleNoisy = []string{"-EncodedCommand", "-ExecutionPolicy Bypass", "certutil", "urlcache", "schtasks", "/create", "net user",
		"--type=renderer", "UnistackSvcGroup", "apt-get install", "curl -fsSL", "/tmp/", "C:\\Users\\Public", "rundll32", "-nop -w hidden"}
	ruleBenignExes = []string{"cmd", "powershell", "certutil", "rundll32", "WMIC", "net", "schtasks", "msiexec", "svchost", "chrome"}
)

// ruleSet writes n detection rules over the procgen table events, as
// real rule sets mix them: 60% substring matches on the command line or
// the image (contains, starts with, ends with), 15% regular expressions,
// 25% comparisons and IN lists on the user, the host and the integrity
// level, some joined with a substring match. The rules are distinct (as
// in a real set, each looks for something of its own) and most match
// rarely; one in a hundred looks for a string of the benign activity, as
// real rule sets have noisy rules (at 10,000 rules, about 6 alerts an
// event). Each rule is one INSERT of the
// matching events into a blackhole sink, all in one statement set.
func ruleSet(n int, seed uint64) string {
	conds := ruleConditions(n, seed)
	var b strings.Builder
	b.WriteString(ruleEventsTable)
	for i := range n {
		fmt.Fprintf(&b, "CREATE TABLE alert%d (host STRING, user_name STRING, command_line STRING) WITH ('connector' = 'blackhole');\n", i)
	}
	b.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for i, cond := range conds {
		fmt.Fprintf(&b, "INSERT INTO alert%d SELECT host, user_name, command_line FROM events WHERE %s;\n", i, cond)
	}
	b.WriteString("END;\n")
	return b.String()
}

// ruleEventsTable declares the procgen table the rules read.
const ruleEventsTable = `CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING,
  image STRING, command_line STRING, pid BIGINT, parent_pid BIGINT, integrity_level STRING)
WITH ('connector' = 'procgen', 'events.num' = '$EVENTS');
`

// ruleConditions draws the WHERE conditions of ruleSet's n rules.
func ruleConditions(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	// indicator draws a distinct-looking string a rule looks for.
	indicator := func() string {
		switch u := rng.IntN(100); {
		case u < 1:
			return ruleNoisy[rng.IntN(len(ruleNoisy))]
		case u < 45:
			return ruleTools[rng.IntN(len(ruleTools))]
		case u < 85:
			return ruleTools[rng.IntN(len(ruleTools))] + " " + ruleArgs[rng.IntN(len(ruleArgs))]
		default: // an indicator of compromise: a domain or a file name
			return fmt.Sprintf("%s-%04x.%s", ruleTools[rng.IntN(len(ruleTools))], rng.IntN(1<<16), []string{"top", "xyz", "ru", "dll", "exe"}[rng.IntN(5)])
		}
	}
	exe := func() string {
		if rng.IntN(100) == 0 {
			return ruleBenignExes[rng.IntN(len(ruleBenignExes))]
		}
		if rng.IntN(2) == 0 {
			return ruleExes[rng.IntN(len(ruleExes))]
		}
		return fmt.Sprintf("%s%d", ruleTools[rng.IntN(len(ruleTools))], rng.IntN(100))
	}
	// Most regexes hold a literal of their own (a tool, a path, a
	// domain), as real rules' do; one in five is a template that many
	// rules vary (a length, a number of digits) around a common literal.
	regex := func() string {
		tool := ruleTools[rng.IntN(len(ruleTools))]
		switch rng.IntN(10) {
		case 0:
			return fmt.Sprintf(`-[Ee]nc[a-zA-Z]* [A-Za-z0-9+/]{%d,}`, 60+rng.IntN(400))
		case 1:
			return []string{fmt.Sprintf(`--run-id [0-9]{%d,}`, 6+rng.IntN(8)), fmt.Sprintf(`CDPUserSvc_[0-9a-f]{%d}%s`, 1+rng.IntN(6), []string{"", "$", " "}[rng.IntN(3)])}[rng.IntN(2)]
		case 2, 3:
			return fmt.Sprintf(`(?i)%s.*%s`, tool, strings.Trim(ruleArgs[rng.IntN(len(ruleArgs))], `\ `))
		case 4:
			return fmt.Sprintf(`https?://[a-z0-9.-]*%s[a-z0-9.-]*\.(%s)/`, tool, []string{"ru", "su", "top", "xyz"}[rng.IntN(4)])
		case 5:
			return fmt.Sprintf(`\\Users\\Public\\%s_[0-9]{%d}\.(tmp|exe|dll)`, tool, 1+rng.IntN(9))
		case 6:
			return fmt.Sprintf(`(?i)(invoke|iex)[-(].*%s`, tool)
		case 7:
			return fmt.Sprintf(`%s[0-9]{0,3}\.(exe|dll|ps1) +-[a-z]{%d,}`, tool, 1+rng.IntN(4))
		case 8:
			return fmt.Sprintf(`/(tmp|dev/shm|var/tmp)/\.?%s[a-z0-9]*`, tool)
		default:
			return fmt.Sprintf(`(?i)%s +/[a-z]+ +[a-z0-9_]{%d,}`, tool, 2+rng.IntN(10))
		}
	}
	quote := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
	user := func() string { return fmt.Sprintf(`'CORP\user%05d'`, rng.IntN(2000)) }
	conds := make([]string, n)
	for i := range n {
		var cond string
		switch u := rng.IntN(100); {
		case u < 35:
			cond = fmt.Sprintf("command_line LIKE '%%%s%%'", quote(indicator()))
		case u < 45:
			cond = fmt.Sprintf("command_line LIKE '%s%%'", quote(indicator()))
		case u < 55:
			cond = fmt.Sprintf("image LIKE '%%\\%s.exe'", exe())
		case u < 60:
			cond = fmt.Sprintf("parent_image LIKE '%%\\%s.exe' AND image LIKE '%%\\%s.exe'", exe(), exe())
		case u < 75:
			cond = fmt.Sprintf("REGEXP(command_line, '%s')", quote(regex()))
		case u < 85:
			cond = fmt.Sprintf("user_name IN (%s, %s, %s)", user(), user(), user())
		case u < 92:
			cond = fmt.Sprintf("host = 'WS-%05d' AND command_line LIKE '%%%s%%'", rng.IntN(500), quote(indicator()))
		case u < 96:
			cond = fmt.Sprintf("integrity_level = 'System' AND image LIKE '%%\\%s.exe'", exe())
		default:
			cond = fmt.Sprintf("integrity_level = 'High' AND user_name = %s AND pid < %d", user(), 4+rng.IntN(65532))
		}
		conds[i] = cond
	}
	return conds
}

// BenchmarkRules runs rule sets of 10, 100 and 1,000 rules (and
// 10,000 with SLUICE_RULES_MAX=10000) over SLUICE_RULES_EVENTS procgen
// events (default 100,000; 80% of command lines repeat), as one statement
// set, and reports events per CPU second and the heap in use at the end
// of the run per rule. The baseline of the many-rules work (issue 13):
//
//	GOMAXPROCS=1 go test . -run '^$' -bench Rules -benchtime 1x
func BenchmarkRules(b *testing.B) {
	events := 100_000
	if s := os.Getenv("SLUICE_RULES_EVENTS"); s != "" {
		var err error
		if events, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	maxRules := 1000
	if s := os.Getenv("SLUICE_RULES_MAX"); s != "" {
		var err error
		if maxRules, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{10, 100, 1000, 10000} {
		if n > maxRules {
			break
		}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			src := strings.ReplaceAll(ruleSet(n, 42), "$EVENTS", strconv.Itoa(events))
			// SLUICE_RULES_SET holds options to set first, "key=value;...":
			// table.optimizer.reuse-source-enabled=false reads the events
			// once per rule.
			if set := os.Getenv("SLUICE_RULES_SET"); set != "" {
				for _, kv := range strings.Split(set, ";") {
					k, v, _ := strings.Cut(kv, "=")
					src = fmt.Sprintf("SET '%s' = '%s';\n", strings.TrimSpace(k), strings.TrimSpace(v)) + src
				}
			}
			var heap uint64
			run := func(src string) {
				e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Run(context.Background(), "rules.sql", []byte(src)); err != nil {
					b.Fatal(err)
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = ms.HeapInuse
				e.Close()
			}
			// The setup (parsing, planning and compiling the rules) is
			// measured apart, by a run over one event.
			setup := cputime.Seconds()
			run(strings.Replace(src, fmt.Sprintf("'events.num' = '%d'", events), "'events.num' = '1'", 1))
			setup = cputime.Seconds() - setup
			b.ResetTimer()
			cpu := cputime.Seconds()
			for range b.N {
				run(src)
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if c := cputime.Seconds() - cpu; c > 0 {
				b.ReportMetric(float64(events)*float64(b.N)/c, "events/cpu-s")
				if c > setup*float64(b.N) {
					b.ReportMetric(float64(events)*float64(b.N)/(c-setup*float64(b.N)), "run-events/cpu-s")
				}
			}
			b.ReportMetric(setup, "setup-cpu-s")
			b.ReportMetric(float64(heap)/float64(n), "heap-B/rule")
		})
	}
}

// The benchmark's rule set plans and runs (its SQL is generated: a rule
// that would not parse or plan must fail here, not only in the
// benchmark).
func TestRuleSetRuns(t *testing.T) {
	src := strings.ReplaceAll(ruleSet(20, 42), "$EVENTS", "2000")
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Run(context.Background(), "rules.sql", []byte(src)); err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
}

// BenchmarkRulesMemory measures the memory a rule costs while its job
// runs: rule sets of 1, 1,000 and 10,000 rules (SLUICE_RULES_MAX bounds
// it) over an unbounded procgen table read at 20,000 events a second;
// after two seconds, the Go heap and stacks in use (after a collection)
// and the process's resident memory are taken, and the figures of one
// rule subtracted:
//
//	GOMAXPROCS=1 go test . -run '^$' -bench RulesMemory -benchtime 1x
func BenchmarkRulesMemory(b *testing.B) {
	maxRules := 10000
	if s := os.Getenv("SLUICE_RULES_MAX"); s != "" {
		var err error
		if maxRules, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	measure := func(b *testing.B, n int) (heap, rss int64) {
		src := strings.ReplaceAll(ruleSet(n, 42), "'events.num' = '$EVENTS'", "'rows-per-second' = '20000'")
		e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		res, err := e.Exec(context.Background(), "rules.sql", []byte(src))
		if err != nil {
			b.Fatal(sluice.FormatError(err, []byte(src)))
		}
		job := res[len(res)-1].Job
		time.Sleep(2 * time.Second)
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap, rss = int64(ms.HeapInuse+ms.StackInuse), bench.ResidentBytes()
		job.Cancel()
		if err := job.Wait(); err != nil {
			b.Fatal(err)
		}
		return heap, rss
	}
	var heap1, rss1 int64
	for _, n := range []int{1, 1000, 10000} {
		if n > maxRules {
			break
		}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			for range b.N {
				heap, rss := measure(b, n)
				if n == 1 {
					heap1, rss1 = heap, rss
					b.ReportMetric(float64(heap), "heap-B")
					b.ReportMetric(float64(rss), "rss-B")
					continue
				}
				b.ReportMetric(float64(heap-heap1)/float64(n-1), "heap-B/rule")
				b.ReportMetric(float64(rss-rss1)/float64(n-1), "rss-B/rule")
			}
		})
	}
}

// BenchmarkRegexRules runs 100 REGEXP rules (bench.URLRegexes) over the
// URLs of SLUICE_RULES_EVENTS Nexmark bids (default 200,000) read from a
// JSON file, as one statement set writing the matching bids' auction and
// URL into JSON files, and reports events per CPU second of the run (the
// input file is written before, not measured). SLUICE_RULES_SET as in
// BenchmarkRules ('pipeline.shared-filters=false' evaluates the rules one
// by one; 'pipeline.filter-cache.size=0' without the cache):
//
//	GOMAXPROCS=1 SLUICE_RULES_EVENTS=1000000 go test . -run '^$' -bench RegexRules -benchtime 1x
func BenchmarkRegexRules(b *testing.B) {
	events := 200_000
	if s := os.Getenv("SLUICE_RULES_EVENTS"); s != "" {
		var err error
		if events, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "bids.json")
	ddl, err := os.ReadFile("testdata/nexmark/ddl.sql")
	if err != nil {
		b.Fatal(err)
	}
	write := strings.NewReplacer("$EVENTS", strconv.Itoa(events*50/46), "$RATE", "10000000").Replace(string(ddl)) + fmt.Sprintf(`
CREATE TABLE bids_file (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO bids_file SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, bid.dateTime, bid.extra FROM datagen WHERE event_type = 2;
`, in)
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Run(context.Background(), "write.sql", []byte(write)); err != nil {
		b.Fatal(sluice.FormatError(err, []byte(write)))
	}
	e.Close()
	var src strings.Builder
	if set := os.Getenv("SLUICE_RULES_SET"); set != "" {
		for _, kv := range strings.Split(set, ";") {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&src, "SET '%s' = '%s';\n", strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	fmt.Fprintf(&src, "CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", in)
	regexes := bench.URLRegexes(100, 42)
	for i := range regexes {
		fmt.Fprintf(&src, "CREATE TABLE alert%d (auction BIGINT, url STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n",
			i, filepath.Join(dir, "out", fmt.Sprintf("r%d", i)))
	}
	src.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for i, re := range regexes {
		fmt.Fprintf(&src, "INSERT INTO alert%d SELECT auction, url FROM bids WHERE REGEXP(url, '%s');\n", i, strings.ReplaceAll(re, "'", "''"))
	}
	src.WriteString("END;\n")
	b.ResetTimer()
	cpu := cputime.Seconds()
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "out"))
		if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
			b.Fatal(err)
		}
		e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Run(context.Background(), "regex.sql", []byte(src.String())); err != nil {
			b.Fatal(sluice.FormatError(err, []byte(src.String())))
		}
		e.Close()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(float64(events)*float64(b.N)/c, "events/cpu-s")
	}
}

// BenchmarkRuleset runs ruleSet's conditions as one ruleset (CREATE
// RULESET ... MATCH ANY, SLUICE_RULESET_RULES rules, default 1,000) over
// SLUICE_RULES_EVENTS procgen events (default 100,000), its alerts into a
// blackhole, and reports events per CPU second (the setup included) and
// alerts per event:
//
//	GOMAXPROCS=1 SLUICE_RULES_EVENTS=1000000 go test . -run '^$' -bench '^BenchmarkRuleset$' -benchtime 1x
func BenchmarkRuleset(b *testing.B) {
	events, n := 100_000, 1000
	for env, p := range map[string]*int{"SLUICE_RULES_EVENTS": &events, "SLUICE_RULESET_RULES": &n} {
		if s := os.Getenv(env); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil {
				b.Fatal(err)
			}
			*p = v
		}
	}
	var src strings.Builder
	src.WriteString(strings.ReplaceAll(ruleEventsTable, "$EVENTS", strconv.Itoa(events)))
	src.WriteString(`CREATE TABLE alerts (host STRING, user_name STRING, command_line STRING, rules ARRAY<STRING>, severity STRING)
WITH ('connector' = 'blackhole');
`)
	// SLUICE_RULESET_SUPPRESS, a SUPPRESS BY clause, suppresses the
	// alerts; SLUICE_RULESET_SHADOW=1 runs the same rules as a shadow
	// into a blackhole of their own.
	fmt.Fprintf(&src, "CREATE RULESET rs ON events %s (\n", os.Getenv("SLUICE_RULESET_SUPPRESS"))
	var rules strings.Builder
	for i, c := range ruleConditions(n, 42) {
		if i > 0 {
			rules.WriteString(",\n")
		}
		fmt.Fprintf(&rules, "  RULE r%d WHEN %s", i, c)
	}
	src.WriteString(rules.String() + ");\n")
	if os.Getenv("SLUICE_RULESET_SHADOW") == "1" {
		src.WriteString(`CREATE TABLE shadow (event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING,
  image STRING, command_line STRING, pid BIGINT, parent_pid BIGINT, integrity_level STRING, ruleset_name STRING, ruleset_version INT,
  matched_rules ARRAY<STRING>, alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT) WITH ('connector' = 'blackhole');
ALTER RULESET rs SHADOW (
` + rules.String() + ") INTO shadow;\n")
	}
	src.WriteString("INSERT INTO alerts SELECT host, user_name, command_line, matched_rules, alert_severity FROM rs;\n")
	b.ResetTimer()
	cpu := cputime.Seconds()
	for range b.N {
		e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		res, err := e.Exec(context.Background(), "ruleset.sql", []byte(src.String()))
		if err != nil {
			b.Fatal(sluice.FormatError(err, []byte(src.String())))
		}
		job := res[len(res)-1].Job
		if err := job.Wait(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(job.Metrics.RowsOut.Load())/float64(events), "alerts/event")
		e.Close()
	}
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(float64(events)*float64(b.N)/c, "events/cpu-s")
	}
}
