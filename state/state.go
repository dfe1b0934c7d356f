package state

import (
	"encoding/binary"
	"errors"
	"sort"
	"strings"
	"sync"
)

// Backend hands out one Store per stateful operator instance.
type Backend interface {
	// Store returns the store of the operator with the given stable ID
	// (derived from the plan, e.g. "job/agg-2/task-0"), creating it if needed.
	Store(operatorID string) (Store, error)
	// Commit makes every store's writes since the last Commit durable,
	// together with the positions job's sources had reached at the same
	// checkpoint (atomically, for durable backends): after a restart, the
	// stores hold exactly the state of the input up to those positions.
	// The keys of job's positions begin with job + "/" (see JobPrefix).
	// Positions merge into those committed before: a key positions lacks
	// keeps its value (several processes of a cluster commit their own
	// partitions' into one backend), until it is forgotten.
	Commit(job string, positions map[string]int64) error
	// ForgetPositions removes the positions of the given keys (a file no
	// longer read): durable at the next Commit.
	ForgetPositions(keys []string) error
	// Positions returns job's source positions of the last Commit (empty
	// if there was none): where its sources resume after a restart.
	Positions(job string) (map[string]int64, error)
	// Drop removes every store whose ID begins with JobPrefix(job), and
	// job's positions: the job starts afresh. Durable at the next Commit.
	Drop(job string) error
	// Close releases the backend.
	Close() error
}

// JobPrefix is what the store IDs and position keys of job begin with:
// job + "/", or "" (every key) for an empty job.
func JobPrefix(job string) string {
	if job == "" {
		return ""
	}
	return job + "/"
}

// Store is the state of one operator instance.
type Store interface {
	// Get returns the value stored under key.
	Get(key []byte) (value []byte, ok bool, err error)
	// Put stores value under key; both may be reused by the caller after
	// Put returns.
	Put(key, value []byte) error
	// Delete removes key.
	Delete(key []byte) error
	// Scan calls fn for every key with the given prefix, in key order,
	// until fn returns false.
	Scan(prefix []byte, fn func(key, value []byte) bool) error
	// Offsets is the table of the highest origin offset folded into this
	// store, per upstream partition.
	Offsets() *Offsets
	// Checkpoint records the store's offsets table with its writes: the
	// operator's part of the current checkpoint is complete. The writes
	// become durable at the backend's next Commit. For the in-memory
	// backend it is a no-op.
	Checkpoint() error
}

// Offsets tracks, per upstream partition, the highest offset folded in.
// It is used by one goroutine (the operator's). The entry of the last
// partition admitted is kept aside, so that a run of rows from one
// partition (the usual batch) costs no map access per row.
type Offsets struct {
	m map[int32]int64
	// last is the entry of partition lastPart when hasLast; it is newer
	// than m's.
	lastPart int32
	lastOff  int64
	hasLast  bool
}

// NewOffsets returns an empty table.
func NewOffsets() *Offsets { return &Offsets{m: make(map[int32]int64)} }

// Admit reports whether a row from partition part at offset off is new, and
// if so records it. Rows with part < 0 have no origin and are always new.
func (o *Offsets) Admit(part int32, off int64) bool {
	if part < 0 {
		return true
	}
	if o.hasLast && part == o.lastPart {
		if off <= o.lastOff {
			return false
		}
		o.lastOff = off
		return true
	}
	return o.admitOther(part, off)
}

// admitOther is Admit for a partition other than the last one admitted,
// out of line so that Admit inlines.
func (o *Offsets) admitOther(part int32, off int64) bool {
	o.sync()
	if last, ok := o.m[part]; ok && off <= last {
		return false
	}
	o.lastPart, o.lastOff, o.hasLast = part, off, true
	return true
}

// sync writes the entry kept aside into the map.
func (o *Offsets) sync() {
	if o.hasLast {
		o.m[o.lastPart] = o.lastOff
		o.hasLast = false
	}
}

