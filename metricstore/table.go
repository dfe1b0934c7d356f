package metricstore

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// table holds a group's records in memory, laid out for the garbage
// collector: the records are appended to byte chunks of a MiB, and an
// index maps a 64-bit hash of each key (its types.AppendKey encoding) to
// the place of its latest record. Neither holds a pointer per key, so a
// million keys cost the collector a few hundred chunks to look at, not
// millions of objects.
//
// A chunk's bytes, once written, never change: a record replaced stays
// where it is (the change log or a snapshot being sent may hold it) and
// only the chunk's count of live bytes goes down. A chunk less than half
// of whose bytes are live is compacted (its live records copied to the current
// chunk) and dropped; the collector frees it once no one holds a record
// of it. Eviction empties the oldest chunk first: its live records are
// those of the keys not written for longest.
//
// Keys whose hashes collide are told apart by the key stored in each
// record: the second key of a hash goes into the overflow map.
type table struct {
	seed      maphash.Seed
	chunkSize int
	// hashFn, if set, replaces the hash (tests give one that collides).
	hashFn   func([]byte) uint64
	index    map[uint64]uint64
	overflow map[string]uint64
	// chunks holds the chunks by id - base; nil once dropped. The last
	// is the current one, which is appended to.
	chunks []*chunk
	base   uint32
	// keys counts the keys; size the bytes of the chunks held.
	keys int
	size int64
	// sparse lists the chunks to compact.
	sparse []uint32
}

// maxChunkSize is the size of a chunk (a larger record gets a chunk of
// its own), unless the memory budget is small.
const maxChunkSize = 1 << 20

// indexBytesPerKey estimates the index's memory for a key.
const indexBytesPerKey = 24

type chunk struct {
	id  uint32
	buf []byte
	// live counts the bytes of the records the index points to.
	live int
	// evicted and compacted are how far eviction and compaction have
	// gone through the chunk.
	evicted, compacted int
}

func newTable(seed maphash.Seed, chunkSize int) *table {
	return &table{seed: seed, chunkSize: chunkSize, index: map[uint64]uint64{}}
}

func (t *table) hash(key []byte) uint64 {
	if t.hashFn != nil {
		return t.hashFn(key)
	}
	return maphash.Bytes(t.seed, key)
}

// A location is a chunk's id and an offset in it.
func location(id uint32, off int) uint64 { return uint64(id)<<32 | uint64(uint32(off)) }

func (t *table) chunkOf(l uint64) *chunk { return t.chunks[uint32(l>>32)-t.base] }

// at returns the key and the record at location l, and the bytes they
// take in their chunk.
func (t *table) at(l uint64) (key, rec []byte, size int) {
	return recordAt(t.chunkOf(l).buf, int(uint32(l)))
}

// recordAt returns the key and the record at offset off of a chunk's
// bytes, and the bytes they take.
func recordAt(buf []byte, off int) (key, rec []byte, size int) {
	b := buf[off:]
	kl, n := binary.Uvarint(b)
	key = b[n : n+int(kl) : n+int(kl)]
	b = b[n+int(kl):]
	rl, m := binary.Uvarint(b)
	rec = b[m : m+int(rl) : m+int(rl)]
	return key, rec, n + int(kl) + m + int(rl)
}

// find returns the location of key's record.
func (t *table) find(key []byte) (uint64, bool) {
	if l, ok := t.index[t.hash(key)]; ok {
		if k, _, _ := t.at(l); bytes.Equal(k, key) {
			return l, true
		}
	}
	if len(t.overflow) > 0 {
		l, ok := t.overflow[string(key)]
		return l, ok
	}
	return 0, false
}

// get returns key's record.
func (t *table) get(key []byte) ([]byte, bool) {
	l, ok := t.find(key)
	if !ok {
		return nil, false
	}
	_, rec, _ := t.at(l)
	return rec, true
}

// getMany sets recs[i] to the record of keys[i], nil if the table does
// not hold it. It looks keys up in passes over a few dozen at a time (the
// index, then the records' first bytes, then the keys), so that the
// memory accesses of many keys overlap rather than wait for each other.
// It returns a byte of no meaning (the reads of the records' first bytes
// are used, so that they are not optimized away).
func (t *table) getMany(keys [][]byte, recs [][]byte) (touched byte) {
	const step = 32
	var locs [step]uint64
	var found [step]bool
	for lo := 0; lo < len(keys); lo += step {
		hi := min(lo+step, len(keys))
		for i := lo; i < hi; i++ {
			locs[i-lo], found[i-lo] = t.index[t.hash(keys[i])]
		}
		var x byte
		for i := lo; i < hi; i++ {
			if l := locs[i-lo]; found[i-lo] {
				x ^= t.chunks[uint32(l>>32)-t.base].buf[uint32(l)]
			}
		}
		touched ^= x
		for i := lo; i < hi; i++ {
			recs[i] = nil
			if found[i-lo] {
				if k, rec, _ := t.at(locs[i-lo]); bytes.Equal(k, keys[i]) {
					recs[i] = rec
					continue
				}
			}
			if len(t.overflow) > 0 {
				if l, ok := t.overflow[string(keys[i])]; ok {
					_, recs[i], _ = t.at(l)
				}
			}
		}
	}
	return touched
}

// put makes rec key's record, and returns its location.
func (t *table) put(key, rec []byte) uint64 {
	l := t.append(key, rec)
	t.point(key, l)
	return l
}

