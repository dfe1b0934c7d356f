package exec_test

import (
	"testing"

	"github.com/sluicesql/sluice/internal/bench"
)

// Run with GOMAXPROCS=1 for per-core figures:
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench . -benchmem
func BenchmarkFilterProject(b *testing.B)   { bench.FilterProject(b) }
func BenchmarkTumbleAggregate(b *testing.B) { bench.TumbleAggregate(b) }
func BenchmarkLookupJoin(b *testing.B)      { bench.LookupJoin(b) }
