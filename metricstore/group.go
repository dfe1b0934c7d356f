package metricstore

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// group is a metric group's values and change log.
type group struct {
	s     *Store
	name  string
	epoch uint64

	// commitMu serializes the writers: commits (which stage their
	// changes under the read lock), definitions and evictions. It is
	// taken before mu.
	commitMu sync.Mutex
	// mu is taken for writing to change what the group holds, for
	// reading by reads, by commits staging their changes and by
	// subscribers looking at the log.
	mu  sync.RWMutex
	def *definition
	enc *encoder
	// t holds the records in memory; mem is its memory as last counted
	// in Store.hotBytes.
	t   *table
	mem int64
	// spilled counts the keys in spillStore (named spillID), which is
	// nil until the group first spills.
	spillID    string
	spillStore state.Store
	spilled    int
	// promote lists keys that reads found in the spill, for the next
	// commit to bring back into memory (reads hold the lock only for
	// reading). promoteMu guards it.
	promoteMu sync.Mutex
	promote   []string
	// seq numbers the last commit; log holds the last ones.
	seq uint64
	log changeLog
	// wake is closed (and replaced) at every commit, for subscribers
	// waiting for one.
	wake chan struct{}
	// gone is set when the group was dropped or the store closed.
	gone error
	// jsonKept bounds the shared encodings of the log's records.
	jsonKept jsonKept
}

func newGroup(s *Store, g Group) (*group, error) {
	l, err := newLayout(0, g.Keys, g.Metrics)
	if err != nil {
		return nil, fmt.Errorf("metric group %s: %w", g.Name, err)
	}
	gr := &group{s: s, name: g.Name, epoch: newEpoch(), t: s.newTable(), wake: make(chan struct{})}
	gr.def = newDefinition(g, l, []*layout{l}, nil)
	gr.enc = newEncoder(l)
	return gr, nil
}

// redefine applies Define to an existing group.
func (g *group) redefine(ng Group) error {
	g.commitMu.Lock()
	defer g.commitMu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone != nil {
		return g.gone
	}
	old := g.def
	keysSame := slices.EqualFunc(old.g.Keys, ng.Keys, func(a, b types.Column) bool {
		return a.Name == b.Name && a.Type.SameKind(b.Type)
	})
	metricsSame := slices.EqualFunc(old.g.Metrics, ng.Metrics, func(a, b Metric) bool {
		return a.Name == b.Name && a.Type.SameKind(b.Type)
	})
	l, layouts := old.layout, old.layouts
	if !keysSame || !metricsSame {
		var err error
		if l, err = newLayout(len(layouts), ng.Keys, ng.Metrics); err != nil {
			return fmt.Errorf("metric group %s: %w", ng.Name, err)
		}
		layouts = append(layouts[:len(layouts):len(layouts)], l)
	}
	if !keysSame {
		if err := g.dropValues(); err != nil {
			g.s.logf("metric group %s: %v", g.name, err)
		}
	}
	g.def = newDefinition(ng, l, layouts, old)
	if l != old.layout {
		g.enc = newEncoder(l)
	}
	g.append(&logRecord{kind: Redefined, reset: !keysSame, def: g.def})
	return nil
}

// dropValues empties the group. g.mu is held for writing.
func (g *group) dropValues() error {
	g.s.hotBytes.Add(-g.mem)
	g.t, g.mem = g.s.newTable(), 0
	id := g.spillID
	g.spillID, g.spillStore, g.spilled = "", nil, 0
	if id == "" {
		return nil
	}
	return g.s.dropSpill(id)
}

// account brings the store's count of the memory held up to date.
// g.mu is held for writing.
func (g *group) account() {
	m := g.t.memory()
	g.s.hotBytes.Add(m - g.mem)
	g.mem = m
}

// staged is a change ready to be installed.
type staged struct {
	key     []byte
	rec     []byte
	deleted bool
	// spilled: the key's record was found in the spill, to be removed
	// from there.
	spilled bool
}

// apply is Commit (reset false), Reset and Replace (reset true).
func (s *Store) apply(name string, reset bool, changes []Change) error {
	g, err := s.group(name)
	if err != nil {
		return err
	}
	if err := g.apply(reset, changes); err != nil {
		return err
	}
	s.maybeEvict()
	return nil
}

