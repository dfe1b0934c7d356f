package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/sluicesql/sluice/types"
	"github.com/zeebo/xxh3"
)

// Index is the immutable, in-memory index of a dimension table by one set
// of key columns. It is built once by Build and is safe for concurrent use.
type Index struct {
	colTypes []types.Type
	keyCols  []int
	isKey    []bool   // by column
	keys     []keyCol // by key column
	vals     []column // the non-key columns, in column order
	valCols  []int    // their positions in the row
	nullLen  int      // bytes of a record's null bitmap, when it has one
	rows     int
	skipped  int // rows with a NULL key, not indexed

	tab   table
	arena arena
	spill *spill // set if the index is mapped from files

	readers sync.Pool // *Reader, for Index.Lookup
}

// Build indexes the rows that each gives by the columns keyCols of a row of
// the given column types. each calls yield once per row; yield copies what
// it needs (the caller may reuse row), and returns an error for a row that
// does not fit the column types, which each should return. A row with a
// NULL in a key column is not indexed: it could never match.
func Build(colTypes []types.Type, keyCols []int, each func(yield func(row []types.Value) error) error) (*Index, error) {
	return BuildSized(colTypes, keyCols, 0, each)
}

// BuildSized is Build for a table of about rows rows: a reload passes the
// Rows of the index it replaces. The table is then allocated once at its
// final size instead of doubling as rows arrive and being fitted at the
// end, so that a build's peak memory stays near the size of the index it
// builds (twice that without the hint, garbage included). A wrong hint
// costs memory or time, never correctness; 0 means no hint.
func BuildSized(colTypes []types.Type, keyCols []int, rows int, each func(yield func(row []types.Value) error) error) (*Index, error) {
	b, err := NewBuilder(colTypes, keyCols, Config{Rows: rows})
	if err != nil {
		return nil, err
	}
	if err := each(b.Add); err != nil {
		b.Abort()
		return nil, fmt.Errorf("store: cannot build index: %w", err)
	}
	return b.Finish()
}

// Config configures a build.
type Config struct {
	// Rows is a hint of the row count, as for BuildSized; 0: none.
	Rows int
	// SpillDir, if set, is a directory to spill the index to: its table
	// and its arena are then mapped from files there (removed at once,
	// so that nothing outlives the index, even a crash) instead of held
	// on the Go heap, and the kernel keeps in memory the pages in use and
	// writes the others out under memory pressure, so that a table may be
	// larger than memory. The disk space is allocated as the index grows
	// (64 MiB at a time). Looked-up strings are then copied out of the
	// index (they cannot outlive its mapping), which costs an allocation
	// per string value. Linux only.
	SpillDir string
	// CopyStrings copies looked-up strings out of the index (an
	// allocation per string value) instead of pointing into its arena: for
	// a table that is reloaded, whose strings, kept in a job's state,
	// would otherwise hold whole 64 MiB chunks of replaced copies alive.
	CopyStrings bool
}

// NewBuilder starts an index of rows of the given column types by the
// columns keyCols, for rows given one at a time to Add: the way to build
// several indexes of one table (by different key sets) from a single read
// of it.
func NewBuilder(colTypes []types.Type, keyCols []int, cfg Config) (*Builder, error) {
	ix, err := newIndex(colTypes, keyCols)
	if err != nil {
		return nil, err
	}
	if cfg.SpillDir != "" {
		sp, err := newSpill(cfg.SpillDir)
		if err != nil {
			return nil, err
		}
		ix.spill, ix.tab.spill, ix.arena.spill = sp, sp, sp
	}
	if cfg.SpillDir != "" || cfg.CopyStrings {
		for i := range ix.vals {
			ix.vals[i].clone = true
		}
	}
	if cfg.Rows > 0 {
		if err := ix.tab.resize(int(float64(cfg.Rows)/fitLoad) + 1); err != nil {
			ix.free()
			return nil, fmt.Errorf("store: cannot build index: %w", err)
		}
	}
	return &Builder{ix: ix}, nil
}

// Finish returns the index of the rows added. The Builder must not be
// used after it.
func (b *Builder) Finish() (*Index, error) {
	ix := b.ix
	b.ix = nil
	if err := ix.tab.fit(); err != nil {
		ix.free()
		return nil, fmt.Errorf("store: cannot build index: %w", err)
	}
	ix.arena.trim()
	if sp := ix.spill; sp != nil {
		// The mappings go with the index: no reader can reach them then
		// (looked-up strings are copies).
		runtime.AddCleanup(ix, func(sp *spill) { sp.release() }, sp)
	}
	return ix, nil
}

