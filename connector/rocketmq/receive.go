package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/rmqwire"
	"github.com/sluicesql/sluice/types"
)

// inboxSize is how many received messages wait for Read; while it is
// full, nothing more is received (the proxy keeps the rest). Small: a
// message's invisible time runs while it waits.
const inboxSize = 256

// ackWorkers is how many acknowledgements or renewals are in flight at
// once.
const ackWorkers = 8

// ackBatch is how many messages one AckMessage call acknowledges (the
// client's Ack sends one; the protocol takes many).
const ackBatch = 256

// held is a message received and not yet acknowledged.
type held struct {
	mv       *rmq.MessageView
	deadline time.Time // when its invisible time ends, as far as we know
	acking   bool      // on its way to be acknowledged: no longer renewed
}

// recvReader reads a topic as a simple consumer of the table's group. A
// goroutine receives (long polling) and hands messages to Read; another,
// the keeper, acknowledges what Acknowledge (or, without checkpoints,
// the next Read) releases, and extends the invisible time of every
// message held while a third of it is left, so that a message waiting
// for a checkpoint is not delivered again meanwhile. Both make their
// calls one message at a time, as the client does, with ackWorkers in
// flight; the keeper is the only one to touch a message's receipt handle
// once received.
type recvReader struct {
	decoder
	consumer rmq.SimpleConsumer
	ackCC    *grpc.ClientConn // acknowledgements go out in batches, over a connection of their own
	ackCl    v2.MessagingServiceClient
	ackID    rmqwire.Identity
	next     int64 // origin offset of the next row
	in       chan *held
	wake     chan struct{}
	kick     chan struct{} // wakes the keeper

	ctx    context.Context
	cancel context.CancelFunc
	done   sync.WaitGroup // the receiving goroutine and the keeper

	mu        sync.Mutex
	fatal     error
	deferAcks bool
	acks      connector.AckLog[*held] // returned by Read, not yet released, in order
	live      map[*held]struct{}      // every message received and not acknowledged
	toAck     []*held
	closed    bool
}