// point makes the index give location l for key.
func (t *table) point(key []byte, l uint64) {
	if len(t.overflow) > 0 {
		if old, ok := t.overflow[string(key)]; ok {
			t.release(old)
			t.overflow[string(key)] = l
			return
		}
	}
	h := t.hash(key)
	old, ok := t.index[h]
	switch {
	case !ok:
		t.index[h] = l
		t.keys++
	case t.keyAt(old, key):
		t.release(old)
		t.index[h] = l
	default:
		if t.overflow == nil {
			t.overflow = map[string]uint64{}
		}
		t.overflow[string(key)] = l
		t.keys++
	}
}

func (t *table) keyAt(l uint64, key []byte) bool {
	k, _, _ := t.at(l)
	return bytes.Equal(k, key)
}

// del removes key, and reports whether the table had it.
func (t *table) del(key []byte) bool {
	h := t.hash(key)
	if l, ok := t.index[h]; ok && t.keyAt(l, key) {
		delete(t.index, h)
		t.release(l)
		t.keys--
		return true
	}
	if len(t.overflow) > 0 {
		if l, ok := t.overflow[string(key)]; ok {
			delete(t.overflow, string(key))
			t.release(l)
			t.keys--
			return true
		}
	}
	return false
}

// append writes a record into the current chunk (a new one if it does
// not fit) and returns its location.
func (t *table) append(key, rec []byte) uint64 {
	need := uvarintLen(len(key)) + len(key) + uvarintLen(len(rec)) + len(rec)
	var c *chunk
	if n := len(t.chunks); n > 0 {
		c = t.chunks[n-1]
	}
	if c == nil || cap(c.buf)-len(c.buf) < need {
		if c != nil {
			// No longer the current chunk: maybe already sparse.
			if c.live == 0 {
				defer t.drop(c)
			} else if c.live < cap(c.buf)/2 {
				t.sparse = append(t.sparse, c.id)
			}
		}
		c = &chunk{id: t.base + uint32(len(t.chunks)), buf: make([]byte, 0, max(t.chunkSize, need))}
		t.chunks = append(t.chunks, c)
		t.size += int64(cap(c.buf))
	}
	off := len(c.buf)
	c.buf = appendRecord(c.buf, key, rec)
	c.live += need
	return location(c.id, off)
}

// appendRecord appends a key and its record to dst, as a chunk holds
// them.
func appendRecord(dst, key, rec []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(len(rec)))
	return append(dst, rec...)
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}

// release notes that the record at l is no longer a key's latest.
func (t *table) release(l uint64) {
	c := t.chunkOf(l)
	_, _, size := t.at(l)
	c.live -= size
	if c == t.chunks[len(t.chunks)-1] {
		return
	}
	switch {
	case c.live == 0:
		t.drop(c)
	case c.live+size >= cap(c.buf)/2 && c.live < cap(c.buf)/2:
		// Now less than half live: to compact.
		t.sparse = append(t.sparse, c.id)
	}
}

// drop forgets chunk c.
func (t *table) drop(c *chunk) {
	if c.id < t.base || int(c.id-t.base) >= len(t.chunks) || t.chunks[c.id-t.base] != c {
		return // dropped already
	}
	i := c.id - t.base
	t.chunks[i] = nil
	t.size -= int64(cap(c.buf))
	for len(t.chunks) > 1 && t.chunks[0] == nil {
		t.chunks = t.chunks[1:]
		t.base++
	}
}

// compact copies the live records of the sparse chunks into the current
// one, dropping each chunk it empties, and stops after moving n records;
// it reports whether work is left.
func (t *table) compact(n int) bool {
	moved := 0
	for len(t.sparse) > 0 {
		id := t.sparse[0]
		if id < t.base || int(id-t.base) >= len(t.chunks)-1 || t.chunks[id-t.base] == nil {
			t.sparse = t.sparse[1:]
			continue
		}
		c := t.chunks[id-t.base]
		for c.compacted < len(c.buf) && c.live > 0 {
			if moved >= n {
				return true
			}
			l := location(c.id, c.compacted)
			key, rec, size := recordAt(c.buf, c.compacted)
			if cur, ok := t.find(key); ok && cur == l {
				// point releases l, which drops c once it is empty.
				t.point(key, t.append(key, rec))
				moved++
			}
			c.compacted += size
		}
		t.drop(c)
		t.sparse = t.sparse[1:]
	}
	return false
}

// each calls fn for every key and its record.
func (t *table) each(fn func(key, rec []byte)) {
	for _, c := range t.chunks {
		if c == nil {
			continue
		}
		for off := 0; off < len(c.buf); {
			l := location(c.id, off)
			key, rec, size := recordAt(c.buf, off)
			if cur, ok := t.find(key); ok && cur == l {
				fn(key, rec)
			}
			off += size
		}
	}
}

// evict hands up to n of the oldest records to out and removes them,
// and returns how many it removed. It stops at out's first error. The
// current chunk is left alone.
func (t *table) evict(n int, out func(key, rec []byte) error) (int, error) {
	moved := 0
	for len(t.chunks) > 1 && moved < n {
		c := t.chunks[0]
		for c.evicted < len(c.buf) && c.live > 0 && moved < n {
			l := location(c.id, c.evicted)
			key, rec, size := recordAt(c.buf, c.evicted)
			if cur, ok := t.find(key); ok && cur == l {
				if err := out(key, rec); err != nil {
					return moved, err
				}
				// Drops c once it is empty.
				t.del(key)
				moved++
			}
			c.evicted += size
		}
		if c.evicted >= len(c.buf) || c.live == 0 {
			t.drop(c)
		}
	}
	return moved, nil
}

// memory estimates the table's memory.
func (t *table) memory() int64 { return t.size + int64(t.keys)*indexBytesPerKey }
