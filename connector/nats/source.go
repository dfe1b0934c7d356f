package nats

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// pollWait is the longest a Read waits for a message before it returns
// with none (connector.Reader's contract).
const pollWait = 100 * time.Millisecond

// inboxSize is how many received messages wait for Read. For core NATS,
// when it is full the subscription's own buffer fills (and the client
// drops what overflows it: a slow consumer); JetStream pulls no more.
const inboxSize = 1024

// requestTimeout bounds a JetStream API request (consumer info, a
// message fetched directly from the stream).
const requestTimeout = 10 * time.Second

// Source reads the messages of a nats table: one subscription or
// consumer, so one partition. Core NATS (no 'jetstream.stream') numbers
// its rows from the resumed offset on, as nothing can be replayed; a
// JetStream source's rows carry their stream sequence as their offset.
type Source struct {
	cfg    *config
	table  connector.Table
	env    connector.Env
	policy *connector.ErrorPolicy
	rows   connector.MessageRows[*message]
}

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	c, err := parseConfig(t, env, false)
	if err != nil {
		return nil, err
	}
	if err := checkMetadata(t); err != nil {
		return nil, err
	}
	s := &Source{cfg: c, table: t, env: env}
	if s.policy, err = connector.NewErrorPolicy(t, c.fmtName); err != nil {
		return nil, err
	}
	s.rows = connector.MessageRows[*message]{Table: t, Format: c.format, Options: c.fmtOpts, Policy: s.policy, Where: where}
	for _, m := range t.Metadata {
		s.rows.Meta = append(s.rows.Meta, metadataFunc(m.Key, m.Type))
	}
	if _, err := s.rows.NewDecoder(0); err != nil {
		return nil, err
	}
	return s, nil
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return 1 }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return false }

// Acknowledges implements connector.Acknowledged: a durable consumer's
// readers acknowledge what they read; core NATS readers number their
// rows on their own, which no other job's position means anything to.
// Only an ordered JetStream reader, whose offsets are the stream's, can
// be shared between jobs.
func (s *Source) Acknowledges() bool { return !s.cfg.jetStream() || s.cfg.durable != "" }

// Identity implements connector.Identified: the servers, subjects and
// stream, not the credentials or the consumer.
func (s *Source) Identity() string { return s.cfg.identity() }

// Open implements connector.Source.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.openReader(ctx, p, 0, false)
}

// OpenAfter implements connector.Resumer. A JetStream source reads on
// from stream sequence offset+1 (an ordered consumer starts there; a
// durable one's messages up to offset are skipped, and those after it
// that it delivered to an earlier run and has not acknowledged are read
// again from the stream first, in order). A core NATS source has no
// position: its rows are numbered from offset+1 on.
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	return s.openReader(ctx, p, offset, true)
}

