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

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
)

func newDev(stdout, stderr io.Writer) *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Local development helpers",
		Args:  cobra.NoArgs,
	}
	var port int
	var topics []string
	var dataDir string
	kafka := &cobra.Command{
		Use:   "kafka [--port 9092] [--topic name:partitions ...]",
		Short: "Run an in-process Kafka-protocol cluster on a loopback port",
		Long: `Kafka starts a one-broker Kafka-protocol cluster in this process, listening
on 127.0.0.1:PORT, creates the topics given with --topic (name:partitions,
one partition when the count is left out, at most 10000; each topic named
once), prints the bootstrap address and runs until interrupted (Ctrl-C or
SIGTERM).

It is for trying jobs without a broker: point a table at it with
  'properties.bootstrap.servers' = '127.0.0.1:PORT'
Kafka sinks do not create topics, so name every topic a job writes with
--topic. The data lives in memory unless --data-dir is given.`,
		Example: `  sluice dev kafka --topic bids:4 --topic totals:1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := runDevKafka(ctx, stdout, port, topics, dataDir); err != nil {
				fmt.Fprintln(stderr, "error:", err)
				return exitError{err}
			}
			return nil
		},
	}
	kafka.Flags().IntVar(&port, "port", 9092, "port to listen on (0 picks a free one)")
	kafka.Flags().StringArrayVar(&topics, "topic", nil, "topic to create, as name:partitions (repeatable)")
	kafka.Flags().StringVar(&dataDir, "data-dir", "", "directory that keeps the cluster's data across restarts")
	dev.AddCommand(kafka)
	dev.AddCommand(newDevRocketMQ(stdout, stderr))
	return dev
}

// maxDevPartitions bounds the partitions of a topic of the in-process
// cluster, which keeps every partition in memory.
const maxDevPartitions = 10000

// runDevKafka runs a cluster until ctx ends.
func runDevKafka(ctx context.Context, out io.Writer, port int, topics []string, dataDir string) error {
	if port < 0 || port > 65535 {
		return fmt.Errorf("--port %d: not a port number", port)
	}
	opts := []kfake.Opt{kfake.Ports(port)}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	var lines []string
	given := map[string]string{} // topic name -> its --topic
	for _, spec := range topics {
		name, parts, hasParts := strings.Cut(spec, ":")
		n := 1
		if hasParts {
			v, err := strconv.ParseInt(strings.TrimSpace(parts), 10, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) || v < 1 {
				return fmt.Errorf("--topic %q: expected name:partitions with a positive number of partitions", spec)
			}
			if err != nil || v > maxDevPartitions {
				return fmt.Errorf("--topic %q: at most %d partitions", spec, maxDevPartitions)
			}
			n = int(v)
		}
		if name = strings.TrimSpace(name); name == "" {
			return fmt.Errorf("--topic %q: the topic has no name", spec)
		}
		if prev, ok := given[name]; ok {
			return fmt.Errorf("--topic %q: topic '%s' is already given (--topic %q); name each topic once", spec, name, prev)
		}
		given[name] = spec
		opts = append(opts, kfake.SeedTopics(int32(n), name))
		lines = append(lines, fmt.Sprintf("  %s (%d partition%s)", name, n, map[bool]string{true: "s"}[n > 1]))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("cannot start the kafka cluster: %w", err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	fmt.Fprintf(out, "Kafka-protocol cluster listening on %s\n", addr)
	if len(lines) > 0 {
		fmt.Fprintf(out, "topics:\n%s\n", strings.Join(lines, "\n"))
	}
	fmt.Fprintf(out, "use 'properties.bootstrap.servers' = '%s'; Ctrl-C stops it\n", addr)
	<-ctx.Done()
	return nil
}
