package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// Sink publishes rows to an exchange, one message a row, in order, on one
// channel in confirm mode. Each message stays in memory until the broker
// confirms it; at most 'sink.max-in-flight' are unconfirmed at once.
// Flush (every checkpoint, and the end) returns once the broker has
// confirmed every message written; a nack, or a message the broker
// returns as unroutable, fails the sink. When the connection is lost the
// sink connects again with back-off and publishes again, in order, what
// was not confirmed (the broker may have taken some: at-least-once).
type Sink struct {
	cfg   *config
	table connector.Table
	env   connector.Env
	enc   format.Encoder

	sess    *pubSession
	pending []*outMsg // published, not yet confirmed, in order
	fatal   error
	closed  bool
	payload []byte
	keyVal  string
	everUp  bool // a connection was made once
}

// outMsg is a message written and not yet confirmed.
type outMsg struct {
	key string
	pub amqp.Publishing
	dc  *amqp.DeferredConfirmation // of its latest publish
}

// pubSession is one connection and the channel that publishes on it.
type pubSession struct {
	conn     *amqp.Connection
	ch       *amqp.Channel
	returns  chan amqp.Return
	closed   chan *amqp.Error
	chClosed chan *amqp.Error
}

func (ps *pubSession) dead() bool {
	return ps.ch.IsClosed() || ps.conn.IsClosed()
}

// CreateSink implements connector.SinkFactory. Nothing connects before the
// first write or flush: building a plan builds sinks it never writes with.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	c, err := parseConfig(t, env, true)
	if err != nil {
		return nil, err
	}
	if err := connector.RejectMetadata("rabbitmq", t); err != nil {
		return nil, err
	}
	enc, err := c.format.NewEncoder(t.Schema, c.fmtOpts)
	if err != nil {
		return nil, err
	}
	return &Sink{cfg: c, table: t, env: env, enc: enc}, nil
}

// Identity implements connector.Identified.
func (s *Sink) Identity() string { return s.cfg.identity(true) }

func (s *Sink) logf(format string, args ...any) {
	s.env.Log("rabbitmq table '%s': "+format, append([]any{s.table.Name}, args...)...)
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	if s.fatal != nil {
		return s.fatal
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
	return nil
}

// message encodes a row.
func (s *Sink) message(r types.Row) (*outMsg, error) {
	var err error
	s.payload, err = s.enc.Encode(s.payload[:0], r)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq table '%s': cannot encode a row: %w", s.table.Name, err)
	}
	m := &outMsg{key: s.cfg.routingKeys[0], pub: amqp.Publishing{Body: append([]byte(nil), s.payload...), ContentType: s.cfg.contentType}}
	if s.cfg.persistent {
		m.pub.DeliveryMode = amqp.Persistent
	}
	if s.cfg.keyCol >= 0 {
		if v := r.Vals[s.cfg.keyCol]; !v.IsNull() {
			if k := v.Str(); k != s.keyVal {
				if len(k) > 255 {
					return nil, fmt.Errorf("rabbitmq table '%s': column '%s' ('sink.routing-key-column') holds a routing key of %d bytes; AMQP allows 255",
						s.table.Name, s.table.Schema.Columns[s.cfg.keyCol].Name, len(k))
				}
				s.keyVal = k
			}
			m.key = s.keyVal
		}
	}
	return m, nil
}

