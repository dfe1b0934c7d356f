// Package amqptest is a small in-process AMQP 0-9-1 broker for tests: enough
// of RabbitMQ for Sluice's rabbitmq connector and the amqp091-go client, on
// a loopback port, with a frame codec of its own.
//
// What it models:
//   - the connection handshake with PLAIN or AMQPLAIN authentication (as
//     RabbitMQ offers by default; WithMechanisms offers others, EXTERNAL
//     taking the user from the TLS client certificate's common name) against
//     its accounts (guest/guest unless told otherwise; a refusal is a
//     connection.close 403 ACCESS_REFUSED, as RabbitMQ answers a client
//     that announces authentication_failure_close), one virtual host "/"
//     (another is refused with 530 NOT_ALLOWED), frame-max and heartbeats
//     as negotiated in connection.tune (the broker sends heartbeats; it
//     does not time out a silent client);
//   - channels: open, close (by either side, with channel exceptions:
//     404 NOT_FOUND, 406 PRECONDITION_FAILED, 403 ACCESS_REFUSED, 405
//     RESOURCE_LOCKED), flow (accepted and ignored);
//   - exchanges: the default exchange, amq.direct, amq.fanout, amq.topic
//     and declared ones of types direct, fanout and topic (passive
//     declaration, deletion); queue.bind and queue.unbind;
//   - queues: declare (passive, durable, exclusive, auto-delete, server-
//     named; a redeclaration with other flags is 406), purge, delete, the
//     arguments x-max-length and x-overflow (drop-head, reject-publish);
//   - basic.qos (prefetch-count per consumer, or per channel with global),
//     basic.consume (exclusive, no-ack), basic.cancel (and a cancel sent to
//     the consumers of a deleted queue), basic.deliver with delivery tags
//     per channel, basic.get, basic.ack, basic.nack and basic.reject
//     (multiple, requeue), basic.recover; unacknowledged messages go back
//     to the head of their queue, marked redelivered, when their channel
//     or connection closes;
//   - basic.publish with mandatory (an unroutable message comes back in a
//     basic.return 312 NO_ROUTE), confirm.select with basic.ack for every
//     publish (basic.nack when a reject-publish queue is full);
//   - Stop and Restart on the same address: durable queues and exchanges
//     and the persistent messages of durable queues survive, as in
//     RabbitMQ; the rest is gone. KillConnections drops every client
//     connection without a word, as a network failure does.
//
// With WithTLS it speaks AMQP over TLS only (amqps://), with the
// configuration given: a certificate and, for mutual TLS, the client CAs.
//
// Clients lists what each open connection asked for in the handshake
// (its name, SASL mechanism, channel-max, frame-max and heartbeat).
//
// What it does not model: SASL mechanisms other than PLAIN, AMQPLAIN and
// EXTERNAL (another offered with WithMechanisms is refused when picked), virtual
// hosts other than "/", permissions, transactions (tx.*), headers
// exchanges, exchange-to-exchange bindings, dead-lettering, message TTL
// and expiry, priorities, queue types (quorum, stream) and their
// arguments other than those above, consumer priorities, flow control and
// memory alarms (connection.blocked), the immediate flag (refused with 540
// NOT_IMPLEMENTED, as RabbitMQ does), client heartbeat timeouts, and
// persistence across the test process: "durable" means across Stop and
// Restart. Message order is FIFO per queue, requeued messages first.
package amqptest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// AMQP reply codes the broker uses.
const (
	replySuccess        = 200
	replyNoRoute        = 312
	replyConnForced     = 320
	replyAccessRefused  = 403
	replyNotFound       = 404
	replyResourceLocked = 405
	replyPrecondition   = 406
	replyFrameError     = 501
	replySyntaxError    = 502
	replyCommandInvalid = 503
	replyChannelError   = 504
	replyUnexpected     = 505
	replyNotAllowed     = 530
	replyNotImplemented = 540
)

// Broker is an in-process AMQP 0-9-1 broker.
type Broker struct {
	// Addr is host:port; URL is amqp://guest:guest@Addr/ (with the first
	// account given to Start; amqps:// with TLS).
	Addr string
	URL  string
	// Heartbeat is what the broker proposes in connection.tune (0: none).
	Heartbeat time.Duration

	tb         testing.TB
	tls        *tls.Config // nil: plain AMQP
	mechanisms []string    // the SASL mechanisms offered in connection.start

	mu        sync.Mutex
	users     map[string]string
	ln        net.Listener
	conns     map[*conn]bool
	exchanges map[string]*exchange
	queues    map[string]*queue
	nextName  int
	accepted  sync.WaitGroup
	published int64 // messages routed to at least one queue, ever
}

