package mqtt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// pollWait is the longest a Read waits for a message before it returns
// with none (connector.Reader's contract).
const pollWait = 100 * time.Millisecond

// inboxSize is how many received messages wait for Read; when it is full
// the connection is not read (TCP pushes back on the broker).
const inboxSize = 1024

// Source reads the messages of an mqtt table's topic filters: one
// subscription, so one partition. Its readers are connector.Resumers only
// so that their rows' offsets keep rising across runs of a job (MQTT has
// no position to seek to: the broker redelivers what the job did not
// acknowledge).
type Source struct {
	cfg    *config
	table  connector.Table
	env    connector.Env
	policy *connector.ErrorPolicy
	rows   connector.MessageRows[*packets.Packet]
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
	s.rows = connector.MessageRows[*packets.Packet]{Table: t, Format: c.format, Options: c.fmtOpts, Policy: s.policy, Where: where}
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

// Acknowledges implements connector.Acknowledged.
func (s *Source) Acknowledges() bool { return true }

// Identity implements connector.Identified: the server and topic filters,
// not the credentials.
func (s *Source) Identity() string { return s.cfg.identity() }

// Open implements connector.Source.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.OpenAfter(ctx, p, 0)
}

// OpenAfter implements connector.Resumer: the rows read are numbered from
// offset+1 on.
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	dec, err := s.rows.NewDecoder(p)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &Reader{src: s, dec: dec, next: offset + 1,
		in: make(chan inbound, inboxSize), wake: make(chan struct{}, 1), ctx: rctx, cancel: cancel, done: make(chan struct{})}
	if err := r.connect(ctx, true); err != nil {
		cancel()
		return nil, err
	}
	s.policy.ReaderOpened()
	go r.run()
	return r, nil
}

// inbound is a message received on connection gen.
type inbound struct {
	pk  *packets.Packet
	gen uint64
}

// pendingAck is a QoS 1 or 2 message read and not yet acknowledged.
type pendingAck struct {
	gen uint64
	id  uint16
	qos byte
}

// Reader reads an mqtt table's subscription. A goroutine keeps the
// connection up (reconnecting with back-off) and hands the messages
// received to Read; Read decodes them. QoS 1 and 2 messages are
// acknowledged in the order received: in a job with checkpoints once the
// checkpoint whose barrier followed them completed (connector.
// Acknowledger), else at the next Read. A message received on a
// connection that has since ended is never acknowledged: with a
// persistent session the broker sends it again on the next one.
type Reader struct {
	src  *Source
	dec  *connector.MessageDecoder[*packets.Packet]
	next int64 // the origin offset of the next row
	in   chan inbound
	wake chan struct{} // Wake cuts a Read's wait short

	ctx    context.Context // the reader's life
	cancel context.CancelFunc
	done   chan struct{} // run ended

	mu        sync.Mutex // guards what follows; Acknowledge and Close may come from another goroutine after the task ended
	conn      *conn
	gen       uint64 // the connection's generation: that of the attempt that made it
	dials     uint64 // connection attempts so far: the last generation given out
	fatal     error  // a reconnection that will not succeed
	deferAcks bool
	acks      connector.AckLog[pendingAck]
	closed    bool
	// While a SUBSCRIBE waits for its answer, the broker may send first
	// what it kept for a persistent session: more than the inbox holds
	// before a Read takes any, and the connection's reader must go on
	// to the SUBACK behind them. Messages that find the inbox full then
	// wait in spill (bounded by the broker's window of unacknowledged
	// messages), after the inbox's; while it holds any, later messages
	// go after them, and once subscribed they wait for it to drain.
	subscribing bool
	spill       []inbound
	drained     chan struct{} // closed when spill empties
}

