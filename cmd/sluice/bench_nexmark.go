package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice/internal/bench"
)

func newBenchNexmark(out io.Writer) *cobra.Command {
	var (
		procs   int
		events  int64
		dir     string
		only    []string
		profile string
		isolate bool
	)
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Measure events per CPU second of each Nexmark query against its floor",
		Long: `Nexmark runs each query of the Nexmark suite (testdata/nexmark: the
queries as the nexmark project publishes them, with their sinks) over
--events events of the nexmark connector at the published defaults
(10,000 events per second of event time, the reference's event sizes),
each query in a process of its own (a run of this command with
--isolate=false and that --query; --isolate=false runs them all in this
process, where they disturb each other through the heap the query before
grew), and prints events per CPU second of the process beside the floor: five times Flink's published per-core
figure (q10 and q23 have none). A query that cannot run prints its error. Run it from the repository's root, or name the suite with --dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := bench.LoadNexmark(dir)
			if err != nil {
				// The root command prints no errors of its own.
				err = fmt.Errorf("%w (run from the repository's root, or name the suite's directory with --dir)", err)
				fmt.Fprintln(cmd.ErrOrStderr(), "error:", err)
				return err
			}
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			fmt.Fprintf(out, "GOMAXPROCS=%d %s/%s %s, %d events per query\n", procs, runtime.GOOS, runtime.GOARCH, runtime.Version(), events)
			const row = "%-12s %8s %8s %13s %9s %11s  %s\n"
			fmt.Fprintf(out, row, "query", "CPU s", "wall s", "events/CPU-s", "floor", "Flink/core", "")
			for _, q := range s.Queries {
				if len(only) > 0 && !slices.Contains(only, q.Name) {
					continue
				}
				floor, ok := bench.FloorOf(q.Name)
				var prof io.WriteCloser
				if profile != "" {
					if prof, err = os.Create(filepath.Join(profile, q.Name+".pprof")); err != nil {
						return err
					}
				}
				if isolate {
					if prof != nil {
						prof.Close()
					}
					line, err := runIsolated(cmd, q.Name, procs, events, dir, profile)
					if err != nil {
						return err
					}
					fmt.Fprintln(out, line)
					continue
				}
				// What the query before left behind (a large state's
				// freed memory) is collected before this one is
				// measured; still, queries measured in one process
				// disturb each other (see --isolate).
				runtime.GC()
				r, err := s.RunNexmark(cmd.Context(), q.Name, events, prof)
				if prof != nil {
					prof.Close()
				}
				if err != nil {
					msg, _, _ := strings.Cut(err.Error(), "\n")
					fmt.Fprintf(out, "%-12s failed: %s\n", q.Name, msg)
					continue
				}
				verdict := ""
				if ok && r.EventsPerCPUSecond() < floor {
					verdict = "UNDER FLOOR"
				}
				fmt.Fprintf(out, row, q.Name, fmt.Sprintf("%.2f", r.CPU.Seconds()), fmt.Sprintf("%.2f", r.Elapsed.Seconds()),
					kilo(r.EventsPerCPUSecond()), kilo(floor), kilo(floor/bench.FloorFactor), verdict)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&procs, "procs", 1, "GOMAXPROCS while measuring")
	cmd.Flags().Int64Var(&events, "events", 1_000_000, "events per query")
	cmd.Flags().StringVar(&dir, "dir", "testdata/nexmark", "the Nexmark suite: ddl.sql and q*.sql")
	cmd.Flags().StringSliceVar(&only, "query", nil, "measure only these queries (e.g. q0,q5)")
	cmd.Flags().StringVar(&profile, "cpuprofile-dir", "", "write a CPU profile of each query into this directory (QUERY.pprof)")
	cmd.Flags().BoolVar(&isolate, "isolate", true, "measure each query in a process of its own")
	return cmd
}

// kilo prints a rate in thousands.
func kilo(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fK", v/1000)
}

// runIsolated measures query q in a new process of this binary and
// returns its row.
func runIsolated(cmd *cobra.Command, q string, procs int, events int64, dir, profile string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("--isolate: %w", err)
	}
	args := []string{"bench", "nexmark", "--isolate=false", "--query", q, "--procs", strconv.Itoa(procs),
		"--events", strconv.FormatInt(events, 10), "--dir", dir}
	if profile != "" {
		args = append(args, "--cpuprofile-dir", profile)
	}
	c := exec.CommandContext(cmd.Context(), self, args...)
	c.Stderr = cmd.ErrOrStderr()
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("measuring %s in a process of its own: %w", q, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return lines[len(lines)-1], nil
}
