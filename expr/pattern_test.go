package expr

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	for src, want := range map[string]string{
		"(&|^)channel_id=([^&]*)": "channel_id=",
		"abc":                     "abc",
		"a(bcd)+e":                "bcd",
		"x(yz){2,3}":              "yz",
		"(ab)*cd":                 "cd",
		"ab|cd":                   "",
		"(?i)hello":               "",
		"^foo.*bar$":              "foo",
		"a?b?":                    "",
		"[0-9]+":                  "",
		"\\.com":                  ".com",
	} {
		p, err := compilePattern(src)
		if err != nil {
			t.Fatal(err)
		}
		if p.must != want {
			t.Errorf("%q: required literal %q, want %q", src, p.must, want)
		}
	}
}

// TestPatternAgainstRegexp: the literal check never changes a result,
// over random patterns and strings (with invalid UTF-8 too).
func TestPatternAgainstRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", "ab", "bc", "\ufffd", "é", "(a|b)", "[ab]", "x+", "(bc)+", "c*", "a?", "^", "$", ".", "\\b", "(?i)a", "(ca){2}", "(?:ab|c)", "z"}
	alphabet := []string{"a", "b", "c", "x", "z", "é", "\xff", " ", "ab", "ca"}
	checked := 0
	for range 3000 {
		var src strings.Builder
		for range 1 + rng.IntN(4) {
			src.WriteString(pieces[rng.IntN(len(pieces))])
		}
		re, err := regexp.Compile(src.String())
		if err != nil {
			continue
		}
		p, err := compilePattern(src.String())
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			var s strings.Builder
			for range rng.IntN(8) {
				s.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			in := s.String()
			if p.MatchString(in) != re.MatchString(in) ||
				!slices.Equal(p.FindStringSubmatchIndex(in), re.FindStringSubmatchIndex(in)) ||
				p.ReplaceAllLiteralString(in, "#") != re.ReplaceAllLiteralString(in, "#") {
				t.Fatalf("pattern %q (literal %q) and regexp differ on %q", src.String(), p.must, in)
			}
			checked++
		}
	}
	if checked < 10000 {
		t.Fatalf("only %d comparisons", checked)
	}
}

func BenchmarkRegexpExtractMiss(b *testing.B) {
	p, _ := compilePattern("(&|^)channel_id=([^&]*)")
	s := "https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1"
	for range b.N {
		p.FindStringSubmatchIndex(s)
	}
}
