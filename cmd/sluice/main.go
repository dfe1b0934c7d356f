// Command sluice runs Flink SQL jobs: `sluice run job.sql` runs the
// statements of a file, `sluice explain` prints their plans, `sluice sql`
// reads statements from the terminal, `sluice serve` runs the server
// (package server), `sluice bench` measures the engine on this machine
// and `sluice sigma` translates Sigma detection rules into SQL.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/sluicesql/sluice/internal/trim"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/sql/parser"
)

func main() {
	trim.Startup()
	if err := newRoot(os.Stdin, os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}

// exitError carries an already printed error out of a command.
type exitError struct{ error }

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var sets []string
	var quiet bool
	var spillDir string
	var stopTimeout time.Duration
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "Sluice runs Flink SQL streaming jobs from one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().BoolVarP(&quiet, "quiet", "q", false, "do not print job summaries on standard error")
	root.PersistentFlags().StringArrayVarP(&sets, "set", "D", nil, "set a configuration option, key=value (like SET 'key' = 'value')")
	root.PersistentFlags().StringVar(&spillDir, "dimension-spill-dir", "", "memory-map dimension tables from files in this directory (for tables larger than memory)")
	root.PersistentFlags().DurationVar(&stopTimeout, "stop-timeout", defaultStopTimeout,
		"after Ctrl-C or SIGTERM, how long the jobs may take to stop gracefully before the process exits at once")

	open := func() (*sluice.Engine, error) {
		cfg := map[string]string{}
		for _, s := range sets {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil, fmt.Errorf("--set %q: expected key=value", s)
			}
			cfg[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if spillDir != "" {
			if err := os.MkdirAll(spillDir, 0o755); err != nil {
				return nil, fmt.Errorf("--dimension-spill-dir: %w", err)
			}
		}
		opts := sluice.Options{Stdout: stdout, Config: cfg, DimensionSpillDir: spillDir}
		if !quiet {
			opts.Log = stderr
		}
		return sluice.Open(opts)
	}
	report := func(err error, src []byte) error {
		if err == nil {
			return nil
		}
		if src != nil {
			fmt.Fprintln(stderr, sluice.FormatError(err, src))
		} else {
			fmt.Fprintln(stderr, "error:", err)
		}
		return exitError{err}
	}

	var cpuProfile string
	run := &cobra.Command{
		Use:   "run FILE.sql",
		Short: "Run every statement of a SQL file until its jobs end",
		Long: `Run executes the statements of FILE in order: DDL and SET take effect,
every INSERT (or statement set) starts a job, and a SELECT prints its rows.
When all inputs are bounded, the jobs end once the inputs are exhausted: the
watermark advances to the end of time, every open window fires and sinks
flush. Jobs over unbounded inputs run until interrupted (Ctrl-C or SIGTERM),
which stops reading, flushes the sinks and exits cleanly. If they have not
stopped --stop-timeout after the signal, or on a second signal, the process
exits at once with status 128 + the signal's number (130 for Ctrl-C, 143 for
SIGTERM); a job run again then resumes from its last checkpoint.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, release := stopOnSignals(context.Background(), stderr, stopTimeout, os.Interrupt, syscall.SIGTERM)
			defer release()
			src, err := os.ReadFile(args[0])
			if err != nil {
				return report(err, nil)
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return report(err, nil)
				}
				defer stop()
			}
			e, err := open()
			if err != nil {
				return report(err, nil)
			}
			defer e.Close()
			// Once the script's jobs have started, what only starting
			// them used can leave the resident set.
			trim.Soon()
			return report(e.Run(ctx, args[0], src), src)
		},
	}

	run.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (read it with go tool pprof)")

	explain := &cobra.Command{
		Use:   "explain FILE.sql",
		Short: "Print the plan of every INSERT and SELECT of a SQL file as a tree",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return report(err, nil)
			}
			e, err := open()
			if err != nil {
				return report(err, nil)
			}
			defer e.Close()
			text, err := e.Explain(args[0], src)
			if err != nil {
				return report(err, src)
			}
			fmt.Fprint(stdout, text)
			return nil
		},
	}

	var execute string
	sqlCmd := &cobra.Command{
		Use:   "sql [FILE.sql]",
		Short: "Run SQL statements from the terminal, a file or -e, printing results",
		Long: `Sql reads statements separated by ';' from standard input (or runs FILE,
or the -e text) and executes each as it is complete. A SELECT prints its rows
as they are produced; Ctrl-C stops the running query (a second Ctrl-C exits),
SIGTERM stops it and exits.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// From the terminal, Ctrl-C is the running query's (see repl).
			sigs := []os.Signal{syscall.SIGTERM}
			if execute != "" || len(args) == 1 {
				sigs = append(sigs, os.Interrupt)
			}
			ctx, release := stopOnSignals(context.Background(), stderr, stopTimeout, sigs...)
			defer release()
			e, err := open()
			if err != nil {
				return report(err, nil)
			}
			defer e.Close()
			if execute != "" {
				return report(e.Run(ctx, "<sql>", []byte(execute)), []byte(execute))
			}
			if len(args) == 1 {
				src, err := os.ReadFile(args[0])
				if err != nil {
					return report(err, nil)
				}
				return report(e.Run(ctx, args[0], src), src)
			}
			return repl(ctx, e, stdin, stdout, stderr, stopTimeout)
		},
	}
	sqlCmd.Flags().StringVarP(&execute, "execute", "e", "", "statements to run")

	version := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(stdout, "sluice", sluice.Version)
		},
	}
	serve, token := newServe(stdout, stderr)
	root.AddCommand(run, explain, sqlCmd, version, newBench(stdout), newDev(stdout, stderr), serve, token, newJob(stdout, stderr), newSigma(stdout, stderr))
	return root
}

