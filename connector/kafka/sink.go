package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// Delivery guarantees.
const (
	guaranteeNone        = "none"
	guaranteeAtLeastOnce = "at-least-once"
	guaranteeExactlyOnce = "exactly-once"
)

// defaultTxnInterval is how often an exactly-once sink commits its open
// transaction when nothing else (Flush, Close) does.
const defaultTxnInterval = time.Second

// txnEndTimeout bounds the commit or abort of a transaction. Ending a
// transaction must not be cut short by a cancelled job context: an
// interrupted EndTransaction leaves its outcome unknown.
const txnEndTimeout = 30 * time.Second

// closeTimeout bounds the flush of the commit loop and of Close, which
// have no caller's context, so that an unreachable cluster fails them
// rather than hanging the job.
const closeTimeout = 2 * time.Minute

// CreateSink implements connector.SinkFactory.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	return createSink(t, env, false)
}

// CreateSink implements connector.SinkFactory: +I/+U rows become records,
// -D rows tombstones, and -U rows are skipped.
func (UpsertFactory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	return createSink(t, env, true)
}

func createSink(t connector.Table, env connector.Env, upsert bool) (*Sink, error) {
	c, err := parseConfig(t, env, upsert)
	if err != nil {
		return nil, err
	}
	if c.pattern != nil || len(c.topics) != 1 {
		return nil, errors.New("a kafka sink writes one topic: option 'topic' must name exactly one")
	}
	s := &Sink{cfg: c, table: t.Name, topic: c.topics[0], upsert: upsert, interval: defaultTxnInterval}
	o := t.Options
	if s.valEnc, err = c.valFormat.NewEncoder(c.valSchema, c.valOpts); err != nil {
		return nil, err
	}
	if c.keyFormat != nil {
		if s.keyEnc, err = c.keyFormat.NewEncoder(c.keySchema, c.keyOpts); err != nil {
			return nil, err
		}
	}
	s.valRow.Vals = make([]types.Value, len(c.valIdx))
	s.keyRow.Vals = make([]types.Value, len(c.keyIdx))
	s.identity = c.identityValue()

	opts := append([]kgo.Opt(nil), c.props.producer...)
	switch p := strings.ToLower(strings.TrimSpace(o.String("sink.partitioner", "default"))); p {
	case "default":
	case "fixed":
		// Flink sends each writer's records to one partition; a sink has one
		// writer, so everything goes to partition 0 (the records' zero
		// Partition).
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	case "round-robin":
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	default:
		return nil, fmt.Errorf("option 'sink.partitioner': unsupported value '%s' (expected default, fixed or round-robin)", o["sink.partitioner"])
	}
	if s.guarantee, err = deliveryGuarantee(o); err != nil {
		return nil, err
	}
	switch s.guarantee {
	case guaranteeNone:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	case guaranteeAtLeastOnce:
		if c.props.acks != "all" || !c.props.idempotence {
			acks := kgo.LeaderAck()
			switch c.props.acks {
			case "all":
				acks = kgo.AllISRAcks()
			case "0":
				acks = kgo.NoAck()
			}
			opts = append(opts, kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite())
		}
	case guaranteeExactlyOnce:
		if tx, ok := env.KafkaTxn.(*kgo.Client); ok {
			// The job's state lives in Kafka: write into its transaction,
			// which each checkpoint commits with the state and positions.
			s.cl, s.shared, s.gate = tx, true, env.KafkaTxnGate
			if err := s.checkTopic(); err != nil {
				return nil, err
			}
			s.promise = s.delivered
			return s, nil
		}
		if env.DurableState {
			// Its transaction would commit after the state's checkpoint:
			// a crash between the two would lose that checkpoint's output
			// (the restarted job resumes after it).
			return nil, errors.New("'sink.delivery-guarantee' = 'exactly-once' with a local 'state.dir' could lose the output of a " +
				"checkpoint on a crash: keep the state in Kafka ('state.backend' = 'kafka', which commits state, positions and " +
				"output in one transaction), or use 'at-least-once'")
		}
		prefix, err := o.Required("sink.transactional-id-prefix")
		if err != nil {
			return nil, fmt.Errorf("'sink.delivery-guarantee' = 'exactly-once': %w", err)
		}
		if c.props.acks != "all" || !c.props.idempotence {
			return nil, errors.New("'sink.delivery-guarantee' = 'exactly-once' needs 'properties.acks' = 'all' and idempotent writes")
		}
		if s.interval, err = o.PositiveDuration("sink.transaction.interval", defaultTxnInterval); err != nil {
			return nil, err
		}
		// The one writer of the sink is writer 0.
		opts = append(opts, kgo.TransactionalID(prefix+"-0"))
	}
	if upsert {
		d, err := o.Duration("sink.buffer-flush.interval", 0)
		if err != nil {
			return nil, err
		}
		if d > 0 {
			opts = append(opts, kgo.ProducerLinger(d))
		}
		if _, err := o.Int("sink.buffer-flush.max-rows", 0); err != nil {
			return nil, err
		}
	}
	if s.cl, err = c.newClient(opts...); err != nil {
		return nil, err
	}
	if err := s.checkTopic(); err != nil {
		s.cl.Close()
		return nil, err
	}
	s.promise = s.delivered
	if s.guarantee == guaranteeExactlyOnce {
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go s.commitLoop()
	}
	return s, nil
}

