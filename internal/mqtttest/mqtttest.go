// Package mqtttest runs in-process MQTT brokers (mochi-mqtt) on a loopback
// port for tests and benchmarks: one that can be stopped and started
// again on the same address, with optional user accounts, and an inline
// client that publishes into it and collects what arrives on a topic
// filter.
package mqtttest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is an in-process broker.
type Broker struct {
	// Addr is host:port; URL is tcp://Addr, or mqtts://Addr with TLS.
	Addr string
	URL  string

	tb    testing.TB
	users map[string]string
	tls   *tls.Config
	mu    sync.Mutex
	srv   *mqtt.Server
	ln    *trackingListener
}

// trackingListener keeps the connections it accepted, so that a Stop can
// close them all: mochi-mqtt's Close closes those of the clients it
// lists and waits for every connection's goroutine, and may miss one it
// does not list (seen as a hang of the sink tests, once in a few dozen
// runs, the client connected to a broker that had stopped).
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = struct{}{}
	return c, nil
}

// closeAll closes the listener and every connection it accepted.
func (l *trackingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.Listener.Close()
	for c := range l.conns {
		c.Close()
	}
	l.conns = nil
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

// WithTLS makes the broker speak MQTT over TLS only, with cfg (its
// certificate and, for mutual TLS, the client CAs it requires).
func WithTLS(cfg *tls.Config) Option {
	return func(b *Broker) { b.tls = cfg }
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
	if b.tls != nil {
		b.URL = "mqtts://" + addr
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
	if b.srv == nil {
		return
	}
	srv, ln := b.srv, b.ln
	b.srv, b.ln = nil, nil
	closed := make(chan struct{})
	go func() {
		srv.Close()
		close(closed)
	}()
	// Every connection ends, listed as a client or not (see
	// trackingListener), so that Close's wait ends.
	ln.closeAll()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		b.tb.Errorf("mqtttest: the broker on %s did not close", b.Addr)
	}
	// Until its clients are gone and its port refuses connections, a
	// stopped broker is not down.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		open := 0
		for _, cl := range srv.Clients.GetAll() {
			if !cl.Net.Inline && !cl.Closed() {
				cl.Stop(errors.New("mqtttest: the broker stopped"))
				open++
			}
		}
		if open == 0 {
			c, err := net.DialTimeout("tcp", b.Addr, 100*time.Millisecond)
			if err != nil {
				return
			}
			c.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.tb.Errorf("mqtttest: the broker on %s did not stop", b.Addr)
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
	var nl net.Listener
	var lerr error
	for range 100 {
		if nl, lerr = net.Listen("tcp", b.Addr); lerr == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if lerr != nil {
		b.tb.Fatal(lerr)
	}
	ln := &trackingListener{Listener: nl, conns: map[net.Conn]struct{}{}}
	// The TLS listener wraps the tracking one, so that Stop closes the
	// connections underneath, handshaking or not.
	var served net.Listener = ln
	if b.tls != nil {
		served = tls.NewListener(ln, b.tls)
	}
	if err := srv.AddListener(listeners.NewNet("t", served)); err != nil {
		nl.Close()
		b.tb.Fatal(err)
	}
	go srv.Serve()
	b.srv, b.ln = srv, ln
}

// quiesce waits a moment (300 ms at most) for the connected clients to
// acknowledge what the broker sent them. mochi-mqtt v2.7.9 takes a
// client's in-flight lock for reading twice in a row after each packet
// from a client with messages in flight (Inflight.NextImmediate), so a
// publish that takes it for writing in between deadlocks the broker;
// publishing only while no client has messages in flight keeps the two
// apart (a client that does not acknowledge sends no packets to race).
func quiesce(srv *mqtt.Server) {
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		busy := false
		for _, cl := range srv.Clients.GetAll() {
			if !cl.Net.Inline && !cl.Closed() && cl.State.Inflight.Len() > 0 {
				busy = true
				break
			}
		}
		if !busy {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
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
	if qos > 0 {
		quiesce(srv)
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

// Client is a plain MQTT 5 client for load: QoS 0 publishing, and a QoS 0
// subscription whose messages it counts. It works against any broker.
type Client struct {
	nc       net.Conn
	bw       *bufio.Writer
	buf      bytes.Buffer
	received atomic.Int64
	done     chan struct{}
}

// Dial connects a client with a clean session.
func Dial(tb testing.TB, addr, id string) *Client {
	tb.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	c := &Client{nc: nc, bw: bufio.NewWriterSize(nc, 64<<10), done: make(chan struct{})}
	pk := packets.Packet{ProtocolVersion: 5, FixedHeader: packets.FixedHeader{Type: packets.Connect}}
	pk.Connect.ProtocolName = []byte("MQTT")
	pk.Connect.ClientIdentifier = id
	pk.Connect.Clean = true
	c.send(tb, &pk)
	c.bw.Flush()
	br := bufio.NewReader(nc)
	if t, _, err := readRaw(br); err != nil || t != packets.Connack {
		tb.Fatalf("mqtttest: no CONNACK (%d): %v", t, err)
	}
	go func() {
		defer close(c.done)
		for {
			t, _, err := readRaw(br)
			if err != nil {
				return
			}
			if t == packets.Publish {
				c.received.Add(1)
			}
		}
	}()
	tb.Cleanup(c.Close)
	return c
}

func (c *Client) send(tb testing.TB, pk *packets.Packet) {
	c.buf.Reset()
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(&c.buf)
	case packets.Subscribe:
		err = pk.SubscribeEncode(&c.buf)
	case packets.Publish:
		err = pk.PublishEncode(&c.buf)
	}
	if err == nil {
		_, err = c.bw.Write(c.buf.Bytes())
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// readRaw reads a packet's type and body.
func readRaw(r *bufio.Reader) (byte, []byte, error) {
	hb, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, mul := 0, 1
	for i := 0; ; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		n += int(b&0x7f) * mul
		if b&0x80 == 0 {
			break
		}
		if i == 3 {
			return 0, nil, fmt.Errorf("bad length")
		}
		mul *= 128
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return hb >> 4, body, err
}

// Subscribe subscribes to filter at QoS 0 and waits a moment for the
// broker to take it.
func (c *Client) Subscribe(tb testing.TB, filter string) {
	tb.Helper()
	pk := packets.Packet{ProtocolVersion: 5, PacketID: 1, Filters: packets.Subscriptions{{Filter: filter}},
		FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}}
	c.send(tb, &pk)
	c.bw.Flush()
	time.Sleep(50 * time.Millisecond)
}

// Publish buffers a QoS 0 message (Flush sends).
func (c *Client) Publish(tb testing.TB, topic string, payload []byte) {
	pk := packets.Packet{ProtocolVersion: 5, TopicName: topic, Payload: payload, FixedHeader: packets.FixedHeader{Type: packets.Publish}}
	c.send(tb, &pk)
}

// PublishProps buffers a QoS 0 message with MQTT 5 user properties (in
// the order given, as key, value pairs) and a content type.
func (c *Client) PublishProps(tb testing.TB, topic string, payload []byte, contentType string, kv ...string) {
	pk := packets.Packet{ProtocolVersion: 5, TopicName: topic, Payload: payload, FixedHeader: packets.FixedHeader{Type: packets.Publish}}
	pk.Properties.ContentType = contentType
	for i := 0; i+1 < len(kv); i += 2 {
		pk.Properties.User = append(pk.Properties.User, packets.UserProperty{Key: kv[i], Val: kv[i+1]})
	}
	c.send(tb, &pk)
}

// Flush sends what Publish buffered.
func (c *Client) Flush(tb testing.TB) {
	if err := c.bw.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// Received is how many messages the subscription got.
func (c *Client) Received() int64 { return c.received.Load() }

// Close disconnects.
func (c *Client) Close() {
	c.nc.Close()
	<-c.done
}