func (g *group) apply(reset bool, changes []Change) error {
	if !reset && len(changes) == 0 {
		return nil
	}
	// One writer at a time stages its changes under the read lock (the
	// records it reads cannot change meanwhile: every writer holds
	// commitMu), and takes the write lock only to install them.
	g.commitMu.Lock()
	defer g.commitMu.Unlock()
	g.promoteRead()
	g.mu.RLock()
	out, d, err := g.stageAll(reset, changes)
	g.mu.RUnlock()
	if err != nil {
		return err
	}
	g.mu.Lock()
	if g.gone != nil {
		g.mu.Unlock()
		return g.gone
	}
	if reset {
		if err := g.dropValues(); err != nil {
			g.s.logf("metric group %s: %v", g.name, err)
		}
	}
	lb := newLogBuilder(&logRecord{kind: Changes, reset: reset, def: d}, len(out))
	for i := range out {
		if l, ok := g.install(&out[i]); ok {
			lb.add(g.t, l)
		} else {
			lb.addDeleted(out[i].key, out[i].rec)
		}
	}
	g.account()
	g.append(lb.done())
	g.mu.Unlock()
	// Chunks left mostly dead are compacted in steps, readers getting in
	// between.
	for more := true; more; {
		g.mu.Lock()
		more = g.gone == nil && g.t.compact(compactStep)
		g.account()
		g.mu.Unlock()
	}
	return nil
}

// compactStep bounds the records one compaction step moves under the
// write lock.
const compactStep = 512

// stageAll checks and stages changes, as of the current definition,
// which it returns. g.commitMu is held, and g.mu for reading.
func (g *group) stageAll(reset bool, changes []Change) ([]staged, *definition, error) {
	if g.gone != nil {
		return nil, nil, g.gone
	}
	d := g.def
	for i := range changes {
		if err := d.checkChange(i, &changes[i]); err != nil {
			return nil, nil, err
		}
	}
	// Every change is staged before any is installed: a failure leaves
	// the group as it was.
	out := make([]staged, len(changes))
	var latest map[string]int // key -> index in out of its last change
	if len(changes) > 1 {
		latest = make(map[string]int, len(changes))
	}
	st := newValues(len(d.g.Metrics))
	none := newValues(len(d.g.Metrics))
	scratch := types.NewBatch(1, d.layout.width())
	var kb []byte
	for i := range changes {
		c := &changes[i]
		kb = appendKey(kb[:0], c.Key)
		o := &out[i]
		var prior []byte
		if j, dup := latest[string(kb)]; dup {
			o.key = out[j].key
			if !out[j].deleted {
				prior = out[j].rec
			}
		} else {
			o.key = append([]byte(nil), kb...)
			if !reset {
				// Looked up even when the change replaces every value: a
				// record in the spill is to be removed from there.
				var err error
				if prior, o.spilled, err = g.lookup(kb); err != nil {
					return nil, nil, fmt.Errorf("metric group %s: cannot commit: %w", g.name, err)
				}
			}
		}
		var err error
		if c.Delete {
			o.deleted = true
			o.rec, err = g.enc.encode(c.Key, none.vals, none.set, none.times)
		} else {
			if c.Mask == nil {
				prior = nil
			}
			err = g.stage(d, c, prior, st, scratch, o)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("metric group %s: change %d: %w", g.name, i, err)
		}
		if latest != nil {
			latest[string(o.key)] = i
		}
	}
	return out, d, nil
}

// stage makes the record of change c over the key's prior record (nil:
// none, or not needed).
func (g *group) stage(d *definition, c *Change, prior []byte, st *values, scratch *types.Batch, o *staged) error {
	if prior != nil {
		scratch.Reset()
		r, err := decode(d.layouts, prior, scratch)
		if err != nil {
			return err
		}
		st.load(d, r)
	} else {
		clear(st.vals)
		clear(st.set)
	}
	for i := range st.vals {
		if c.Mask == nil || c.Mask[i] {
			st.vals[i], st.set[i], st.times[i] = c.Values[i], true, c.EventTime
		}
	}
	var err error
	o.rec, err = g.enc.encode(c.Key, st.vals, st.set, st.times)
	clear(st.vals)
	return err
}

