package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestDevKafka(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runDevKafka(ctx, pw, 0, []string{"bids:4", "totals"}, "")
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no output: %v", <-done)
	}
	addr, ok := strings.CutPrefix(sc.Text(), "Kafka-protocol cluster listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("first line: %q", sc.Text())
	}
	go io.Copy(io.Discard, pr)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lctx, lcancel := context.WithTimeout(ctx, 30*time.Second)
	defer lcancel()
	tds, err := kadm.NewClient(cl).ListTopics(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tds["bids"].Partitions) != 4 || len(tds["totals"].Partitions) != 1 {
		t.Fatalf("topics: %v", tds.Names())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDevKafkaErrors(t *testing.T) {
	for _, tc := range []struct {
		topics []string
		want   string
	}{
		{[]string{"bids:0"}, `--topic "bids:0": expected name:partitions`},
		{[]string{":3"}, "the topic has no name"},
		// A count beyond int32 was said as given and created wrapped.
		{[]string{"t:2147483648"}, `--topic "t:2147483648": at most 10000 partitions`},
		{[]string{"t:10001"}, `--topic "t:10001": at most 10000 partitions`},
		{[]string{"bids:2", "totals", "bids:4"}, `--topic "bids:4": topic 'bids' is already given (--topic "bids:2"); name each topic once`},
		{[]string{"bids", "bids"}, `--topic "bids": topic 'bids' is already given`},
	} {
		// Cancelled: a run that accepted the topics would end at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := runDevKafka(ctx, io.Discard, 0, tc.topics, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v", tc.topics, err)
		}
	}
	var out bytes.Buffer
	root := newRoot(strings.NewReader(""), &out, &out)
	root.SetArgs([]string{"dev", "kafka", "--help"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "--topic") || !strings.Contains(out.String(), "127.0.0.1:PORT") {
		t.Fatalf("help: %v\n%s", err, out.String())
	}
}
