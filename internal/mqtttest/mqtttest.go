// Package mqtttest runs in-process MQTT brokers (mochi-mqtt) on a loopback
// port for tests and benchmarks: one that can be stopped and started
// again on the same address, with optional user accounts, and an inline
// client that publishes into it and collects what arrives on a topic
// filter.
package mqtttest

import (
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is an in-process broker.
type Broker struct {
	// Addr is host:port; URL is tcp://Addr.
	Addr string
	URL  string

	tb    testing.TB
	users map[string]string
	mu    sync.Mutex
	srv   *mqtt.Server
}

// Option configures a Broker.
type Option func(*Broker)

// WithUser makes the broker accept only the given accounts.
func WithUser(name, password string) Option {
	return func(b *Broker) {
		if b.users == nil {
			b.users = map[string]string{}
		}
		b.users[name] = password
	}
}

// Start starts a broker on a free loopback port; it stops when the test
// ends.
func Start(tb testing.TB, opts ...Option) *Broker {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	b := &Broker{Addr: addr, URL: "tcp://" + addr, tb: tb}
	for _, o := range opts {
		o(b)
	}
	b.Restart()
	tb.Cleanup(b.Stop)
	return b
}

// Stop stops the broker: its clients are disconnected, its sessions and
// retained messages forgotten.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		b.srv.Close()
		b.srv = nil
	}
}

// Restart starts the broker (again) on its address.
func (b *Broker) Restart() {
	b.tb.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		return
	}
	srv := mqtt.New(&mqtt.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(discard{}, nil))})
	var err error
	if b.users == nil {
		err = srv.AddHook(new(auth.AllowHook), nil)
	} else {
		var rules auth.AuthRules
		for u, p := range b.users {
			rules = append(rules, auth.AuthRule{Username: auth.RString(u), Password: auth.RString(p), Allow: true})
		}
		err = srv.AddHook(new(auth.Hook), &auth.Options{Ledger: &auth.Ledger{Auth: rules,
			ACL: auth.ACLRules{{Filters: auth.Filters{"#": auth.ReadWrite}}}}})
	}
	if err != nil {
		b.tb.Fatal(err)
	}
	// The port may still be held for a moment after a Stop.
	var lerr error
	for range 100 {
		if lerr = srv.AddListener(listeners.NewTCP(listeners.Config{ID: "t", Address: b.Addr})); lerr == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if lerr != nil {
		b.tb.Fatal(lerr)
	}
	go srv.Serve()
	b.srv = srv
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Publish publishes payload to topic through the broker's inline client
// (delivered at up to qos).
func (b *Broker) Publish(topic string, payload []byte, retain bool, qos byte) {
	b.tb.Helper()
	b.mu.Lock()
	srv := b.srv
	b.mu.Unlock()
	if srv == nil {
		b.tb.Fatal("mqtttest: the broker is stopped")
	}
	if err := srv.Publish(topic, payload, retain, qos); err != nil {
		b.tb.Fatal(err)
	}
}

// Message is a message a Collector received.
type Message struct {
	Topic   string
	Payload string
	Retain  bool
}

// Collector gathers what the broker delivers on a topic filter, in order.
type Collector struct {
	mu   sync.Mutex
	msgs []Message
}

// Collect subscribes the inline client to filter.
func (b *Broker) Collect(filter string) *Collector {
	b.tb.Helper()
	c := &Collector{}
	b.mu.Lock()
	srv := b.srv
	b.mu.Unlock()
	err := srv.Subscribe(filter, 1, func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) {
		c.mu.Lock()
		c.msgs = append(c.msgs, Message{Topic: pk.TopicName, Payload: string(pk.Payload), Retain: pk.FixedHeader.Retain})
		c.mu.Unlock()
	})
	if err != nil {
		b.tb.Fatal(err)
	}
	return c
}

// Messages returns what arrived so far.
func (c *Collector) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.msgs...)
}

// Wait waits up to timeout for n messages and returns what arrived.
func (c *Collector) Wait(n int, timeout time.Duration) []Message {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m := c.Messages(); len(m) >= n {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c.Messages()
}

// Subscribers returns how many clients (not the inline one) subscribe to
// topic, counting each shared group's members.
func (b *Broker) Subscribers(topic string) int {
	b.mu.Lock()
	srv := b.srv
	b.mu.Unlock()
	if srv == nil {
		return 0
	}
	s := srv.Topics.Subscribers(topic)
	n := len(s.Subscriptions)
	for _, g := range s.Shared {
		n += len(g)
	}
	return n
}

// WaitSubscribers waits up to timeout for n subscribers of topic.
func (b *Broker) WaitSubscribers(topic string, n int, timeout time.Duration) {
	b.tb.Helper()
	deadline := time.Now().Add(timeout)
	for b.Subscribers(topic) < n {
		if time.Now().After(deadline) {
			b.tb.Fatalf("mqtttest: %d subscribers of %s after %s, want %d", b.Subscribers(topic), topic, timeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
