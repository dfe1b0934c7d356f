package dim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/dim/store"
	"github.com/sluicesql/sluice/types"
)

// Registry holds the dimension tables of one engine, by identity. It is
// safe for concurrent use.
type Registry struct {
	build    Builder
	logf     func(format string, args ...any)
	spillDir string

	mu     sync.Mutex
	tables map[string]*Table
}

// Options configure a Registry.
type Options struct {
	// Build builds the indexes; default DefaultBuilder.
	Build Builder
	// Logf, if set, receives a line for every failed reload.
	Logf func(format string, args ...any)
	// SpillDir, if set, is a directory that the indexes are mapped from
	// (store.Config.SpillDir) instead of held on the heap: for tables
	// larger than memory.
	SpillDir string
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.Build == nil {
		opts.Build = DefaultBuilder
	}
	return &Registry{build: opts.Build, logf: opts.Logf, spillDir: opts.SpillDir, tables: map[string]*Table{}}
}

// Tables returns the number of tables loaded.
func (r *Registry) Tables() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tables)
}

// Table is one loaded dimension table, shared by its users.
type Table struct {
	reg   *Registry
	id    string
	src   connector.FullSource
	types []types.Type

	// refs (users) and sets' refs are guarded by reg.mu.
	refs int

	// loadMu serialises loads: the first ones, new key sets, reloads.
	loadMu sync.Mutex
	sets   []*keySet // by slot; guarded by loadMu
	cur    atomic.Pointer[version]

	reloadOnce sync.Once
	stop       context.CancelFunc
	done       chan struct{}
	stopMu     sync.Once

	loads, reloads, failures atomic.Int64
}

// keySet is one key set a user looks the table up by.
type keySet struct {
	cols []int
	name string
	refs int // guarded by reg.mu
}

// version is one immutable copy of the table: an index per key set slot
// (nil for a slot no longer used).
type version struct {
	idx []Index
}

// Handle is one user's access to a table by one key set.
type Handle struct {
	t        *Table
	slot     int
	set      *keySet
	perm     []int // key value i is the caller's perm[i]; nil: the same
	released atomic.Bool
}

// Acquire returns a handle on the table src loads, indexed by keyCols
// (columns of rows of the given types). It takes ownership of src: if a
// table of the same identity is loaded already, src is closed and the
// table shared; else src loads the new table (and reloads it every
// src.ReloadInterval()). The first Acquire of a key set loads the source
// to build its index; ctx bounds that load.
func (r *Registry) Acquire(ctx context.Context, src connector.FullSource, colTypes []types.Type, keyCols []int) (*Handle, error) {
	id := src.Identity()
	// The key set is the columns in ascending order; perm maps its
	// positions to those of the caller's key values.
	perm := make([]int, len(keyCols))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return keyCols[a] - keyCols[b] })
	sorted := make([]int, len(keyCols))
	identity := true
	for i, p := range perm {
		sorted[i] = keyCols[p]
		identity = identity && p == i
	}
	if identity {
		perm = nil
	}
	r.mu.Lock()
	t, shared := r.tables[id]
	if !shared {
		t = &Table{reg: r, id: id, src: src, types: slices.Clone(colTypes)}
		t.cur.Store(&version{})
		r.tables[id] = t
	}
	t.refs++
	r.mu.Unlock()
	if shared {
		src.Close()
	}
	if !slices.EqualFunc(t.types, colTypes, types.Type.Equal) {
		r.release(t, nil)
		return nil, fmt.Errorf("dimension table %s: declared with other column types by another job", id)
	}
	h, err := t.acquire(ctx, sorted)
	if err != nil {
		r.release(t, nil)
		return nil, err
	}
	h.perm = perm
	t.reloadOnce.Do(t.startReloads)
	return h, nil
}

