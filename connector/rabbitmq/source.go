package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// pollWait is the longest a Read waits for a message before it returns
// with none (connector.Reader's contract).
const pollWait = 100 * time.Millisecond

// inboxSize is how many deliveries wait for Read beyond those the client
// library holds (at most 'prefetch-count' in all are unacknowledged).
const inboxSize = 256

// Source reads the messages of a queue: one consumer, so one partition.
// Its readers are connector.Resumers only so that their rows' offsets keep
// rising across runs of a job (a queue has no position to seek to: the
// broker delivers again what the job did not acknowledge).
type Source struct {
	cfg    *config
	table  connector.Table
	env    connector.Env
	policy *connector.ErrorPolicy
	rows   connector.MessageRows[*amqp.Delivery]
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
	s.rows = connector.MessageRows[*amqp.Delivery]{Table: t, Format: c.format, Options: c.fmtOpts, Policy: s.policy,
		Where: func(d *amqp.Delivery) string { return where(c.queue, d) }}
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

// Identity implements connector.Identified: the broker, virtual host and
// queue, not the credentials.
func (s *Source) Identity() string { return s.cfg.identity(false) }

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

// session is one connection and the channel that consumes on it.
type session struct {
	conn       *amqp.Connection
	ch         *amqp.Channel
	gen        uint64
	deliveries <-chan amqp.Delivery
	closed     chan *amqp.Error // the connection's
	chClosed   chan *amqp.Error // the channel's
	cancelled  chan string      // the broker cancelled the consumer
	dead       bool             // under Reader.mu: its deliveries come again on another
}

func (ss *session) close() {
	if ss.conn != nil {
		ss.conn.Close()
	}
}

// inbound is a delivery received on session gen.
type inbound struct {
	d   amqp.Delivery
	gen uint64
}

// pendingAck is a delivery read and not yet acknowledged.
type pendingAck struct {
	gen uint64
	tag uint64
}

// Reader reads a queue. A goroutine keeps a connection and a consumer up
// (reconnecting with back-off) and hands the deliveries to Read, which
// decodes them. Deliveries are acknowledged in the order received, with
// one basic.ack (multiple) for a run of them: in a job with checkpoints
// once the checkpoint whose barrier followed them completed
// (connector.Acknowledger), else at the next Read. A delivery tag is only
// ever acknowledged on the channel that delivered it: what a channel that
// closed delivered the broker delivers again, and a delivery of it not yet
// handed to the job is dropped, not read twice.
type Reader struct {
	src  *Source
	dec  *connector.MessageDecoder[*amqp.Delivery]
	next int64 // the origin offset of the next row
	in   chan inbound
	wake chan struct{} // Wake cuts a Read's wait short

	ctx    context.Context // the reader's life
	cancel context.CancelFunc
	done   chan struct{} // run ended

	mu        sync.Mutex // guards what follows; Acknowledge and Close may come from another goroutine after the task ended
	sess      *session
	fatal     error // a reconnection that will not succeed
	deferAcks bool
	acks      connector.AckLog[pendingAck]
	closed    bool
	dropped   int64 // deliveries of a dead channel dropped unread
	full      bool  // told the log that the prefetch window filled (once a reader)
}

// connect connects, declares and consumes. At open (first) it tries for
// 'connect.timeout' and fails with the last error; later it tries until
// the reader closes, with back-off. Either fails at once on an error that
// trying again will not mend (credentials, a missing queue).
func (r *Reader) connect(ctx context.Context, first bool) error {
	c := r.src.cfg
	wait := c.backoff.Initial
	deadline := time.Now().Add(c.connTimeout)
	for attempt := 1; ; attempt++ {
		r.mu.Lock()
		gen := uint64(1)
		if r.sess != nil {
			gen = r.sess.gen + 1
		}
		r.mu.Unlock()
		ss, err := r.consume(ctx, gen)
		if err == nil {
			r.mu.Lock()
			if r.closed {
				r.mu.Unlock()
				ss.close()
				return errors.New("closed")
			}
			r.sess = ss
			r.mu.Unlock()
			go r.forward(ss)
			if !first {
				r.src.env.CountReconnect()
				r.src.env.Log("rabbitmq table '%s': consuming from queue '%s' on %s again", r.src.table.Name, c.queue, c.where)
			}
			return nil
		}
		err = classify(err)
		var perm *permanentError
		if errors.As(err, &perm) {
			return fmt.Errorf("rabbitmq table '%s': %s: %s", r.src.table.Name, c.where, describe(err, c))
		}
		if first && time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("rabbitmq table '%s': cannot connect to %s within %s ('connect.timeout'): %s", r.src.table.Name, c.where, c.connTimeout, describe(err, c))
		}
		if attempt == 1 || wait >= c.backoff.Max && attempt%10 == 0 {
			r.src.env.Log("rabbitmq table '%s': cannot connect to %s (attempt %d): %s; retrying every %s at most", r.src.table.Name, c.where, attempt, describe(err, c), c.backoff.Max)
		}
		if !backoff(ctx, &wait, c) {
			if r.ctx.Err() != nil {
				return errors.New("closed")
			}
			return context.Cause(ctx)
		}
	}
}

