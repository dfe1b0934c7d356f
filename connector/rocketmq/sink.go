package rocketmq

import (
	"context"
	"fmt"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/rmqwire"
	"github.com/sluicesql/sluice/types"
)

// Sink sends rows to a topic, one message a row, as normal messages:
// up to 'sink.max-inflight' sends are in flight at once, and Flush (every
// checkpoint) returns once every message written has its send result,
// failing if one was refused after the client's retries (at-least-once:
// a retried send may have reached the proxy twice).
type Sink struct {
	cfg   *config
	table connector.Table
	env   connector.Env
	enc   format.Encoder

	prod rmq.Producer
	sem  chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	failed  error // the first send that failed
	closed  bool
	payload []byte
}

// CreateSink implements connector.SinkFactory. Nothing connects before
// the first write (or, for an exactly-once sink, its restore): building a
// plan builds sinks it never writes with.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	c, err := parseConfig(t, env, true)
	if err != nil {
		return nil, err
	}
	for _, m := range t.Metadata {
		if !m.Virtual {
			return nil, fmt.Errorf("connector 'rocketmq' writes no metadata, but column '%s' is METADATA '%s' (declare it VIRTUAL; 'tag' and 'sink.keys-column' set a message's tag and keys)", m.Name, m.Key)
		}
	}
	enc, err := c.format.NewEncoder(t.Schema, c.fmtOpts)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: c, table: t, env: env, enc: enc, sem: make(chan struct{}, c.maxInflight)}
	if c.exactlyOnce {
		return &TxnSink{Sink: s}, nil
	}
	return s, nil
}

// Identity implements connector.Identified.
func (s *Sink) Identity() string { return s.cfg.identity(true) }

// start makes the producer, trying for 'connect.timeout'.
func (s *Sink) start(ctx context.Context) error {
	if s.prod != nil {
		return nil
	}
	c := s.cfg
	rmqwire.QuietClient()
	opts := []rmq.ProducerOption{rmq.WithTopics(c.topic), rmq.WithClientFunc(c.clientFunc())}
	deadline := time.Now().Add(c.connectTimeout)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		p, err := rmq.NewProducer(c.clientConfig(""), opts...)
		if err != nil {
			return fmt.Errorf("rocketmq table '%s': %w", c.table, err)
		}
		if err = p.Start(); err == nil {
			s.prod = p
			return nil
		}
		if permanent(err) {
			return fmt.Errorf("rocketmq table '%s': cannot publish to topic '%s' at %s: %w", c.table, c.topic, c.endpoints, err)
		}
		if time.Now().Add(backoff).After(deadline) {
			return fmt.Errorf("rocketmq table '%s': cannot reach %s within %s ('connect.timeout'): %w", c.table, c.endpoints, c.connectTimeout, err)
		}
		if attempt == 1 {
			s.env.Log("rocketmq table '%s': cannot reach %s: %v; retrying for up to %s", c.table, c.endpoints, err, c.connectTimeout)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// message encodes a row.
func (s *Sink) message(r types.Row) (*rmq.Message, error) {
	var err error
	s.payload, err = s.enc.Encode(s.payload[:0], r)
	if err != nil {
		return nil, fmt.Errorf("rocketmq table '%s': cannot encode a row: %w", s.table.Name, err)
	}
	m := &rmq.Message{Topic: s.cfg.topic, Body: append([]byte(nil), s.payload...)}
	if s.cfg.tag != "" {
		m.SetTag(s.cfg.tag)
	}
	if s.cfg.keysCol >= 0 {
		if v := r.Vals[s.cfg.keysCol]; !v.IsNull() && v.Str() != "" {
			m.SetKeys(v.Str())
		}
	}
	return m, nil
}

// sendError wraps a send's failure.
func (s *Sink) sendError(err error) error {
	return fmt.Errorf("rocketmq table '%s': sending to topic '%s' at %s: %w", s.table.Name, s.cfg.topic, s.cfg.endpoints, err)
}

func (s *Sink) fail(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
}

func (s *Sink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	if err := s.err(); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	for i := range b.Rows {
		m, err := s.message(b.Rows[i])
		if err != nil {
			return err
		}
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		s.wg.Add(1)
		s.prod.SendAsync(context.WithoutCancel(ctx), m, func(_ context.Context, _ []*rmq.SendReceipt, err error) {
			if err != nil {
				s.fail(s.sendError(err))
			}
			<-s.sem
			s.wg.Done()
		})
	}
	return s.err()
}

// Flush implements connector.Sink: it waits for the result of every send.
func (s *Sink) Flush(ctx context.Context) error {
	s.wg.Wait()
	return s.err()
}

// Close implements connector.Sink.
func (s *Sink) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.Flush(context.Background())
	if s.prod != nil {
		if serr := s.prod.GracefulStop(); serr != nil && err == nil {
			err = fmt.Errorf("rocketmq table '%s': closing the producer: %w", s.table.Name, serr)
		}
	}
	return err
}