// deliveryGuarantee reads 'sink.delivery-guarantee', or the older
// 'sink.semantic'.
func deliveryGuarantee(o connector.Options) (string, error) {
	key := "sink.delivery-guarantee"
	v, ok := o[key]
	if !ok {
		if v, ok = o["sink.semantic"]; ok {
			key = "sink.semantic"
		}
	}
	if !ok {
		return guaranteeAtLeastOnce, nil
	}
	switch g := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(v)), "_", "-"); g {
	case guaranteeNone, guaranteeAtLeastOnce, guaranteeExactlyOnce:
		return g, nil
	}
	return "", fmt.Errorf("option '%s': unsupported value '%s' (expected none, at-least-once or exactly-once)", key, v)
}

// checkTopic fails when the sink's topic does not exist: sinks do not
// create topics.
func (s *Sink) checkTopic() error {
	var tds kadm.TopicDetails
	err := s.cfg.waitBrokers(context.Background(), func(ctx context.Context) (err error) {
		tds, err = kadm.NewClient(s.cl).ListTopics(ctx, s.topic)
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot read metadata of topic '%s' on %s: %w", s.topic, strings.Join(s.cfg.brokers, ","), err)
	}
	if td, ok := tds[s.topic]; !ok || td.Err != nil {
		return fmt.Errorf("topic '%s' does not exist on %s (kafka sinks do not create topics)", s.topic, strings.Join(s.cfg.brokers, ","))
	}
	return nil
}

// Sink writes rows to one Kafka topic. It is safe for concurrent use.
//
// With 'exactly-once' every record is written inside a Kafka transaction
// that commits on Flush, on Close and every 'sink.transaction.interval';
// a read-committed consumer sees a record only once its transaction has
// committed. A failed write aborts the open transaction at Close.
type Sink struct {
	cfg       *config
	table     string
	topic     string
	upsert    bool
	guarantee string
	interval  time.Duration
	identity  bool // the value is the whole row

	cl      *kgo.Client
	valEnc  format.Encoder
	keyEnc  format.Encoder
	promise func(*kgo.Record, error)

	stop, stopped chan struct{} // the commit loop
	stopOnce      sync.Once

	mu     sync.Mutex
	valRow types.Row // scratch rows of the projected columns
	keyRow types.Row
	avg    int // bytes per record of the last batch, to size the next
	inTxn  bool
	// checkpointed: commits follow the job's checkpoints (see Prepare).
	checkpointed bool
	// shared: the sink writes into the job's transaction (Env.KafkaTxn),
	// which the state backend commits; between a Prepare and the Commit
	// that follows, records wait in held, so that none of the next epoch
	// joins the committing transaction.
	shared   bool
	gate     *sync.RWMutex // with shared: held for reading while producing
	holding  bool
	held     []*kgo.Record
	txnStart time.Time
	closed   bool
	err      error // sticky: a failed write or commit

	perrMu sync.Mutex
	perr   error // the first failed delivery
}

// delivered is every record's promise.
func (s *Sink) delivered(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	s.perrMu.Lock()
	if s.perr == nil {
		s.perr = err
	}
	s.perrMu.Unlock()
}

func (s *Sink) deliveryErr() error {
	s.perrMu.Lock()
	defer s.perrMu.Unlock()
	if s.perr != nil {
		return fmt.Errorf("kafka sink '%s': cannot write to topic %s on %s: %w", s.table, s.topic, strings.Join(s.cfg.brokers, ","), s.perr)
	}
	return nil
}

// Write implements connector.Sink: it hands the rows' records to the
// client, which sends them in the background.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("kafka sink '%s': write after close", s.table)
	}
	if s.err == nil {
		s.err = s.deliveryErr()
	}
	if s.err != nil {
		return s.err
	}
	if len(b.Rows) == 0 {
		return nil
	}
	if s.guarantee == guaranteeExactlyOnce && !s.inTxn && !s.shared {
		if err := s.cl.BeginTransaction(); err != nil {
			s.err = fmt.Errorf("kafka sink '%s': cannot begin a transaction: %w", s.table, err)
			return s.err
		}
		s.inTxn, s.txnStart = true, time.Now()
	}
	if s.gate != nil && !s.holding {
		s.gate.RLock()
		defer s.gate.RUnlock()
	}
	// The records and their bytes live in two allocations per batch; the
	// client keeps them until they are acknowledged.
	recs := make([]kgo.Record, len(b.Rows))
	buf := make([]byte, 0, max(s.avg, 16)*len(b.Rows)+64)
	n := 0
	for _, row := range b.Rows {
		var key, val []byte
		var err error
		if !s.cfg.changelog && !row.Kind.IsAccumulate() { // a changelog format writes every kind
			if !s.upsert {
				s.err = fmt.Errorf("kafka sink '%s' cannot take updates/deletes (got a %s row): "+
					"use the 'upsert-kafka' connector with a PRIMARY KEY for an updating query", s.table, row.Kind)
				return s.err
			}
			if row.Kind == types.UpdateBefore {
				continue // the +U that follows overwrites the key
			}
		}
		if s.keyEnc != nil {
			if key, buf, err = s.encode(s.keyEnc, &s.keyRow, s.cfg.keyIdx, row, buf); err != nil {
				s.err = fmt.Errorf("kafka sink '%s': cannot encode key: %w", s.table, err)
				return s.err
			}
		}
		if row.Kind != types.Delete || s.cfg.changelog {
			if s.identity {
				start := len(buf)
				if buf, err = s.valEnc.Encode(buf, row); err == nil {
					val = buf[start:len(buf):len(buf)]
				}
			} else {
				val, buf, err = s.encode(s.valEnc, &s.valRow, s.cfg.valIdx, row, buf)
			}
			if err != nil {
				s.err = fmt.Errorf("kafka sink '%s': cannot encode row: %w", s.table, err)
				return s.err
			}
		}
		rec := &recs[n]
		n++
		rec.Topic, rec.Key, rec.Value = s.topic, key, val
		if s.holding {
			s.held = append(s.held, rec)
			continue
		}
		s.cl.Produce(ctx, rec, s.promise)
	}
	if n > 0 {
		s.avg = len(buf)/n + 1
	}
	return nil
}