// repl reads statements from in and executes each as soon as it is
// complete: a line may end several, and a statement may span lines. The
// scanner finds where a statement ends, so that a ';' inside a string, a
// quoted identifier, a comment or a statement set ends nothing. It prints
// what the statements show and waits for their jobs (Engine.Run).
// Ctrl-C stops the running statement, as SIGTERM does a job (see
// stopOnSignals); at the prompt it exits. A cancelled ctx ends the loop.
func repl(ctx context.Context, e *sluice.Engine, in io.Reader, out, errw io.Writer, stopTimeout time.Duration) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	// Lines are read on a goroutine of their own, so that SIGTERM ends
	// the loop while it waits for one.
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
	}()
	var buf []byte
	prompt := func() {
		if len(bytes.TrimSpace(buf)) == 0 {
			fmt.Fprint(out, "sluice> ")
		} else {
			fmt.Fprint(out, "      > ")
		}
	}
	prompt()
	for {
		var line []byte
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(out)
				if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				return nil
			}
			line = l
		case <-ctx.Done():
			fmt.Fprintln(out)
			return nil
		}
		buf = append(append(buf, line...), '\n')
		if n := parser.CompleteStatements(buf); n > 0 {
			src := append([]byte(nil), bytes.TrimSpace(buf[:n])...)
			buf = append(buf[:0], buf[n:]...)
			if len(bytes.TrimSpace(buf)) == 0 {
				buf = buf[:0]
			}
			qctx, release := stopOnSignals(ctx, errw, stopTimeout, os.Interrupt)
			err := e.Run(qctx, "<stdin>", src)
			release()
			if err != nil {
				fmt.Fprintln(errw, sluice.FormatError(err, src))
			}
		}
		prompt()
	}
}

// startCPUProfile writes a CPU profile of the process to path until the
// returned function is called. A closed standard output or error (the
// run piped into head) then fails the writes instead of killing the
// process before the profile is written.
func startCPUProfile(path string) (func(), error) {
	signal.Ignore(syscall.SIGPIPE)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