// receive hands a message from the connection's reader to Read, in the
// order received; it blocks while Read is behind, except while
// subscribing (see spill).
func (r *Reader) receive(m inbound) {
	for {
		r.mu.Lock()
		if len(r.spill) == 0 {
			r.mu.Unlock()
			break
		}
		if r.subscribing {
			r.spill = append(r.spill, m)
			r.mu.Unlock()
			return
		}
		drained := r.drained
		r.mu.Unlock()
		select {
		case <-drained:
		case <-r.ctx.Done():
			return
		}
	}
	select {
	case r.in <- m:
		return
	default:
	}
	r.mu.Lock()
	if r.subscribing {
		r.spill = append(r.spill, m)
		r.drained = make(chan struct{})
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	select {
	case r.in <- m:
	case <-r.ctx.Done():
	}
}

// poll takes the next message without waiting: the inbox's, then the
// spill's.
func (r *Reader) poll() (inbound, bool) {
	select {
	case m := <-r.in:
		return m, true
	default:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.spill) == 0 {
		return inbound{}, false
	}
	m := r.spill[0]
	r.spill[0] = inbound{}
	r.spill = r.spill[1:]
	if len(r.spill) == 0 {
		r.spill = nil
		close(r.drained)
	}
	return m, true
}

// connect connects and subscribes. At open (first) it tries for
// 'connect.timeout' and fails with the last error; later it tries until
// the reader closes, with back-off, and fails only on a refusal that
// will not change (credentials).
func (r *Reader) connect(ctx context.Context, first bool) error {
	c := r.src.cfg
	backoff := c.backoff.Initial
	deadline := time.Now().Add(c.connectTimeout)
	attempts := 0
	for {
		// Each attempt has a generation of its own: messages a failed
		// attempt received (before its subscription timed out, say) must
		// never be acknowledged, by packet identifier, on a later
		// connection, where the identifier names another message.
		r.mu.Lock()
		r.dials++
		gen := r.dials
		r.mu.Unlock()
		cn, err := dial(ctx, c.dial, func(pk *packets.Packet) { r.receive(inbound{pk, gen}) })
		if err == nil {
			err = r.subscribe(ctx, cn, first)
			if err != nil {
				cn.close()
			}
		}
		if err == nil {
			r.mu.Lock()
			r.conn, r.gen = cn, gen
			r.mu.Unlock()
			if !first {
				r.src.env.CountReconnect()
				if !c.dial.clean && !cn.session {
					// Not silent: what was published for the session while
					// the reader was away is gone with it.
					r.src.env.Log("mqtt table '%s': the broker %s did not keep the reader's session '%s' (it restarted without persistence, or the session expired): "+
						"messages published while the reader was away are lost; subscribed again", r.src.table.Name, c.server, c.dial.clientID)
				}
			}
			if attempts > 0 {
				r.src.env.Log("mqtt table '%s': connected to %s again after %d attempts", r.src.table.Name, c.server, attempts+1)
			}
			return nil
		}
		attempts++
		var refused *refusedError
		if errors.As(err, &refused) && refused.permanent || isTLSError(err) {
			return fmt.Errorf("mqtt table '%s': cannot connect to %s as '%s': %w", r.src.table.Name, c.server, c.dial.clientID, err)
		}
		var subErr *subscribeError
		if errors.As(err, &subErr) {
			return fmt.Errorf("mqtt table '%s': %w", r.src.table.Name, err)
		}
		if first && time.Now().Add(backoff).After(deadline) {
			return fmt.Errorf("mqtt table '%s': cannot connect to %s within %s ('connect.timeout'): %w", r.src.table.Name, c.server, c.connectTimeout, err)
		}
		if attempts == 1 || backoff >= c.backoff.Max && attempts%10 == 0 {
			r.src.env.Log("mqtt table '%s': cannot connect to %s (attempt %d): %v; retrying every %s at most", r.src.table.Name, c.server, attempts, err, c.backoff.Max)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-r.ctx.Done():
			return errors.New("closed")
		}
		backoff = c.backoff.Next(backoff)
	}
}

// subscribeError is a subscription the broker refused.
type subscribeError struct {
	filter string
	code   byte
}

func (e *subscribeError) Error() string {
	return fmt.Sprintf("the broker refused the subscription to '%s': %s (code 0x%02x)", e.filter, reasonText(e.code), e.code)
}

// subscribe subscribes cn to the table's filters, unless the broker kept
// the subscriptions of a persistent session across a reconnection.
func (r *Reader) subscribe(ctx context.Context, cn *conn, first bool) error {
	c := r.src.cfg
	if !first && cn.session && !c.dial.clean {
		return nil
	}
	subs := make([]packets.Subscription, len(c.topics))
	for i, f := range c.topics {
		if c.group != "" {
			f = "$share/" + c.group + "/" + f
		}
		subs[i] = packets.Subscription{Filter: f, Qos: c.qos}
		if !c.retained {
			subs[i].RetainHandling = 2 // MQTT 5: send no retained messages
		} else {
			subs[i].RetainHandling = 1 // only for a new subscription
		}
	}
	r.mu.Lock()
	r.subscribing = true
	r.mu.Unlock()
	codes, err := cn.subscribe(ctx, subs, max(c.dial.timeout, 5*time.Second))
	r.mu.Lock()
	r.subscribing = false
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if len(codes) != len(subs) {
		return fmt.Errorf("the broker answered %d subscriptions with %d codes", len(subs), len(codes))
	}
	for i, code := range codes {
		if code >= 0x80 {
			return &subscribeError{filter: subs[i].Filter, code: code}
		}
		if code < c.qos {
			r.src.env.Log("mqtt table '%s': the broker granted QoS %d, not %d, for '%s'", r.src.table.Name, code, c.qos, subs[i].Filter)
		}
	}
	return nil
}

// run reconnects whenever the connection ends, until the reader closes.
func (r *Reader) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		cn := r.conn
		r.mu.Unlock()
		select {
		case <-r.ctx.Done():
			return
		case <-cn.done:
		}
		r.src.env.Log("mqtt table '%s': lost the connection to %s: %v; reconnecting", r.src.table.Name, r.src.cfg.server, cn.Err())
		if err := r.connect(r.ctx, false); err != nil {
			if r.ctx.Err() != nil {
				return
			}
			r.mu.Lock()
			r.fatal = err
			r.mu.Unlock()
			return
		}
	}
}

// Wake implements connector.Waker: a Read waiting for a message returns
// at once (a barrier or a completed checkpoint waits for no idle read).
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

