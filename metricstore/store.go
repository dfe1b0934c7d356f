package metricstore

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/state/lsm"
	"github.com/sluicesql/sluice/types"
)

// Metric is one metric of a group: its name and the type of its values.
type Metric struct {
	Name string
	Type types.Type
}

// Group is the definition of a metric group: its key columns and its
// metrics, in order. Version is the caller's (the metric group's version
// in the catalog); the store only reports it.
type Group struct {
	Name    string
	Version int
	Keys    []types.Column
	Metrics []Metric
}

// Change is what a checkpoint made durable for one key of a group.
type Change struct {
	// Key holds one value per key column of the group's current
	// definition, in order. A value of another integer kind than its
	// column's is the same key (see types.AppendKey).
	Key []types.Value
	// Values holds one value per metric of the group's current
	// definition, in order (ignored for a Delete). NULL is a value: the
	// metric reads NULL_VALUE.
	Values []types.Value
	// Mask, if not nil, has one entry per metric and says which metrics
	// changed: the others keep their values (and event times), and their
	// Values entries are not read. Nil means every metric changed.
	Mask []bool
	// EventTime is the time, in milliseconds since the epoch, of the
	// latest event folded into the changed values: the event timestamp
	// a Read reports for each of them.
	EventTime int64
	// Delete removes the key and all its values.
	Delete bool
}

// Options configure a Store. The zero value is a store in memory only
// with the default sizes.
type Options struct {
	// Dir is the directory records spill to beyond MemoryBudget (a
	// state/lsm store, emptied at Open). Empty: no spill, everything
	// stays in memory.
	Dir string
	// MemoryBudget is the size, in bytes, of the records held in memory
	// before the least recently used ones spill to Dir; 0 means
	// DefaultMemoryBudget. Without Dir it is not enforced.
	MemoryBudget int64
	// ChangeLogBytes bounds each group's change log (what a subscriber
	// can resume from); 0 means DefaultChangeLogBytes. The log always
	// keeps the last commit, whatever its size.
	ChangeLogBytes int64
	// EventSize is the most keys one subscription event carries; a
	// larger commit or snapshot comes in several events, the last one
	// with the token. 0 means DefaultEventSize.
	EventSize int
	// Logf, if set, receives the spill's failures (the store goes on
	// in memory).
	Logf func(format string, args ...any)
}

// Defaults of Options.
const (
	DefaultMemoryBudget   = 256 << 20
	DefaultChangeLogBytes = 64 << 20
	DefaultEventSize      = 1000
)

// EnsureDefaults fills in the zero fields of o.
func (o *Options) EnsureDefaults() {
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.ChangeLogBytes <= 0 {
		o.ChangeLogBytes = DefaultChangeLogBytes
	}
	if o.EventSize <= 0 {
		o.EventSize = DefaultEventSize
	}
}

// Errors.
var (
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("the metric store is closed")
	// ErrInvalid is wrapped by the errors of calls whose arguments are
	// wrong: a key of the wrong length or type, an unknown metric, a
	// malformed token.
	ErrInvalid = errors.New("invalid request")
)

// NotFoundError says that no group has the name asked for.
type NotFoundError struct {
	Name string
	// Hint is ` (did you mean "x"?)` for the nearest group name, or "".
	Hint string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no metric group named %q%s", e.Name, e.Hint)
}

// Store holds the metric groups' current values. Its methods are safe
// for concurrent use.
type Store struct {
	opts Options

	mu     sync.RWMutex // guards groups and closed
	groups map[string]*group
	closed bool

	// spill is the local store records move to beyond the budget; nil
	// without Options.Dir, or after a failure of it.
	spill   *lsm.Backend
	spillMu sync.Mutex // serializes evictions
	spillID atomic.Uint64
	// spillFailed is set once the spill failed: nothing more moves out.
	spillFailed atomic.Bool

	hotBytes    atomic.Int64
	subscribers atomic.Int64

	// seed hashes the keys of the groups' tables; chunkSize is the size
	// of their chunks (smaller for a small budget, so that there is
	// something to spill).
	seed      maphash.Seed
	chunkSize int
}

// Open returns a store. With Options.Dir it opens (or creates) the spill
// directory and empties it.
func Open(opts Options) (*Store, error) {
	opts.EnsureDefaults()
	s := &Store{opts: opts, groups: map[string]*group{}, seed: maphash.MakeSeed(),
		chunkSize: int(min(max(opts.MemoryBudget/64, 4<<10), maxChunkSize))}
	if opts.Dir != "" {
		b, err := lsm.Open(opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("metricstore: cannot open the spill directory: %w", err)
		}
		// What a previous process spilled is of no use: the groups are
		// committed again when their jobs restore.
		if err := b.Drop(""); err == nil {
			err = b.Commit("", nil)
		}
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("metricstore: cannot empty the spill directory %s: %w", opts.Dir, err)
		}
		s.spill = b
	}
	return s, nil
}

// Close ends every subscription (their Next returns ErrClosed) and
// closes the spill directory.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	groups := slices.Collect(maps.Values(s.groups))
	s.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		g.gone = ErrClosed
		g.wakeAll()
		g.mu.Unlock()
	}
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	if s.spill != nil {
		return s.spill.Close()
	}
	return nil
}