// Option configures a Broker.
type Option func(*Broker)

// WithUser makes the broker accept only the given accounts (the first
// goes in URL).
func WithUser(name, password string) Option {
	return func(b *Broker) {
		if b.users == nil {
			b.users = map[string]string{}
			b.URL = "amqp://" + name + ":" + password + "@" + b.Addr + "/"
		}
		b.users[name] = password
	}
}

// WithTLS makes the broker speak AMQP over TLS only, with cfg.
func WithTLS(cfg *tls.Config) Option {
	return func(b *Broker) { b.tls = cfg }
}

// WithMechanisms makes the broker offer these SASL mechanisms (by
// default PLAIN and AMQPLAIN); it authenticates with PLAIN, AMQPLAIN and
// EXTERNAL (over TLS, the user the client certificate's common name).
func WithMechanisms(m ...string) Option {
	return func(b *Broker) { b.mechanisms = m }
}

// Client is what a client connection asked for in the handshake.
type Client struct {
	Name       string // the connection_name of its client properties
	Mechanism  string // the SASL mechanism it authenticated with
	User       string
	ChannelMax uint16        // of its connection.tune-ok
	FrameMax   uint32        // of its connection.tune-ok
	Heartbeat  time.Duration // of its connection.tune-ok
}

// Clients returns what each open connection that completed connection.tune-ok
// asked for, in no order.
func (b *Broker) Clients() []Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Client
	for c := range b.conns {
		if c.state >= 2 {
			out = append(out, c.info)
		}
	}
	return out
}

// Start starts a broker on a free loopback port; it stops when the test
// ends.
func Start(tb testing.TB, opts ...Option) *Broker {
	tb.Helper()
	b, err := Listen("127.0.0.1:0", opts...)
	if err != nil {
		tb.Fatal(err)
	}
	b.tb = tb
	tb.Cleanup(b.Stop)
	return b
}

// Listen starts a broker on addr (":0" picks a port), outside a test.
func Listen(addr string, opts ...Option) (*Broker, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := &Broker{Addr: l.Addr().String(), Heartbeat: 60 * time.Second, conns: map[*conn]bool{}}
	for _, o := range opts {
		o(b)
	}
	if b.users == nil {
		b.users = map[string]string{"guest": "guest"}
		b.URL = "amqp://guest:guest@" + b.Addr + "/"
	}
	if b.tls != nil {
		b.URL = "amqps://" + strings.TrimPrefix(b.URL, "amqp://")
	}
	if b.mechanisms == nil {
		b.mechanisms = []string{"PLAIN", "AMQPLAIN"}
	}
	b.exchanges = map[string]*exchange{}
	b.queues = map[string]*queue{}
	for _, e := range []*exchange{
		{name: "", kind: "direct", durable: true},
		{name: "amq.direct", kind: "direct", durable: true},
		{name: "amq.fanout", kind: "fanout", durable: true},
		{name: "amq.topic", kind: "topic", durable: true},
	} {
		b.exchanges[e.name] = e
	}
	b.serve(l)
	return b, nil
}

// serve accepts connections on l (through TLS when the broker has it).
func (b *Broker) serve(l net.Listener) {
	if b.tls != nil {
		l = tls.NewListener(l, b.tls)
	}
	b.mu.Lock()
	b.ln = l
	b.mu.Unlock()
	b.accepted.Add(1)
	go func() {
		defer b.accepted.Done()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			c := newConn(b, nc)
			b.mu.Lock()
			if b.ln != l {
				b.mu.Unlock()
				nc.Close()
				return
			}
			b.conns[c] = true
			b.mu.Unlock()
			go c.serve()
		}
	}()
}

// Stop stops the broker: every client connection is closed (a
// connection.close 320 CONNECTION_FORCED first), non-durable queues and
// exchanges and the transient messages of durable queues are gone.
func (b *Broker) Stop() {
	b.mu.Lock()
	l := b.ln
	b.ln = nil
	if l == nil {
		b.mu.Unlock()
		return
	}
	l.Close()
	conns := make([]*conn, 0, len(b.conns))
	for c := range b.conns {
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.sendMethod(0, connClose, uint16(replyConnForced), "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'", uint16(0), uint16(0))
		c.endLocked()
	}
	b.mu.Unlock()
	for _, c := range conns {
		c.wait()
	}
	b.accepted.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, q := range b.queues {
		if !q.durable {
			delete(b.queues, name)
			b.unbindAllLocked(name)
			continue
		}
		kept := q.ready[:0]
		for _, m := range q.ready {
			if m.persistent {
				m.redelivered = m.redelivered || m.delivered
				kept = append(kept, m)
			}
		}
		clear(q.ready[len(kept):])
		q.ready = kept
	}
	for name, e := range b.exchanges {
		if !e.durable {
			delete(b.exchanges, name)
		}
	}
}

