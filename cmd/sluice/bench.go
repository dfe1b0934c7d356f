package main

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice/internal/bench"
)

func newBench(out io.Writer) *cobra.Command {
	var procs int
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure rows/s and allocations per row of the core operators on this machine",
		Long: `Bench runs the engine's headline benchmarks in this process (the same code
as 'go test -bench' in package exec) on one core by default:
filter+project over in-memory rows, a 1-minute TUMBLE aggregation with
COUNT, SUM and MAX over 10,000 keys, and a lookup join of random keys
against a dimension table of a million rows.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			fmt.Fprintf(out, "GOMAXPROCS=%d %s/%s %s\n", procs, runtime.GOOS, runtime.GOARCH, runtime.Version())
			for _, bm := range []struct {
				name string
				fn   func(*testing.B)
			}{
				{"filter+project", bench.FilterProject},
				{"tumble aggregate, 10k keys", bench.TumbleAggregate},
				{"lookup join, 1M-row table", bench.LookupJoin},
			} {
				r := testing.Benchmark(bm.fn)
				if r.N == 0 {
					return fmt.Errorf("benchmark %s failed", bm.name)
				}
				perRow := float64(r.T.Nanoseconds()) / float64(r.N)
				fmt.Fprintf(out, "%-28s %12.0f rows/s  %6.1f ns/row  %.3f allocs/row  %.1f B/row\n",
					bm.name, 1e9/perRow, perRow, float64(r.MemAllocs)/float64(r.N), float64(r.MemBytes)/float64(r.N))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&procs, "procs", 1, "GOMAXPROCS while measuring")
	cmd.AddCommand(newBenchNexmark(out))
	return cmd
}