// install makes a staged change visible, and returns the location of
// the key's record in the table (none for a deletion). g.mu is held for
// writing.
func (g *group) install(o *staged) (uint64, bool) {
	if o.spilled {
		if err := g.spillStore.Delete(o.key); err != nil {
			g.s.spillFailure(err)
		}
		g.spilled--
	}
	if o.deleted {
		g.t.del(o.key)
		return 0, false
	}
	return g.t.put(o.key, o.rec), true
}

// maxPromote bounds the keys waiting to be brought back into memory.
const maxPromote = 4096

// notePromote records keys that reads found in the spill.
func (g *group) notePromote(keys []string) {
	g.promoteMu.Lock()
	defer g.promoteMu.Unlock()
	keys = keys[:min(len(keys), maxPromote-len(g.promote))]
	g.promote = append(g.promote, keys...)
}

// promoteRead brings the keys reads found in the spill back into
// memory. g.commitMu is held.
func (g *group) promoteRead() {
	g.promoteMu.Lock()
	keys := g.promote
	g.promote = nil
	g.promoteMu.Unlock()
	if len(keys) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone != nil {
		return
	}
	defer g.account()
	for _, k := range keys {
		if g.spilled == 0 {
			break
		}
		key := []byte(k)
		if _, ok := g.t.find(key); ok {
			continue
		}
		rec, ok, err := g.spillStore.Get(key)
		if err != nil {
			g.s.spillFailure(err)
			break
		}
		if ok {
			g.install(&staged{key: key, rec: rec, spilled: true})
		}
	}
}

// lookup returns key's record, from memory or the spill (spilled true).
// g.mu is held.
func (g *group) lookup(key []byte) (rec []byte, spilled bool, err error) {
	if rec, ok := g.t.get(key); ok {
		return rec, false, nil
	}
	if g.spilled == 0 {
		return nil, false, nil
	}
	rec, ok, err := g.spillStore.Get(key)
	if err != nil {
		return nil, false, fmt.Errorf("cannot read the spilled values: %w", err)
	}
	return rec, ok, nil
}

// appendKey appends the encoding of a key's values, by which keys are
// found.
func appendKey(dst []byte, key []types.Value) []byte {
	for _, v := range key {
		dst = types.AppendKey(dst, v)
	}
	return dst
}

// checkKey checks that key fits the definition's key columns.
func (d *definition) checkKey(what string, key []types.Value) error {
	if len(key) != len(d.g.Keys) {
		return fmt.Errorf("%s has %d values; metric group %s is keyed by (%s): %w",
			what, len(key), d.g.Name, d.keyNames(), ErrInvalid)
	}
	for i, v := range key {
		if err := checkKind(v, d.g.Keys[i].Type); err != nil {
			return fmt.Errorf("%s: key column %s: %w", what, d.g.Keys[i].Name, err)
		}
	}
	return nil
}

// checkChange checks change i against the definition.
func (d *definition) checkChange(i int, c *Change) error {
	what := fmt.Sprintf("metric group %s: change %d", d.g.Name, i)
	if err := d.checkKey(what, c.Key); err != nil {
		return err
	}
	if c.Delete {
		return nil
	}
	if len(c.Values) != len(d.g.Metrics) {
		return fmt.Errorf("%s has %d values, the group %d metrics: %w", what, len(c.Values), len(d.g.Metrics), ErrInvalid)
	}
	if c.Mask != nil && len(c.Mask) != len(d.g.Metrics) {
		return fmt.Errorf("%s has a mask of %d entries, the group %d metrics: %w", what, len(c.Mask), len(d.g.Metrics), ErrInvalid)
	}
	for j, v := range c.Values {
		if c.Mask != nil && !c.Mask[j] {
			continue
		}
		if err := checkKind(v, d.g.Metrics[j].Type); err != nil {
			return fmt.Errorf("%s: metric %s: %w", what, d.g.Metrics[j].Name, err)
		}
	}
	return nil
}

// checkKind checks that v is NULL or of t's kind (any integer kind for
// an integer type, CHAR for VARCHAR and so on, as types.KeyKind groups
// them).
func checkKind(v types.Value, t types.Type) error {
	if v.IsNull() || types.KeyKind(v.Kind()) == types.KeyKind(t.Kind) {
		return nil
	}
	return fmt.Errorf("a %s value where the type is %s: %w", v.Kind(), t, ErrInvalid)
}