func (s *Source) openReceive(ctx context.Context, d decoder, after int64) (*recvReader, error) {
	c := s.cfg
	rmqwire.QuietClient()
	var consumer rmq.SimpleConsumer
	deadline := time.Now().Add(c.connectTimeout)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		sc, err := rmq.NewSimpleConsumer(c.clientConfig(c.group), rmq.WithAwaitDuration(c.await),
			rmq.WithClientFuncForSimpleConsumer(c.clientFunc()),
			rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{c.topic: rmq.NewFilterExpression(c.tag)}))
		if err != nil {
			return nil, fmt.Errorf("rocketmq table '%s': %w", c.table, err)
		}
		if err = sc.Start(); err == nil {
			consumer = sc
			break
		}
		if permanent(err) {
			return nil, fmt.Errorf("rocketmq table '%s': cannot subscribe to topic '%s' at %s as group '%s': %w", c.table, c.topic, c.endpoints, c.group, err)
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("rocketmq table '%s': cannot subscribe to topic '%s' at %s within %s ('connect.timeout'): %w", c.table, c.topic, c.endpoints, c.connectTimeout, err)
		}
		if attempt == 1 {
			s.env.Log("rocketmq table '%s': cannot reach %s: %v; retrying for up to %s", c.table, c.endpoints, err, c.connectTimeout)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		backoff = min(backoff*2, 2*time.Second)
	}
	ackCC, err := rmqwire.Dial(firstEndpoint(c.endpoints))
	if err != nil {
		consumer.GracefulStop()
		return nil, fmt.Errorf("rocketmq table '%s': %w", c.table, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &recvReader{decoder: d, consumer: consumer, next: after + 1, in: make(chan *held, inboxSize),
		ackCC: ackCC, ackCl: v2.NewMessagingServiceClient(ackCC), ackID: c.identityFor("sluice-ack-" + strconv.FormatInt(time.Now().UnixNano(), 36)),
		wake: make(chan struct{}, 1), kick: make(chan struct{}, 1), ctx: rctx, cancel: cancel, live: map[*held]struct{}{}}
	r.done.Add(2)
	go r.receive()
	go r.keep()
	return r, nil
}

// receive receives messages until the reader closes.
func (r *recvReader) receive() {
	defer r.done.Done()
	c := r.src.cfg
	failing := 0
	backoff := 100 * time.Millisecond
	for r.ctx.Err() == nil {
		// Receive no more than the inbox can take.
		n := min(int(c.recvBatch), cap(r.in)-len(r.in))
		if n == 0 {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-r.ctx.Done():
				return
			}
			continue
		}
		mvs, err := r.consumer.Receive(r.ctx, int32(n), c.invisible)
		if err != nil {
			if code, ok := rpcStatus(err); ok && code == 40401 { // MESSAGE_NOT_FOUND: nothing new
				err = nil
			}
		}
		if r.ctx.Err() != nil {
			return
		}
		if err != nil {
			if permanent(err) {
				r.fail(fmt.Errorf("rocketmq table '%s': receiving from topic '%s' as group '%s': %w", c.table, c.topic, c.group, err))
				return
			}
			if failing++; failing == 1 || failing%20 == 0 {
				r.src.env.Log("rocketmq table '%s': cannot receive from %s (attempt %d): %v; retrying", c.table, c.endpoints, failing, err)
			}
			select {
			case <-time.After(backoff):
			case <-r.ctx.Done():
				return
			}
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		if failing > 0 {
			r.src.env.Log("rocketmq table '%s': receiving from %s again after %d failed attempts", c.table, c.endpoints, failing)
			r.src.env.CountReconnect()
			failing, backoff = 0, 100*time.Millisecond
		}
		now := time.Now()
		for _, mv := range mvs {
			h := &held{mv: mv, deadline: now.Add(c.invisible)}
			r.mu.Lock()
			r.live[h] = struct{}{}
			r.mu.Unlock()
			select {
			case r.in <- h:
			case <-r.ctx.Done():
				return
			}
		}
	}
}

func (r *recvReader) fail(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.Wake()
}

// keep acknowledges released messages and renews the invisible time of
// held ones, until the reader closes; then it acknowledges what was
// released before that, and stops.
func (r *recvReader) keep() {
	defer r.done.Done()
	c := r.src.cfg
	tick := time.NewTicker(min(c.invisible/10, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-r.kick:
		case <-tick.C:
		case <-r.ctx.Done():
			r.ackReleased()
			return
		}
		r.ackReleased()
		r.renew()
	}
}

// ackReleased acknowledges the messages released so far.
func (r *recvReader) ackReleased() {
	r.mu.Lock()
	batch := r.toAck
	r.toAck = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	c := r.src.cfg
	var chunks [][]*held
	for len(batch) > 0 {
		n := min(len(batch), ackBatch)
		chunks = append(chunks, batch[:n])
		batch = batch[n:]
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, ackWorkers)
	topic := &v2.Resource{ResourceNamespace: c.namespace, Name: c.topic}
	group := &v2.Resource{ResourceNamespace: c.namespace, Name: c.group}
	for _, hs := range chunks {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			req := &v2.AckMessageRequest{Topic: topic, Group: group}
			for _, h := range hs {
				req.Entries = append(req.Entries, &v2.AckMessageEntry{MessageId: h.mv.GetMessageId(), ReceiptHandle: h.mv.GetReceiptHandle()})
			}
			ctx, cancel := context.WithTimeout(r.ackID.Sign(context.Background()), 2*c.reqTimeout)
			defer cancel()
			// A failure is left to the proxy, which delivers the
			// message again after its invisible time (at-least-once).
			r.ackCl.AckMessage(ctx, req)
		}()
	}
	wg.Wait()
	batch = nil
	for _, hs := range chunks {
		batch = append(batch, hs...)
	}
	r.mu.Lock()
	for _, h := range batch {
		delete(r.live, h)
	}
	r.mu.Unlock()
}

