// Package lsm is the durable local state backend: every operator's store
// lives in one embedded LSM tree (Pebble) in a directory. Writes of all
// stores go into one pending batch; Commit writes that batch together with
// the sources' positions, atomically and synced, so that after a crash the
// directory holds the state of one complete checkpoint.
//
// Key layout: 's' + len(id) + id + key for store entries, 'o' + id for a
// store's offsets table, 'p' + position key for source positions.
package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sluicesql/sluice/state"
)

// Backend is a state.Backend over a Pebble database.
type Backend struct {
	db *pebble.DB

	mu      sync.Mutex // guards pending, and every read that merges it
	pending *pebble.Batch
	stores  map[string]*store
}

// Open opens (or creates) the state directory dir.
func Open(dir string) (*Backend, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		return nil, fmt.Errorf("lsm: cannot open state directory %s: %w", dir, err)
	}
	return &Backend{db: db, pending: db.NewIndexedBatch(), stores: map[string]*store{}}, nil
}

// Store implements state.Backend.
func (b *Backend) Store(id string) (state.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.stores[id]; ok {
		return s, nil
	}
	s := &store{b: b, id: id, prefix: storePrefix(id), offsets: state.NewOffsets()}
	v, closer, err := b.pending.Get(offsetsKey(id))
	switch {
	case err == nil:
		err = s.offsets.LoadBinary(v)
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("lsm: store %s: %w", id, err)
		}
	case !errors.Is(err, pebble.ErrNotFound):
		return nil, fmt.Errorf("lsm: cannot read offsets of %s: %w", id, err)
	}
	b.stores[id] = s
	return s, nil
}

// Commit implements state.Backend.
func (b *Backend) Commit(job string, positions map[string]int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, err := b.positions(b.pending, job)
	if err != nil {
		return err
	}
	for k := range old {
		if _, ok := positions[k]; !ok {
			if err := b.pending.Delete(positionKey(k), nil); err != nil {
				return fmt.Errorf("lsm: cannot forget position %s: %w", k, err)
			}
		}
	}
	for k, v := range positions {
		if err := b.pending.Set(positionKey(k), binary.AppendVarint(nil, v), nil); err != nil {
			return fmt.Errorf("lsm: cannot record position %s: %w", k, err)
		}
	}
	if err := b.pending.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("lsm: cannot commit checkpoint: %w", err)
	}
	b.pending = b.db.NewIndexedBatch()
	return nil
}

// Positions implements state.Backend: the positions of the last Commit.
func (b *Backend) Positions(job string) (map[string]int64, error) {
	return b.positions(b.db, job)
}

// reader is what positions reads: the database (what is committed) or
// the pending batch (with what is not yet).
type reader interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

// positions returns job's positions as r holds them.
func (b *Backend) positions(r reader, job string) (map[string]int64, error) {
	lower := positionKey(state.JobPrefix(job))
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upperBound(lower)})
	if err != nil {
		return nil, fmt.Errorf("lsm: cannot read positions: %w", err)
	}
	defer it.Close()
	out := map[string]int64{}
	for it.First(); it.Valid(); it.Next() {
		v, n := binary.Varint(it.Value())
		if n <= 0 {
			return nil, fmt.Errorf("lsm: corrupt position %q", it.Key())
		}
		out[string(it.Key()[1:])] = v
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("lsm: cannot read positions: %w", err)
	}
	return out, nil
}

// Drop implements state.Backend: the job's entries are deleted in the
// pending batch.
func (b *Backend) Drop(job string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := state.JobPrefix(job)
	for id := range b.stores {
		if strings.HasPrefix(id, prefix) {
			delete(b.stores, id)
		}
	}
	// Store entries are keyed by the length of their store's ID first, so
	// that one ID prefixing another cannot mix their keys: walk them all.
	it, err := b.pending.NewIter(&pebble.IterOptions{LowerBound: []byte{'s'}, UpperBound: []byte{'t'}})
	if err != nil {
		return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
	}
	var doomed [][]byte
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		n, w := binary.Uvarint(k[1:])
		if w <= 0 || uint64(len(k)-1-w) < n {
			continue
		}
		if strings.HasPrefix(string(k[1+w:1+w+int(n)]), prefix) {
			doomed = append(doomed, bytes.Clone(k))
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
	}
	for _, k := range doomed {
		if err := b.pending.Delete(k, nil); err != nil {
			return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
		}
	}
	for _, kind := range []byte{'o', 'p'} {
		lower := append([]byte{kind}, prefix...)
		if err := b.pending.DeleteRange(lower, upperBound(lower), nil); err != nil {
			return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
		}
	}
	return nil
}

// Close implements state.Backend; uncommitted writes are dropped.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending.Close()
	return b.db.Close()
}

type store struct {
	b       *Backend
	id      string
	prefix  []byte
	offsets *state.Offsets
	key     []byte
}

func (s *store) k(key []byte) []byte {
	s.key = append(append(s.key[:0], s.prefix...), key...)
	return s.key
}

func (s *store) Get(key []byte) ([]byte, bool, error) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	v, closer, err := s.b.pending.Get(s.k(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("lsm: %s: %w", s.id, err)
	}
	out := bytes.Clone(v)
	closer.Close()
	return out, true, nil
}

func (s *store) Put(key, value []byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.b.pending.Set(s.k(key), value, nil)
}

func (s *store) Delete(key []byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.b.pending.Delete(s.k(key), nil)
}

func (s *store) Scan(prefix []byte, fn func(key, value []byte) bool) error {
	s.b.mu.Lock()
	lower := append(bytes.Clone(s.prefix), prefix...)
	it, err := s.b.pending.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upperBound(lower)})
	if err != nil {
		s.b.mu.Unlock()
		return fmt.Errorf("lsm: %s: %w", s.id, err)
	}
	type kv struct{ k, v []byte }
	var all []kv
	for it.First(); it.Valid(); it.Next() {
		all = append(all, kv{bytes.Clone(it.Key()[len(s.prefix):]), bytes.Clone(it.Value())})
	}
	err = it.Close()
	s.b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("lsm: %s: %w", s.id, err)
	}
	// fn runs without the lock: it may call Put or Delete.
	for _, e := range all {
		if !fn(e.k, e.v) {
			break
		}
	}
	return nil
}

func (s *store) Offsets() *state.Offsets { return s.offsets }

// Checkpoint writes the offsets table into the pending batch, beside the
// writes it covers.
func (s *store) Checkpoint() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.b.pending.Set(offsetsKey(s.id), s.offsets.AppendBinary(nil), nil)
}

func storePrefix(id string) []byte {
	p := []byte{'s'}
	p = binary.AppendUvarint(p, uint64(len(id)))
	return append(p, id...)
}

func offsetsKey(id string) []byte { return append([]byte{'o'}, id...) }

func positionKey(k string) []byte { return append([]byte{'p'}, k...) }

// upperBound returns the smallest key greater than every key with prefix p.
func upperBound(p []byte) []byte {
	u := bytes.Clone(p)
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] < 0xff {
			u[i]++
			return u[:i+1]
		}
	}
	return nil
}

// quietLogger keeps Pebble's informational messages off the terminal.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
