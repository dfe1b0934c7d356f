// Package kafkalog keeps a job's state in a compacted Kafka topic: the
// changelog. Each checkpoint writes the stores' changes and the sources'
// positions to the changelog inside a Kafka transaction that the job's
// exactly-once Kafka sinks write their output into too (Txn), so that state,
// positions and output become visible together, or not at all. A job that
// restarts reads the changelog back (read-committed) and goes on from the
// last committed checkpoint; a crashed predecessor's open transaction is
// aborted when the restarted job fences its transactional ID.
//
// Stores are served from memory; the changelog is their durable copy.
// Record keys: 's' + len(id) + id + key for store entries (a tombstone
// deletes), 'o' + id for a store's offsets table, 'p' + key for positions.
package kafkalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/brokerwatch"
	"github.com/sluicesql/sluice/state"
)

// Options configure the backend.
type Options struct {
	// Bootstrap are the brokers.
	Bootstrap []string
	// Topic is the changelog topic; it is created (compacted, one
	// partition) if missing.
	Topic string
	// TransactionalID identifies the job's producer: a restarted job must
	// use the same one, so that it fences its crashed predecessor.
	TransactionalID string
	// Timeout bounds restoring and committing (default 30 s).
	Timeout time.Duration
	// ManualPartitions, if set, says which topics the records of which
	// name their partition (Record.Partition) themselves: shuffle topics,
	// written into the same transaction. Others are partitioned by key.
	ManualPartitions func(topic string) bool
	// TransactionTimeout is how long the broker keeps a transaction open
	// before it aborts it (default: the client's). A process that dies
	// mid-transaction holds up read-committed readers of the partitions it
	// wrote for that long, unless it restarts with the same ID first.
	TransactionTimeout time.Duration
	// BeforeCommit, if set, is called at every commit with the open
	// transaction's client and the checkpoint's positions, after the
	// checkpoint's records were written and before the transaction
	// commits: cluster mode commits the consumer group's offsets in it,
	// which the broker refuses to a member the group has left behind (a
	// zombie). An error aborts the transaction.
	BeforeCommit func(ctx context.Context, cl *kgo.Client, positions map[string]int64) error
	// ClientOpts are added to the options of every client the backend
	// makes: the security of the cluster (TLS, SASL).
	ClientOpts []kgo.Opt
	// Logf, if set, writes to the job's log: a broker that cannot be
	// reached is reported at once, and Open waits for it (up to Timeout).
	Logf func(format string, args ...any)
}

// partitioner partitions records by key, except those of the topics that
// name their partitions.
type partitioner struct {
	manual func(topic string) bool
	byKey  kgo.Partitioner
}

func (p partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if p.manual != nil && p.manual(topic) {
		return kgo.ManualPartitioner().ForTopic(topic)
	}
	return p.byKey.ForTopic(topic)
}

// Backend is a state.Backend over a Kafka changelog.
type Backend struct {
	opts Options
	cl   *kgo.Client

	mu        sync.Mutex
	data      map[string][]byte // every live entry, committed or pending
	dirty     map[string]bool   // keys changed since the last Commit
	positions map[string]int64
	stores    map[string]*store
	inTxn     bool
	// readOnly: opened by OpenReadOnly, it commits nothing.
	readOnly bool

	// gate is held for writing while a transaction commits and the next
	// begins (Commit); producers into the transaction hold it for
	// reading.
	gate sync.RWMutex
}

