package rocketmqfake_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluicesql/sluice/internal/rmqwire"
	"github.com/sluicesql/sluice/internal/rocketmqfake"
)

func start(t *testing.T, opts rocketmqfake.Options) *rocketmqfake.Server {
	t.Helper()
	rmqwire.QuietClient()
	s, err := rocketmqfake.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func producer(t *testing.T, s *rocketmqfake.Server, topic string, checker *rmq.TransactionChecker) rmq.Producer {
	t.Helper()
	opts := []rmq.ProducerOption{rmq.WithTopics(topic)}
	if checker != nil {
		opts = append(opts, rmq.WithTransactionChecker(checker))
	}
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: s.Addr(), Credentials: &credentials.SessionCredentials{}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if checker == nil {
		t.Cleanup(func() { p.GracefulStop() })
	}
	// A producer that answered checks is not stopped: the client's
	// GracefulStop swaps its meter without the lock that the goroutines
	// answering checks skip (a data race in the client, which the race
	// detector reports however long ago they ended).
	return p
}

// The official client sends, receives, acknowledges and ends
// transactions against the fake; an unacknowledged message comes again
// after its invisible time.
func TestClientRoundTrip(t *testing.T) {
	s := start(t, rocketmqfake.Options{Queues: 2})
	ctx := context.Background()
	p := producer(t, s, "t1", nil)
	for _, body := range []string{"a", "b", "c"} {
		m := &rmq.Message{Topic: "t1", Body: []byte(body)}
		m.SetTag("x")
		m.SetKeys("k-" + body)
		if _, err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(s.Messages("t1")); got != 3 {
		t.Fatalf("stored %d messages, want 3", got)
	}
	c, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: s.Addr(), ConsumerGroup: "g", Credentials: &credentials.SessionCredentials{}},
		rmq.WithAwaitDuration(time.Second), rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{"t1": rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.GracefulStop()
	seen := map[string]int{}
	var views []*rmq.MessageView
	deadline := time.Now().Add(10 * time.Second)
	for len(views) < 3 && time.Now().Before(deadline) {
		ms, err := c.Receive(ctx, 16, 500*time.Millisecond)
		if err != nil {
			var st *rmq.ErrRpcStatus
			if errors.As(err, &st) && st.Code == int32(v2.Code_MESSAGE_NOT_FOUND) {
				continue
			}
			t.Fatal(err)
		}
		views = append(views, ms...)
	}
	if len(views) != 3 {
		t.Fatalf("received %d messages, want 3", len(views))
	}
	// Acknowledge one; the other two come again.
	if err := c.Ack(ctx, views[0]); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		seen[string(v.GetBody())]++
	}
	var again []*rmq.MessageView
	deadline = time.Now().Add(10 * time.Second)
	for len(again) < 2 && time.Now().Before(deadline) {
		ms, _ := c.Receive(ctx, 16, 5*time.Second)
		again = append(again, ms...)
	}
	if len(again) != 2 {
		t.Fatalf("redelivered %d messages, want 2", len(again))
	}
	for _, v := range again {
		if string(v.GetBody()) == string(views[0].GetBody()) {
			t.Errorf("the acknowledged message %q came again", v.GetBody())
		}
		if v.GetDeliveryAttempt() != 2 {
			t.Errorf("delivery attempt %d, want 2", v.GetDeliveryAttempt())
		}
	}
}

// A half message is invisible until committed; one left unresolved is
// checked through the producer's transaction checker.
func TestTransactions(t *testing.T) {
	s := start(t, rocketmqfake.Options{TransactionCheckAfter: 200 * time.Millisecond, TransactionCheckInterval: 100 * time.Millisecond})
	var checks atomic.Int32
	checker := &rmq.TransactionChecker{Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
		checks.Add(1)
		if mv.GetProperties()["keep"] == "yes" {
			return rmq.COMMIT
		}
		return rmq.ROLLBACK
	}}
	p := producer(t, s, "tx", checker)
	ctx := context.Background()
	send := func(body, keep string) rmq.Transaction {
		tx := p.BeginTransaction()
		m := &rmq.Message{Topic: "tx", Body: []byte(body)}
		m.AddProperty("keep", keep)
		if _, err := p.SendWithTransaction(ctx, m, tx); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	committed := send("committed", "no")
	send("checked-in", "yes")
	send("checked-out", "no")
	if n := len(s.Messages("tx")); n != 0 {
		t.Fatalf("%d messages visible before any commit", n)
	}
	if err := committed.Commit(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.HalfMessages("tx") > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var bodies []string
	for _, m := range s.Messages("tx") {
		bodies = append(bodies, string(m.Body))
	}
	if len(bodies) != 2 || checks.Load() < 2 {
		t.Fatalf("visible %q after %d checks, want committed and checked-in after 2", bodies, checks.Load())
	}
}

// PullMessage reads a queue from an offset; QueryOffset finds its ends.
func TestPullAndQueryOffset(t *testing.T) {
	s := start(t, rocketmqfake.Options{Queues: 1})
	for _, b := range []string{"m0", "m1", "m2"} {
		tag := "a"
		if b == "m1" {
			tag = "b"
		}
		if _, _, err := s.Publish("", "p", 0, rocketmqfake.Message{Body: []byte(b), Tag: tag}); err != nil {
			t.Fatal(err)
		}
	}
	cc, err := grpc.Dial(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err == nil {
		// The fake speaks TLS only: a plain connection fails its calls.
		_, err = rmqwire.QueryOffset(context.Background(), cc, &rmqwire.QueryOffsetRequest{MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: "p"}}})
		cc.Close()
		if err == nil {
			t.Fatal("a plaintext call succeeded")
		}
	}
	cc, err = rmqwire.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := context.Background()
	mq := &v2.MessageQueue{Topic: &v2.Resource{Name: "p"}, Id: 0}
	end, err := rmqwire.QueryOffset(ctx, cc, &rmqwire.QueryOffsetRequest{MessageQueue: mq, Policy: rmqwire.PolicyEnd})
	if err != nil || end.Offset != 3 {
		t.Fatalf("end offset %v, %v; want 3", end, err)
	}
	frames, err := rmqwire.PullMessage(ctx, cc, &rmqwire.PullMessageRequest{MessageQueue: mq, Offset: 1, BatchSize: 10,
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	next := int64(-1)
	for _, f := range frames {
		if f.Message != nil {
			got = append(got, string(f.Message.Body))
		}
		if f.HasNextOffset {
			next = f.NextOffset
		}
	}
	if len(got) != 1 || got[0] != "m2" || next != 3 {
		t.Fatalf("pulled %q, next %d; want [m2], 3", got, next)
	}
}
