package rocketmqfake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math/big"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluicesql/sluice/internal/rmqwire"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Addr is the address to listen on; "" is 127.0.0.1:0 (a free port).
	Addr string
	// Queues is the number of message queues of a topic created on first
	// use (4 when 0).
	Queues int
	// NoAutoCreate makes unknown topics NOT_FOUND rather than created.
	NoAutoCreate bool
	// Credentials, when set, maps access keys to their secrets: every
	// call must be signed with one of them.
	Credentials map[string]string
	// TransactionCheckAfter is how long a half message waits for its
	// EndTransaction before it is checked, unless the message says
	// (6 s when 0, as a broker's default).
	TransactionCheckAfter time.Duration
	// TransactionCheckInterval is the time between two checks of a half
	// message (TransactionCheckAfter when 0).
	TransactionCheckInterval time.Duration
	// TransactionCheckMax is how many checks that reached a producer a
	// half message gets before it is rolled back (15 when 0).
	TransactionCheckMax int
	// MaxDeliveryAttempts is how often a message is delivered to a
	// consumer group before it goes to the group's dead-letter topic (16
	// when 0).
	MaxDeliveryAttempts int
	// Logf, if set, writes a line about what the server does on its own
	// (checks, dead letters, roll-backs).
	Logf func(format string, args ...any)
}

// maxBodySize is the largest message body taken (a proxy's default).
const maxBodySize = 4 << 20

// brokerName names the one broker of the fake.
const brokerName = "sluice-fake-broker"

// Server is a fake RocketMQ proxy. Its methods are safe for concurrent use.
type Server struct {
	opts  Options
	creds credentials.TransportCredentials
	addr  string

	mu       sync.Mutex
	lis      net.Listener
	gs       *grpc.Server
	running  bool
	topics   map[string]*topic
	groups   map[string]*group  // topic key + "\x00" + group key
	clients  map[string]*client // by client ID
	appended chan struct{}      // closed (and replaced) when a message is appended
	nonce    int64
	txnSeq   int64
	rr       int // round-robin over producers for checks
	checks   int64
	stop     chan struct{} // closes the checker
	done     chan struct{} // the checker ended
	closed   bool
}

// topic is a topic's queues and its half messages.
type topic struct {
	key    string
	queues [][]*v2.Message // committed messages, index = queue offset
	next   int             // round-robin queue of the next message
	half   map[string]*half
	ended  map[string]v2.TransactionResolution // transactions ended, for a late second end
}

// half is a transactional message waiting for its EndTransaction.
type half struct {
	msg       *v2.Message
	txID      string
	nextCheck time.Time
	checks    int
}

// group is a consumer group's consumption of a topic by ReceiveMessage.
type group struct {
	next     []int64          // per queue: the next offset never delivered
	inflight map[qo]*inflight // delivered, not acknowledged
	attempts map[qo]int32     // deliveries so far of messages in flight or due
}

type qo struct {
	q   int32
	off int64
}

type inflight struct {
	deadline time.Time
	nonce    int64
}

// client is a client known by its telemetry stream.
type client struct {
	id       string
	typ      v2.ClientType
	topics   map[string]bool // topics a producer publishes (keys)
	longPoll time.Duration
	stream   v2.MessagingService_TelemetryServer
	sendMu   sync.Mutex
}

func (c *client) send(cmd *v2.TelemetryCommand) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.Send(cmd)
}

// Start starts a server.
func Start(opts Options) (*Server, error) {
	if opts.Queues <= 0 {
		opts.Queues = 4
	}
	if opts.TransactionCheckAfter <= 0 {
		opts.TransactionCheckAfter = 6 * time.Second
	}
	if opts.TransactionCheckInterval <= 0 {
		opts.TransactionCheckInterval = opts.TransactionCheckAfter
	}
	if opts.TransactionCheckMax <= 0 {
		opts.TransactionCheckMax = 15
	}
	if opts.MaxDeliveryAttempts <= 0 {
		opts.MaxDeliveryAttempts = 16
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	cert, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("rocketmqfake: cannot make a certificate: %w", err)
	}
	s := &Server{opts: opts, creds: credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		topics: map[string]*topic{}, groups: map[string]*group{}, clients: map[string]*client{},
		appended: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	lis, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("rocketmqfake: %w", err)
	}
	s.addr = lis.Addr().String()
	s.serve(lis)
	go s.checker()
	return s, nil
}

// serve serves on lis (s.mu not held).
func (s *Server) serve(lis net.Listener) {
	gs := grpc.NewServer(grpc.Creds(s.creds), grpc.ForceServerCodec(rmqwire.Codec{}))
	desc := rmqwire.ServiceDesc(v2.MessagingService_ServiceDesc, &service{s: s})
	gs.RegisterService(&desc, &service{s: s})
	s.mu.Lock()
	s.lis, s.gs, s.running = lis, gs, true
	s.mu.Unlock()
	go gs.Serve(lis)
}

