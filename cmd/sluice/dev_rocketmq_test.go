//go:build !norocketmq

package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/sluicesql/sluice/internal/rmqwire"
)

// TestDevRocketMQ starts the stand-in with a topic and asks it for the
// topic's route over gRPC (TLS), as a client would.
func TestDevRocketMQ(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runDevRocketMQ(ctx, pw, io.Discard, devRocketMQ{listen: "127.0.0.1:0", topics: []string{"bids:3"}, queues: 4,
			noAuto: true, checkAfter: time.Second, checkEvery: time.Second, checkMax: 1, maxAttempts: 1})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no output: %v", <-done)
	}
	addr, ok := strings.CutPrefix(sc.Text(), "RocketMQ 5 proxy stand-in (gRPC over TLS) listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("first line: %q", sc.Text())
	}
	go io.Copy(io.Discard, pr)
	cc, err := rmqwire.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	cl := v2.NewMessagingServiceClient(cc)
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	for topic, want := range map[string]v2.Code{"bids": v2.Code_OK, "other": v2.Code_TOPIC_NOT_FOUND} {
		resp, err := cl.QueryRoute(rctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topic}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus().GetCode() != want || want == v2.Code_OK && len(resp.GetMessageQueues()) != 3 {
			t.Errorf("route of %s: %v, %d queues", topic, resp.GetStatus(), len(resp.GetMessageQueues()))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDevRocketMQErrors(t *testing.T) {
	ok := devRocketMQ{listen: "127.0.0.1:0", queues: 4, checkAfter: time.Second, checkEvery: time.Second, checkMax: 1, maxAttempts: 1}
	for _, tc := range []struct {
		change func(*devRocketMQ)
		want   string
	}{
		{func(f *devRocketMQ) { f.topics = []string{"bids:0"} }, `--topic "bids:0": expected name:queues with 1 to 1024 queues`},
		{func(f *devRocketMQ) { f.topics = []string{":3"} }, "the topic has no name"},
		{func(f *devRocketMQ) { f.topics = []string{"a", "a:2"} }, "topic 'a' is already given"},
		{func(f *devRocketMQ) { f.accessKey = "ak" }, "--access-key and --secret-key go together"},
		{func(f *devRocketMQ) { f.queues = 0 }, "--queues 0: between 1 and 1024"},
		{func(f *devRocketMQ) { f.listen = "256.0.0.1:1" }, "cannot start the rocketmq stand-in"},
	} {
		f := ok
		tc.change(&f)
		err := runDevRocketMQ(context.Background(), io.Discard, io.Discard, f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", f, err, tc.want)
		}
	}
}