// Restart starts a stopped broker again on its address.
func (b *Broker) Restart() {
	b.mu.Lock()
	running := b.ln != nil
	b.mu.Unlock()
	if running {
		return
	}
	var l net.Listener
	var err error
	for range 100 { // the port may linger a moment
		if l, err = net.Listen("tcp", b.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		if b.tb != nil {
			b.tb.Fatalf("amqptest: cannot listen on %s again: %v", b.Addr, err)
		}
		panic(err)
	}
	b.serve(l)
}

// KillConnections closes every client connection at once, without a
// connection.close: what a network failure looks like to the clients. The
// broker goes on (their unacknowledged messages are requeued).
func (b *Broker) KillConnections() {
	b.mu.Lock()
	conns := make([]*conn, 0, len(b.conns))
	for c := range b.conns {
		conns = append(conns, c)
		c.nc.Close()
		c.endLocked()
	}
	b.mu.Unlock()
	for _, c := range conns {
		c.wait()
	}
}

// Connections returns the number of open client connections.
func (b *Broker) Connections() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}

// exchange is an exchange and its queue bindings.
type exchange struct {
	name, kind string
	durable    bool
	autoDelete bool
	internal   bool
	bindings   []binding
}

type binding struct {
	queue string
	key   string
}

// route returns the queues a message with routing key rk goes to, each
// once.
func (b *Broker) routeLocked(e *exchange, rk string) []*queue {
	if e.name == "" {
		if q := b.queues[rk]; q != nil {
			return []*queue{q}
		}
		return nil
	}
	var out []*queue
	seen := map[string]bool{}
	for _, bd := range e.bindings {
		if seen[bd.queue] {
			continue
		}
		ok := false
		switch e.kind {
		case "direct":
			ok = bd.key == rk
		case "fanout":
			ok = true
		case "topic":
			ok = topicMatch(strings.Split(bd.key, "."), strings.Split(rk, "."))
		}
		if q := b.queues[bd.queue]; ok && q != nil {
			seen[bd.queue] = true
			out = append(out, q)
		}
	}
	return out
}

// topicMatch matches a topic binding key's words ('*' one word, '#' zero
// or more) against a routing key's.
func topicMatch(pat, words []string) bool {
	if len(pat) == 0 {
		return len(words) == 0
	}
	switch pat[0] {
	case "#":
		for i := 0; i <= len(words); i++ {
			if topicMatch(pat[1:], words[i:]) {
				return true
			}
		}
		return false
	case "*":
		return len(words) > 0 && topicMatch(pat[1:], words[1:])
	}
	return len(words) > 0 && words[0] == pat[0] && topicMatch(pat[1:], words[1:])
}

func (b *Broker) unbindAllLocked(queue string) {
	for _, e := range b.exchanges {
		kept := e.bindings[:0]
		for _, bd := range e.bindings {
			if bd.queue != queue {
				kept = append(kept, bd)
			}
		}
		e.bindings = kept
	}
}

// message is a message in a queue or delivered from one.
type message struct {
	exchange, routingKey string
	props                Properties
	header               []byte // the content header as published
	body                 []byte
	persistent           bool
	redelivered          bool
	delivered            bool // was delivered once (redelivered if it comes back)
}

// queue is a queue: ready messages in order, consumers served in turn.
type queue struct {
	name       string
	durable    bool
	exclusive  bool
	autoDelete bool
	owner      *conn // of an exclusive queue
	args       Table
	maxLen     int64 // -1: none
	rejectPub  bool  // x-overflow = reject-publish
	ready      []*message
	consumers  []*consumer
	next       int // the consumer served next
	unacked    int
	hadConsumr bool
}

// consumer is a basic.consume subscription.
type consumer struct {
	tag       string
	ch        *channel
	q         *queue
	noAck     bool
	exclusive bool
	prefetch  int // 0: no limit
	unacked   int
}

// dispatchLocked delivers q's ready messages to its consumers that have
// room, in turn.
func (b *Broker) dispatchLocked(q *queue) {
	for len(q.ready) > 0 && len(q.consumers) > 0 {
		var c *consumer
		for i := range q.consumers {
			k := (q.next + i) % len(q.consumers)
			cand := q.consumers[k]
			if cand.ch.closing || cand.ch.conn.ended {
				continue
			}
			if cand.prefetch > 0 && cand.unacked >= cand.prefetch {
				continue
			}
			if g := cand.ch.globalPrefetch; g > 0 && cand.ch.unackedCount() >= g {
				continue
			}
			c = cand
			q.next = (k + 1) % len(q.consumers)
			break
		}
		if c == nil {
			return
		}
		m := q.ready[0]
		q.ready[0] = nil
		q.ready = q.ready[1:]
		c.ch.deliverLocked(c, q, m)
	}
}