func (s *Source) openReader(ctx context.Context, p int, offset int64, resumed bool) (connector.Reader, error) {
	dec, err := s.rows.NewDecoder(p)
	if err != nil {
		return nil, err
	}
	cn, err := dialConn(ctx, s.cfg, s.env)
	if err != nil {
		return nil, err
	}
	r := &Reader{src: s, dec: dec, cn: cn, next: offset + 1,
		in: make(chan inbound, inboxSize), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	switch {
	case !s.cfg.jetStream():
		err = r.subscribe()
	case s.cfg.durable == "":
		err = r.consumeOrdered(ctx, offset, resumed)
	default:
		err = r.consumeDurable(ctx, offset, resumed)
	}
	if err != nil {
		r.stopFeed()
		cn.close()
		return nil, err
	}
	s.policy.ReaderOpened()
	return r, nil
}

// inbound is a message received, or the error that ended the feed.
type inbound struct {
	core *nats.Msg
	js   jetstream.Msg
	err  error
}

// message is what a row is made of, whichever way it came.
type message struct {
	subject   string
	reply     string
	header    nats.Header
	data      []byte
	stream    string
	seq       uint64 // stream sequence; 0 for core NATS
	time      time.Time
	delivered uint64
}

// Reader reads a nats table's subscription or consumer. A goroutine
// (nats.go's for core NATS, the reader's for JetStream) hands the
// messages received to Read, which decodes them.
//
// A durable consumer's reader acknowledges in the order received: in a
// job with checkpoints once the checkpoint whose barrier followed them
// completed (connector.Acknowledger), else at the next Read. Its rows'
// offsets are stream sequences and rise: a message the consumer delivers
// at or below the highest sequence the job has (an earlier run's, a
// redelivery after 'jetstream.ack-wait') is acknowledged and not read
// again; and where the consumer's deliveries have a gap (lost with a
// connection), or the consumer had delivered beyond the resumed offset
// to an earlier run, the missing messages are fetched from the stream
// directly, in order, before any later one.
type Reader struct {
	src  *Source
	dec  *connector.MessageDecoder[*message]
	cn   *conn
	next int64 // core NATS: the origin offset of the next row
	in   chan inbound
	wake chan struct{}
	stop chan struct{} // closed when the reader closes

	sub  *nats.Subscription        // core NATS
	iter jetstream.MessagesContext // JetStream
	feed sync.WaitGroup            // the goroutine that pumps iter

	// durable consumer
	stream    jetstream.Stream
	filter    string // the subject filter for direct gets
	high      uint64 // the highest stream sequence read (or resumed from)
	lastDSeq  uint64 // the consumer sequence of the last delivery
	catchTo   uint64 // messages in (high, catchTo] are fetched from the stream first
	held      *inbound
	deferAcks bool

	mu     sync.Mutex // guards acks, closed: Acknowledge and Close may come from another goroutine after the task ended
	acks   connector.AckLog[jetstream.Msg]
	closed bool
}

// subscribe subscribes to the core NATS subjects.
func (r *Reader) subscribe() error {
	c := r.src.cfg
	h := func(m *nats.Msg) {
		select {
		case r.in <- inbound{core: m}:
		case <-r.stop:
		}
	}
	for _, subj := range c.subjects {
		var err error
		if c.queue != "" {
			_, err = r.cn.nc.QueueSubscribe(subj, c.queue, h)
		} else {
			_, err = r.cn.nc.Subscribe(subj, h)
		}
		if err != nil {
			return fmt.Errorf("nats table '%s': cannot subscribe to '%s': %w", c.table, subj, err)
		}
	}
	// A round trip: a subscription the server refuses shows now.
	if err := r.cn.nc.FlushTimeout(requestTimeout); err != nil {
		return fmt.Errorf("nats table '%s': %s does not answer: %w", c.table, c.server, err)
	}
	if err := r.cn.err(); err != nil {
		return err
	}
	return nil
}

// streamHandle looks the table's stream up.
func (r *Reader) streamHandle(ctx context.Context) (jetstream.JetStream, jetstream.Stream, error) {
	c := r.src.cfg
	js, err := jetstream.New(r.cn.nc)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	st, err := js.Stream(ctx, c.stream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, nil, fmt.Errorf("nats table '%s': %s has no stream '%s' ('jetstream.stream'); create it first (e.g. nats stream add)", c.table, c.server, c.stream)
		}
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders) {
			return nil, nil, fmt.Errorf("nats table '%s': %s does not run JetStream: %w", c.table, c.server, err)
		}
		return nil, nil, fmt.Errorf("nats table '%s': cannot look up stream '%s' on %s: %w", c.table, c.stream, c.server, err)
	}
	return js, st, nil
}

func (c *config) deliverPolicy() jetstream.DeliverPolicy {
	switch c.deliver {
	case deliverLast:
		return jetstream.DeliverLastPolicy
	case deliverNew:
		return jetstream.DeliverNewPolicy
	case deliverLastPerSubject:
		return jetstream.DeliverLastPerSubjectPolicy
	case deliverByStartSeq:
		return jetstream.DeliverByStartSequencePolicy
	case deliverByStartTime:
		return jetstream.DeliverByStartTimePolicy
	}
	return jetstream.DeliverAllPolicy
}

// consumeOrdered reads through an ordered consumer: an ephemeral one
// that nats.go makes anew, after the last sequence it handed out, when
// a delivery is lost. Resumed, it starts after offset.
func (r *Reader) consumeOrdered(ctx context.Context, offset int64, resumed bool) error {
	c := r.src.cfg
	js, _, err := r.streamHandle(ctx)
	if err != nil {
		return err
	}
	oc := jetstream.OrderedConsumerConfig{FilterSubjects: c.subjects, DeliverPolicy: c.deliverPolicy()}
	switch {
	case resumed:
		oc.DeliverPolicy, oc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, uint64(offset)+1
	case c.deliver == deliverByStartSeq:
		oc.OptStartSeq = c.startSeq
	case c.deliver == deliverByStartTime:
		t := c.startTime
		oc.OptStartTime = &t
	}
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	cons, err := js.OrderedConsumer(cctx, c.stream, oc)
	if err != nil {
		return fmt.Errorf("nats table '%s': cannot create an ordered consumer of stream '%s': %w", c.table, c.stream, err)
	}
	return r.pump(cons)
}

