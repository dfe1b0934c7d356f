package amqptest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicesql/sluice/internal/amqptest"
)

func dial(t *testing.T, url string) (*amqp.Connection, *amqp.Channel) {
	t.Helper()
	c, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return c, ch
}

func recv(t *testing.T, d <-chan amqp.Delivery) amqp.Delivery {
	t.Helper()
	select {
	case m, ok := <-d:
		if !ok {
			t.Fatal("the delivery channel closed")
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery")
	}
	return amqp.Delivery{}
}

// TestPublishConsumeAck publishes with confirms and properties through the
// default exchange, a direct and a topic exchange, and consumes with a
// prefetch: what is not acknowledged comes again, redelivered, when the
// consumer's connection closes.
func TestPublishConsumeAck(t *testing.T) {
	b := amqptest.Start(t)
	_, ch := dial(t, b.URL)
	if _, err := ch.QueueDeclare("q", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare("ex", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("q", "k", "ex", false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("q", "a.*.c", "amq.topic", false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 0)
	for i, route := range [][2]string{{"", "q"}, {"ex", "k"}, {"amq.topic", "a.b.c"}, {"amq.topic", "a.b.d"}} {
		dc, err := ch.PublishWithDeferredConfirm(route[0], route[1], false, false, amqp.Publishing{
			Body: fmt.Appendf(nil, "m%d", i), ContentType: "text/plain", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"n": int32(i), "s": "x"}, MessageId: fmt.Sprint("id", i), Timestamp: ts})
		if err != nil {
			t.Fatal(err)
		}
		if !dc.Wait() {
			t.Fatalf("publish %d was nacked", i)
		}
	}
	conn2, ch2 := dial(t, b.URL)
	if err := ch2.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	d, err := ch2.Consume("q", "c1", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	m0, m1 := recv(t, d), recv(t, d)
	if string(m0.Body) != "m0" || string(m1.Body) != "m1" || m0.ContentType != "text/plain" || m0.Headers["n"] != int32(0) ||
		m1.Exchange != "ex" || m1.RoutingKey != "k" || m0.MessageId != "id0" || !m0.Timestamp.Equal(ts) || m0.DeliveryTag != 1 || m1.DeliveryTag != 2 {
		t.Fatalf("got %+v\n%+v", m0, m1)
	}
	select {
	case m := <-d:
		t.Fatalf("a third delivery beyond the prefetch: %s", m.Body)
	case <-time.After(50 * time.Millisecond):
	}
	if err := ch2.Ack(1, false); err != nil {
		t.Fatal(err)
	}
	m2 := recv(t, d)
	if string(m2.Body) != "m2" || m2.RoutingKey != "a.b.c" {
		t.Fatalf("got %s %s", m2.Body, m2.RoutingKey)
	}
	conn2.Close() // m1 and m2 go back, redelivered
	_, ch3 := dial(t, b.URL)
	d3, err := ch3.Consume("q", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"m1", "m2"} {
		m := recv(t, d3)
		if string(m.Body) != want || !m.Redelivered {
			t.Fatalf("got %s (redelivered %v), want %s redelivered", m.Body, m.Redelivered, want)
		}
	}
	if err := ch3.Ack(2, true); err != nil {
		t.Fatal(err)
	}
	// An unknown tag closes the channel.
	closed := ch3.NotifyClose(make(chan *amqp.Error, 1))
	ch3.Ack(99, false)
	select {
	case e := <-closed:
		if e == nil || e.Code != amqp.PreconditionFailed {
			t.Fatalf("got %v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel stayed open")
	}
	if s, _ := b.Queue("q"); s.Ready != 0 || s.Unacked != 0 {
		t.Fatalf("queue: %+v", s)
	}
}

// TestErrors: bad credentials, a missing queue, a missing exchange, an
// unroutable mandatory message, a reject-publish queue that is full.
func TestErrors(t *testing.T) {
	b := amqptest.Start(t, amqptest.WithUser("u", "secret"))
	_, err := amqp.Dial(strings.Replace(b.URL, "secret", "wrong", 1))
	var ae *amqp.Error
	if !errors.As(err, &ae) || ae.Code != amqp.AccessRefused {
		t.Fatalf("bad password: %v", err)
	}
	_, err = amqp.Dial(b.URL + "other")
	if !errors.As(err, &ae) || ae.Code != amqp.NotAllowed {
		t.Fatalf("unknown vhost: %v", err)
	}
	conn, ch := dial(t, b.URL)
	_, err = ch.QueueDeclarePassive("missing", true, false, false, false, nil)
	if !errors.As(err, &ae) || ae.Code != amqp.NotFound {
		t.Fatalf("missing queue: %v", err)
	}
	ch, _ = conn.Channel()
	if _, err := ch.QueueDeclare("small", false, false, false, false, amqp.Table{"x-max-length": 1, "x-overflow": "reject-publish"}); err != nil {
		t.Fatal(err)
	}
	ch.Confirm(false)
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))
	ctx := context.Background()
	dc1, _ := ch.PublishWithDeferredConfirmWithContext(ctx, "", "small", true, false, amqp.Publishing{Body: []byte("1")})
	dc2, _ := ch.PublishWithDeferredConfirmWithContext(ctx, "", "small", true, false, amqp.Publishing{Body: []byte("2")})
	dc3, _ := ch.PublishWithDeferredConfirmWithContext(ctx, "", "nowhere", true, false, amqp.Publishing{Body: []byte("3")})
	if !dc1.Wait() || dc2.Wait() || !dc3.Wait() {
		t.Fatalf("confirms: %v %v %v, want ack nack ack", dc1.Acked(), dc2.Acked(), dc3.Acked())
	}
	select {
	case r := <-returns:
		if r.ReplyCode != 312 || string(r.Body) != "3" {
			t.Fatalf("return %+v", r)
		}
	default:
		t.Fatal("no basic.return before the ack")
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	ch.Publish("no-such-exchange", "k", false, false, amqp.Publishing{Body: []byte("x")})
	select {
	case e := <-closed:
		if e == nil || e.Code != amqp.NotFound {
			t.Fatalf("got %v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel stayed open")
	}
}

// TestRestart: durable queues keep their persistent messages across a
// restart, transient ones and non-durable queues do not; clients see
// their connection closed.
func TestRestart(t *testing.T) {
	b := amqptest.Start(t)
	conn, ch := dial(t, b.URL)
	ch.QueueDeclare("d", true, false, false, false, nil)
	ch.QueueDeclare("t", false, false, false, false, nil)
	for i, mode := range []uint8{amqp.Persistent, amqp.Transient, amqp.Persistent} {
		ch.Publish("", "d", false, false, amqp.Publishing{Body: fmt.Appendf(nil, "%d", i), DeliveryMode: mode})
		ch.Publish("", "t", false, false, amqp.Publishing{Body: []byte("x"), DeliveryMode: amqp.Persistent})
	}
	ch.Close() // a round trip: the publishes are in
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	b.Stop()
	select {
	case e := <-closed:
		if e == nil || e.Code != amqp.ConnectionForced {
			t.Fatalf("got %v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connection stayed open")
	}
	b.Restart()
	if _, ok := b.Queue("t"); ok {
		t.Fatal("a non-durable queue survived")
	}
	var got []string
	for _, m := range b.Drain("d") {
		got = append(got, string(m.Body))
	}
	if strings.Join(got, ",") != "0,2" {
		t.Fatalf("got %v", got)
	}
	_, ch = dial(t, b.URL)
	if _, err := ch.QueueDeclarePassive("d", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLargeMessage crosses frame-max in both directions.
func TestLargeMessage(t *testing.T) {
	b := amqptest.Start(t)
	_, ch := dial(t, b.URL)
	ch.QueueDeclare("big", false, false, false, false, nil)
	body := []byte(strings.Repeat("0123456789", 50_000))
	if err := ch.Publish("", "big", false, false, amqp.Publishing{Body: body}); err != nil {
		t.Fatal(err)
	}
	d, err := ch.Consume("big", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := recv(t, d); string(m.Body) != string(body) {
		t.Fatalf("got %d bytes, want %d", len(m.Body), len(body))
	}
}

// TestHeartbeats: with a heartbeat negotiated, an idle connection stays up
// (the client drops a connection that hears nothing for three intervals).
func TestHeartbeats(t *testing.T) {
	b := amqptest.Start(t)
	b.Heartbeat = time.Second
	c, err := amqp.DialConfig(b.URL, amqp.Config{Heartbeat: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A frame read sets the client's read deadline.
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	closed := c.NotifyClose(make(chan *amqp.Error, 1))
	select {
	case e := <-closed:
		t.Fatalf("the idle connection closed: %v", e)
	case <-time.After(3500 * time.Millisecond):
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMechanisms: the broker takes PLAIN and AMQPLAIN, checks the
// password either way, refuses a mechanism it does not offer, and
// Clients reports what each connection asked for in the handshake.
func TestMechanisms(t *testing.T) {
	b := amqptest.Start(t)
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("amqplain-client")
	c, err := amqp.DialConfig(b.URL, amqp.Config{
		SASL:       []amqp.Authentication{&amqp.AMQPlainAuth{Username: "guest", Password: "guest"}},
		ChannelMax: 7, FrameSize: 8192, Heartbeat: 3 * time.Second, Properties: props,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := b.Clients()
	want := amqptest.Client{Name: "amqplain-client", Mechanism: "AMQPLAIN", User: "guest", ChannelMax: 7, FrameMax: 8192, Heartbeat: 3 * time.Second}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("Clients() = %+v, want [%+v]", got, want)
	}
	_, err = amqp.DialConfig(b.URL, amqp.Config{SASL: []amqp.Authentication{&amqp.AMQPlainAuth{Username: "guest", Password: "nope"}}})
	var ae *amqp.Error
	if !errors.As(err, &ae) || ae.Code != amqp.AccessRefused || !strings.Contains(ae.Reason, "mechanism AMQPLAIN") {
		t.Errorf("a wrong AMQPLAIN password: %v", err)
	}

	plainOnly := amqptest.Start(t, amqptest.WithMechanisms("PLAIN"))
	_, err = amqp.DialConfig(plainOnly.URL, amqp.Config{SASL: []amqp.Authentication{&amqp.AMQPlainAuth{Username: "guest", Password: "guest"}}})
	if !errors.Is(err, amqp.ErrSASL) {
		t.Errorf("AMQPLAIN with a broker offering PLAIN only: %v, want %v", err, amqp.ErrSASL)
	}
}