// Abort gives up the build and frees what it holds at once. The Builder
// must not be used after it.
func (b *Builder) Abort() {
	if b.ix != nil {
		b.ix.free()
		b.ix = nil
	}
}

// free gives a spilled index's mappings back, for a build that failed.
func (ix *Index) free() {
	if ix.spill != nil {
		ix.spill.release()
	}
}

func newIndex(colTypes []types.Type, keyCols []int) (*Index, error) {
	if len(keyCols) == 0 {
		return nil, errors.New("store: cannot build index: no key columns")
	}
	ix := &Index{
		colTypes: append([]types.Type(nil), colTypes...),
		keyCols:  append([]int(nil), keyCols...),
		isKey:    make([]bool, len(colTypes)),
	}
	for _, c := range keyCols {
		if c < 0 || c >= len(colTypes) {
			return nil, fmt.Errorf("store: cannot build index: key column %d out of range [0, %d)", c, len(colTypes))
		}
		if ix.isKey[c] {
			return nil, fmt.Errorf("store: cannot build index: key column %d given twice", c)
		}
		ix.isKey[c] = true
		t := colTypes[c]
		ix.keys = append(ix.keys, keyCol{kind: t.Kind, decimal: t.Kind == types.KindDecimal, precision: t.Precision, scale: t.Scale})
	}
	for i, t := range colTypes {
		if ix.isKey[i] {
			continue
		}
		ix.vals = append(ix.vals, column{kind: t.Kind, class: classOf(t.Kind), scale: t.Scale})
		ix.valCols = append(ix.valCols, i)
	}
	ix.nullLen = (len(ix.vals) + 7) / 8
	ix.readers.New = func() any { return ix.NewReader() }
	return ix, nil
}

// keyCol is what Lookup needs to give a probe's key value the column's type.
type keyCol struct {
	kind             types.Kind
	decimal          bool
	precision, scale int
}

// Builder adds rows to an index under construction; NewBuilder makes one.
// It is for one goroutine.
type Builder struct {
	ix   *Index
	key  []byte // the canonical key encoding
	body []byte // the record being built: null bitmap and values
	head []byte
}

// A record is
//
//	head   uvarint: delta<<1 | hasNulls, where delta is the distance back to
//	       the previous record of the same key (0: none)
//	nulls  ceil(values/8) bytes when hasNulls, bit i set: value i is NULL
//	value* one per non-NULL non-key column, by its class (see codec.go)
//
// so a key's rows form a chain from its most recent record backwards, and
// a row without NULLs costs one byte more than its values.
//
// Add copies what it keeps of row (the caller may reuse it) and returns an
// error for a row that does not fit the column types. A row with a NULL
// in a key column is counted (Index.Skipped) and left out.
func (b *Builder) Add(row []types.Value) error {
	ix := b.ix
	if len(row) != len(ix.colTypes) {
		return fmt.Errorf("row %d has %d values, want %d", ix.rows+ix.skipped+1, len(row), len(ix.colTypes))
	}
	b.key = b.key[:0]
	for _, c := range ix.keyCols {
		v := row[c]
		if v.IsNull() {
			ix.skipped++
			return nil
		}
		if !compatible(v.Kind(), ix.colTypes[c].Kind) {
			return fmt.Errorf("row %d, column %d: a %s value in a %s column", ix.rows+ix.skipped+1, c, v.Kind(), ix.colTypes[c].Kind)
		}
		b.key = types.AppendKey(b.key, v)
	}
	hasNulls := false
	for _, c := range ix.valCols {
		if row[c].IsNull() {
			hasNulls = true
			break
		}
	}
	b.body = b.body[:0]
	if hasNulls {
		b.body = append(b.body, make([]byte, ix.nullLen)...)
	}
	for i := range ix.vals {
		v := row[ix.valCols[i]]
		if v.IsNull() {
			b.body[i/8] |= 1 << (i % 8)
			continue
		}
		if err := checkValue(v, &ix.vals[i]); err != nil {
			return fmt.Errorf("row %d, column %d: %w", ix.rows+ix.skipped+1, ix.valCols[i], err)
		}
		b.body = appendValue(b.body, v, &ix.vals[i])
	}
	if len(b.body)+binary.MaxVarintLen64 > chunkSize {
		return fmt.Errorf("row %d: %d bytes, more than a row may take (%d)", ix.rows+ix.skipped+1, len(b.body), chunkSize-binary.MaxVarintLen64)
	}

	h := hashKey(b.key)
	if err := ix.tab.growFor(); err != nil {
		return err
	}
	i, found := ix.tab.find(h)
	addr, err := ix.arena.reserve(len(b.body) + binary.MaxVarintLen64)
	if err != nil {
		return err
	}
	if addr > maxAddr {
		return fmt.Errorf("row %d: the arena is full (%d bytes)", ix.rows+ix.skipped+1, uint64(maxAddr))
	}
	var delta uint64
	if found {
		delta = addr - ix.tab.slots[i].w&addrMask
	} else {
		ix.tab.keys++
	}
	hd := delta << 1
	if hasNulls {
		hd |= 1
	}
	b.head = binary.AppendUvarint(b.head[:0], hd)
	ix.arena.append(b.head)
	ix.arena.append(b.body)
	ix.tab.slots[i] = slot{lo: h.Lo, w: tagOf(h) | addr}
	ix.rows++
	return nil
}

