package expr_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/bench"
	"github.com/sluicesql/sluice/types"
)

// Benchmarks of matching one string against many patterns: PatternSet
// ("set") against the patterns' predicates compiled one by one and run in
// a loop, as a rule set evaluates them today ("loop"). Each op is one
// string. GOMAXPROCS=1 go test ./expr -run '^$' -bench PatternSet

var (
	urlsOnce, cmdsOnce sync.Once
	urls, cmds         []string
)

func bidURLs(b *testing.B) []string {
	urlsOnce.Do(func() {
		var err error
		if urls, err = bench.BidURLs(20000); err != nil {
			b.Fatal(err)
		}
	})
	return urls
}

func commandLines(b *testing.B) []string {
	cmdsOnce.Do(func() {
		var err error
		if cmds, err = bench.CommandLines(20000, 1); err != nil {
			b.Fatal(err)
		}
	})
	return cmds
}

func BenchmarkPatternSetURLRegexes(b *testing.B) {
	strs := bidURLs(b)
	for _, n := range []int{10, 100, 1000} {
		var ps []expr.Pattern
		for _, re := range bench.URLRegexes(n, 1) {
			ps = append(ps, expr.Pattern{Kind: expr.Regexp, Text: re})
		}
		b.Run(fmt.Sprintf("patterns=%d", n), func(b *testing.B) { benchPatterns(b, ps, strs) })
	}
}

func BenchmarkPatternSetCommands(b *testing.B) {
	strs := commandLines(b)
	for _, n := range []int{100, 1000, 10000} {
		var ps []expr.Pattern
		for _, p := range bench.CommandPatterns(n, 1) {
			ps = append(ps, p.Pattern())
		}
		b.Run(fmt.Sprintf("patterns=%d", n), func(b *testing.B) { benchPatterns(b, ps, strs) })
	}
}

func benchPatterns(b *testing.B, ps []expr.Pattern, strs []string) {
	b.Run("set", func(b *testing.B) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		set, err := expr.NewPatternSet(ps)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		dst := make([]uint64, (len(ps)+63)/64)
		matches := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			set.Match(strs[i%len(strs)], dst)
			for _, w := range dst {
				if w != 0 {
					matches++
				}
			}
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "set-MiB")
		runtime.KeepAlive(set)
	})
	b.Run("loop", func(b *testing.B) {
		k := expr.NewBuilder(expr.NewRegistry())
		col := &expr.Column{Index: 0, Name: "s", T: types.String}
		preds := make([]func([]types.Value) (bool, error), len(ps))
		for i, p := range ps {
			args := []expr.Node{col, lit(p.Text)}
			name := p.Kind.String()
			switch p.Kind {
			case expr.Regexp:
				args = []expr.Node{col, lit(p.Text)}
			case expr.Like, expr.SimilarTo:
				if p.Escape != 0 {
					args = append(args, lit(string(p.Escape)))
				}
			default:
				b.Fatalf("kind %s", p.Kind)
			}
			n, err := k.Call(name, args...)
			if err != nil {
				b.Fatal(err)
			}
			if preds[i], err = expr.CompilePredicate(n, nil); err != nil {
				b.Fatal(err)
			}
		}
		row := make([]types.Value, 1)
		matches := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			row[0] = types.StringValue(strs[i%len(strs)])
			for _, p := range preds {
				if ok, _ := p(row); ok {
					matches++
				}
			}
		}
	})
}

func lit(s string) expr.Node {
	return &expr.Literal{V: types.StringValue(s), T: types.String.WithNullable(false)}
}