// consumeDurable binds the durable consumer, creating it if it does not
// exist, and plans what to fetch from the stream before its deliveries.
func (r *Reader) consumeDurable(ctx context.Context, offset int64, resumed bool) error {
	c := r.src.cfg
	js, st, err := r.streamHandle(ctx)
	if err != nil {
		return err
	}
	r.stream = st
	r.filter = ">"
	if len(c.subjects) == 1 {
		r.filter = c.subjects[0]
	}
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	cons, err := js.Consumer(cctx, c.stream, c.durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cc := jetstream.ConsumerConfig{Durable: c.durable, DeliverPolicy: c.deliverPolicy(), AckPolicy: jetstream.AckExplicitPolicy,
			AckWait: c.ackWait, MaxAckPending: c.maxAckPending, MaxDeliver: -1,
			Description: "sluice: table " + c.table}
		if len(c.subjects) == 1 {
			cc.FilterSubject = c.subjects[0]
		}
		switch {
		case resumed && offset > 0:
			// The job has everything up to offset: start after it.
			cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, uint64(offset)+1
		case c.deliver == deliverByStartSeq:
			cc.OptStartSeq = c.startSeq
		case c.deliver == deliverByStartTime:
			t := c.startTime
			cc.OptStartTime = &t
		}
		cons, err = js.CreateConsumer(cctx, c.stream, cc)
	}
	if err != nil {
		return fmt.Errorf("nats table '%s': cannot bind durable consumer '%s' of stream '%s': %w", c.table, c.durable, c.stream, err)
	}
	info := cons.CachedInfo()
	switch {
	case info.Config.AckPolicy != jetstream.AckExplicitPolicy:
		return fmt.Errorf("nats table '%s': durable consumer '%s' acknowledges with policy '%s'; the source needs 'explicit'", c.table, c.durable, info.Config.AckPolicy)
	case info.Config.DeliverSubject != "":
		return fmt.Errorf("nats table '%s': durable consumer '%s' is a push consumer; the source needs a pull consumer", c.table, c.durable)
	case len(c.subjects) == 1 && info.Config.FilterSubject != c.subjects[0]:
		return fmt.Errorf("nats table '%s': durable consumer '%s' filters '%s', not '%s' ('subject')", c.table, c.durable, info.Config.FilterSubject, c.subjects[0])
	case len(c.subjects) == 0 && (info.Config.FilterSubject != "" || len(info.Config.FilterSubjects) > 0):
		return fmt.Errorf("nats table '%s': durable consumer '%s' filters '%s'; set 'subject' to it", c.table, c.durable, info.Config.FilterSubject)
	}
	// Resumed, the job holds everything up to offset. Without a
	// checkpoint it holds nothing, and what the consumer acknowledged is
	// done with. Either way the consumer may have delivered beyond that
	// to an earlier run, which did not acknowledge it: it comes again only
	// after 'jetstream.ack-wait', behind newer messages, so it is read from
	// the stream first.
	r.high = info.AckFloor.Stream
	if resumed {
		r.high = uint64(offset)
		if info.AckFloor.Stream > r.high {
			r.src.env.Log("nats table '%s': durable consumer '%s' acknowledged up to stream sequence %d, beyond the job's position %d: it was used by another reader",
				c.table, c.durable, info.AckFloor.Stream, offset)
		}
	}
	if info.Delivered.Stream > r.high && info.NumAckPending > 0 && serverAtLeast(r.cn.nc, 2, 14) {
		// The server can move the consumer back (forgetting what it
		// delivered and acknowledging up to the position): it delivers
		// those messages again at once, in order, and holds none pending.
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err := js.ResetConsumerToSequence(rctx, c.stream, c.durable, r.high+1)
		cancel()
		if err == nil {
			info.Delivered.Stream = r.high
		} else {
			r.src.env.Log("nats table '%s': cannot move durable consumer '%s' back to stream sequence %d (%v): reading what it delivered to an earlier run from the stream instead",
				c.table, c.durable, r.high+1, err)
		}
	}
	if info.Delivered.Stream > r.high {
		r.catchTo = info.Delivered.Stream
	}
	return r.pump(cons)
}

// pump starts the goroutine that hands cons's messages to Read.
func (r *Reader) pump(cons jetstream.Consumer) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(min(inboxSize, max(r.src.cfg.maxAckPending, 1))),
		jetstream.WithMessagesErrOnMissingHeartbeat(false))
	if err != nil {
		return fmt.Errorf("nats table '%s': cannot consume stream '%s': %w", r.src.cfg.table, r.src.cfg.stream, err)
	}
	r.iter = it
	r.feed.Add(1)
	go func() {
		defer r.feed.Done()
		for {
			m, err := it.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) || errors.Is(err, nats.ErrConnectionClosed) {
					return
				}
				select {
				case r.in <- inbound{err: err}:
				case <-r.stop:
					return
				}
				// Transient (a missed heartbeat while disconnected):
				// the iterator goes on; a lasting failure shows in conn.
				continue
			}
			select {
			case r.in <- inbound{js: m}:
			case <-r.stop:
				return
			}
		}
	}()
	return nil
}

