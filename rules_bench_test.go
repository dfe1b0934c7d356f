package sluice_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/cputime"
)

// ruleSet writes n detection rules over the procgen table events, as
// real rule sets mix them: 60% substring matches on the command line or
// the image (contains, starts with, ends with), 15% regular expressions,
// 25% comparisons and IN lists on the user, host, integrity level and
// process ID. Each rule is one INSERT of the matching events into a
// blackhole sink, all in one statement set.
func ruleSet(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"powershell", "EncodedCommand", "certutil", "urlcache", "rundll32", "schtasks", "/create", "net user",
		"/add", "wmic", "curl", "tar czf", "-nop", "hidden", "Bypass", "svchost", "UnistackSvcGroup", "apt-get", "python3",
		"chrome.exe", "--type=renderer", "msiexec", "/tmp/", "C:\\Users\\Public", "whoami", "ipconfig", "systeminfo"}
	images := []string{"powershell.exe", "cmd.exe", "certutil.exe", "rundll32.exe", "WMIC.exe", "net.exe", "schtasks.exe", "curl", "bash"}
	regexes := []string{`-[Ee]nc[a-zA-Z]* [A-Za-z0-9+/]{40,}`, `https?://[a-z.]+/[a-z]+/[0-9]+\.bin`, `/tn [a-z]+[0-9]{3,} `,
		`u[0-9]+ P@ss[0-9]+`, `CDPUserSvc_[0-9a-f]{6}`, `\\Public\\[a-z]+ [0-9]+\.exe`, `--run-id [0-9]{6,}`}
	var b strings.Builder
	b.WriteString(`CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING,
  image STRING, command_line STRING, pid BIGINT, parent_pid BIGINT, integrity_level STRING)
WITH ('connector' = 'procgen', 'events.num' = '$EVENTS');
`)
	for i := range n {
		fmt.Fprintf(&b, "CREATE TABLE alert%d (host STRING, user_name STRING, command_line STRING) WITH ('connector' = 'blackhole');\n", i)
	}
	b.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for i := range n {
		var cond string
		switch u := rng.IntN(100); {
		case u < 30:
			cond = fmt.Sprintf("command_line LIKE '%%%s%%'", words[rng.IntN(len(words))])
		case u < 45:
			cond = fmt.Sprintf("command_line LIKE '%s%%'", words[rng.IntN(len(words))])
		case u < 60:
			cond = fmt.Sprintf("image LIKE '%%%s'", images[rng.IntN(len(images))])
		case u < 75:
			cond = fmt.Sprintf("REGEXP(command_line, '%s')", regexes[rng.IntN(len(regexes))])
		case u < 85:
			cond = fmt.Sprintf("user_name IN ('CORP\\user%05d', 'CORP\\user%05d', 'root')", rng.IntN(2000), rng.IntN(2000))
		case u < 92:
			cond = fmt.Sprintf("integrity_level = 'High' AND pid < %d", 4+rng.IntN(65532))
		default:
			cond = fmt.Sprintf("host = 'WS-%05d'", rng.IntN(500))
		}
		fmt.Fprintf(&b, "INSERT INTO alert%d SELECT host, user_name, command_line FROM events WHERE %s;\n", i, cond)
	}
	b.WriteString("END;\n")
	return b.String()
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
			cpu := cputime.Seconds()
			var heap uint64
			for range b.N {
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
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if c := cputime.Seconds() - cpu; c > 0 {
				b.ReportMetric(float64(events)*float64(b.N)/c, "events/cpu-s")
			}
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
