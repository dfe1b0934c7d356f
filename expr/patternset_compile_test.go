package expr

import (
	"fmt"
	"testing"
)

// checkSetPattern fails exactly where compileSetPattern does, with its
// error: AsPattern takes a pattern on its word.
func TestCheckSetPatternAgrees(t *testing.T) {
	var pats []Pattern
	for _, text := range []string{"", "abc", "a(b", "a)b", "[a-", "(?i)x.*y", `\`, `a\`, "a{2,1}", "x{1001}", `\pZ`, `\p{Nope}`,
		"(?P<n>a)", "a**", "%a_b%", "a%b", `a!%b`, "(a|b)*c", "[[:alpha:]]", "[[:nope:]]", "_", "%"} {
		for _, k := range []PatternKind{Like, SimilarTo, Regexp, Contains} {
			pats = append(pats, Pattern{Kind: k, Text: text})
			if k == Like || k == SimilarTo {
				pats = append(pats, Pattern{Kind: k, Text: text, Escape: '!'}, Pattern{Kind: k, Text: text, Escape: 'b'})
			}
		}
	}
	pats = append(pats, Pattern{Kind: PatternKind(9), Text: "x"})
	invalid := 0
	for _, p := range pats {
		_, want := compileSetPattern(p, nil)
		got := checkSetPattern(p)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: checkSetPattern gives %v, compileSetPattern %v", p, got, want)
		}
		if want != nil {
			invalid++
		}
	}
	if invalid < 20 {
		t.Errorf("only %d of %d patterns are invalid: the test checks too little", invalid, len(pats))
	}
}

// A regular expression prepared for a set matches as Go's regexp does,
// whether an automaton decides it or the budget leaves it to the regexp
// (which is then compiled).
func TestRegexSetPatternMatchers(t *testing.T) {
	subjects := []string{"", "abc", "xabcx", "ABC", "a\nb", "héllo wörld", "mimikatz.exe -enc AAAA", "\xff", "aaaaaaaaaaaab"}
	for _, text := range []string{"a.c", "(?i)abc", "^a\\w+$", "(?s)a.b", "[éa]x", "a{3,}b", "mimikatz.*-enc", "[\\xff]+y", "(?m)^b$"} {
		for _, budget := range []int{0, setDFABudget} {
			b := &dfaBudget{left: budget}
			sp, err := compileSetPattern(Pattern{Kind: Regexp, Text: text}, b)
			if err != nil {
				t.Fatal(err)
			}
			if automaton := b.left < budget; automaton != (budget > 0 && text != "(?m)^b$") {
				t.Errorf("%s (budget %d): automaton built: %v", text, budget, automaton)
			}
			re := mustRegexp(t, text)
			for _, s := range subjects {
				var got bool
				switch sp.op {
				case opVerify:
					got = sp.m(s)
				default:
					t.Fatalf("%s: prepared as op %d, not verified", text, sp.op)
				}
				if got != re.MatchString(s) {
					t.Errorf("%s (budget %d) on %q: %v, regexp says %v", text, budget, s, got, !got)
				}
			}
		}
	}
}

func mustRegexp(t *testing.T, src string) interface{ MatchString(string) bool } {
	t.Helper()
	re, err := compilePattern(src)
	if err != nil {
		t.Fatal(err)
	}
	return re.Regexp
}