// encode appends the encoding of row's columns idx to buf; it returns the
// encoding (a slice of buf that later appends do not touch) and buf.
func (s *Sink) encode(enc format.Encoder, scratch *types.Row, idx []int, row types.Row, buf []byte) ([]byte, []byte, error) {
	for i, j := range idx {
		scratch.Vals[i] = row.Vals[j]
	}
	scratch.Kind, scratch.Origin = row.Kind, row.Origin
	start := len(buf)
	buf, err := enc.Encode(buf, *scratch)
	clear(scratch.Vals)
	if err != nil {
		return nil, buf[:start], err
	}
	return buf[start:len(buf):len(buf)], buf, nil
}

// Flush implements connector.Sink: it waits until every record written so
// far is acknowledged and, with exactly-once, commits the transaction.
func (s *Sink) Flush(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	return s.flush(ctx)
}

// Prepare implements connector.Committer: it waits until every record
// written so far is acknowledged, inside the open transaction, without
// committing it. From the first Prepare on, the sink commits only on Commit
// (the job's checkpoints), never on its own interval, and Close aborts what
// was not committed.
func (s *Sink) Prepare(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prepare(ctx, true)
}

// PrepareEnd implements connector.EndPreparer: Prepare at the end of
// input, except that a shared sink keeps the records it holds: the
// checkpoint whose commit would release them may still be committing, and
// the runtime releases them (Release) once it has, before the final
// commit.
func (s *Sink) PrepareEnd(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prepare(ctx, false)
}