// stopFeed stops the goroutine that receives messages.
func (r *Reader) stopFeed() {
	select {
	case <-r.stop:
		return
	default:
	}
	close(r.stop)
	if r.iter != nil {
		r.iter.Stop()
	}
	r.feed.Wait()
}

// Wake implements connector.Waker: a Read waiting for a message returns
// at once.
func (r *Reader) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// DeferAcks implements connector.Acknowledger.
func (r *Reader) DeferAcks() {
	r.mu.Lock()
	r.deferAcks = true
	r.mu.Unlock()
}

// Barrier implements connector.Acknowledger.
func (r *Reader) Barrier(id int64) {
	r.mu.Lock()
	r.acks.Barrier(id)
	r.mu.Unlock()
}

// Acknowledge implements connector.Acknowledger.
func (r *Reader) Acknowledge(id int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := r.acks.Covered(id); n > 0 {
		return r.ackLocked(n)
	}
	return nil
}

// ackLocked acknowledges the first n unacknowledged messages. An
// acknowledgement lost with the connection only means that the message
// comes again, and is then skipped as one the job has.
func (r *Reader) ackLocked(n int) error {
	if !r.closed {
		for _, m := range r.acks.Pending()[:n] {
			if err := m.Ack(); err != nil {
				break
			}
		}
	}
	r.acks.Drop(n)
	return nil
}

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := r.cn.err(); err != nil {
		return err
	}
	r.mu.Lock()
	if !r.deferAcks && r.acks.Len() > 0 {
		r.ackLocked(r.acks.Len()) // the job processed what the last Read returned
	}
	r.mu.Unlock()
	if r.catchTo > r.high {
		return r.catchUp(ctx, b, max)
	}
	if h := r.held; h != nil {
		r.held = nil
		if err := r.take(b, *h); err != nil {
			return err
		}
		if len(b.Rows) > 0 || r.catchTo > r.high {
			return nil
		}
	}
	t := time.NewTimer(pollWait)
	defer t.Stop()
	var m inbound
	select {
	case m = <-r.in:
	case <-t.C:
		return nil
	case <-r.wake:
		return nil
	case <-r.cn.done:
		if err := r.cn.err(); err != nil {
			return err
		}
		return errors.New("the connection closed")
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	for n := 0; ; {
		if err := r.take(b, m); err != nil {
			return err
		}
		if r.catchTo > r.high {
			return nil // a gap: fetch it at the next Read
		}
		if n++; n >= max {
			return nil
		}
		select {
		case m = <-r.in:
		default:
			return nil
		}
	}
}

// take handles a message received.
func (r *Reader) take(b *types.Batch, in inbound) error {
	c := r.src.cfg
	switch {
	case in.err != nil:
		if errors.Is(in.err, jetstream.ErrConsumerDeleted) || errors.Is(in.err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("nats table '%s': the consumer of stream '%s' is gone: %w", c.table, c.stream, in.err)
		}
		r.src.env.Log("nats table '%s': consuming stream '%s': %v", c.table, c.stream, in.err)
		return nil
	case in.core != nil:
		m := in.core
		off := r.next
		r.next++
		return r.add(b, off, &message{subject: m.Subject, reply: m.Reply, header: m.Header, data: m.Data})
	}
	m := in.js
	md, err := m.Metadata()
	if err != nil {
		return fmt.Errorf("nats table '%s': a message of stream '%s' without JetStream metadata: %w", c.table, c.stream, err)
	}
	msg := &message{subject: m.Subject(), reply: m.Reply(), header: m.Headers(), data: m.Data(), stream: md.Stream,
		seq: md.Sequence.Stream, time: md.Timestamp, delivered: md.NumDelivered}
	if c.durable == "" {
		return r.add(b, int64(msg.seq), msg)
	}
	// A durable consumer's delivery.
	gap := r.lastDSeq != 0 && md.Sequence.Consumer != r.lastDSeq+1
	r.lastDSeq = md.Sequence.Consumer
	if msg.seq <= r.high {
		r.pending(m) // the job has it: acknowledge it with the next checkpoint
		return nil
	}
	if gap && msg.seq > r.high+1 {
		// Deliveries were lost: what lies between comes from the stream.
		r.catchTo = msg.seq - 1
		r.held = &in
		return nil
	}
	r.pending(m)
	r.high = msg.seq
	return r.add(b, int64(msg.seq), msg)
}