// Addr is the address the server listens on (host:port), for a client's
// endpoints.
func (s *Server) Addr() string { return s.addr }

// Stop stops serving, as a proxy that went down: connections end, and
// the data stays for Resume.
func (s *Server) Stop() {
	s.mu.Lock()
	gs := s.gs
	running := s.running
	s.running = false
	s.clients = map[string]*client{}
	s.mu.Unlock()
	if running {
		gs.Stop()
	}
}

// Resume serves again on the same address after Stop.
func (s *Server) Resume() error {
	s.mu.Lock()
	if s.running || s.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	var lis net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger a moment
		if lis, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("rocketmqfake: cannot listen on %s again: %w", s.addr, err)
	}
	s.serve(lis)
	return nil
}

// Close stops the server for good.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.Stop()
	close(s.stop)
	<-s.done
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// resourceKey names a namespaced resource.
func resourceKey(r *v2.Resource) string {
	if ns := r.GetResourceNamespace(); ns != "" {
		return ns + "%" + r.GetName()
	}
	return r.GetName()
}

// CreateTopic creates a topic with n queues (an existing one keeps its
// queues; n must then match). ns is its namespace ("" for none).
func (s *Server) CreateTopic(ns, name string, n int) error {
	if n <= 0 || n > 1024 {
		return fmt.Errorf("rocketmqfake: a topic has 1 to 1024 queues, not %d", n)
	}
	if name == "" || strings.ContainsAny(name, "% \t") {
		return fmt.Errorf("rocketmqfake: '%s' is no topic name", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := resourceKey(&v2.Resource{ResourceNamespace: ns, Name: name})
	if t, ok := s.topics[key]; ok {
		if len(t.queues) != n {
			return fmt.Errorf("rocketmqfake: topic '%s' exists with %d queues, not %d", key, len(t.queues), n)
		}
		return nil
	}
	s.topics[key] = &topic{key: key, queues: make([][]*v2.Message, n), half: map[string]*half{}, ended: map[string]v2.TransactionResolution{}}
	return nil
}

// topicLocked returns the topic r names, creating it unless the options
// say not to; nil when it does not exist.
func (s *Server) topicLocked(r *v2.Resource) *topic {
	key := resourceKey(r)
	t, ok := s.topics[key]
	if !ok && !s.opts.NoAutoCreate && r.GetName() != "" {
		t = &topic{key: key, queues: make([][]*v2.Message, s.opts.Queues), half: map[string]*half{}, ended: map[string]v2.TransactionResolution{}}
		s.topics[key] = t
	}
	return t
}

// appendLocked stores m in t: in queue q (-1: the next by round-robin,
// or by message group), at the queue's next offset.
func (s *Server) appendLocked(t *topic, m *v2.Message, q int32) (int32, int64) {
	if q < 0 || int(q) >= len(t.queues) {
		if g := m.GetSystemProperties().MessageGroup; g != nil {
			h := fnv.New32a()
			h.Write([]byte(*g))
			q = int32(h.Sum32() % uint32(len(t.queues)))
		} else {
			q = int32(t.next % len(t.queues))
			t.next++
		}
	}
	m = proto.Clone(m).(*v2.Message)
	if m.SystemProperties == nil {
		m.SystemProperties = &v2.SystemProperties{}
	}
	sp := m.SystemProperties
	off := int64(len(t.queues[q]))
	sp.QueueId = q
	sp.QueueOffset = &off
	sp.StoreTimestamp = timestamppb.Now()
	sp.StoreHost = brokerName
	if sp.BodyEncoding == v2.Encoding_ENCODING_UNSPECIFIED {
		sp.BodyEncoding = v2.Encoding_IDENTITY
	}
	sp.ReceiptHandle = nil
	sp.DeliveryAttempt = nil
	sp.InvisibleDuration = nil
	t.queues[q] = append(t.queues[q], m)
	close(s.appended)
	s.appended = make(chan struct{})
	return q, off
}

// Message is a message as tests see it.
type Message struct {
	Topic      string // its key: "namespace%name" or "name"
	Queue      int32
	Offset     int64
	ID         string
	Tag        string
	Keys       []string
	Properties map[string]string
	Body       []byte
	Born       time.Time
}

// Publish appends a message to a topic (created if need be) as a
// producer's normal message would be, in queue q (-1: the next one by
// round-robin), and returns where it went.
func (s *Server) Publish(ns, topicName string, q int32, m Message) (int32, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topicLocked(&v2.Resource{ResourceNamespace: ns, Name: topicName})
	if t == nil {
		return 0, 0, fmt.Errorf("rocketmqfake: no topic '%s'", topicName)
	}
	if q >= int32(len(t.queues)) {
		return 0, 0, fmt.Errorf("rocketmqfake: topic '%s' has %d queues, not %d", topicName, len(t.queues), q+1)
	}
	s.nonce++
	id := m.ID
	if id == "" {
		id = fmt.Sprintf("FAKE%016X", s.nonce)
	}
	born := m.Born
	if born.IsZero() {
		born = time.Now()
	}
	pm := &v2.Message{Topic: &v2.Resource{ResourceNamespace: ns, Name: topicName}, Body: m.Body, UserProperties: m.Properties,
		SystemProperties: &v2.SystemProperties{MessageId: id, Keys: m.Keys, BornTimestamp: timestamppb.New(born),
			BornHost: "127.0.0.1", MessageType: v2.MessageType_NORMAL}}
	if m.Tag != "" {
		tag := m.Tag
		pm.SystemProperties.Tag = &tag
	}
	q, off := s.appendLocked(t, pm, q)
	return q, off, nil
}

// Messages returns the committed messages of a topic (its key), queue by
// queue in offset order.
func (s *Server) Messages(topicKey string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[topicKey]
	if t == nil {
		return nil
	}
	var out []Message
	for _, q := range t.queues {
		for _, m := range q {
			sp := m.GetSystemProperties()
			out = append(out, Message{Topic: topicKey, Queue: sp.GetQueueId(), Offset: sp.GetQueueOffset(), ID: sp.GetMessageId(),
				Tag: sp.GetTag(), Keys: sp.GetKeys(), Properties: m.GetUserProperties(), Body: m.GetBody(), Born: sp.GetBornTimestamp().AsTime()})
		}
	}
	return out
}

// Topics returns the keys of the topics, sorted.
func (s *Server) Topics() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.topics))
	for k := range s.topics {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HalfMessages returns how many half messages of a topic (its key) wait
// for their EndTransaction.
func (s *Server) HalfMessages(topicKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.topics[topicKey]; t != nil {
		return len(t.half)
	}
	return 0
}

// Checks returns how many transaction checks went to producers so far.
func (s *Server) Checks() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checks
}

