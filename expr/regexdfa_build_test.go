package expr

import (
	"fmt"
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