// renew extends the invisible time of the messages held that have half
// of it left or less. One whose receipt handle the proxy no longer takes
// (its invisible time ended first: it is delivered again) is forgotten.
func (r *recvReader) renew() {
	c := r.src.cfg
	soon := time.Now().Add(c.invisible / 2)
	var due []*held
	r.mu.Lock()
	for h := range r.live {
		if !h.acking && h.deadline.Before(soon) {
			due = append(due, h)
		}
	}
	r.mu.Unlock()
	if len(due) == 0 {
		return
	}
	parallel(due, func(h *held) {
		err := r.consumer.ChangeInvisibleDuration(h.mv, c.invisible)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err == nil {
			h.deadline = time.Now().Add(c.invisible)
		} else if code, ok := rpcStatus(err); ok && code == 40013 { // INVALID_RECEIPT_HANDLE
			delete(r.live, h)
		}
	})
}

// parallel calls f for each of hs, ackWorkers at a time.
func parallel(hs []*held, f func(*held)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, ackWorkers)
	for _, h := range hs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(h)
		}()
	}
	wg.Wait()
}

// releaseLocked hands the first n unacknowledged messages to the keeper.
func (r *recvReader) releaseLocked(n int) {
	for _, h := range r.acks.Pending()[:n] {
		h.acking = true
	}
	r.toAck = append(r.toAck, r.acks.Pending()[:n]...)
	r.acks.Drop(n)
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Wake implements connector.Waker.
func (r *recvReader) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// DeferAcks implements connector.Acknowledger.
func (r *recvReader) DeferAcks() {
	r.mu.Lock()
	r.deferAcks = true
	r.mu.Unlock()
}

// Barrier implements connector.Acknowledger.
func (r *recvReader) Barrier(id int64) {
	r.mu.Lock()
	r.acks.Barrier(id)
	r.mu.Unlock()
}

// Acknowledge implements connector.Acknowledger.
func (r *recvReader) Acknowledge(id int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := r.acks.Covered(id); n > 0 && !r.closed {
		r.releaseLocked(n)
	}
	return nil
}

// Read implements connector.Reader.
func (r *recvReader) Read(ctx context.Context, b *types.Batch, max int) error {
	r.mu.Lock()
	if err := r.fatal; err != nil {
		r.mu.Unlock()
		return err
	}
	if r.closed {
		r.mu.Unlock()
		return errReaderClosed
	}
	if !r.deferAcks && r.acks.Len() > 0 {
		// The job processed what the last Read returned.
		r.releaseLocked(r.acks.Len())
	}
	r.mu.Unlock()
	t := time.NewTimer(pollWait)
	defer t.Stop()
	var h *held
	select {
	case h = <-r.in:
	case <-t.C:
		return nil
	case <-r.wake:
		r.mu.Lock()
		err := r.fatal
		r.mu.Unlock()
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	for n := 0; ; {
		r.mu.Lock()
		r.acks.Add(h)
		r.mu.Unlock()
		m := fromView(h.mv)
		if err := r.add(b, &m, r.next); err != nil {
			return err
		}
		r.next++
		if n++; n >= max {
			return nil
		}
		select {
		case h = <-r.in:
		default:
			return nil
		}
	}
}

// fromView is a received message as the reader sees it. The client
// does not tell the queue a message came from.
func fromView(mv *rmq.MessageView) message {
	return message{topic: mv.GetTopic(), id: mv.GetMessageId(), tag: mv.GetTag(), keys: mv.GetKeys(),
		props: mv.GetProperties(), born: mv.GetBornTimestamp(), bornHost: deref(mv.GetBornHost()),
		queue: -1, offset: mv.GetOffset(), attempt: mv.GetDeliveryAttempt(), body: mv.GetBody()}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Skipped implements connector.Stats.
func (r *recvReader) Skipped() int64 { return r.rows.Skipped() }

// Close implements connector.Reader: what was released is acknowledged;
// the rest stays with the proxy, which delivers it again once its
// invisible time ends.
func (r *recvReader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.done.Wait()
	r.ackCC.Close()
	err := r.consumer.GracefulStop()
	if cerr := r.src.policy.ReaderClosed(); cerr != nil {
		return cerr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("rocketmq table '%s': closing the consumer: %w", r.src.cfg.table, err)
	}
	return nil
}
