//go:build !norocketmq

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice/internal/rocketmqfake"
)

// devRocketMQ are the flags of 'sluice dev rocketmq'.
type devRocketMQ struct {
	listen      string
	topics      []string
	queues      int
	noAuto      bool
	accessKey   string
	secretKey   string
	checkAfter  time.Duration
	checkEvery  time.Duration
	checkMax    int
	maxAttempts int
}

func newDevRocketMQ(stdout, stderr io.Writer) *cobra.Command {
	var f devRocketMQ
	cmd := &cobra.Command{
		Use:   "rocketmq [--listen 127.0.0.1:8081] [--topic name:queues ...]",
		Short: "Run an in-process stand-in for a RocketMQ 5 proxy (gRPC)",
		Long: `RocketMQ starts, in this process, a stand-in for a RocketMQ 5 proxy: the
gRPC messaging service the v5 clients speak (over TLS, with a certificate
made at start), with topics in memory. It creates the topics given with
--topic (name:queues, --queues queues when the count is left out); others
are created on first use unless --no-auto-create. It prints the endpoints
and runs until interrupted (Ctrl-C or SIGTERM); the data is lost then.

It is for trying jobs without a RocketMQ cluster: point a table at it with
  'connector' = 'rocketmq', 'endpoints' = '127.0.0.1:8081'
It sends, receives (simple consumers, with invisible durations and
redelivery), pulls by queue offset, and keeps transactional half messages
until they are committed or rolled back, checking unresolved ones with
their producers. What it does not model is listed in the rocketmq
section of docs/connectors.md.`,
		Example: `  sluice dev rocketmq --topic bids:4 --topic alerts:1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := runDevRocketMQ(ctx, stdout, stderr, f); err != nil {
				fmt.Fprintln(stderr, "error:", err)
				return exitError{err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8081", "address to listen on (port 0 picks a free one)")
	fl.StringArrayVar(&f.topics, "topic", nil, "topic to create, as name:queues (repeatable)")
	fl.IntVar(&f.queues, "queues", 4, "message queues of a topic created without a count")
	fl.BoolVar(&f.noAuto, "no-auto-create", false, "answer TOPIC_NOT_FOUND for topics not created with --topic")
	fl.StringVar(&f.accessKey, "access-key", "", "require calls signed with this access key (and --secret-key)")
	fl.StringVar(&f.secretKey, "secret-key", "", "the secret of --access-key")
	fl.DurationVar(&f.checkAfter, "transaction-check-after", 6*time.Second, "how long a half message waits before its producer is asked about it")
	fl.DurationVar(&f.checkEvery, "transaction-check-interval", 6*time.Second, "time between two checks of a half message")
	fl.IntVar(&f.checkMax, "transaction-check-max", 15, "checks of a half message before it is rolled back")
	fl.IntVar(&f.maxAttempts, "max-delivery-attempts", 16, "deliveries of a message to a consumer group before it goes to the group's dead-letter topic")
	return cmd
}

// runDevRocketMQ runs the fake until ctx ends.
func runDevRocketMQ(ctx context.Context, out, errOut io.Writer, f devRocketMQ) error {
	if (f.accessKey == "") != (f.secretKey == "") {
		return errors.New("--access-key and --secret-key go together")
	}
	if f.queues < 1 || f.queues > 1024 {
		return fmt.Errorf("--queues %d: between 1 and 1024", f.queues)
	}
	if f.checkAfter <= 0 || f.checkEvery <= 0 || f.checkMax < 1 || f.maxAttempts < 1 {
		return errors.New("--transaction-check-after, --transaction-check-interval, --transaction-check-max and --max-delivery-attempts must be positive")
	}
	opts := rocketmqfake.Options{Addr: f.listen, Queues: f.queues, NoAutoCreate: f.noAuto,
		TransactionCheckAfter: f.checkAfter, TransactionCheckInterval: f.checkEvery, TransactionCheckMax: f.checkMax,
		MaxDeliveryAttempts: f.maxAttempts,
		Logf:                func(format string, args ...any) { fmt.Fprintf(errOut, format+"\n", args...) }}
	if f.accessKey != "" {
		opts.Credentials = map[string]string{f.accessKey: f.secretKey}
	}
	type topicSpec struct {
		name string
		n    int
	}
	var specs []topicSpec
	given := map[string]string{}
	for _, spec := range f.topics {
		name, count, hasCount := strings.Cut(spec, ":")
		n := f.queues
		if hasCount {
			v, err := strconv.Atoi(strings.TrimSpace(count))
			if err != nil || v < 1 || v > 1024 {
				return fmt.Errorf("--topic %q: expected name:queues with 1 to 1024 queues", spec)
			}
			n = v
		}
		if name = strings.TrimSpace(name); name == "" {
			return fmt.Errorf("--topic %q: the topic has no name", spec)
		}
		if prev, ok := given[name]; ok {
			return fmt.Errorf("--topic %q: topic '%s' is already given (--topic %q); name each topic once", spec, name, prev)
		}
		given[name] = spec
		specs = append(specs, topicSpec{name, n})
	}
	s, err := rocketmqfake.Start(opts)
	if err != nil {
		return fmt.Errorf("cannot start the rocketmq stand-in: %w", err)
	}
	defer s.Close()
	var lines []string
	for _, t := range specs {
		if err := s.CreateTopic("", t.name, t.n); err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("  %s (%d queue%s)", t.name, t.n, map[bool]string{true: "s"}[t.n > 1]))
	}
	fmt.Fprintf(out, "RocketMQ 5 proxy stand-in (gRPC over TLS) listening on %s\n", s.Addr())
	if len(lines) > 0 {
		fmt.Fprintf(out, "topics:\n%s\n", strings.Join(lines, "\n"))
	}
	fmt.Fprintf(out, "use 'endpoints' = '%s'; Ctrl-C stops it\n", s.Addr())
	<-ctx.Done()
	return nil
}