// Open connects, restores the last committed checkpoint from the changelog
// and begins the first transaction.
func Open(ctx context.Context, o Options) (*Backend, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Topic == "" || o.TransactionalID == "" || len(o.Bootstrap) == 0 {
		return nil, errors.New("kafkalog: bootstrap servers, topic and transactional ID are required")
	}
	copts := []kgo.Opt{
		kgo.SeedBrokers(o.Bootstrap...),
		kgo.TransactionalID(o.TransactionalID),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DefaultProduceTopic(o.Topic),
		kgo.RecordPartitioner(partitioner{manual: o.ManualPartitions, byKey: kgo.StickyKeyPartitioner(nil)}),
		brokerwatch.New("kafka state backend (topic "+o.Topic+")", o.Logf).Opt(),
	}
	if o.TransactionTimeout > 0 {
		copts = append(copts, kgo.TransactionTimeout(o.TransactionTimeout))
	}
	cl, err := kgo.NewClient(append(copts, o.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafkalog: cannot create client: %w", err)
	}
	b := &Backend{opts: o, cl: cl, data: map[string][]byte{}, dirty: map[string]bool{},
		positions: map[string]int64{}, stores: map[string]*store{}}
	// The first request waits for brokers that are down (restarting).
	err = brokerwatch.Wait(ctx, o.Timeout, o.Bootstrap, "the state backend's timeout", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		return b.ensureTopic(ctx)
	})
	if err != nil {
		cl.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := b.fence(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	if err := b.restore(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafkalog: cannot begin a transaction: %w", err)
	}
	b.inTxn = true
	return b, nil
}

// ErrNoChangelog is OpenReadOnly's error for a changelog topic that does
// not exist: no job has saved state there.
var ErrNoChangelog = errors.New("kafkalog: the changelog topic does not exist")

// OpenReadOnly restores the last committed checkpoint of the changelog
// o.Topic to read it (a job's manifest, say) while the job that owns it
// may be running: it does not take over the job's transactional ID
// (o.TransactionalID is not used) and reads up to the changelog's last
// stable offset, so that a transaction still open is not waited for.
// Commit fails; Close releases the client. A topic that does not exist
// gives ErrNoChangelog.
func OpenReadOnly(ctx context.Context, o Options) (*Backend, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Topic == "" || len(o.Bootstrap) == 0 {
		return nil, errors.New("kafkalog: bootstrap servers and topic are required")
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(o.Bootstrap...),
		brokerwatch.New("kafka state backend (topic "+o.Topic+")", o.Logf).Opt()}, o.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafkalog: cannot create client: %w", err)
	}
	b := &Backend{opts: o, cl: cl, data: map[string][]byte{}, dirty: map[string]bool{},
		positions: map[string]int64{}, stores: map[string]*store{}, readOnly: true}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, o.Topic)
	switch {
	case err != nil:
		err = fmt.Errorf("kafkalog: cannot look changelog topic %s up: %w", o.Topic, err)
	case !topics.Has(o.Topic):
		err = ErrNoChangelog
	default:
		err = b.restore(ctx)
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	return b, nil
}

func (b *Backend) ensureTopic(ctx context.Context) error {
	adm := kadm.NewClient(b.cl)
	cleanup := "compact"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &cleanup}, b.opts.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafkalog: cannot create changelog topic %s: %w", b.opts.Topic, err)
	}
	return nil
}

// fence takes over the transactional ID: the first transaction of this
// producer (empty but for one record, and aborted) makes the broker abort
// whatever a crashed predecessor left open, so that every transaction in
// the changelog is decided before it is read.
func (b *Backend) fence(ctx context.Context) error {
	if err := b.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("kafkalog: cannot begin a transaction: %w", err)
	}
	if err := b.cl.ProduceSync(ctx, &kgo.Record{Key: []byte("f"), Partition: 0}).FirstErr(); err != nil {
		return fmt.Errorf("kafkalog: cannot take over transactional ID %s: %w", b.opts.TransactionalID, err)
	}
	if err := b.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("kafkalog: cannot take over transactional ID %s: %w", b.opts.TransactionalID, err)
	}
	return nil
}

