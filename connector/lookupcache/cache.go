package lookupcache

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// Config bounds a Cache. A zero bound is no bound.
type Config struct {
	// MaxRows bounds the number of cached keys (as Flink's
	// lookup.partial-cache.max-rows does: a key with several rows counts
	// once).
	MaxRows int64
	// MaxBytes bounds the estimated memory of the cached keys and rows.
	MaxBytes int64
	// ExpireAfterWrite drops an entry this long after it was stored.
	ExpireAfterWrite time.Duration
	// ExpireAfterAccess drops an entry this long after it was last read
	// (or stored).
	ExpireAfterAccess time.Duration
	// CacheMissingKey stores keys that have no rows, so that they are not
	// fetched again until they expire or are evicted.
	CacheMissingKey bool
}

// Stats are a cache's counters.
type Stats struct {
	Hits, Misses, Evictions, Expirations int64
	// Fetches counts the round trips to the table's system (a Lookuper's,
	// retries included), Fetched the keys they asked for.
	Fetches, Fetched int64
	// Rows is the number of cached keys, Bytes their estimated size.
	Rows, Bytes int64
}

// entry is one cached key: an element of the LRU list (most recently used
// at the front).
type entry struct {
	key        string
	rows       [][]types.Value
	size       int64
	written    int64 // nanoseconds, by the cache's clock
	accessed   int64
	prev, next *entry
}

// Cache maps keys (opaque strings, see AppendKey) to the rows they have.
// It is not safe for concurrent use, except Stats.
type Cache struct {
	cfg        Config
	now        func() time.Time
	m          map[string]*entry
	head, tail *entry
	bytes      int64

	hits, misses, evictions, expirations, rows, size atomic.Int64
}

// New returns an empty cache bounded by cfg. now is the clock that expiry
// reads; nil means time.Now.
func New(cfg Config, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{cfg: cfg, now: now, m: make(map[string]*entry)}
}

// Get returns the rows cached for key (none: a cached missing key) and
// true, or false when key is not cached or has expired. The rows must not
// be modified.
func (c *Cache) Get(key string) ([][]types.Value, bool) {
	e, ok := c.m[key]
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	if c.expires() {
		t := c.now().UnixNano()
		if c.expired(e, t) {
			c.remove(e)
			c.expirations.Add(1)
			c.misses.Add(1)
			return nil, false
		}
		e.accessed = t
	}
	c.moveToFront(e)
	c.hits.Add(1)
	return e.rows, true
}

// expires reports whether entries expire (only then is the clock read).
func (c *Cache) expires() bool { return c.cfg.ExpireAfterWrite > 0 || c.cfg.ExpireAfterAccess > 0 }

func (c *Cache) expired(e *entry, t int64) bool {
	if w := c.cfg.ExpireAfterWrite; w > 0 && t-e.written >= int64(w) {
		return true
	}
	if a := c.cfg.ExpireAfterAccess; a > 0 && t-e.accessed >= int64(a) {
		return true
	}
	return false
}

// Put stores rows (not copied: the caller must not modify them
// afterwards) for key, replacing what was cached, and evicts the least
// recently used entries while a bound is exceeded. Without
// CacheMissingKey, an empty rows removes key instead. An entry larger
// than MaxBytes on its own is not stored.
func (c *Cache) Put(key string, rows [][]types.Value) {
	if old, ok := c.m[key]; ok {
		c.remove(old)
	}
	if len(rows) == 0 && !c.cfg.CacheMissingKey {
		return
	}
	size := entrySize(key, rows)
	if c.cfg.MaxBytes > 0 && size > c.cfg.MaxBytes {
		return
	}
	var t int64
	if c.expires() {
		t = c.now().UnixNano()
	}
	e := &entry{key: key, rows: rows, size: size, written: t, accessed: t}
	c.m[key] = e
	c.pushFront(e)
	c.bytes += size
	for c.tail != nil && c.tail != e && c.over() {
		c.remove(c.tail)
		c.evictions.Add(1)
	}
	c.rows.Store(int64(len(c.m)))
	c.size.Store(c.bytes)
}

func (c *Cache) over() bool {
	return c.cfg.MaxRows > 0 && int64(len(c.m)) > c.cfg.MaxRows ||
		c.cfg.MaxBytes > 0 && c.bytes > c.cfg.MaxBytes
}

// Len returns the number of cached keys.
func (c *Cache) Len() int { return len(c.m) }

// Bytes returns the estimated size of the cached keys and rows.
func (c *Cache) Bytes() int64 { return c.bytes }

// Clear empties the cache; the counters stay.
func (c *Cache) Clear() {
	clear(c.m)
	c.head, c.tail, c.bytes = nil, nil, 0
	c.rows.Store(0)
	c.size.Store(0)
}

// Stats returns the counters; safe to call from any goroutine.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(),
		Evictions: c.evictions.Load(), Expirations: c.expirations.Load(),
		Rows: c.rows.Load(), Bytes: c.size.Load(),
	}
}

func (c *Cache) remove(e *entry) {
	delete(c.m, e.key)
	c.bytes -= e.size
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
	c.rows.Store(int64(len(c.m)))
	c.size.Store(c.bytes)
}

func (c *Cache) pushFront(e *entry) {
	e.prev, e.next = nil, c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

func (c *Cache) moveToFront(e *entry) {
	if c.head == e {
		return
	}
	// Unlink, then push.
	e.prev.next = e.next
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	c.pushFront(e)
}

// The size estimate: what the entry, its map slot, its key and its rows
// take on the heap, roughly (allocator rounding is ignored).
const (
	entryOverhead = int64(unsafe.Sizeof(entry{})) + 48 // + map slot and key header
	sliceHeader   = int64(unsafe.Sizeof([]types.Value(nil)))
)

func entrySize(key string, rows [][]types.Value) int64 {
	n := entryOverhead + int64(len(key)) + int64(cap(rows))*sliceHeader
	for _, r := range rows {
		n += int64(cap(r)) * types.ValueSize
		for _, v := range r {
			n += v.HeapSize()
		}
	}
	return n
}

// AppendKey appends to dst the cache key of a lookup: the key columns
// (their positions, since one table may be looked up by several key sets)
// and the key values (types.AppendKey: an INT and a BIGINT of one number
// are one key).
func AppendKey(dst []byte, keyCols []int, key []types.Value) []byte {
	dst = append(dst, byte(len(keyCols)))
	for _, c := range keyCols {
		dst = append(dst, byte(c), byte(c>>8))
	}
	for _, v := range key {
		dst = types.AppendKey(dst, v)
	}
	return dst
}