// acquire returns a handle on key set cols, building its index if no user
// has it yet.
func (t *Table) acquire(ctx context.Context, cols []int) (*Handle, error) {
	name := setName(cols)
	t.loadMu.Lock()
	defer t.loadMu.Unlock()
	slot := -1
	for i, s := range t.sets {
		if s.name == name {
			slot = i
		}
	}
	if slot < 0 || t.cur.Load().idx[slot] == nil {
		ixs, err := t.load(ctx, [][]int{cols}, nil)
		if err != nil {
			return nil, err
		}
		ix := ixs[0]
		old := t.cur.Load()
		next := &version{idx: slices.Clone(old.idx)}
		if slot < 0 {
			slot = len(t.sets)
			t.sets = append(t.sets, &keySet{cols: cols, name: name})
			next.idx = append(next.idx, ix)
		} else {
			next.idx[slot] = ix
		}
		t.cur.Store(next)
	}
	set := t.sets[slot]
	t.reg.mu.Lock()
	set.refs++
	t.reg.mu.Unlock()
	return &Handle{t: t, slot: slot, set: set}, nil
}

// load builds an index for each key set of sets from one fresh load of
// the source; rows, if set, hints at each index's row count (a reload
// passes those of the indexes it replaces).
func (t *Table) load(ctx context.Context, sets [][]int, rows []int) ([]Index, error) {
	t.loads.Add(1)
	bs := make([]IndexBuilder, 0, len(sets))
	abort := func() {
		for _, b := range bs {
			b.Abort()
		}
	}
	for i, cols := range sets {
		// A reloaded table's strings are copies: kept in a job's state,
		// they would otherwise hold chunks of replaced copies alive.
		cfg := store.Config{SpillDir: t.reg.spillDir, CopyStrings: t.src.ReloadInterval() > 0}
		if rows != nil {
			cfg.Rows = rows[i]
		}
		b, err := t.reg.build(t.types, cols, cfg)
		if err != nil {
			abort()
			return nil, fmt.Errorf("cannot load the dimension table: %w", err)
		}
		bs = append(bs, b)
	}
	err := t.src.Load(ctx, func(row []types.Value) error {
		for _, b := range bs {
			if err := b.Add(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		abort()
		return nil, fmt.Errorf("cannot load the dimension table: %w", err)
	}
	ixs := make([]Index, len(bs))
	for i, b := range bs {
		if ixs[i], err = b.Finish(); err != nil {
			bs = bs[i+1:]
			abort()
			return nil, fmt.Errorf("cannot load the dimension table: %w", err)
		}
	}
	return ixs, nil
}

// startReloads starts the reload goroutine, if the source reloads.
func (t *Table) startReloads() {
	every := t.src.ReloadInterval()
	if every <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.stop, t.done = cancel, make(chan struct{})
	go func() {
		defer close(t.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := t.Reload(ctx); err != nil && ctx.Err() == nil && t.reg.logf != nil {
				// The identity may quote a URL: mask its secrets.
				t.reg.logf("dimension table %s: %v; keeping the previous copy", redact.URL(t.id), redact.Error(err))
			}
		}
	}()
}

// Reload builds a new copy of every index in use from one fresh load of
// the source and swaps it in at once: a lookup sees the old copy or the
// new one, never a mix. On failure the current copy stays and the failure
// is counted.
func (t *Table) Reload(ctx context.Context) error {
	t.loadMu.Lock()
	defer t.loadMu.Unlock()
	t.reloads.Add(1)
	t.reg.mu.Lock()
	used := make([]bool, len(t.sets))
	for i, s := range t.sets {
		used[i] = s.refs > 0
	}
	t.reg.mu.Unlock()
	cur := t.cur.Load()
	var sets [][]int
	var rows, slots []int
	for i, s := range t.sets {
		if !used[i] {
			continue // no user left: dropped
		}
		sets = append(sets, s.cols)
		n := 0
		if i < len(cur.idx) && cur.idx[i] != nil {
			n = cur.idx[i].Rows()
		}
		rows = append(rows, n)
		slots = append(slots, i)
	}
	next := &version{idx: make([]Index, len(t.sets))}
	if len(sets) > 0 {
		ixs, err := t.load(ctx, sets, rows)
		if err != nil {
			t.failures.Add(1)
			return err
		}
		for j, i := range slots {
			next.idx[i] = ixs[j]
		}
	}
	t.cur.Store(next)
	return nil
}

// Release gives the handle up; the last user of a table frees it. It is
// safe to call more than once.
func (h *Handle) Release() {
	if h.released.Swap(true) {
		return
	}
	h.t.reg.release(h.t, h.set)
}

func (r *Registry) release(t *Table, set *keySet) {
	r.mu.Lock()
	if set != nil {
		set.refs--
	}
	t.refs--
	last := t.refs == 0
	if last {
		delete(r.tables, t.id)
	}
	r.mu.Unlock()
	if !last {
		if set != nil {
			t.dropUnused(set)
		}
		return
	}
	t.stopMu.Do(func() {
		if t.stop != nil {
			t.stop()
			<-t.done
		}
		t.loadMu.Lock()
		t.cur.Store(&version{})
		t.loadMu.Unlock()
		t.src.Close()
	})
}

// dropUnused frees the index of key set set if no user has it any more,
// so that it does not wait for the next reload (or the end of the table)
// to be collected.
func (t *Table) dropUnused(set *keySet) {
	t.loadMu.Lock()
	defer t.loadMu.Unlock()
	t.reg.mu.Lock()
	unused := set.refs == 0
	t.reg.mu.Unlock()
	if !unused {
		return
	}
	slot := slices.Index(t.sets, set)
	old := t.cur.Load()
	if slot < 0 || slot >= len(old.idx) || old.idx[slot] == nil {
		return
	}
	next := &version{idx: slices.Clone(old.idx)}
	next.idx[slot] = nil
	t.cur.Store(next)
}

// Lookup calls visit with the rows whose key columns (in the order
// Acquire was given them) equal key, until visit returns false, and
// returns how many it visited. Rows are valid only during visit. A NULL
// in key matches nothing. It is safe for concurrent use, and allocates
// nothing when the key columns were given in ascending order.
func (h *Handle) Lookup(key []types.Value, visit func(row []types.Value) bool) int {
	for _, v := range key {
		if v.IsNull() {
			return 0
		}
	}
	if h.perm != nil {
		k := make([]types.Value, len(key))
		for i, p := range h.perm {
			k[i] = key[p]
		}
		key = k
	}
	v := h.t.cur.Load()
	if h.slot >= len(v.idx) || v.idx[h.slot] == nil {
		return 0
	}
	return v.idx[h.slot].Lookup(key, visit)
}

// LookupBatch looks up every key of keys as Lookup does and calls visit
// with the key's position in keys and each of its rows (in the order of
// keys); visit returns false to go on with the next key. It returns the
// number of rows visited. All keys are looked up in one copy of the
// table, and their memory accesses overlap: it is much faster than a
// Lookup per key for a table larger than the CPU caches.
func (h *Handle) LookupBatch(keys [][]types.Value, visit func(i int, row []types.Value) bool) int {
	if h.perm != nil {
		flat := make([]types.Value, len(keys)*len(h.perm))
		pk := make([][]types.Value, len(keys))
		for k, key := range keys {
			p := flat[k*len(h.perm) : (k+1)*len(h.perm) : (k+1)*len(h.perm)]
			for i, j := range h.perm {
				p[i] = key[j]
			}
			pk[k] = p
		}
		keys = pk
	}
	v := h.t.cur.Load()
	if h.slot >= len(v.idx) || v.idx[h.slot] == nil {
		return 0
	}
	return v.idx[h.slot].LookupBatch(keys, visit)
}

// Table returns the table the handle uses.
func (h *Handle) Table() *Table { return h.t }

// Stats are a table's counters.
type Stats struct {
	// Loads counts the loads of the source: one per key set at first
	// (when its first user comes), then one per reload for all key sets.
	Loads int64
	// Reloads counts the reloads started, Failures those that failed.
	Reloads, Failures int64
	// KeySets is the number of indexes kept.
	KeySets int
	// Rows and Bytes are the rows and memory of the current indexes.
	Rows  int
	Bytes int64
}

// Stats returns the table's counters.
func (t *Table) Stats() Stats {
	s := Stats{Loads: t.loads.Load(), Reloads: t.reloads.Load(), Failures: t.failures.Load()}
	for _, ix := range t.cur.Load().idx {
		if ix != nil {
			s.KeySets++
			s.Rows += ix.Rows()
			s.Bytes += ix.Bytes()
		}
	}
	return s
}

// Identity is the identity of the table's source.
func (t *Table) Identity() string { return t.id }

func setName(cols []int) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}