// restore reads the changelog up to its current end. Control records are
// kept so that the read sees the offset of the last transaction marker,
// whether that transaction committed or aborted.
func (b *Backend) restore(ctx context.Context) error {
	adm := kadm.NewClient(b.cl)
	list := adm.ListEndOffsets
	if b.readOnly {
		// The owner may be running: read what its transactions
		// committed, up to the last stable offset.
		list = adm.ListCommittedOffsets
	}
	ends, err := list(ctx, b.opts.Topic)
	if err != nil {
		return fmt.Errorf("kafkalog: cannot list the changelog's end: %w", err)
	}
	end, ok := ends.Lookup(b.opts.Topic, 0)
	if !ok || end.Err != nil {
		return fmt.Errorf("kafkalog: cannot find the changelog's end: %v", end.Err)
	}
	if end.Offset == 0 {
		return nil
	}
	rd, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.opts.Bootstrap...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{b.opts.Topic: {0: kgo.NewOffset().AtStart()}})}, b.opts.ClientOpts...)...)
	if err != nil {
		return fmt.Errorf("kafkalog: cannot read the changelog: %w", err)
	}
	defer rd.Close()
	for {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("kafkalog: cannot restore from %s: %w", b.opts.Topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return fmt.Errorf("kafkalog: cannot restore from %s: %w", b.opts.Topic, ferr)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				b.apply(r.Key, r.Value)
			}
			if r.Offset+1 >= end.Offset {
				done = true
			}
		})
		if done {
			return nil
		}
	}
}

func (b *Backend) apply(key, value []byte) {
	if len(key) == 0 || key[0] == 'f' {
		return
	}
	if key[0] == 'p' {
		if value == nil {
			delete(b.positions, string(key[1:]))
			return
		}
		if v, n := binary.Varint(value); n > 0 {
			b.positions[string(key[1:])] = v
		}
		return
	}
	if value == nil {
		delete(b.data, string(key))
		return
	}
	b.data[string(key)] = bytes.Clone(value)
}

// Txn returns the client whose open transaction the checkpoint commits.
// Exactly-once Kafka sinks produce into it between checkpoints.
func (b *Backend) Txn() *kgo.Client { return b.cl }

// TxnGate returns the lock that whoever produces into Txn's transaction
// holds for reading while producing: Commit holds it for writing from its
// flush of the transaction to the beginning of the next.
func (b *Backend) TxnGate() *sync.RWMutex { return &b.gate }

// Store implements state.Backend.
func (b *Backend) Store(id string) (state.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.stores[id]; ok {
		return s, nil
	}
	s := &store{b: b, id: id, prefix: storePrefix(id), offsets: state.NewOffsets()}
	if v, ok := b.data[offsetsKey(id)]; ok {
		if err := s.offsets.LoadBinary(v); err != nil {
			return nil, fmt.Errorf("kafkalog: store %s: %w", id, err)
		}
	}
	b.stores[id] = s
	return s, nil
}

// Commit implements state.Backend: the changes since the last Commit and the
// positions go into the open transaction with whatever the sinks produced
// into it, and the transaction commits.
func (b *Backend) Commit(job string, positions map[string]int64) error {
	if b.readOnly {
		return errors.New("kafkalog: the backend was opened read-only")
	}
	// No record goes into the transaction from here on: what was produced
	// is flushed with it, and the next begins before the gate opens.
	b.gate.Lock()
	defer b.gate.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.Timeout)
	defer cancel()
	keys := make([]string, 0, len(b.dirty))
	for k := range b.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.cl.Produce(ctx, &kgo.Record{Key: []byte(k), Value: b.data[k], Partition: 0}, nil)
	}
	for k, v := range positions {
		b.positions[k] = v
		b.cl.Produce(ctx, &kgo.Record{Key: []byte("p" + k), Value: binary.AppendVarint(nil, v), Partition: 0}, nil)
	}
	if err := b.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafkalog: cannot write checkpoint: %w", err)
	}
	if b.opts.BeforeCommit != nil && len(positions) > 0 {
		if err := b.opts.BeforeCommit(ctx, b.cl, positions); err != nil {
			b.inTxn = false
			if aerr := b.cl.EndTransaction(ctx, kgo.TryAbort); aerr != nil {
				return fmt.Errorf("kafkalog: cannot abort checkpoint: %w (after: %w)", aerr, err)
			}
			return fmt.Errorf("kafkalog: checkpoint aborted: %w", err)
		}
	}
	b.inTxn = false
	if err := b.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("kafkalog: cannot commit checkpoint: %w", err)
	}
	clear(b.dirty)
	if err := b.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("kafkalog: cannot begin a transaction: %w", err)
	}
	b.inTxn = true
	return nil
}