// send publishes m, connecting first if need be, and keeps it until the
// broker confirms it.
func (s *Sink) send(ctx context.Context, m *outMsg) error {
	if s.cfg.confirms && len(s.pending) >= s.cfg.maxInFlight {
		if err := s.await(ctx, s.cfg.maxInFlight-1); err != nil {
			return err
		}
	}
	for {
		if s.sess == nil {
			if err := s.connect(ctx); err != nil {
				return err
			}
		}
		err := s.publish(ctx, m)
		if err == nil {
			if s.cfg.confirms {
				s.pending = append(s.pending, m)
			}
			return s.reap()
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := s.lost(fmt.Sprintf("cannot publish: %v", err)); err != nil {
			return err
		}
	}
}

// publish publishes m on the session.
func (s *Sink) publish(ctx context.Context, m *outMsg) error {
	ch := s.sess.ch
	if !s.cfg.confirms {
		return ch.PublishWithContext(ctx, s.cfg.exchange, m.key, s.cfg.mandatory, false, m.pub)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, s.cfg.exchange, m.key, s.cfg.mandatory, false, m.pub)
	if err != nil {
		return err
	}
	m.dc = dc
	return nil
}

// reap forgets the confirmed messages at the front of pending; a nack or
// a returned message fails the sink.
func (s *Sink) reap() error {
	if err := s.checkReturns(); err != nil {
		return err
	}
	k := 0
	for ; k < len(s.pending); k++ {
		dc := s.pending[k].dc
		if dc == nil {
			break
		}
		select {
		case <-dc.Done():
		default:
			s.pending = s.pending[k:]
			return nil
		}
		if dc.Acked() {
			continue
		}
		if s.sess == nil || s.sess.dead() {
			// The channel closed (amqp091-go then nacks what it did not
			// confirm), or it was dropped already: the message is
			// published again on the next.
			break
		}
		s.fatal = fmt.Errorf("rabbitmq table '%s': the broker %s refused a message to exchange '%s' with routing key '%s' (basic.nack: a queue that is full and rejects publishes, or an internal error)",
			s.table.Name, s.cfg.where, s.cfg.exchange, s.pending[k].key)
		return s.fatal
	}
	s.pending = s.pending[k:]
	return nil
}

// checkReturns fails the sink on a message the broker returned: with
// 'sink.mandatory', a message no queue took. A return comes before the
// confirmation of its message.
func (s *Sink) checkReturns() error {
	if s.sess == nil {
		return nil
	}
	select {
	case r, ok := <-s.sess.returns:
		if !ok {
			// The channel closed with its connection: no message came
			// back; what is unconfirmed goes again on the next.
			return s.lost("the channel closed")
		}
		return s.returned(r)
	default:
		return nil
	}
}

func (s *Sink) returned(r amqp.Return) error {
	s.fatal = fmt.Errorf("rabbitmq table '%s': the broker %s returned a message to exchange '%s' with routing key '%s': %s (%d): no queue is bound for it (bind one, or set 'sink.mandatory' = 'false' to let the broker drop such messages)",
		s.table.Name, s.cfg.where, r.Exchange, r.RoutingKey, r.ReplyText, r.ReplyCode)
	return s.fatal
}

// await waits until at most n messages are unconfirmed, publishing again
// on a new connection what a lost one did not confirm. A broker that
// confirms nothing for 'sink.flush-timeout' is taken as lost.
func (s *Sink) await(ctx context.Context, n int) error {
	deadline := time.Now().Add(s.cfg.flushWait)
	for {
		if err := s.reap(); err != nil {
			return err
		}
		if len(s.pending) <= n {
			return nil
		}
		if s.sess == nil || s.sess.dead() {
			if err := s.lost("the connection closed"); err != nil {
				return err
			}
			if err := s.connect(ctx); err != nil {
				return err
			}
			deadline = time.Now().Add(s.cfg.flushWait)
			continue
		}
		ss := s.sess
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-s.pending[0].dc.Done():
		case r, ok := <-ss.returns:
			t.Stop()
			if !ok {
				// Closed with the channel (amqp091-go closes its
				// notification channels): a loss, not a return.
				if err := s.lost("the channel closed"); err != nil {
					return err
				}
				continue
			}
			return s.returned(r)
		case <-ss.closed:
		case <-ss.chClosed:
		case <-t.C:
			s.logf("no confirmation from %s within %s ('sink.flush-timeout'): connecting again", s.cfg.where, s.cfg.flushWait)
			ss.conn.Close()
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
		t.Stop()
	}
}

// lost drops the session; what it did not confirm is published again on
// the next.
func (s *Sink) lost(why string) error {
	if s.sess == nil {
		return nil
	}
	s.sess.conn.Close()
	s.sess = nil
	s.logf("lost the connection to %s: %s; connecting again (%d unconfirmed messages go again)", s.cfg.where, why, len(s.pending))
	return nil
}

// connect connects with back-off and publishes again what is
// unconfirmed. The first connection must come within 'connect.timeout';
// later ones are tried until ctx ends. An error that trying again will not
// mend fails the sink.
func (s *Sink) connect(ctx context.Context) error {
	c := s.cfg
	wait := c.backoff.Initial
	deadline := time.Now().Add(c.connTimeout)
	for attempt := 1; ; attempt++ {
		ss, err := s.open(ctx)
		if err == nil {
			s.sess = ss
			if s.everUp {
				s.env.CountReconnect()
				s.logf("connected to %s again", c.where)
			}
			s.everUp = true
			if err = s.republish(ctx); err == nil {
				return nil
			}
			s.lost(fmt.Sprintf("cannot publish: %v", err))
		}
		err = classify(err)
		var perm *permanentError
		if errors.As(err, &perm) {
			s.fatal = fmt.Errorf("rabbitmq table '%s': %s: %s", s.table.Name, c.where, describe(err, c))
			return s.fatal
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if !s.everUp && time.Now().Add(wait).After(deadline) {
			s.fatal = fmt.Errorf("rabbitmq table '%s': cannot connect to %s within %s ('connect.timeout'): %s", s.table.Name, c.where, c.connTimeout, describe(err, c))
			return s.fatal
		}
		if attempt == 1 || wait >= c.backoff.Max && attempt%10 == 0 {
			s.logf("cannot connect to %s (attempt %d): %s; retrying every %s at most", c.where, attempt, describe(err, c), c.backoff.Max)
		}
		if !backoff(ctx, &wait, c) {
			return context.Cause(ctx)
		}
	}
}

// open opens a session: a connection, a channel in confirm mode, and
// the declarations the options ask for.
func (s *Sink) open(ctx context.Context) (*pubSession, error) {
	c := s.cfg
	conn, err := dial(ctx, c)
	if err != nil {
		return nil, err
	}
	ss := &pubSession{conn: conn, closed: conn.NotifyClose(make(chan *amqp.Error, 1))}
	fail := func(err error) (*pubSession, error) {
		conn.Close()
		return nil, err
	}
	if ss.ch, err = conn.Channel(); err != nil {
		return fail(err)
	}
	if err := declare(ss.ch, c, false); err != nil {
		return fail(err)
	}
	if c.confirms {
		if err := ss.ch.Confirm(false); err != nil {
			return fail(fmt.Errorf("cannot put the channel in confirm mode: %w", err))
		}
	}
	ss.returns = ss.ch.NotifyReturn(make(chan amqp.Return, 1024))
	ss.chClosed = ss.ch.NotifyClose(make(chan *amqp.Error, 1))
	return ss, nil
}

// republish publishes again, in order, what a lost session did not
// confirm.
func (s *Sink) republish(ctx context.Context) error {
	kept := s.pending[:0]
	for _, m := range s.pending {
		if m.dc != nil {
			select {
			case <-m.dc.Done():
				if m.dc.Acked() {
					continue
				}
			default:
			}
		}
		kept = append(kept, m)
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	if len(kept) > 0 {
		s.logf("publishing again %d messages the lost connection did not confirm", len(kept))
	}
	for _, m := range kept {
		if err := s.publish(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// Flush implements connector.Sink: it returns once the broker has
// confirmed every message written.
func (s *Sink) Flush(ctx context.Context) error {
	if s.fatal != nil {
		return s.fatal
	}
	if !s.cfg.confirms || len(s.pending) == 0 {
		return s.checkReturns()
	}
	return s.await(ctx, 0)
}

// Close implements connector.Sink: it flushes (for at most
// 'sink.flush-timeout' more) and closes the connection.
func (s *Sink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.sess != nil || len(s.pending) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.flushWait)
		err = s.Flush(ctx)
		cancel()
		if err != nil && len(s.pending) > 0 && s.fatal == nil {
			err = fmt.Errorf("rabbitmq table '%s': %d messages were not confirmed by %s: %w", s.table.Name, len(s.pending), s.cfg.where, err)
		}
	}
	if s.sess != nil {
		s.sess.conn.Close()
		s.sess = nil
	}
	return err
}
