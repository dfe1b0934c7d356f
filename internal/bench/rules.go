package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/nexmark"
	"github.com/sluicesql/sluice/connector/procgen"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

// Pattern lists of the many-rules benchmarks (issue 13): detection rules
// as real rule sets have them, mostly distinct, mostly rare matches, with
// the literal fragments real rules have and some that have none worth
// the name. The same seed gives the same list.

// URLRegexes returns n regular expressions (REGEXP syntax) over Nexmark
// bid URLs (https://www.nexmark.com/<dir>/<dir>/<dir>/item.htm?query=1,
// sometimes with &channel_id=<n>; each dir three or four lower-case
// letters or '_'), as detection rules over web logs write them. About
// 8 in 10 hold a literal that bid URLs never contain (admin paths, script
// extensions, injection fragments, other hosts) and so never match; 1 in
// 10 match now and then (a given directory, a channel id prefix), with a
// literal that occurs in every URL or none at all; 1 in 10 match often.
func URLRegexes(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 0x75726c72))
	letters := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	word := func() string {
		return pickOf(r, []string{"admin", "login", "upload", "backup", "config", "debug", "shell", "cgi-bin", "phpmyadmin",
			"wp-admin", "console", "manager", "actuator", "server-status", "setup", "install", "api", "internal", "private"})
	}
	rare := []func() string{
		func() string { return `/` + word() + `[0-9]{0,2}/` + letters(2) },
		func() string { return `\.(php|asp|aspx|jsp|cgi)\?` + letters(3) + `=` },
		func() string {
			return `[?&]` + pickOf(r, []string{"cmd", "exec", "redirect", "file", "path", "url", "token"}) + `_` + letters(2) + `=[^&]+`
		},
		func() string {
			return `(?i)(union|select|insert|drop)(\s|%20|\+)+` + pickOf(r, []string{"all", "from", "into", "table"}) + letters(2)
		},
		func() string { return `(\.\./|%2e%2e%2f){2,}` + letters(3) },
		func() string { return `(?i)<script[^>]*>` + letters(3) },
		func() string { return `^https?://` + letters(5) + `\.(com|net|org)/` },
		func() string { return `/` + word() + `/[a-z_]{3,4}/item\.htm` },
		func() string { return `(?i)/` + word() + `\.(bak|old|orig|swp)$` },
		func() string { return `channel_id=-?[0-9]+&` + letters(4) },
		func() string { return `(?i)(passwd|shadow|win\.ini)` + letters(2) },
		func() string { return `item\.htm\?query=[2-9][0-9]*` + letters(2) },
	}
	// Rare with a weak literal: one that every URL holds, or none.
	weak := []func() string{
		func() string { return `^https://www\.nexmark\.com/` + letters(3) + `_/` },
		func() string { return `/[a-z_]{3,4}/` + letters(2) + `[a-z_]{1,2}/[a-z_]{3,4}/item` },
		func() string { return `[a-z]/` + letters(2) + `_[a-z]?/` },
		func() string { return `(?i)QUERY=1&CHANNEL_ID=` + strconv.Itoa(100+r.IntN(900)) + `[0-9]*$` },
		func() string { return `/` + letters(3) + `[a-z_]?/` },
	}
	// Often: a directory shape, a channel id, the query.
	often := []func() string{
		func() string { return `/[a-z]{3}/[a-z_]+/` },
		func() string { return `channel_id=[0-9]{` + strconv.Itoa(4+r.IntN(5)) + `,}$` },
		func() string { return `/[a-z]*_[a-z_]*/` },
		func() string { return `nexmark\.com/[a-z_]{4}/` },
		func() string { return `\?query=1$` },
	}
	out := make([]string, 0, n)
	seen := map[string]bool{}
	for len(out) < n {
		var re string
		switch u := r.IntN(10); {
		case u < 8:
			re = rare[r.IntN(len(rare))]()
		case u < 9:
			re = weak[r.IntN(len(weak))]()
		default:
			re = often[r.IntN(len(often))]()
		}
		if !seen[re] || len(seen) > n*4 {
			seen[re] = true
			out = append(out, re)
		}
	}
	return out
}

// RuleOp is the test a RulePattern makes.
type RuleOp uint8

// The tests of a RulePattern.
const (
	Contains   RuleOp = iota // the column contains Text
	StartsWith               // the column starts with Text
	EndsWith                 // the column ends with Text
	Equals                   // the column is Text
	Regex                    // Text, a regular expression, matches somewhere in the column
)

// RulePattern is one condition of a rule on one string column.
type RulePattern struct {
	Op   RuleOp
	Text string // the literal, or the regular expression of Regex
}

// SQL prints the condition on column col: col LIKE '%text%' (escaping %
// and _ with '!'), col LIKE 'text%', col LIKE '%text', col LIKE 'text'
// for Equals (a comparison with = is not a pattern), REGEXP(col, 'text').
func (p RulePattern) SQL(col string) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	if p.Op == Regex {
		return "REGEXP(" + col + ", " + q(p.Text) + ")"
	}
	pt := p.Pattern()
	s := col + " LIKE " + q(pt.Text)
	if pt.Escape != 0 {
		s += " ESCAPE '!'"
	}
	return s
}