func (d *definition) keyNames() string {
	names := make([]string, len(d.g.Keys))
	for i, k := range d.g.Keys {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// selectMetrics returns the indices of the metrics named (all when names
// is empty).
func (d *definition) selectMetrics(names []string) ([]int, error) {
	if len(names) == 0 {
		sel := make([]int, len(d.g.Metrics))
		for i := range sel {
			sel[i] = i
		}
		return sel, nil
	}
	sel := make([]int, len(names))
	for i, n := range names {
		j, ok := d.index[n]
		if !ok {
			return nil, fmt.Errorf("metric group %s has no metric named %q%s: %w", d.g.Name, n, suggest.Hint(n, d.metricNames()), ErrInvalid)
		}
		sel[i] = j
	}
	return sel, nil
}

// batches are the scratch batches records are decoded into.
var batches = sync.Pool{New: func() any { return types.NewBatch(256, 32) }}

// Result is the answer to a Read: for each key asked for, in order, the
// values of the metrics asked for, with their statuses and event times.
type Result struct {
	Group   string
	Version int
	// Keys are the group's key columns.
	Keys []types.Column
	// Metrics are the metrics read, in the order of each entry's values.
	Metrics []Metric
	// Token is the position of the read in the group's commits: a
	// subscription from it gets every change committed after the read.
	Token   Token
	Entries []Entry
}

// Entry is the state of one key: its values, one per metric read, each
// with a status and its event time (milliseconds since the epoch; 0 when
// NOT_FOUND).
type Entry struct {
	Key []types.Value
	// Deleted (in subscription events) says that the key was deleted;
	// its values are then NOT_FOUND.
	Deleted    bool
	Values     []types.Value
	Statuses   []Status
	EventTimes []int64
}

// Read returns the values of metrics (all of the group's when empty) for
// each of keys, as of the last commit. A key the group does not hold
// reads NOT_FOUND for every metric. An unknown group is a
// *NotFoundError; an unknown metric, or a key that does not fit the
// group's key columns, an error wrapping ErrInvalid.
func (s *Store) Read(group string, keys [][]types.Value, metrics []string) (*Result, error) {
	d, sel, recs, tok, err := s.lookupAll(group, keys, metrics)
	if err != nil {
		return nil, err
	}
	res := &Result{Group: d.g.Name, Version: d.g.Version, Keys: d.g.Keys, Token: tok, Metrics: make([]Metric, len(sel))}
	for i, j := range sel {
		res.Metrics[i] = d.g.Metrics[j]
	}
	// Records are immutable: they are decoded without the lock.
	res.Entries, err = d.entries(sel, keys, recs, nil)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ReadJSON is Read with the result appended to dst in JSON (as
// Result.AppendJSON writes it), without the Result: what a server
// answers, for less memory and time.
func (s *Store) ReadJSON(dst []byte, group string, keys [][]types.Value, metrics []string) ([]byte, error) {
	d, sel, recs, tok, err := s.lookupAll(group, keys, metrics)
	if err != nil {
		return dst, err
	}
	ms := make([]Metric, len(sel))
	for i, j := range sel {
		ms[i] = d.g.Metrics[j]
	}
	dst = appendReadHead(dst, d.g.Name, d.g.Version, d.g.Keys, ms, tok)
	m := len(sel)
	e := Entry{Values: make([]types.Value, m), Statuses: make([]Status, m), EventTimes: make([]int64, m)}
	b := batches.Get().(*types.Batch)
	defer func() {
		b.Reset()
		batches.Put(b)
	}()
	for i, rec := range recs {
		if i > 0 {
			dst = append(dst, ',')
		}
		clear(e.Values)
		clear(e.Statuses)
		clear(e.EventTimes)
		if rec == nil {
			e.Key = keys[i]
			dst = appendEntry(dst, &e, d.g.Keys, ms)
			continue
		}
		b.Reset()
		r, err := decode(d.layouts, rec, b)
		if err != nil {
			return dst, err
		}
		e.Key = r.key()
		from := d.from[r.l.id]
		for j, mi := range sel {
			e.Values[j], e.Statuses[j], e.EventTimes[j] = r.metric(from[mi])
		}
		dst = appendEntry(dst, &e, d.g.Keys, ms)
	}
	return append(dst, "]}"...), nil
}

// lookupAll finds the records of keys (nil for a key the group does not
// hold), under the read lock, with the definition, the metrics selected
// and the position they were read at.
func (s *Store) lookupAll(group string, keys [][]types.Value, metrics []string) (*definition, []int, [][]byte, Token, error) {
	g, err := s.group(group)
	if err != nil {
		return nil, nil, nil, Token{}, err
	}
	recs := make([][]byte, len(keys))
	encoded := make([][]byte, len(keys))
	var kb []byte
	var spilled []string
	g.mu.RLock()
	if g.gone != nil {
		g.mu.RUnlock()
		return nil, nil, nil, Token{}, g.gone
	}
	d := g.def
	sel, err := d.selectMetrics(metrics)
	if err != nil {
		g.mu.RUnlock()
		return nil, nil, nil, Token{}, err
	}
	for i, k := range keys {
		if len(k) != len(d.g.Keys) {
			g.mu.RUnlock()
			return nil, nil, nil, Token{}, d.checkKey(fmt.Sprintf("key %d", i), k)
		}
		start := len(kb)
		kb = appendKey(kb, k)
		encoded[i] = kb[start:len(kb):len(kb)]
	}
	// kb may have moved while it grew: the keys are cut from its last
	// backing array.
	for i, off := 0, 0; i < len(encoded); i++ {
		n := len(encoded[i])
		encoded[i] = kb[off : off+n : off+n]
		off += n
	}
	g.t.getMany(encoded, recs)
	for i, k := range keys {
		if recs[i] == nil && g.spilled > 0 {
			if recs[i], _, err = g.lookup(encoded[i]); err != nil {
				g.mu.RUnlock()
				return nil, nil, nil, Token{}, fmt.Errorf("metric group %s: %w", g.name, err)
			}
			if recs[i] != nil {
				spilled = append(spilled, string(encoded[i]))
			}
		}
		if recs[i] == nil {
			// Worth an error only for a key that is not there.
			if err := d.checkKey(fmt.Sprintf("key %d", i), k); err != nil {
				g.mu.RUnlock()
				return nil, nil, nil, Token{}, err
			}
		}
	}
	tok := Token{epoch: g.epoch, seq: g.seq}
	g.mu.RUnlock()
	if spilled != nil {
		g.notePromote(spilled)
	}
	return d, sel, recs, tok, nil
}

// entries decodes records (nil: the key is absent, keys[i] is its key)
// into entries of the selected metrics. deleted, if not nil, marks the
// deleted keys.
func (d *definition) entries(sel []int, keys [][]types.Value, recs [][]byte, deleted []bool) ([]Entry, error) {
	n, m, nk := len(recs), len(sel), len(d.g.Keys)
	vals := make([]types.Value, n*m)
	sts := make([]Status, n*m)
	times := make([]int64, n*m)
	out := make([]Entry, n)
	var keyVals []types.Value
	b := batches.Get().(*types.Batch)
	defer func() {
		b.Reset()
		batches.Put(b)
	}()
	for i, rec := range recs {
		e := &out[i]
		lo, hi := i*m, (i+1)*m
		e.Values, e.Statuses, e.EventTimes = vals[lo:hi:hi], sts[lo:hi:hi], times[lo:hi:hi]
		if rec == nil {
			e.Key = keys[i]
			continue
		}
		if len(b.Rows) >= 256 {
			b.Reset()
		}
		r, err := decode(d.layouts, rec, b)
		if err != nil {
			return nil, err
		}
		// The key is copied out of the batch, which is reused.
		k := r.key()
		if len(keyVals)+len(k) > cap(keyVals) {
			keyVals = make([]types.Value, 0, max(len(k), (n-i)*nk))
		}
		keyVals = append(keyVals, k...)
		e.Key = keyVals[len(keyVals)-len(k) : len(keyVals) : len(keyVals)]
		if deleted != nil && deleted[i] {
			e.Deleted = true
			continue
		}
		from := d.from[r.l.id]
		for j, mi := range sel {
			if mi >= 0 {
				e.Values[j], e.Statuses[j], e.EventTimes[j] = r.metric(from[mi])
			}
		}
	}
	return out, nil
}