// Positions implements state.Backend.
func (b *Backend) Positions(job string) (map[string]int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := state.JobPrefix(job)
	out := make(map[string]int64, len(b.positions))
	for k, v := range b.positions {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

// ForgetPositions implements state.Backend: the positions become
// tombstones of the next checkpoint.
func (b *Backend) ForgetPositions(keys []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		if _, ok := b.positions[k]; ok {
			delete(b.positions, k)
			b.data["p"+k] = nil
			b.dirty["p"+k] = true
		}
	}
	return nil
}

// Drop implements state.Backend: the job's entries become tombstones of
// the next checkpoint.
func (b *Backend) Drop(job string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := state.JobPrefix(job)
	for id := range b.stores {
		if strings.HasPrefix(id, prefix) {
			delete(b.stores, id)
		}
	}
	for k := range b.data {
		if owner, ok := keyStore(k); ok && strings.HasPrefix(owner, prefix) {
			delete(b.data, k)
			b.dirty[k] = true
		}
	}
	for k := range b.positions {
		if strings.HasPrefix(k, prefix) {
			delete(b.positions, k)
			b.data["p"+k] = nil // a tombstone, written with the next commit
			b.dirty["p"+k] = true
		}
	}
	return nil
}

// keyStore returns the ID of the store a data key belongs to (a store
// entry or an offsets table).
func keyStore(k string) (string, bool) {
	switch {
	case strings.HasPrefix(k, "o"):
		return k[1:], true
	case strings.HasPrefix(k, "s"):
		n, w := binary.Uvarint([]byte(k[1:]))
		if w <= 0 || uint64(len(k)-1-w) < n {
			return "", false
		}
		return k[1+w : 1+w+int(n)], true
	}
	return "", false
}

// Close implements state.Backend: an open transaction is aborted (nothing
// uncommitted becomes visible).
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.cl.Close()
	if !b.inTxn {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.Timeout)
	defer cancel()
	b.inTxn = false
	if err := b.cl.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("kafkalog: cannot abort: %w", err)
	}
	if err := b.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("kafkalog: cannot abort: %w", err)
	}
	return nil
}

type store struct {
	b       *Backend
	id      string
	prefix  string
	offsets *state.Offsets
}

func (s *store) Get(key []byte) ([]byte, bool, error) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	v, ok := s.b.data[s.prefix+string(key)]
	if !ok || v == nil {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

func (s *store) Put(key, value []byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	k := s.prefix + string(key)
	s.b.data[k] = bytes.Clone(value)
	s.b.dirty[k] = true
	return nil
}

func (s *store) Delete(key []byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	k := s.prefix + string(key)
	if _, ok := s.b.data[k]; !ok {
		return nil
	}
	delete(s.b.data, k)
	s.b.dirty[k] = true // written as a tombstone
	return nil
}

func (s *store) Scan(prefix []byte, fn func(key, value []byte) bool) error {
	s.b.mu.Lock()
	p := s.prefix + string(prefix)
	var keys []string
	for k, v := range s.b.data {
		if v != nil && strings.HasPrefix(k, p) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		vals[i] = bytes.Clone(s.b.data[k])
	}
	s.b.mu.Unlock()
	for i, k := range keys {
		if !fn([]byte(k[len(s.prefix):]), vals[i]) {
			break
		}
	}
	return nil
}

func (s *store) Offsets() *state.Offsets { return s.offsets }

func (s *store) Checkpoint() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	k := offsetsKey(s.id)
	s.b.data[k] = s.offsets.AppendBinary(nil)
	s.b.dirty[k] = true
	return nil
}

func storePrefix(id string) string {
	return "s" + string(binary.AppendUvarint(nil, uint64(len(id)))) + id
}

func offsetsKey(id string) string { return "o" + id }