// Rows returns the number of rows indexed (rows with a NULL key excluded).
func (ix *Index) Rows() int { return ix.rows }

// Skipped returns the number of rows left out because a key column was NULL.
func (ix *Index) Skipped() int { return ix.skipped }

// Keys returns the number of distinct keys.
func (ix *Index) Keys() int { return ix.tab.keys }

// Bytes returns the memory the index holds: its arena and its table (in
// files, for a spilled index, of which the kernel keeps in memory what it
// can).
func (ix *Index) Bytes() int64 {
	return ix.arena.bytes() + int64(cap(ix.tab.slots))*16
}

// Spilled reports whether the index is mapped from files (Config.SpillDir).
func (ix *Index) Spilled() bool { return ix.spill != nil }

// ColumnTypes returns the column types of the rows; the slice must not be
// modified.
func (ix *Index) ColumnTypes() []types.Type { return ix.colTypes }

// KeyColumns returns the key columns; the slice must not be modified.
func (ix *Index) KeyColumns() []int { return ix.keyCols }

// Lookup calls visit with every row whose key columns equal key and returns
// the number of rows visited; see Reader.Lookup. It is a convenience that
// takes a Reader from a pool; an operator that looks up many keys should
// hold a Reader of its own.
func (ix *Index) Lookup(key []types.Value, visit func(row []types.Value) bool) int {
	r := ix.readers.Get().(*Reader)
	n := r.Lookup(key, visit)
	ix.readers.Put(r)
	return n
}

// LookupBatch is Reader.LookupBatch with a Reader from a pool: one per
// call, so its cost is shared by the keys of the batch.
func (ix *Index) LookupBatch(keys [][]types.Value, visit func(i int, row []types.Value) bool) int {
	r := ix.readers.Get().(*Reader)
	n := r.LookupBatch(keys, visit)
	ix.readers.Put(r)
	return n
}

// Reader looks rows up in an Index with scratch space of its own. A Reader
// is for one goroutine at a time; an Index can have any number of them.
type Reader struct {
	ix    *Index
	key   []byte
	row   []types.Value
	touch uint64 // what LookupBatch's loads read, so that they stay
}

// NewReader returns a Reader of ix.
func (ix *Index) NewReader() *Reader {
	return &Reader{ix: ix, row: make([]types.Value, len(ix.colTypes))}
}

// Lookup calls visit with every row whose key columns equal key, in no
// particular order (a key's rows come most recently added first), and
// returns the number of rows visited. key has one value per key column, in
// the order of the index's key columns; integer kinds may differ from the
// table's, and so may CHAR and VARCHAR or BINARY and VARBINARY: values
// match as SQL values do. A NULL in key matches nothing.
//
// row holds every column in the order of the column types, each value of
// its column's kind: the key columns are key's values cast to them. row is
// decoded into a buffer that the next row overwrites: it is valid only
// during the call. Its strings, though, point into the index's arena,
// which never changes: they stay valid after the call, and keep the whole
// arena chunk they point into alive for as long as they are referenced —
// copy them (strings.Clone) before keeping them past the life of the index.
// visit returns false to stop.
func (r *Reader) Lookup(key []types.Value, visit func(row []types.Value) bool) int {
	ix := r.ix
	h, ok := r.hash(key)
	if !ok {
		return 0
	}
	addr := ix.tab.lookup(h)
	if addr == 0 {
		return 0
	}
	return r.visit(key, addr, visit)
}

