package rocketmq

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-clients/golang/v5/pkg/utils"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"

	"github.com/sluicesql/sluice/internal/rmqwire"
	"github.com/sluicesql/sluice/types"
)

// pullPoll is how long a pull waits at the proxy for new messages.
const pullPoll = 2 * time.Second

// offsetReader reads one message queue from an offset with PullMessage
// (the v5 Go client has no pull consumer: the calls are the protocol's,
// package rmqwire). A goroutine pulls, long polling, and hands batches to
// Read; a row's origin offset is its message's queue offset.
type offsetReader struct {
	decoder
	mq      *v2.MessageQueue
	cc      *grpc.ClientConn
	id      rmqwire.Identity
	batches chan []*v2.Message
	wake    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	next    atomic.Int64 // the queue offset the next pull starts at
	stop    int64        // bounded: the queue's end when the reader opened; -1 unbounded

	mu     sync.Mutex
	fatal  error
	closed bool
}

func (s *Source) openOffsets(ctx context.Context, d decoder, p int, after int64) (*offsetReader, error) {
	c := s.cfg
	rmqwire.QuietClient()
	mq := s.queues[p]
	target := firstEndpoint(c.endpoints)
	if addrs := mq.GetBroker().GetEndpoints().GetAddresses(); len(addrs) > 0 {
		target = utils.ParseAddress(addrs[0])
	}
	cc, err := rmqwire.Dial(target)
	if err != nil {
		return nil, fmt.Errorf("rocketmq table '%s': %w", c.table, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &offsetReader{decoder: d, mq: mq, cc: cc, batches: make(chan []*v2.Message, 4), wake: make(chan struct{}, 1),
		ctx: rctx, cancel: cancel, done: make(chan struct{}),
		id: c.identityFor("sluice-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(p))}
	from := after + 1
	if after < 0 {
		if from, err = r.startOffset(ctx); err != nil {
			cancel()
			cc.Close()
			return nil, err
		}
	}
	r.next.Store(from)
	r.stop = -1
	if c.bounded {
		if r.stop, err = r.queryOffset(ctx, rmqwire.PolicyEnd, nil); err != nil {
			cancel()
			cc.Close()
			return nil, err
		}
	}
	go r.pull()
	return r, nil
}

// startOffset asks the proxy where the table's startup mode starts.
func (r *offsetReader) startOffset(ctx context.Context) (int64, error) {
	switch r.src.cfg.startMode {
	case startLatest:
		return r.queryOffset(ctx, rmqwire.PolicyEnd, nil)
	case startTimestamp:
		t := time.UnixMilli(r.src.cfg.startMilli)
		return r.queryOffset(ctx, rmqwire.PolicyTimestamp, &t)
	}
	return r.queryOffset(ctx, rmqwire.PolicyBeginning, nil)
}

// queryOffset asks the proxy for an offset of the queue, trying for
// 'connect.timeout'.
func (r *offsetReader) queryOffset(ctx context.Context, policy int32, at *time.Time) (int64, error) {
	c := r.src.cfg
	req := &rmqwire.QueryOffsetRequest{MessageQueue: r.mq, Policy: policy, Timestamp: at}
	what := map[int32]string{rmqwire.PolicyBeginning: "start", rmqwire.PolicyEnd: "end", rmqwire.PolicyTimestamp: "offset at " + fmt.Sprint(at)}[policy]
	deadline := time.Now().Add(c.connectTimeout)
	backoff := 100 * time.Millisecond
	for {
		qctx, cancel := context.WithTimeout(r.id.Sign(ctx), c.reqTimeout)
		resp, err := rmqwire.QueryOffset(qctx, r.cc, req)
		cancel()
		if err == nil && resp.Status.GetCode() != v2.Code_OK {
			err = &statusError{code: int32(resp.Status.GetCode()), msg: resp.Status.GetMessage()}
		}
		if err == nil {
			return resp.Offset, nil
		}
		if permanent(err) || time.Now().Add(backoff).After(deadline) {
			return 0, fmt.Errorf("rocketmq table '%s': cannot find the %s of queue %s of topic '%s': %w", c.table, what, r.queueName(), c.topic, err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

func (r *offsetReader) queueName() string {
	return r.mq.GetBroker().GetName() + "/" + strconv.Itoa(int(r.mq.GetId()))
}

// pull pulls until the reader closes, or, bounded, reaches the end (it
// then closes batches).
func (r *offsetReader) pull() {
	defer close(r.done)
	c := r.src.cfg
	failing := 0
	backoff := 100 * time.Millisecond
	filter := &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: c.tag}
	group := &v2.Resource{ResourceNamespace: c.namespace, Name: c.group}
	for r.ctx.Err() == nil {
		from := r.next.Load()
		if r.stop >= 0 && from >= r.stop {
			close(r.batches)
			return
		}
		pctx, cancel := context.WithTimeout(r.id.Sign(r.ctx), pullPoll+c.reqTimeout)
		frames, err := rmqwire.PullMessage(pctx, r.cc, &rmqwire.PullMessageRequest{Group: group, MessageQueue: r.mq,
			Offset: from, BatchSize: c.pullBatch, FilterExpression: filter, LongPollingTimeout: pullPoll})
		cancel()
		if r.ctx.Err() != nil {
			return
		}
		var msgs []*v2.Message
		next := int64(-1)
		if err == nil {
			st := &v2.Status{Code: v2.Code_INTERNAL_SERVER_ERROR, Message: "the proxy sent no status"}
			for _, f := range frames {
				switch {
				case f.Status != nil:
					st = f.Status
				case f.Message != nil:
					msgs = append(msgs, f.Message)
				case f.HasNextOffset:
					next = f.NextOffset
				}
			}
			if st.GetCode() != v2.Code_OK && st.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
				err = &statusError{code: int32(st.GetCode()), msg: st.GetMessage()}
			}
		}
		if err != nil {
			if permanent(err) {
				r.fail(fmt.Errorf("rocketmq table '%s': pulling queue %s of topic '%s' from offset %d: %w", c.table, r.queueName(), c.topic, from, err))
				return
			}
			if failing++; failing == 1 || failing%20 == 0 {
				r.src.env.Log("rocketmq table '%s': cannot pull queue %s from %s (attempt %d): %v; retrying", c.table, r.queueName(), c.endpoints, failing, err)
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
			r.src.env.Log("rocketmq table '%s': pulling queue %s again after %d failed attempts", c.table, r.queueName(), failing)
			r.src.env.CountReconnect()
			failing, backoff = 0, 100*time.Millisecond
		}
		for _, m := range msgs {
			if off := m.GetSystemProperties().GetQueueOffset(); off < from {
				r.fail(fmt.Errorf("rocketmq table '%s': queue %s answered a pull from offset %d with a message at offset %d", c.table, r.queueName(), from, off))
				return
			}
		}
		if next < 0 {
			if len(msgs) == 0 {
				continue
			}
			next = msgs[len(msgs)-1].GetSystemProperties().GetQueueOffset() + 1
		}
		if r.stop >= 0 {
			k := 0
			for k < len(msgs) && msgs[k].GetSystemProperties().GetQueueOffset() < r.stop {
				k++
			}
			if k < len(msgs) {
				msgs, next = msgs[:k], r.stop
			}
		}
		if len(msgs) == 0 {
			r.next.Store(next)
			continue
		}
		select {
		case r.batches <- msgs:
			r.next.Store(next)
		case <-r.ctx.Done():
			return
		}
	}
}

func (r *offsetReader) fail(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.Wake()
}

// Wake implements connector.Waker.
func (r *offsetReader) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Read implements connector.Reader.
func (r *offsetReader) Read(ctx context.Context, b *types.Batch, max int) error {
	r.mu.Lock()
	err, closed := r.fatal, r.closed
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if closed {
		return errReaderClosed
	}
	t := time.NewTimer(pollWait)
	defer t.Stop()
	var msgs []*v2.Message
	select {
	case m, ok := <-r.batches:
		if !ok {
			return io.EOF
		}
		msgs = m
	case <-t.C:
		return nil
	case <-r.wake:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.fatal
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	// A batch is read whole: its rows are few hundred at most, and the
	// next pull does not wait for Read.
	for _, pm := range msgs {
		m := fromProto(pm)
		if err := r.add(b, &m, m.offset); err != nil {
			return err
		}
	}
	return nil
}

// fromProto is a pulled message as the reader sees it.
func fromProto(pm *v2.Message) message {
	sp := pm.GetSystemProperties()
	m := message{topic: pm.GetTopic().GetName(), id: sp.GetMessageId(), tag: sp.Tag, keys: sp.GetKeys(),
		props: pm.GetUserProperties(), bornHost: sp.GetBornHost(), queue: sp.GetQueueId(), offset: sp.GetQueueOffset(),
		body: pm.GetBody()}
	if ts := sp.GetBornTimestamp(); ts != nil {
		t := ts.AsTime()
		m.born = &t
	}
	if sp.GetBodyEncoding() == v2.Encoding_GZIP {
		if body, err := utils.AutoDecode(pm.GetBody()); err == nil {
			m.body = body
		}
	}
	return m
}

// Skipped implements connector.Stats.
func (r *offsetReader) Skipped() int64 { return r.rows.Skipped() }

// Close implements connector.Reader.
func (r *offsetReader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	<-r.done
	r.cc.Close()
	return r.src.policy.ReaderClosed()
}