// consume opens a session that consumes the queue.
func (r *Reader) consume(ctx context.Context, gen uint64) (*session, error) {
	c := r.src.cfg
	// Closing the reader cuts a connection attempt short.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel)
	defer stop()
	conn, err := dial(actx, c)
	if err != nil {
		return nil, err
	}
	ss := &session{conn: conn, gen: gen, closed: conn.NotifyClose(make(chan *amqp.Error, 1))}
	fail := func(err error) (*session, error) {
		conn.Close()
		return nil, err
	}
	if ss.ch, err = conn.Channel(); err != nil {
		return fail(err)
	}
	if err := declare(ss.ch, c, true); err != nil {
		return fail(err)
	}
	if err := ss.ch.Qos(c.prefetch, 0, false); err != nil {
		return fail(err)
	}
	ss.chClosed = ss.ch.NotifyClose(make(chan *amqp.Error, 1))
	ss.cancelled = ss.ch.NotifyCancel(make(chan string, 1))
	if ss.deliveries, err = ss.ch.Consume(c.queue, c.consumerTag, false, c.exclusiveCons, false, false, nil); err != nil {
		return fail(fmt.Errorf("cannot consume from queue '%s': %w", c.queue, err))
	}
	return ss, nil
}

// forward hands a session's deliveries to Read until its channel closes.
func (r *Reader) forward(ss *session) {
	for d := range ss.deliveries {
		select {
		case r.in <- inbound{d, ss.gen}:
		case <-r.ctx.Done():
			return
		}
	}
}

// run connects again whenever the session ends, until the reader closes.
func (r *Reader) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		ss := r.sess
		r.mu.Unlock()
		var why string
		select {
		case <-r.ctx.Done():
			return
		case e := <-ss.closed:
			why = closeReason(e, "the connection closed")
		case e := <-ss.chClosed:
			why = closeReason(e, "the channel closed")
		case tag, ok := <-ss.cancelled:
			why = fmt.Sprintf("the broker cancelled consumer '%s' (was queue '%s' deleted?)", tag, r.src.cfg.queue)
			if !ok {
				why = "the channel closed" // its notification channels close with it
			}
		}
		r.mu.Lock()
		ss.dead = true
		r.mu.Unlock()
		ss.close()
		r.src.env.Log("rabbitmq table '%s': lost queue '%s' on %s: %s; reconnecting (what it delivered and was not acknowledged comes again)",
			r.src.table.Name, r.src.cfg.queue, r.src.cfg.where, why)
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

func closeReason(e *amqp.Error, def string) string {
	if e == nil {
		return def
	}
	return fmt.Sprintf("%s (AMQP %d)", e.Reason, e.Code)
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
		r.ackLocked(n)
	}
	return nil
}