// checker checks orphaned half messages.
func (s *Server) checker() {
	defer close(s.done)
	tick := min(s.opts.TransactionCheckInterval, s.opts.TransactionCheckAfter, 100*time.Millisecond)
	t := time.NewTicker(max(tick, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.checkDue(time.Now())
	}
}

type check struct {
	c   *client
	cmd *v2.TelemetryCommand
}

// checkDue sends the checks that are due.
func (s *Server) checkDue(now time.Time) {
	var out []check
	s.mu.Lock()
	for _, t := range s.topics {
		for id, h := range t.half {
			if now.Before(h.nextCheck) {
				continue
			}
			h.nextCheck = now.Add(s.opts.TransactionCheckInterval)
			if h.checks >= s.opts.TransactionCheckMax {
				delete(t.half, id)
				t.endedLocked(id, v2.TransactionResolution_ROLLBACK)
				s.logf("rocketmq fake: rolled back half message %s of topic %s after %d checks without an answer",
					h.msg.GetSystemProperties().GetMessageId(), t.key, h.checks)
				continue
			}
			c := s.producerLocked(t.key)
			if c == nil {
				continue // nobody to ask: it does not count
			}
			h.checks++
			s.checks++
			m := proto.Clone(h.msg).(*v2.Message)
			m.SystemProperties.BodyDigest = digest(m.Body)
			out = append(out, check{c, &v2.TelemetryCommand{Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
				RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{Message: m, TransactionId: h.txID}}}})
		}
	}
	s.mu.Unlock()
	for _, c := range out {
		c.c.send(c.cmd) // a failed stream is dropped by its handler
	}
}

// producerLocked picks a producer that publishes topic key, round-robin.
func (s *Server) producerLocked(key string) *client {
	var ps []*client
	for _, c := range s.clients {
		if c.typ == v2.ClientType_PRODUCER && c.topics[key] && c.stream != nil {
			ps = append(ps, c)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].id < ps[j].id })
	s.rr++
	return ps[s.rr%len(ps)]
}

// selfSigned makes a certificate for the TLS the clients expect (they do
// not verify it).
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sluice rocketmq fake"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// maxEnded is how many ended transactions a topic remembers.
const maxEnded = 1 << 16

// endedLocked remembers that transaction id ended with r, so that a
// second end of it with the same resolution (a commit racing a check's
// answer) is taken as done.
func (t *topic) endedLocked(id string, r v2.TransactionResolution) {
	if len(t.ended) >= maxEnded {
		clear(t.ended)
	}
	t.ended[id] = r
}

// digest is a message body's CRC32, as a proxy sends it.
func digest(body []byte) *v2.Digest {
	return &v2.Digest{Type: v2.DigestType_CRC32, Checksum: strconv.FormatInt(int64(crc32.ChecksumIEEE(body)), 16)}
}

// InFlight returns how many messages of a topic (its key) a consumer
// group (its key) has received and not acknowledged.
func (s *Server) InFlight(topicKey, groupKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.groups[topicKey+"\x00"+groupKey]; g != nil {
		return len(g.inflight)
	}
	return 0
}