// batch is how many keys LookupBatch works on at a time.
const batch = 32

// LookupBatch looks up every key of keys, as Lookup does, and calls visit
// with the key's index and each of its rows; visit returns false to go on
// with the next key. It returns the number of rows visited. It finds the
// same rows as a Lookup per key, but faster for tables larger than the CPU
// caches: it hashes a group of keys, then touches their slots, then their
// records, so that the cache misses of a group overlap instead of queueing
// one behind the other.
func (r *Reader) LookupBatch(keys [][]types.Value, visit func(i int, row []types.Value) bool) int {
	ix := r.ix
	if len(ix.tab.slots) == 0 {
		return 0
	}
	var hs [batch]xxh3.Uint128
	var addrs [batch]uint64
	var found [batch]bool
	n := 0
	for base := 0; base < len(keys); base += batch {
		group := keys[base:min(base+batch, len(keys))]
		// Each phase is a short loop of loads that do not depend on one
		// another, so that the CPU has many misses in flight at once.
		for j, key := range group {
			hs[j], found[j] = r.hash(key)
		}
		var touch uint64
		for j := range group {
			if found[j] {
				touch += ix.tab.slots[ix.tab.home(hs[j])].w // load the home slot
			}
		}
		for j := range group {
			addrs[j] = 0
			if found[j] {
				addrs[j] = ix.tab.lookup(hs[j])
			}
		}
		for j := range group {
			if addrs[j] != 0 {
				chunk, p := ix.arena.at(addrs[j])
				touch += uint64(chunk[p]) // load the record's first line
			}
		}
		r.touch = touch
		for j, key := range group {
			if addrs[j] != 0 {
				i := base + j
				n += r.visit(key, addrs[j], func(row []types.Value) bool { return visit(i, row) })
			}
		}
	}
	return n
}

// hash checks and encodes key and returns its hash; false if it has a NULL.
func (r *Reader) hash(key []types.Value) (xxh3.Uint128, bool) {
	if len(key) != len(r.ix.keyCols) {
		panic(fmt.Sprintf("store: Lookup with %d key values for %d key columns", len(key), len(r.ix.keyCols)))
	}
	r.key = r.key[:0]
	for _, v := range key {
		if v.IsNull() {
			return xxh3.Uint128{}, false
		}
		r.key = types.AppendKey(r.key, v)
	}
	return hashKey(r.key), true
}

// visit decodes the rows of the chain that starts at addr and calls visit
// with each.
func (r *Reader) visit(key []types.Value, addr uint64, visit func(row []types.Value) bool) int {
	ix := r.ix
	row := r.row
	for i, c := range ix.keyCols {
		k := &ix.keys[i]
		switch v := &key[i]; {
		case k.decimal:
			row[c] = castDecimal(*v, k.precision, k.scale)
		case v.Kind() == k.kind:
			row[c] = *v
		default:
			row[c] = v.WithKind(k.kind)
		}
	}
	n := 0
	for addr != 0 {
		chunk, p := ix.arena.at(addr)
		hd, w := binary.Uvarint(chunk[p:])
		p += w
		var nulls []byte
		if hd&1 != 0 {
			nulls = chunk[p : p+ix.nullLen]
			p += ix.nullLen
		}
		for i := range ix.vals {
			if nulls != nil && nulls[i/8]&(1<<(i%8)) != 0 {
				row[ix.valCols[i]] = types.NullValue
				continue
			}
			row[ix.valCols[i]], p = readValue(chunk, p, &ix.vals[i])
		}
		n++
		if !visit(row) {
			break
		}
		delta := hd >> 1
		if delta == 0 {
			break
		}
		addr -= delta
	}
	runtime.KeepAlive(ix) // a spilled index's mappings go with it
	return n
}

// castDecimal returns a probe's DECIMAL key value at the scale of the key
// column. The value matched a stored key, so it is equal to it and fits.
func castDecimal(v types.Value, precision, scale int) types.Value {
	if v.Kind() != types.KindDecimal || v.Scale() == scale {
		return v
	}
	if d, ok := types.FitDecimal(v, precision, scale); ok {
		return d
	}
	return v
}