// ackLocked acknowledges the first n unacknowledged deliveries: those of
// the live channel with one basic.ack (multiple) for the last of them; the
// others the broker delivers again.
func (r *Reader) ackLocked(n int) {
	ss := r.sess
	var last uint64
	if ss != nil && !ss.dead && !r.closed {
		for _, a := range r.acks.Pending()[:n] {
			if a.gen == ss.gen {
				last = a.tag
			}
		}
	}
	if last > 0 {
		// An error means the channel is closing: the broker delivers
		// those again.
		ss.ch.Ack(last, true)
	}
	r.acks.Drop(n)
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
	if r.deferAcks && !r.full && r.acks.Len() >= r.src.cfg.prefetch {
		r.full = true
		r.src.env.Log("rabbitmq table '%s': %d messages ('prefetch-count') wait for the next checkpoint to be acknowledged, and the broker sends no more until then: raise 'prefetch-count' or checkpoint more often (said once)",
			r.src.table.Name, r.acks.Len())
	}
	r.mu.Unlock()
	t := time.NewTimer(pollWait)
	defer t.Stop()
	var m inbound
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
	for n := 0; ; {
		if err := r.add(b, m); err != nil {
			return err
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

// add decodes a delivery into a row of b, or applies the error policy. A
// delivery of a channel that has closed is dropped: the broker delivers
// it again.
func (r *Reader) add(b *types.Batch, m inbound) error {
	r.mu.Lock()
	if r.sess == nil || m.gen != r.sess.gen || r.sess.dead {
		r.dropped++
		r.mu.Unlock()
		return nil
	}
	r.acks.Add(pendingAck{gen: m.gen, tag: m.d.DeliveryTag})
	r.mu.Unlock()
	d := &m.d
	off := r.next
	r.next++
	return r.dec.Add(b, off, d.Body, d)
}

// where locates a delivery of queue for error messages.
func where(queue string, d *amqp.Delivery) string {
	s := "queue '" + queue + "' delivery-tag " + strconv.FormatUint(d.DeliveryTag, 10)
	if d.MessageId != "" {
		s += " message-id '" + d.MessageId + "'"
	}
	return s
}

// Skipped implements connector.Stats.
func (r *Reader) Skipped() int64 { return r.dec.Skipped() }

// Close implements connector.Reader. What was not acknowledged stays with
// the broker, which delivers it again.
func (r *Reader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	ss := r.sess
	r.mu.Unlock()
	r.cancel()
	<-r.done
	r.mu.Lock()
	if r.sess != nil {
		r.sess.close()
	}
	r.mu.Unlock()
	if ss != nil && ss != r.sess {
		ss.close()
	}
	s := r.src
	return s.policy.ReaderClosed()
}

// metaFunc computes a METADATA column's value from a delivery.
type metaFunc = func(d *amqp.Delivery) types.Value

func metadataFunc(key string, t types.Type) metaFunc {
	k := t.Kind
	str := func(get func(d *amqp.Delivery) string, nullIfEmpty bool) metaFunc {
		return func(d *amqp.Delivery) types.Value {
			s := get(d)
			if s == "" && nullIfEmpty {
				return types.NullValue
			}
			return types.StringValue(s).WithKind(k)
		}
	}
	switch key {
	case "exchange":
		return str(func(d *amqp.Delivery) string { return d.Exchange }, false)
	case "routing-key":
		return str(func(d *amqp.Delivery) string { return d.RoutingKey }, false)
	case "message-id":
		return str(func(d *amqp.Delivery) string { return d.MessageId }, true)
	case "correlation-id":
		return str(func(d *amqp.Delivery) string { return d.CorrelationId }, true)
	case "content-type":
		return str(func(d *amqp.Delivery) string { return d.ContentType }, true)
	case "app-id":
		return str(func(d *amqp.Delivery) string { return d.AppId }, true)
	case "type":
		return str(func(d *amqp.Delivery) string { return d.Type }, true)
	case "reply-to":
		return str(func(d *amqp.Delivery) string { return d.ReplyTo }, true)
	case "priority":
		return func(d *amqp.Delivery) types.Value {
			if d.Priority == 0 {
				return types.NullValue
			}
			return types.IntValue(k, int64(d.Priority))
		}
	case "delivery-tag":
		return func(d *amqp.Delivery) types.Value { return types.BigIntValue(int64(d.DeliveryTag)) }
	case "redelivered":
		return func(d *amqp.Delivery) types.Value { return types.BoolValue(d.Redelivered) }
	case "timestamp":
		return func(d *amqp.Delivery) types.Value {
			if d.Timestamp.IsZero() {
				return types.NullValue
			}
			return types.TimestampLTZValue(d.Timestamp.UnixMicro()).WithKind(k)
		}
	case "headers":
		kk, vk := t.Elem.Kind, t.Value.Kind
		return func(d *amqp.Delivery) types.Value {
			m := &types.MapValue{Keys: make([]types.Value, 0, len(d.Headers)), Values: make([]types.Value, 0, len(d.Headers))}
			for _, name := range sortedKeys(d.Headers) {
				m.Keys = append(m.Keys, types.StringValue(name).WithKind(kk))
				v := d.Headers[name]
				if v == nil {
					m.Values = append(m.Values, types.NullValue)
					continue
				}
				m.Values = append(m.Values, types.StringValue(headerString(v)).WithKind(vk))
			}
			return types.NewMapValue(m)
		}
	}
	return func(*amqp.Delivery) types.Value { return types.NullValue }
}