// Pattern is the condition as an expr.Pattern.
func (p RulePattern) Pattern() expr.Pattern {
	if p.Op == Regex {
		return expr.Pattern{Kind: expr.Regexp, Text: p.Text}
	}
	lit, esc := p.Text, rune(0)
	if strings.ContainsAny(lit, "%_!") {
		lit = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(lit)
		esc = '!'
	}
	switch p.Op {
	case Contains:
		lit = "%" + lit + "%"
	case StartsWith:
		lit += "%"
	case EndsWith:
		lit = "%" + lit
	}
	return expr.Pattern{Kind: expr.Like, Text: lit, Escape: esc}
}

// CommandPatterns returns n conditions on process command lines (as the
// procgen connector makes them), as Sigma-style rule sets have them: 60%
// substring tests (contains, starts with, ends with), 15% regular
// expressions, 25% whole command lines. Most are distinct and rare: they
// name a tool, a flag or a path with a part (a number, a name) that real
// events seldom repeat; about one in ten is a bare common fragment that
// many events hold.
func CommandPatterns(n int, seed uint64) []RulePattern {
	r := rand.New(rand.NewPCG(seed, 0x636d64))
	num := func() string { return strconv.Itoa(r.IntN(100000)) }
	hex := func(k int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, k)
		for i := range b {
			b[i] = digits[r.IntN(16)]
		}
		return string(b)
	}
	word := func() string {
		return pickOf(r, []string{"report", "backup", "sync", "deploy", "update", "cleanup", "export", "import", "monitor",
			"build", "test", "invoice", "payroll", "metrics", "agent", "cache", "index", "archive", "rotate", "notify",
			"mimikatz", "procdump", "psexec", "bloodhound", "rubeus", "nc64", "plink", "adfind", "lazagne", "ngrok"})
	}
	common := []string{"powershell", "-EncodedCommand", "certutil", "-urlcache", "rundll32", "schtasks", "/create", "net user",
		"/add", "wmic", "curl -fsSL", "tar czf", "-nop", "hidden", "Bypass", "svchost", "UnistackSvcGroup", "apt-get install",
		"python3", "--type=renderer", "msiexec", `C:\Users\Public`, "whoami", "ipconfig", "systeminfo", ".ps1", "/tmp/"}
	contains := []func() string{
		func() string { return word() + "_" + num() },
		func() string { return `\` + word() + `.exe` },
		func() string { return "-" + pickOf(r, []string{"enc", "e", "ec", "EncodedCommand"}) + " " + hex(6) },
		func() string { return "/tn " + word() + num() },
		func() string { return "P@ss" + num() },
		func() string { return "--run-id " + num() },
		func() string { return "CDPUserSvc_" + hex(6) },
		func() string { return `C:\ProgramData\` + word() + num() },
		func() string { return "/tmp/" + word() + "-" + num() },
		func() string {
			return pickOf(r, []string{"updates", "cdn", "api", "files", "mirror"}) + ".example." + pickOf(r, []string{"com", "net", "org"}) + "/" + word() + "/" + num()
		},
	}
	prefixes := []func() string{
		func() string { return "net user u" + num() },
		func() string { return "/bin/bash -c tar czf /tmp/" + word() + "-" + num() },
		func() string { return "powershell.exe -nop -w hidden -EncodedCommand " + hex(4) },
		func() string { return "schtasks /create /tn " + word() + num() },
		func() string { return "certutil.exe -urlcache -split -f http://" + word() },
		func() string { return "wmic process call create \"" + word() },
		func() string { return "/usr/bin/python3 /opt/" + word() + "/bin/" },
	}
	suffixes := []func() string{
		func() string { return `\` + word() + num() + `.exe` },
		func() string { return "_" + hex(8) + ".ps1" },
		func() string { return " P@ss" + num() + " /add" },
		func() string { return "/sc daily /st 0" + strconv.Itoa(r.IntN(10)) + ":00" + num() },
		func() string { return "--config /etc/" + word() + "/config.yaml" },
		func() string { return "-o /tmp/" + word() + num() },
	}
	regexes := []func() string{
		func() string { return `-[Ee]nc[a-zA-Z]* [A-Za-z0-9+/]{40,}` + hex(2) },
		func() string { return `https?://[a-z.]+/` + word() + `/[0-9]+\.bin` },
		func() string { return `/tn ` + word() + `[0-9]{3,} ` },
		func() string { return `u[0-9]+ P@ss` + num() + `[0-9]*` },
		func() string { return `CDPUserSvc_` + hex(3) + `[0-9a-f]{3}` },
		func() string { return `\\Public\\` + word() + ` ?[0-9]+\.exe` },
		func() string { return `--run-id [0-9]{6,}` + num() },
		func() string { return `(?i)` + word() + `.*\.(exe|dll|ps1) ` },
		func() string { return `(?i)(invoke-` + word() + `|iex.*` + hex(3) + `)` },
		func() string { return `[A-Za-z0-9+/]{60,}={0,2}` + hex(2) + `$` },
		func() string { return `(?i)(vssadmin|wbadmin).*delete.*` + word() },
		func() string { return `apt-get install -y [a-z0-9.-]+=` + strconv.Itoa(r.IntN(10)) + `\.[0-9]+` },
	}
	equals := []func() string{
		func() string {
			return "apt-get install -y " + word() + "=" + strconv.Itoa(r.IntN(10)) + "." + strconv.Itoa(r.IntN(100))
		},
		func() string { return `"C:\Windows\system32\cmd.exe" /c ` + pickOf(r, common) + " " + num() },
		func() string {
			return "/bin/bash -c " + pickOf(r, []string{"ls -la", "df -h", "ps aux", "uptime", "free -m"}) + " " + num()
		},
		func() string { return "net user " + word() + num() + " /domain" },
		func() string { return `C:\Windows\system32\msiexec.exe /V ` + num() },
	}
	commonEquals := []string{"/bin/bash -c df -h", "/bin/bash -c ps aux", "/bin/bash -c uptime", "apt-get install -y curl",
		`"C:\Windows\system32\cmd.exe" /c whoami /groups`, `C:\Windows\system32\msiexec.exe /V`}
	out := make([]RulePattern, 0, n)
	for range n {
		bare := r.IntN(10) == 0
		var p RulePattern
		switch u := r.IntN(100); {
		case u < 30:
			p = RulePattern{Op: Contains, Text: contains[r.IntN(len(contains))]()}
			if bare {
				p.Text = pickOf(r, common)
			}
		case u < 45:
			p = RulePattern{Op: StartsWith, Text: prefixes[r.IntN(len(prefixes))]()}
			if bare {
				p.Text = pickOf(r, []string{"powershell.exe", "/bin/bash -c", `"C:\Windows\system32\cmd.exe"`, "curl", "apt-get"})
			}
		case u < 60:
			p = RulePattern{Op: EndsWith, Text: suffixes[r.IntN(len(suffixes))]()}
			if bare {
				p.Text = pickOf(r, []string{".ps1", "/add", ".tar.gz", "/domain", ".exe"})
			}
		case u < 75:
			p = RulePattern{Op: Regex, Text: regexes[r.IntN(len(regexes))]()}
		default:
			p = RulePattern{Op: Equals, Text: equals[r.IntN(len(equals))]()}
			if bare {
				p.Text = pickOf(r, commonEquals)
			}
		}
		if p.Op == Regex {
			if _, err := regexp.Compile(p.Text); err != nil {
				panic(fmt.Sprintf("bench: command pattern %q: %v", p.Text, err))
			}
		}
		out = append(out, p)
	}
	return out
}