// Get returns the highest offset recorded for part.
func (o *Offsets) Get(part int32) (int64, bool) {
	if o.hasLast && part == o.lastPart {
		return o.lastOff, true
	}
	off, ok := o.m[part]
	return off, ok
}

// Set records off for part.
func (o *Offsets) Set(part int32, off int64) {
	if o.hasLast && part == o.lastPart {
		o.lastOff = off
		return
	}
	o.m[part] = off
}

// All returns a copy of the table.
func (o *Offsets) All() map[int32]int64 {
	o.sync()
	out := make(map[int32]int64, len(o.m))
	for k, v := range o.m {
		out[k] = v
	}
	return out
}

// AppendBinary appends the table's encoding (partitions in order) to dst,
// for durable backends.
func (o *Offsets) AppendBinary(dst []byte) []byte {
	o.sync()
	parts := make([]int32, 0, len(o.m))
	for p := range o.m {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	dst = binary.AppendUvarint(dst, uint64(len(parts)))
	for _, p := range parts {
		dst = binary.AppendVarint(dst, int64(p))
		dst = binary.AppendVarint(dst, o.m[p])
	}
	return dst
}

// LoadBinary adds the entries of an encoding made by AppendBinary.
func (o *Offsets) LoadBinary(b []byte) error {
	o.sync()
	corrupt := errors.New("corrupt offsets table")
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return corrupt
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		p, k1 := binary.Varint(b)
		if k1 <= 0 {
			return corrupt
		}
		off, k2 := binary.Varint(b[k1:])
		if k2 <= 0 {
			return corrupt
		}
		o.m[int32(p)] = off
		b = b[k1+k2:]
	}
	return nil
}

// Memory is the in-memory Backend. Commit only records the positions.
type Memory struct {
	mu        sync.Mutex
	stores    map[string]*memStore
	positions map[string]int64
}

// NewMemory returns an empty in-memory backend.
func NewMemory() *Memory { return &Memory{stores: make(map[string]*memStore)} }

// Store implements Backend.
func (m *Memory) Store(id string) (Store, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.stores[id]
	if !ok {
		s = &memStore{kv: make(map[string][]byte), offsets: NewOffsets()}
		m.stores[id] = s
	}
	return s, nil
}

// Close implements Backend.
func (m *Memory) Close() error { return nil }

// Commit implements Backend.
func (m *Memory) Commit(job string, positions map[string]int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.positions == nil {
		m.positions = make(map[string]int64, len(positions))
	}
	for k, v := range positions {
		m.positions[k] = v
	}
	return nil
}

// ForgetPositions implements Backend.
func (m *Memory) ForgetPositions(keys []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.positions, k)
	}
	return nil
}

// Positions implements Backend.
func (m *Memory) Positions(job string) (map[string]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := JobPrefix(job)
	out := make(map[string]int64, len(m.positions))
	for k, v := range m.positions {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

// Drop implements Backend.
func (m *Memory) Drop(job string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := JobPrefix(job)
	for id := range m.stores {
		if strings.HasPrefix(id, prefix) {
			delete(m.stores, id)
		}
	}
	for k := range m.positions {
		if strings.HasPrefix(k, prefix) {
			delete(m.positions, k)
		}
	}
	return nil
}

type memStore struct {
	kv      map[string][]byte
	offsets *Offsets
}

func (s *memStore) Get(key []byte) ([]byte, bool, error) {
	v, ok := s.kv[string(key)]
	return v, ok, nil
}

func (s *memStore) Put(key, value []byte) error {
	s.kv[string(key)] = append([]byte(nil), value...)
	return nil
}

func (s *memStore) Delete(key []byte) error {
	delete(s.kv, string(key))
	return nil
}

func (s *memStore) Scan(prefix []byte, fn func(key, value []byte) bool) error {
	keys := make([]string, 0)
	for k := range s.kv {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn([]byte(k), s.kv[k]) {
			break
		}
	}
	return nil
}

func (s *memStore) Offsets() *Offsets { return s.offsets }

func (s *memStore) Checkpoint() error { return nil }