// Define creates group g, or redefines it. On a redefinition each metric
// whose name and type (ignoring nullability) are unchanged keeps its
// values and event times; a new metric reads NOT_FOUND for every key
// until a change sets it; a metric no longer listed is dropped. If the
// key columns change (names or types), every value is dropped.
// Subscribers get a Redefined event.
func (s *Store) Define(g Group) error {
	if err := checkGroup(g); err != nil {
		return err
	}
	g = copyGroup(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if old, ok := s.groups[g.Name]; ok {
		return old.redefine(g)
	}
	gr, err := newGroup(s, g)
	if err != nil {
		return err
	}
	s.groups[g.Name] = gr
	return nil
}

// Drop removes group name and its values; its subscriptions end (Next
// returns a *NotFoundError).
func (s *Store) Drop(name string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	g, ok := s.groups[name]
	if !ok {
		err := s.notFound(name)
		s.mu.Unlock()
		return err
	}
	delete(s.groups, name)
	s.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gone = &NotFoundError{Name: name}
	g.wakeAll()
	return g.dropValues()
}

// Groups returns the definitions of the groups, by name.
func (s *Store) Groups() []Group {
	s.mu.RLock()
	gs := slices.Collect(maps.Values(s.groups))
	s.mu.RUnlock()
	out := make([]Group, 0, len(gs))
	for _, g := range gs {
		g.mu.RLock()
		out = append(out, copyGroup(g.def.g))
		g.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b Group) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Definition returns the current definition of group name.
func (s *Store) Definition(name string) (Group, error) {
	g, err := s.group(name)
	if err != nil {
		return Group{}, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.gone != nil {
		return Group{}, g.gone
	}
	return copyGroup(g.def.g), nil
}

// Commit applies changes to group, which the caller has made durable: it
// calls Commit only once the checkpoint that holds them has completed,
// so that the store shows only committed state. The changes become
// visible to readers and subscribers together, in order (a key changed
// twice ends with its second change), or not at all: a change that does
// not fit the group's current definition fails the call before anything
// is applied. One Commit per checkpoint and group makes a checkpoint's
// changes appear at once; tasks that commit their own parts separately
// make each part atomic. Commits to one group are serialized; the store
// keeps no reference to changes, which the caller may reuse once Commit
// returns. A task that gives keys up to another instance (a partition
// revoked in cluster mode) commits their deletion, so that this
// instance's store no longer shows them.
func (s *Store) Commit(group string, changes []Change) error {
	return s.apply(group, false, changes)
}

// Reset drops every value of group, as one commit: subscribers get a
// Changes event marked Reset. The metric-group operator calls it when it
// restores its state and then commits what it restored (a job restarted
// on this instance, or partitions taken over from another through the
// Kafka changelog), unless it commits all its state in one Replace.
func (s *Store) Reset(group string) error {
	return s.apply(group, true, nil)
}

// Replace drops every value of group and applies changes, as one commit:
// readers see the old values or the new ones, never neither. It is the
// bulk load of a restored state by a single writer.
func (s *Store) Replace(group string, changes []Change) error {
	return s.apply(group, true, changes)
}

// Stats are a store's sizes.
type Stats struct {
	Groups int
	// Keys held in memory and in the spill directory.
	HotKeys, SpilledKeys int64
	// HotBytes is the estimated size of the records held in memory,
	// which MemoryBudget bounds.
	HotBytes int64
	// LogBytes is the estimated size of the change logs.
	LogBytes int64
	// Subscribers is the number of open subscriptions.
	Subscribers int64
}

// Stats returns the store's sizes.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	gs := slices.Collect(maps.Values(s.groups))
	s.mu.RUnlock()
	st := Stats{Groups: len(gs), HotBytes: s.hotBytes.Load(), Subscribers: s.subscribers.Load()}
	for _, g := range gs {
		g.mu.RLock()
		st.HotKeys += int64(g.t.keys)
		st.SpilledKeys += int64(g.spilled)
		st.LogBytes += g.log.bytes
		g.mu.RUnlock()
	}
	return st
}

func (s *Store) newTable() *table { return newTable(s.seed, s.chunkSize) }

// group returns the group called name.
func (s *Store) group(name string) (*group, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	g, ok := s.groups[name]
	if !ok {
		return nil, s.notFound(name)
	}
	return g, nil
}

// notFound returns the error for an unknown group; s.mu is held.
func (s *Store) notFound(name string) error {
	return &NotFoundError{Name: name, Hint: suggest.Hint(name, slices.Collect(maps.Keys(s.groups)))}
}

func (s *Store) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// checkGroup checks a definition.
func checkGroup(g Group) error {
	if g.Name == "" {
		return fmt.Errorf("a metric group needs a name: %w", ErrInvalid)
	}
	if len(g.Metrics) == 0 {
		return fmt.Errorf("metric group %s has no metric: %w", g.Name, ErrInvalid)
	}
	seen := map[string]string{}
	for _, k := range g.Keys {
		if k.Name == "" {
			return fmt.Errorf("metric group %s: a key column has no name: %w", g.Name, ErrInvalid)
		}
		if _, dup := seen[k.Name]; dup {
			return fmt.Errorf("metric group %s: key column %s is listed twice: %w", g.Name, k.Name, ErrInvalid)
		}
		seen[k.Name] = "key column"
	}
	for _, m := range g.Metrics {
		if m.Name == "" {
			return fmt.Errorf("metric group %s: a metric has no name: %w", g.Name, ErrInvalid)
		}
		if what, dup := seen[m.Name]; dup {
			return fmt.Errorf("metric group %s: metric %s has the name of a %s: %w", g.Name, m.Name, what, ErrInvalid)
		}
		seen[m.Name] = "metric"
	}
	return nil
}

func copyGroup(g Group) Group {
	g.Keys = slices.Clone(g.Keys)
	g.Metrics = slices.Clone(g.Metrics)
	return g
}

// newEpoch returns a group incarnation's number: random, so that a token
// of another process or of a dropped group is recognized as such.
func newEpoch() uint64 {
	for {
		if e := rand.Uint64(); e != 0 {
			return e
		}
	}
}
