package store

import (
	"math/bits"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// A slot of the open-addressing table is 16 bytes and holds no pointer:
//
//	lo  the low 64 bits of the key's 128-bit hash
//	w   bits 40-63: 24 more bits of the hash (bits 0-23 of the high half)
//	    bits  0-39: the address of the key's most recent record; 0 = empty
//
// The home position is derived from lo, so the table can be resized from
// the slots alone.
type slot struct {
	lo uint64
	w  uint64
}

const (
	addrBits = 40
	addrMask = 1<<addrBits - 1
	tagMask  = 1<<(64-addrBits) - 1
)

// hashKey hashes the canonical encoding of a key.
func hashKey(enc []byte) xxh3.Uint128 { return xxh3.Hash128(enc) }

func tagOf(h xxh3.Uint128) uint64 { return (h.Hi & tagMask) << addrBits }

// table is a linear-probing hash table of distinct keys. Its capacity is
// any number (not a power of two): the home position is the low half of
// the hash scaled to the capacity, so the load factor can be chosen freely.
type table struct {
	slots []slot
	keys  int
	spill *spill // where the slots are mapped from, if set
}

// Load factors: the table grows by doubling when it passes maxLoad while
// rows arrive; once Build has seen every row it is resized to fitLoad.
const (
	maxLoad = 0.80
	fitLoad = 0.80
)

func (t *table) home(h xxh3.Uint128) int { return t.homeLo(h.Lo) }

// homeLo scales the low half of a hash to the capacity (Lemire's
// multiply-shift): the slot keeps the low half, so a resize can place it
// again without the records.
func (t *table) homeLo(lo uint64) int {
	hi, _ := bits.Mul64(lo, uint64(len(t.slots)))
	return int(hi)
}

// find returns the index of the slot of h, or of the empty slot where it
// would go, and whether it was found.
func (t *table) find(h xxh3.Uint128) (int, bool) {
	tag := tagOf(h)
	n := len(t.slots)
	i := t.home(h)
	for {
		s := &t.slots[i]
		if s.w == 0 {
			return i, false
		}
		if s.lo == h.Lo && s.w&^addrMask == tag {
			return i, true
		}
		if i++; i == n {
			i = 0
		}
	}
}

// lookup returns the address of the most recent record of h, 0 if none.
func (t *table) lookup(h xxh3.Uint128) uint64 {
	n := len(t.slots)
	if n == 0 {
		return 0
	}
	tag := tagOf(h)
	i := t.home(h)
	for {
		s := t.slots[i]
		if s.w == 0 {
			return 0
		}
		if s.lo == h.Lo && s.w&^addrMask == tag {
			return s.w & addrMask
		}
		if i++; i == n {
			i = 0
		}
	}
}

// growFor makes sure one more key fits under maxLoad.
func (t *table) growFor() error {
	if float64(t.keys+1) > maxLoad*float64(len(t.slots)) {
		return t.resize(max(64, 2*len(t.slots)))
	}
	return nil
}

// fit resizes the table to the fitting load factor, if it is well below.
func (t *table) fit() error {
	want := int(float64(t.keys)/fitLoad) + 1
	if len(t.slots) > want+want/16 {
		return t.resize(want)
	}
	return nil
}

func (t *table) resize(n int) error {
	old := t.slots
	if t.spill != nil {
		b, err := t.spill.mapBytes(n * int(unsafe.Sizeof(slot{})))
		if err != nil {
			return err
		}
		t.slots = unsafe.Slice((*slot)(unsafe.Pointer(&b[0])), n)
	} else {
		t.slots = make([]slot, n)
		adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.slots))), n*int(unsafe.Sizeof(slot{}))))
	}
	for _, s := range old {
		if s.w == 0 {
			continue
		}
		i := t.homeLo(s.lo)
		for t.slots[i].w != 0 {
			if i++; i == n {
				i = 0
			}
		}
		t.slots[i] = s
	}
	if t.spill != nil && len(old) > 0 {
		t.spill.unmap(unsafe.Slice((*byte)(unsafe.Pointer(&old[0])), len(old)*int(unsafe.Sizeof(slot{}))))
	}
	return nil
}
