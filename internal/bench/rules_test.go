package bench

import (
	"regexp"
	"strings"
	"testing"
)

// TestURLRegexes: the URL rules are distinct, compile, and have the
// selectivity they claim over real bid URLs: most never match, a few
// match often.
func TestURLRegexes(t *testing.T) {
	urls, err := BidURLs(5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) < 4000 || !strings.HasPrefix(urls[0], "https://www.nexmark.com/") {
		t.Fatalf("%d bid URLs, the first %q", len(urls), urls[0])
	}
	res := URLRegexes(200, 1)
	if len(res) != 200 {
		t.Fatalf("%d expressions, want 200", len(res))
	}
	seen := map[string]bool{}
	never, often := 0, 0
	for _, src := range res {
		if seen[src] {
			t.Errorf("%q twice", src)
		}
		seen[src] = true
		re, err := regexp.Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, u := range urls {
			if re.MatchString(u) {
				n++
			}
		}
		switch {
		case n == 0:
			never++
		case n > len(urls)/5:
			often++
		}
	}
	t.Logf("never %d often %d", never, often)
	if never < 140 || often < 5 || often > 40 {
		t.Errorf("of 200 expressions %d never match and %d match a fifth of the URLs or more", never, often)
	}
	if strings.Join(URLRegexes(50, 7), "\n") != strings.Join(URLRegexes(50, 7), "\n") {
		t.Error("the same seed gave different lists")
	}
}

// TestCommandPatterns: the command-line rules have the mix they claim
// (60% substring tests, 15% regular expressions, 25% equality), are
// mostly distinct and mostly rare over procgen command lines.
func TestCommandPatterns(t *testing.T) {
	lines, err := CommandLines(5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 5000 {
		t.Fatalf("%d command lines", len(lines))
	}
	ps := CommandPatterns(1000, 1)
	ops := map[RuleOp]int{}
	distinct := map[RulePattern]bool{}
	rare, matchedSome := 0, 0
	for _, p := range ps {
		ops[p.Op]++
		distinct[p] = true
		var match func(string) bool
		switch p.Op {
		case Contains:
			match = func(s string) bool { return strings.Contains(s, p.Text) }
		case StartsWith:
			match = func(s string) bool { return strings.HasPrefix(s, p.Text) }
		case EndsWith:
			match = func(s string) bool { return strings.HasSuffix(s, p.Text) }
		case Equals:
			match = func(s string) bool { return s == p.Text }
		default:
			match = regexp.MustCompile(p.Text).MatchString
		}
		n := 0
		for _, l := range lines {
			if match(l) {
				n++
			}
		}
		if n < len(lines)/100 {
			rare++
		}
		if n > 0 {
			matchedSome++
		}
	}
	t.Logf("ops %v distinct %d rare %d some %d", ops, len(distinct), rare, matchedSome)
	substr := ops[Contains] + ops[StartsWith] + ops[EndsWith]
	if substr < 550 || substr > 650 || ops[Regex] < 120 || ops[Regex] > 180 || ops[Equals] < 200 || ops[Equals] > 300 {
		t.Errorf("mix %v", ops)
	}
	if len(distinct) < 800 || rare < 800 || matchedSome < 50 {
		t.Errorf("%d distinct, %d rare (under 1%% of lines), %d match at least one line", len(distinct), rare, matchedSome)
	}
	// The SQL and the pattern agree on the escapes.
	p := RulePattern{Op: Contains, Text: "svc_backup 100%!"}
	if got, want := p.SQL("c"), `c LIKE '%svc!_backup 100!%!!%' ESCAPE '!'`; got != want {
		t.Errorf("SQL %s, want %s", got, want)
	}
}