// prepare is Prepare; release says that the held records belong to the
// open transaction.
func (s *Sink) prepare(ctx context.Context, release bool) error {
	s.checkpointed = true
	if s.closed {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if s.shared && release {
		// Checkpoints run one at a time: the one whose commit would have
		// released the held records is complete, even if its notice has
		// not come yet. They belong to this checkpoint's transaction.
		s.release(ctx)
	}
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka sink '%s': cannot flush to %s: %w", s.table, strings.Join(s.cfg.brokers, ","), err)
	}
	s.err = s.deliveryErr()
	if s.shared {
		s.holding = true
	}
	return s.err
}

// Commit implements connector.Committer: the prepared transaction commits.
// A shared sink's transaction was committed by the state backend: it only
// sends the records it held back into the next one.
func (s *Sink) Commit(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.shared {
		s.release(ctx)
		return nil
	}
	return s.flush(ctx)
}

// Release implements connector.Holder: the held records go into the open
// transaction now.
func (s *Sink) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.shared {
		return nil
	}
	s.release(ctx)
	return nil
}

func (s *Sink) release(ctx context.Context) {
	s.holding = false
	if s.gate != nil && len(s.held) > 0 {
		s.gate.RLock()
		defer s.gate.RUnlock()
	}
	for _, r := range s.held {
		s.cl.Produce(ctx, r, s.promise)
	}
	s.held = nil
}

func (s *Sink) flush(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka sink '%s': cannot flush to %s: %w", s.table, strings.Join(s.cfg.brokers, ","), err)
	}
	if s.err = s.deliveryErr(); s.err != nil {
		return s.err
	}
	if !s.inTxn {
		return nil
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), txnEndTimeout)
	defer cancel()
	s.inTxn = false
	if err := s.cl.EndTransaction(ectx, kgo.TryCommit); err != nil {
		s.err = fmt.Errorf("kafka sink '%s': cannot commit the transaction: %w", s.table, err)
		return s.err
	}
	return nil
}

// Abort discards the records written since the last commit: they are
// never visible to read-committed consumers. It clears a failed write, so
// that writing can go on in a new transaction. Only an exactly-once sink
// can abort; the others return an error.
func (s *Sink) Abort(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.guarantee != guaranteeExactlyOnce {
		return fmt.Errorf("kafka sink '%s': only an exactly-once sink can abort", s.table)
	}
	if s.closed {
		return fmt.Errorf("kafka sink '%s': abort after close", s.table)
	}
	if err := s.abort(ctx); err != nil {
		return err
	}
	s.err = nil
	s.perrMu.Lock()
	s.perr = nil
	s.perrMu.Unlock()
	return nil
}

func (s *Sink) abort(ctx context.Context) error {
	if !s.inTxn {
		return nil
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), txnEndTimeout)
	defer cancel()
	s.inTxn = false
	if err := s.cl.AbortBufferedRecords(ectx); err != nil {
		return fmt.Errorf("kafka sink '%s': cannot abort the transaction: %w", s.table, err)
	}
	if err := s.cl.EndTransaction(ectx, kgo.TryAbort); err != nil {
		return fmt.Errorf("kafka sink '%s': cannot abort the transaction: %w", s.table, err)
	}
	return nil
}

// commitLoop commits an exactly-once sink's transaction once it has been
// open for the transaction interval. (A later change ties commits to the
// checkpoints of the job's state instead.)
func (s *Sink) commitLoop() {
	defer close(s.stopped)
	tick := max(s.interval/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if !s.closed && !s.checkpointed && s.inTxn && s.err == nil && time.Since(s.txnStart) >= s.interval {
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			s.flush(ctx) // a failure is sticky: the next Write reports it
			cancel()
		}
		s.mu.Unlock()
	}
}

// Close implements connector.Sink: it flushes (with exactly-once, commits)
// and releases the client. After a failed write, an open transaction is
// aborted instead of committed.
func (s *Sink) Close() error {
	if s.stop != nil {
		s.stopOnce.Do(func() { close(s.stop) })
		<-s.stopped
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.shared {
		// The state backend owns the client and its transaction.
		s.held = nil
		return nil
	}
	defer s.cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if s.err == nil {
		s.err = s.deliveryErr()
	}
	if s.err != nil {
		if err := s.abort(ctx); err != nil {
			return fmt.Errorf("%w (and %v)", s.err, err)
		}
		return s.err
	}
	if s.checkpointed {
		// Whatever is still open was not covered by a checkpoint.
		return s.abort(ctx)
	}
	return s.flush(ctx)
}
