package expr

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestRegexDFA: the automaton answers as regexp.MatchString over random
// expressions and strings (with non-ASCII, case folding and invalid
// UTF-8), and refuses the assertions it does not support.
func TestRegexDFA(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pieces := []string{"a", "b", "ab", "é", "\ufffd", "(a|b)", "[ab]", "[^a]", "x+", "(bc)+", "c*", "a?", "^", "$", ".", "(?s:.)",
		"(?i)a", "(?i)k", "(?i)s", "(?i)é", "(ca){2}", "(?:ab|c)", "z", "[a-z]{2,3}", "\\d", "\\w+", "\\s", "(a*)*", "(|a)", "\\A", "\\z",
		"[\u0100-\u0200]", "[^\n]", "\\pL", "世", "()"}
	alphabet := []string{"a", "b", "c", "x", "z", "é", "É", "\xff", " ", "ab", "ca", "K", "\u212a", "ſ", "S", "\n", "1", "世", "\u0150", "\ufffd"}
	compiled, checked := 0, 0
	for range 4000 {
		var src strings.Builder
		for range 1 + rng.IntN(5) {
			src.WriteString(pieces[rng.IntN(len(pieces))])
		}
		re, err := regexp.Compile(src.String())
		if err != nil {
			continue
		}
		d := compileRegexDFA(src.String())
		if d == nil {
			continue
		}
		compiled++
		for range 30 {
			var s strings.Builder
			for range rng.IntN(8) {
				s.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			in := s.String()
			if d.MatchString(in) != re.MatchString(in) {
				t.Fatalf("%q on %q: automaton %v, regexp %v", src.String(), in, d.MatchString(in), re.MatchString(in))
			}
			checked++
		}
	}
	if compiled < 3000 {
		t.Fatalf("only %d expressions compiled to automata", compiled)
	}
	for _, src := range []string{`\bab`, `(?m)^a`, `(?m)a$`, `\Bx`} {
		if compileRegexDFA(src) != nil {
			t.Errorf("%q: compiled, but its assertion is not supported", src)
		}
	}
	if compileRegexDFA(`a[ab]{12}`) != nil {
		t.Errorf("an automaton over the size limits was built")
	}
}