// requeueLocked puts messages back at the head of q, in the order given,
// marked redelivered.
func (b *Broker) requeueLocked(q *queue, ms []*message) {
	if len(ms) == 0 {
		return
	}
	for _, m := range ms {
		m.redelivered = true
	}
	q.ready = append(append(make([]*message, 0, len(ms)+len(q.ready)), ms...), q.ready...)
}

// Message is a message the broker holds, as Get and Publish see it.
type Message struct {
	Exchange    string
	RoutingKey  string
	Body        []byte
	Props       Properties
	Redelivered bool
}

// Publish routes a message through an exchange as a client's
// basic.publish would; it reports how many queues took it.
func (b *Broker) Publish(exchange, routingKey string, body []byte, props Properties) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.exchanges[exchange]
	if e == nil {
		return 0, fmt.Errorf("amqptest: no exchange '%s'", exchange)
	}
	m := &message{exchange: exchange, routingKey: routingKey, props: props, body: append([]byte(nil), body...),
		persistent: props.DeliveryMode == 2}
	m.header = encodeHeader(uint64(len(body)), props)
	n, _ := b.enqueueLocked(e, m)
	return n, nil
}

// enqueueLocked routes m; rejected reports a reject-publish queue that was
// full.
func (b *Broker) enqueueLocked(e *exchange, m *message) (n int, rejected bool) {
	qs := b.routeLocked(e, m.routingKey)
	for _, q := range qs {
		if q.maxLen >= 0 && int64(len(q.ready)) >= q.maxLen {
			if q.rejectPub {
				rejected = true
				continue
			}
			if len(q.ready) == 0 {
				continue // x-max-length 0 drops everything
			}
			q.ready[0] = nil
			q.ready = q.ready[1:]
		}
		cp := *m
		q.ready = append(q.ready, &cp)
		n++
		b.dispatchLocked(q)
	}
	if n > 0 {
		b.published++
	}
	return n, rejected
}

// Get takes the message at the head of a queue (acknowledged: it is
// gone), if any.
func (b *Broker) Get(queue string) (Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[queue]
	if q == nil || len(q.ready) == 0 {
		return Message{}, false
	}
	m := q.ready[0]
	q.ready[0] = nil
	q.ready = q.ready[1:]
	return Message{Exchange: m.exchange, RoutingKey: m.routingKey, Body: m.body, Props: m.props, Redelivered: m.redelivered}, true
}

// Drain takes every ready message of a queue.
func (b *Broker) Drain(queue string) []Message {
	var out []Message
	for {
		m, ok := b.Get(queue)
		if !ok {
			return out
		}
		out = append(out, m)
	}
}

// QueueStats are a queue's counts.
type QueueStats struct {
	Ready, Unacked, Consumers int
}

// Queue returns a queue's counts, and whether it exists.
func (b *Broker) Queue(name string) (QueueStats, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[name]
	if q == nil {
		return QueueStats{}, false
	}
	return QueueStats{Ready: len(q.ready), Unacked: q.unacked, Consumers: len(q.consumers)}, true
}

// DeclareQueue declares a queue as a client would (durable or not),
// bound to nothing but the default exchange.
func (b *Broker) DeclareQueue(name string, durable bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.queues[name] == nil {
		b.queues[name] = &queue{name: name, durable: durable, maxLen: -1}
	}
}

// DeleteQueue deletes a queue; its consumers get a basic.cancel.
func (b *Broker) DeleteQueue(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q := b.queues[name]; q != nil {
		b.deleteQueueLocked(q)
	}
}

func (b *Broker) deleteQueueLocked(q *queue) int {
	n := len(q.ready)
	for _, c := range append([]*consumer(nil), q.consumers...) {
		c.ch.conn.sendMethod(c.ch.id, basicCancel, c.tag, true)
		c.ch.removeConsumerLocked(c, false)
	}
	delete(b.queues, q.name)
	b.unbindAllLocked(q.name)
	return n
}

// WaitConsumers waits up to d for a queue to have n consumers.
func (b *Broker) WaitConsumers(queue string, n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		s, _ := b.Queue(queue)
		if s.Consumers >= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// errConnClosed ends a connection's loop.
var errConnClosed = errors.New("connection closed")

// newConn wraps an accepted connection.
func newConn(b *Broker, nc net.Conn) *conn {
	c := &conn{b: b, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), channels: map[uint16]*channel{},
		frameMax: 131072, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	return c
}