// ackLocked acknowledges the first n unacknowledged messages, those of
// the current connection (the others the broker sends again).
func (r *Reader) ackLocked(n int) error {
	cn := r.conn
	sent := false
	for _, a := range r.acks.Pending()[:n] {
		if cn == nil || a.gen != r.gen || r.closed {
			continue
		}
		if err := cn.ack(a.id, a.qos); err != nil {
			break // the connection ended: the rest comes again
		}
		sent = true
	}
	r.acks.Drop(n)
	if sent {
		cn.flush() // a failure ends the connection; the broker sends those again
	}
	return nil
}

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	r.mu.Lock()
	if err := r.fatal; err != nil {
		r.mu.Unlock()
		return err
	}
	if !r.deferAcks && r.acks.Len() > 0 {
		// The job processed what the last Read returned.
		r.ackLocked(r.acks.Len())
	}
	r.mu.Unlock()
	m, ok := r.poll()
	if !ok {
		t := time.NewTimer(pollWait)
		defer t.Stop()
		select {
		case m = <-r.in:
		case <-t.C:
			return nil
		case <-r.wake:
			return nil
		case <-r.done:
			r.mu.Lock()
			err := r.fatal
			r.mu.Unlock()
			if err == nil {
				err = errors.New("the reader is closed")
			}
			return err
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	for n := 0; ; {
		if err := r.add(b, m); err != nil {
			return err
		}
		if n++; n >= max {
			return nil
		}
		if m, ok = r.poll(); !ok {
			return nil
		}
	}
}

// add decodes m into a row of b, or applies the error policy.
func (r *Reader) add(b *types.Batch, m inbound) error {
	pk := m.pk
	if pk.FixedHeader.Qos > 0 {
		r.mu.Lock()
		r.acks.Add(pendingAck{gen: m.gen, id: pk.PacketID, qos: pk.FixedHeader.Qos})
		r.mu.Unlock()
	}
	if pk.FixedHeader.Retain && !r.src.cfg.retained {
		return nil // a retained message (MQTT 3.1.1 cannot refuse them)
	}
	off := r.next
	r.next++
	return r.dec.Add(b, off, pk.Payload, pk)
}

// where locates a message for error messages.
func where(pk *packets.Packet) string {
	s := "topic '" + pk.TopicName + "'"
	if pk.FixedHeader.Qos > 0 {
		s += " message-id " + strconv.Itoa(int(pk.PacketID))
	}
	return s
}

// Skipped implements connector.Stats.
func (r *Reader) Skipped() int64 { return r.dec.Skipped() }

// Close implements connector.Reader. Messages not acknowledged stay with
// the broker (in a persistent session) for the next run.
func (r *Reader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	cn := r.conn
	r.mu.Unlock()
	r.cancel()
	if cn != nil {
		cn.close()
	}
	<-r.done
	r.mu.Lock()
	if r.conn != nil && r.conn != cn {
		r.conn.close() // connected again meanwhile
	}
	r.mu.Unlock()
	s := r.src
	return s.policy.ReaderClosed()
}

// metaFunc computes a METADATA column's value from a message.
type metaFunc = func(pk *packets.Packet) types.Value

func metadataFunc(key string, t types.Type) metaFunc {
	k := t.Kind
	switch key {
	case "topic":
		return func(pk *packets.Packet) types.Value { return types.StringValue(pk.TopicName).WithKind(k) }
	case "qos":
		return func(pk *packets.Packet) types.Value { return types.IntValue(k, int64(pk.FixedHeader.Qos)) }
	case "message-id":
		return func(pk *packets.Packet) types.Value { return types.IntValue(k, int64(pk.PacketID)) }
	case "retained":
		return func(pk *packets.Packet) types.Value { return types.BoolValue(pk.FixedHeader.Retain) }
	case "duplicate":
		return func(pk *packets.Packet) types.Value { return types.BoolValue(pk.FixedHeader.Dup) }
	case "content-type":
		return func(pk *packets.Packet) types.Value {
			if pk.Properties.ContentType == "" {
				return types.NullValue
			}
			return types.StringValue(pk.Properties.ContentType).WithKind(k)
		}
	case "response-topic":
		return func(pk *packets.Packet) types.Value {
			if pk.Properties.ResponseTopic == "" {
				return types.NullValue
			}
			return types.StringValue(pk.Properties.ResponseTopic).WithKind(k)
		}
	case "properties":
		kk, vk := t.Elem.Kind, t.Value.Kind
		return func(pk *packets.Packet) types.Value {
			m := &types.MapValue{}
		next:
			for _, u := range pk.Properties.User {
				for i, key := range m.Keys {
					if key.Str() == u.Key {
						m.Values[i] = types.StringValue(u.Val).WithKind(vk) // the last of a repeated key wins
						continue next
					}
				}
				m.Keys = append(m.Keys, types.StringValue(u.Key).WithKind(kk))
				m.Values = append(m.Values, types.StringValue(u.Val).WithKind(vk))
			}
			return types.NewMapValue(m)
		}
	}
	return func(*packets.Packet) types.Value { return types.NullValue }
}
