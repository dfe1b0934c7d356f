package mqtt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// drainBatch is how many buffered messages the sink sends before it
// waits for their acknowledgements and moves the buffer's head.
const drainBatch = 512

// Sink publishes rows to a topic, one message a row. While the broker is
// reachable, messages go straight to it (QoS 1 and 2 pipelined, in
// order); what cannot be delivered goes to the store-and-forward buffer,
// and while the buffer holds anything, new messages go after it, so that
// the order holds. A background goroutine reconnects with back-off and
// sends the buffer, oldest first, moving its head as the broker
// acknowledges. Flush (every checkpoint) returns once every message
// written is acknowledged by the broker or durably in the buffer.
type Sink struct {
	cfg   *config
	table connector.Table
	env   connector.Env
	enc   format.Encoder

	startOnce sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{} // run ended
	wake      chan struct{} // the buffer got messages, or the sink is closing
	acked     chan struct{} // an acknowledgement came

	mu       sync.Mutex
	buf      buffer
	conn     *conn
	draining bool // the run goroutine is sending the buffer
	inflight []*pubState
	fatal    error
	closed   bool

	dropped  atomic.Int64
	payload  []byte
	topicVal string
}

// pubState is a message published on the connection and not yet known
// to be acknowledged.
type pubState struct {
	m     *message
	state atomic.Int32 // 0 waiting, 1 acknowledged, 2 refused or lost
	err   error        // set before state 2
	sink  *Sink
}

func (p *pubState) done(err error) {
	if err != nil {
		p.err = err
		p.state.Store(2)
	} else {
		p.state.Store(1)
	}
	select {
	case p.sink.acked <- struct{}{}:
	default:
	}
}

// CreateSink implements connector.SinkFactory. Nothing connects, and no
// buffer opens, before the first write or flush: building a plan builds
// sinks it never writes with.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	c, err := parseConfig(t, env, true)
	if err != nil {
		return nil, err
	}
	if err := connector.RejectMetadata("mqtt", t); err != nil {
		return nil, err
	}
	enc, err := c.format.NewEncoder(t.Schema, c.fmtOpts)
	if err != nil {
		return nil, err
	}
	return &Sink{cfg: c, table: t, env: env, enc: enc, done: make(chan struct{}),
		wake: make(chan struct{}, 1), acked: make(chan struct{}, 1)}, nil
}

// Identity implements connector.Identified.
func (s *Sink) Identity() string { return s.cfg.identity() }

// Dropped is the number of buffered messages dropped to make room
// ('sink.buffer.overflow' = 'drop-oldest').
func (s *Sink) Dropped() int64 { return s.dropped.Load() }

// start opens the buffer and starts the goroutine that connects.
func (s *Sink) start() error {
	s.startOnce.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		var b buffer = &memBuffer{}
		if s.cfg.persistBuf {
			db, err := openDiskBuffer(s.cfg.bufDir)
			if err != nil {
				s.fatal = fmt.Errorf("mqtt table '%s': cannot open its store-and-forward buffer in %s: %w", s.table.Name, s.cfg.bufDir, err)
				close(s.done)
				return
			}
			b = db
			if n := b.tail() - b.head(); n > 0 {
				s.env.Log("mqtt table '%s': %d messages kept in %s by an earlier run go out first", s.table.Name, n, s.cfg.bufDir)
			}
		}
		s.buf = b
		go s.run()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

func (s *Sink) logf(format string, args ...any) {
	s.env.Log("mqtt table '%s': "+format, append([]any{s.table.Name}, args...)...)
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	if err := s.start(); err != nil {
		return err
	}
	for i := range b.Rows {
		m, err := s.message(b.Rows[i])
		if err != nil {
			return err
		}
		if err := s.send(ctx, m); err != nil {
			return err
		}
	}
	s.mu.Lock()
	cn := s.conn
	s.mu.Unlock()
	if cn != nil {
		cn.flush() // a failure ends the connection: handled as any loss
	}
	return nil
}

// message encodes a row.
func (s *Sink) message(r types.Row) (*message, error) {
	var err error
	s.payload, err = s.enc.Encode(s.payload[:0], r)
	if err != nil {
		return nil, fmt.Errorf("mqtt table '%s': cannot encode a row: %w", s.table.Name, err)
	}
	m := &message{topic: s.cfg.topics[0], payload: append([]byte(nil), s.payload...), qos: s.cfg.qos, retain: s.cfg.retained}
	if s.cfg.topicCol >= 0 {
		if v := r.Vals[s.cfg.topicCol]; !v.IsNull() {
			t := v.Str()
			if t != s.topicVal {
				if err := checkTopicName(t); err != nil {
					return nil, fmt.Errorf("mqtt table '%s': column '%s' ('sink.topic-column'): %w", s.table.Name,
						s.table.Schema.Columns[s.cfg.topicCol].Name, err)
				}
				s.topicVal = t
			}
			m.topic = s.topicVal
		}
	}
	return m, nil
}

func (m *message) packet() *packets.Packet {
	pk := &packets.Packet{TopicName: m.topic, Payload: m.payload,
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: m.qos, Retain: m.retain}}
	pk.Properties.ContentType = m.contentType
	pk.Properties.User = m.props
	return pk
}

