package expr

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	resyntax "regexp/syntax"
	"strings"
	"testing"
)

// BenchmarkRegexDFABuild builds the automata of a rule set's regular
// expressions (the shapes of rules_bench_test.go's): a statement set of
// thousands of rules builds hundreds of them before its first row.
func BenchmarkRegexDFABuild(b *testing.B) {
	var srcs []string
	for i := range 100 {
		tool := fmt.Sprintf("tool%02d", i)
		srcs = append(srcs,
			fmt.Sprintf(`-[Ee]nc[a-zA-Z]* [A-Za-z0-9+/]{%d,}`, 60+4*i),
			fmt.Sprintf(`(?i)%s.*-enc`, tool),
			fmt.Sprintf(`https?://[a-z0-9.-]*%s[a-z0-9.-]*\.(ru|top)/`, tool),
			fmt.Sprintf(`\\Users\\Public\\%s_[0-9]{%d}\.(tmp|exe|dll)`, tool, 1+i%9),
			fmt.Sprintf(`(?i)(invoke|iex)[-(].*%s`, tool),
			fmt.Sprintf(`(?i)%s +/[a-z]+ +[a-z0-9_]{%d,}`, tool, 2+i%10))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, src := range srcs {
			if compileRegexDFA(src) == nil {
				b.Fatalf("%s: no automaton", src)
			}
		}
	}
}

// Automata built one after another in one scratch (as a pattern set
// builds them) are those built each on its own: nothing of one build
// leaks into the next, whatever their sizes.
func TestRegexDFAScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "(?i)b", "[a-f]", "x{3}", "[A-Za-z0-9+/]{40,}", "(cd|ef)+", ".*", "^", "$", "\\d+", "é", "(?i)mimikatz", "[^q]", "z?"}
	var sc dfaScratch
	built := 0
	for range 2000 {
		var src strings.Builder
		for range 1 + rng.IntN(5) {
			src.WriteString(pieces[rng.IntN(len(pieces))])
		}
		re, err := resyntax.Parse(src.String(), resyntax.Perl)
		if err != nil {
			continue
		}
		simple := re.Simplify()
		shared, alone := regexDFAOf(simple, &sc), regexDFAOf(simple, nil)
		if !reflect.DeepEqual(shared, alone) {
			t.Fatalf("%q: the automaton built in a used scratch differs", src.String())
		}
		if alone != nil {
			built++
		}
	}
	if built < 1000 {
		t.Fatalf("only %d automata built", built)
	}
}