// pending adds m to the messages to acknowledge.
func (r *Reader) pending(m jetstream.Msg) {
	r.mu.Lock()
	r.acks.Add(m)
	r.mu.Unlock()
}

// catchUp reads up to max messages of (high, catchTo] from the stream
// directly, in order.
func (r *Reader) catchUp(ctx context.Context, b *types.Batch, max int) error {
	c := r.src.cfg
	for n := 0; n < max && r.catchTo > r.high; n++ {
		gctx, cancel := context.WithTimeout(ctx, requestTimeout)
		raw, err := r.stream.GetMsg(gctx, r.high+1, jetstream.WithGetMsgSubject(r.filter))
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			r.high = r.catchTo // nothing more (removed by the stream's limits, or filtered out)
			break
		}
		if err != nil {
			return fmt.Errorf("nats table '%s': cannot read stream sequence %d of stream '%s' again: %w", c.table, r.high+1, c.stream, err)
		}
		if raw.Sequence > r.catchTo {
			r.high = r.catchTo
			break
		}
		r.high = raw.Sequence
		if err := r.add(b, int64(raw.Sequence), &message{subject: raw.Subject, header: raw.Header, data: raw.Data,
			stream: c.stream, seq: raw.Sequence, time: raw.Time, delivered: 1}); err != nil {
			return err
		}
	}
	return nil
}

// add decodes m into a row of b with offset off, or applies the error
// policy.
func (r *Reader) add(b *types.Batch, off int64, m *message) error {
	return r.dec.Add(b, off, m.data, m)
}

// where locates a message for error messages.
func where(m *message) string {
	s := "subject '" + m.subject + "'"
	if m.seq > 0 {
		s += " stream sequence " + strconv.FormatUint(m.seq, 10)
	}
	return s
}

// Skipped implements connector.Stats.
func (r *Reader) Skipped() int64 { return r.dec.Skipped() }

// Close implements connector.Reader. A durable consumer keeps what was
// not acknowledged for the next run.
func (r *Reader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.stopFeed()
	if r.cn.nc != nil && r.cn.nc.IsConnected() {
		// Acknowledgements just sent (the final commit's) must reach the
		// server before the connection closes.
		r.cn.nc.FlushTimeout(5 * time.Second)
	}
	r.cn.close()
	s := r.src
	return s.policy.ReaderClosed()
}

// metaFunc computes a METADATA column's value from a message.
type metaFunc = func(m *message) types.Value

func metadataFunc(key string, t types.Type) metaFunc {
	k := t.Kind
	str := func(s string) types.Value {
		if s == "" {
			return types.NullValue
		}
		return types.StringValue(s).WithKind(k)
	}
	switch key {
	case "subject":
		return func(m *message) types.Value { return types.StringValue(m.subject).WithKind(k) }
	case "reply":
		return func(m *message) types.Value { return str(m.reply) }
	case "stream":
		return func(m *message) types.Value { return str(m.stream) }
	case "sequence":
		return func(m *message) types.Value {
			if m.seq == 0 {
				return types.NullValue
			}
			return types.BigIntValue(int64(m.seq))
		}
	case "num-delivered":
		return func(m *message) types.Value {
			if m.delivered == 0 {
				return types.NullValue
			}
			return types.BigIntValue(int64(m.delivered))
		}
	case "timestamp":
		return func(m *message) types.Value {
			if m.time.IsZero() {
				return types.NullValue
			}
			return types.TimestampLTZValue(m.time.UnixMilli() * 1000).WithKind(k)
		}
	case "headers":
		kk, vk := t.Elem.Kind, t.Value.Kind
		return func(m *message) types.Value {
			mv := &types.MapValue{}
			keys := make([]string, 0, len(m.header))
			for key, vs := range m.header {
				if len(vs) > 0 {
					keys = append(keys, key)
				}
			}
			sort.Strings(keys)
			for _, key := range keys {
				// A MAP holds a key once: of repeated values, the last.
				vs := m.header[key]
				mv.Keys = append(mv.Keys, types.StringValue(key).WithKind(kk))
				mv.Values = append(mv.Values, types.StringValue(vs[len(vs)-1]).WithKind(vk))
			}
			return types.NewMapValue(mv)
		}
	}
	return func(*message) types.Value { return types.NullValue }
}

// serverAtLeast reports whether the connected server's version is at
// least major.minor.
func serverAtLeast(nc *nats.Conn, major, minor int) bool {
	v := strings.TrimPrefix(nc.ConnectedServerVersion(), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