// send publishes m on the connection when nothing is buffered, else (or
// when that fails) buffers it.
func (s *Sink) send(ctx context.Context, m *message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fatal != nil {
		return s.fatal
	}
	if err := s.reapLocked(); err != nil {
		return err
	}
	if cn := s.conn; cn != nil && !s.draining && s.buf.head() == s.buf.tail() {
		var ps *pubState
		var done func(error)
		if m.qos > 0 {
			ps = &pubState{m: m, sink: s}
			done = ps.done
		}
		err := cn.publish(ctx, m.packet(), done)
		if err == nil {
			if ps != nil {
				s.inflight = append(s.inflight, ps)
			}
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := s.detachLocked(cn); err != nil {
			return err
		}
	}
	return s.bufferLocked(m)
}

// reapLocked forgets the acknowledged messages at the front of inflight;
// a refused one fails the sink.
func (s *Sink) reapLocked() error {
	k := 0
	for ; k < len(s.inflight); k++ {
		p := s.inflight[k]
		st := p.state.Load()
		if st == 0 {
			break
		}
		if st == 2 && !errors.Is(p.err, errConnLost) {
			s.fatal = fmt.Errorf("mqtt table '%s': publishing to '%s' on %s: %w", s.table.Name, p.m.topic, s.cfg.server, p.err)
			return s.fatal
		}
		if st == 2 {
			break // lost with the connection: detachLocked buffers it
		}
	}
	s.inflight = s.inflight[k:]
	return nil
}

// detachLocked ends connection cn, if it is the sink's: the messages
// published on it and not acknowledged go to the buffer, in order, ahead
// of anything written later (the broker may have got some: at-least-once).
func (s *Sink) detachLocked(cn *conn) error {
	if s.conn != cn {
		return nil
	}
	s.conn = nil
	cn.close()
	pending := s.inflight
	s.inflight = nil
	for _, p := range pending {
		if p.state.Load() == 1 {
			continue
		}
		if err := s.bufferLocked(p.m); err != nil {
			return err
		}
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// bufferLocked appends m to the buffer, making room by the table's
// overflow policy.
func (s *Sink) bufferLocked(m *message) error {
	need := m.size() + 8
	for s.buf.bytes()+need > s.cfg.bufMax {
		if !s.cfg.dropOldest || s.buf.head() == s.buf.tail() {
			s.fatal = fmt.Errorf("mqtt table '%s': the store-and-forward buffer is full (%d messages, 'sink.buffer.max-size' = %d bytes) and the broker %s takes none: "+
				"raise 'sink.buffer.max-size', or set 'sink.buffer.overflow' = 'drop-oldest'", s.table.Name, s.buf.tail()-s.buf.head(), s.cfg.bufMax, s.cfg.server)
			return s.fatal
		}
		if err := s.buf.advance(s.buf.head() + 1); err != nil {
			return s.bufErr(err)
		}
		s.env.CountDropped(1)
		if n := s.dropped.Add(1); n == 1 || n%1000 == 0 {
			s.logf("the store-and-forward buffer is full: dropped its oldest message (%d so far)", n)
		}
	}
	if err := s.buf.add(m); err != nil {
		return s.bufErr(err)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

func (s *Sink) bufErr(err error) error {
	s.fatal = fmt.Errorf("mqtt table '%s': store-and-forward buffer in %s: %w", s.table.Name, s.cfg.bufDir, err)
	return s.fatal
}

// run keeps a connection up and sends the buffer whenever it holds
// messages, until the sink closes.
func (s *Sink) run() {
	defer close(s.done)
	first := true
	for {
		cn, err := s.connect(first)
		if err != nil {
			if s.ctx.Err() == nil {
				s.mu.Lock()
				if s.fatal == nil {
					s.fatal = err
				}
				s.mu.Unlock()
			}
			return
		}
		first = false
		for {
			if err := s.drain(cn); err != nil {
				s.mu.Lock()
				if s.fatal == nil {
					s.fatal = err
				}
				s.mu.Unlock()
				return
			}
			select {
			case <-s.ctx.Done():
				return
			case <-cn.done:
			case <-s.wake:
				continue
			}
			break
		}
		s.mu.Lock()
		s.detachLocked(cn)
		s.mu.Unlock()
		s.logf("lost the connection to %s: %v; reconnecting (messages are kept in the store-and-forward buffer meanwhile)", s.cfg.server, cn.Err())
	}
}

// connect connects with back-off. The first connection must come within
// 'connect.timeout'; later ones are tried until the sink closes. A
// refusal that will not change (credentials) fails the sink.
func (s *Sink) connect(first bool) (*conn, error) {
	c := s.cfg
	backoff := c.backoff.Initial
	deadline := time.Now().Add(c.connectTimeout)
	for attempt := 1; ; attempt++ {
		cn, err := dial(s.ctx, c.dial, func(*packets.Packet) {})
		if err == nil && cn.serverMaxQoS < c.qos {
			cn.close()
			return nil, fmt.Errorf("mqtt table '%s': the broker %s takes messages of QoS %d at most, not %d ('qos')", s.table.Name, c.server, cn.serverMaxQoS, c.qos)
		}
		if err == nil {
			s.mu.Lock()
			s.conn = cn
			s.draining = s.buf.head() != s.buf.tail()
			s.mu.Unlock()
			if !first {
				s.env.CountReconnect()
			}
			if attempt > 1 || !first {
				s.logf("connected to %s", c.server)
			}
			return cn, nil
		}
		var refused *refusedError
		if errors.As(err, &refused) && refused.permanent || isTLSError(err) {
			return nil, fmt.Errorf("mqtt table '%s': cannot connect to %s as '%s': %w", s.table.Name, c.server, c.dial.clientID, err)
		}
		if first && time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("mqtt table '%s': cannot connect to %s within %s ('connect.timeout'): %w", s.table.Name, c.server, c.connectTimeout, err)
		}
		if attempt == 1 || backoff >= c.backoff.Max && attempt%10 == 0 {
			s.logf("cannot connect to %s (attempt %d): %v; retrying every %s at most", c.server, attempt, err, c.backoff.Max)
		}
		select {
		case <-time.After(backoff):
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
		backoff = c.backoff.Next(backoff)
	}
}

// drain sends the buffer on cn until it is empty (then new messages go
// straight to the broker again) or cn ends.
func (s *Sink) drain(cn *conn) error {
	for {
		s.mu.Lock()
		if s.conn != cn {
			s.mu.Unlock()
			return nil
		}
		if s.buf.head() == s.buf.tail() {
			s.draining = false
			s.mu.Unlock()
			return nil
		}
		s.draining = true
		from := s.buf.head()
		msgs, err := s.buf.peek(from, drainBatch)
		s.mu.Unlock()
		if err != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.bufErr(err)
		}
		states := make([]*pubState, len(msgs))
		sent := 0
		for i, m := range msgs {
			ps := &pubState{m: m, sink: s}
			states[i] = ps
			var done func(error)
			if m.qos > 0 {
				done = ps.done
			} else {
				ps.state.Store(1)
			}
			if err := cn.publish(s.ctx, m.packet(), done); err != nil {
				break
			}
			sent++
		}
		cn.flush()
		// Wait for the acknowledgements of what was sent.
		acked := 0
		for acked < sent {
			st := states[acked].state.Load()
			if st == 1 {
				acked++
				continue
			}
			if st == 2 {
				if !errors.Is(states[acked].err, errConnLost) {
					s.mu.Lock()
					s.advanceLocked(from + uint64(acked))
					s.mu.Unlock()
					return fmt.Errorf("mqtt table '%s': publishing to '%s' on %s: %w", s.table.Name, states[acked].m.topic, s.cfg.server, states[acked].err)
				}
				break
			}
			select {
			case <-s.acked:
			case <-cn.done:
			case <-s.ctx.Done():
				return nil
			case <-time.After(s.cfg.flushWait):
				s.logf("no acknowledgement from %s within %s ('sink.flush-timeout'); reconnecting", s.cfg.server, s.cfg.flushWait)
				cn.fail(errors.New("no acknowledgement in time"))
			}
			if cn.Err() != nil && states[acked].state.Load() == 0 {
				break
			}
		}
		s.mu.Lock()
		err = s.advanceLocked(from + uint64(acked))
		s.mu.Unlock()
		if err != nil {
			return err
		}
		if acked < len(msgs) || cn.Err() != nil {
			return nil // the connection ended: what remains stays buffered
		}
	}
}

// advanceLocked moves the buffer's head past acknowledged messages (never
// back: the overflow policy may have moved it further).
func (s *Sink) advanceLocked(to uint64) error {
	if to <= s.buf.head() {
		return nil
	}
	if err := s.buf.advance(to); err != nil {
		return s.bufErr(err)
	}
	return nil
}

// Flush implements connector.Sink: it returns once every message written
// is acknowledged by the broker or in the buffer, synced to disk.
func (s *Sink) Flush(ctx context.Context) error {
	if err := s.start(); err != nil {
		return err
	}
	deadline := time.Now().Add(s.cfg.flushWait)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cn := s.conn; cn != nil {
		cn.flush()
	}
	for {
		if err := s.reapLocked(); err != nil {
			return err
		}
		if len(s.inflight) == 0 {
			break
		}
		cn := s.conn
		if cn == nil {
			break
		}
		if cn.Err() != nil || time.Now().After(deadline) {
			if cn.Err() == nil {
				s.logf("no acknowledgement from %s within %s ('sink.flush-timeout'): buffering and reconnecting", s.cfg.server, s.cfg.flushWait)
			}
			if err := s.detachLocked(cn); err != nil {
				return err
			}
			break
		}
		s.mu.Unlock()
		select {
		case <-s.acked:
		case <-cn.done:
		case <-time.After(time.Until(deadline)):
		case <-ctx.Done():
			s.mu.Lock()
			return context.Cause(ctx)
		}
		s.mu.Lock()
	}
	if err := s.buf.sync(); err != nil {
		return s.bufErr(err)
	}
	return s.fatal
}

// Close implements connector.Sink: it flushes, gives the buffer up to
// 'sink.flush-timeout' to drain (reconnecting meanwhile), and keeps what
// remains on disk for the next run (what remains of a buffer in memory is
// lost: an error).
func (s *Sink) Close() error {
	s.mu.Lock()
	if s.closed || s.ctx == nil {
		s.closed = true
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.Flush(context.Background())
	deadline := time.Now().Add(s.cfg.flushWait)
	for err == nil && time.Now().Before(deadline) {
		s.mu.Lock()
		empty := s.buf.head() == s.buf.tail()
		err = s.fatal
		s.mu.Unlock()
		if empty {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.close()
		s.conn = nil
	}
	if s.buf == nil {
		return err
	}
	if n := s.buf.tail() - s.buf.head(); n > 0 {
		if s.cfg.persistBuf {
			s.logf("%d messages not yet delivered stay in %s for the next run", n, s.cfg.bufDir)
		} else if err == nil {
			err = fmt.Errorf("mqtt table '%s': %d messages could not be delivered to %s within %s ('sink.flush-timeout') and are lost: the buffer is in memory (set 'state.dir' or 'sink.buffer.dir' to keep them)",
				s.table.Name, n, s.cfg.server, s.cfg.flushWait)
		}
	}
	if cerr := s.buf.close(); err == nil && cerr != nil {
		err = s.bufErr(cerr)
	}
	return err
}