func pickOf(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

// BidURLs reads the URLs of the bids among the first events of a Nexmark
// source (the connector's default proportions: 46 in 50 events are bids).
func BidURLs(events int) ([]string, error) {
	schema := types.Schema{Columns: []types.Column{
		{Name: "event_type", Type: types.Int},
		{Name: "bid", Type: types.RowOf(types.Field{Name: "url", Type: types.String})},
	}}
	src, err := nexmark.New().CreateSource(connector.Table{Name: "bids", Schema: schema, Options: connector.Options{
		"connector": "nexmark", "events.num": strconv.Itoa(events)}}, connector.Env{})
	if err != nil {
		return nil, fmt.Errorf("cannot create the nexmark source: %w", err)
	}
	return readStrings(src, func(v []types.Value) (string, bool) {
		if v[0].Int() != 2 {
			return "", false
		}
		return v[1].Elems()[0].Str(), true
	})
}

// CommandLines reads the command lines of the first events of a procgen
// source with the given seed (default options otherwise: 80% of events
// repeat a catalog process).
func CommandLines(events int, seed uint64) ([]string, error) {
	schema := types.Schema{Columns: []types.Column{{Name: "command_line", Type: types.String}}}
	src, err := procgen.New().CreateSource(connector.Table{Name: "events", Schema: schema, Options: connector.Options{
		"connector": "procgen", "events.num": strconv.Itoa(events), "seed": strconv.FormatUint(seed, 10)}}, connector.Env{})
	if err != nil {
		return nil, fmt.Errorf("cannot create the procgen source: %w", err)
	}
	return readStrings(src, func(v []types.Value) (string, bool) { return v[0].Str(), true })
}

// readStrings reads a bounded one-partition source to its end, keeping
// what get returns for each row.
func readStrings(src connector.Source, get func(v []types.Value) (string, bool)) ([]string, error) {
	ctx := context.Background()
	rd, err := src.Open(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out []string
	for {
		b := types.NewBatch(BatchSize, 2)
		err := rd.Read(ctx, b, BatchSize)
		for _, row := range b.Rows {
			if s, ok := get(row.Vals); ok {
				out = append(out, s)
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
