package store

// Records live in chunks of at most chunkSize bytes; a record never
// straddles two chunks. A record's address is chunk<<chunkShift | offset in
// the chunk, so that a 40-bit address reaches 1 TiB of arena.
const (
	chunkShift = 26 // 64 MiB
	chunkSize  = 1 << chunkShift
	chunkMask  = chunkSize - 1
	firstChunk = 64 << 10 // the first chunk starts small and grows by doubling
	maxAddr    = 1<<addrBits - 1
)

// arena is an append-only sequence of byte chunks. Only the last chunk
// grows (by reallocation, while it is smaller than chunkSize); the others
// are full and never move, so that addresses stay valid and strings that
// point into a finished arena stay valid too.
//
// A spilled arena (spill set) maps each chunk, at its full size, from a
// file of its own in the spill directory: the file holds what the chunk
// has written, and the kernel keeps in memory only the pages in use.
type arena struct {
	chunks [][]byte
	spill  *spill
}

// reserve makes room for up to n bytes in one chunk and returns the address
// at which they will start. n must not exceed chunkSize.
func (a *arena) reserve(n int) (uint64, error) {
	if len(a.chunks) == 0 {
		c, err := a.newChunk(1, max(firstChunk, n+1)) // address 0 means "none"
		if err != nil {
			return 0, err
		}
		a.chunks = append(a.chunks, c)
	}
	last := len(a.chunks) - 1
	c := a.chunks[last]
	if len(c)+n > chunkSize {
		nc, err := a.newChunk(0, chunkSize)
		if err != nil {
			return 0, err
		}
		a.chunks = append(a.chunks, nc)
		last++
		c = a.chunks[last]
	} else if len(c)+n > cap(c) {
		nc, err := a.newChunk(len(c), min(chunkSize, max(2*cap(c), len(c)+n)))
		if err != nil {
			return 0, err
		}
		copy(nc, c)
		a.chunks[last] = nc
		c = nc
	}
	return uint64(last)<<chunkShift | uint64(len(c)), nil
}

// newChunk returns a chunk of length n and capacity at least c: on the
// heap, or a whole mapped chunk when the arena spills.
func (a *arena) newChunk(n, c int) ([]byte, error) {
	if a.spill != nil {
		b, err := a.spill.mapBytes(chunkSize)
		if err != nil {
			return nil, err
		}
		return b[:n], nil
	}
	b := make([]byte, n, c)
	adviseHuge(b)
	return b, nil
}

// append appends b at the address reserve just returned.
func (a *arena) append(b []byte) {
	last := len(a.chunks) - 1
	a.chunks[last] = append(a.chunks[last], b...)
}

// trim gives back the unused capacity of the last chunk (a spilled chunk
// keeps it: its untouched pages cost nothing).
func (a *arena) trim() {
	if len(a.chunks) == 0 || a.spill != nil {
		return
	}
	last := len(a.chunks) - 1
	c := a.chunks[last]
	if cap(c)-len(c) > 4<<10 {
		a.chunks[last] = append([]byte(nil), c...)
	}
}

// at returns the chunk holding addr and addr's offset in it.
func (a *arena) at(addr uint64) ([]byte, int) {
	return a.chunks[addr>>chunkShift], int(addr & chunkMask)
}

// bytes is the memory the arena holds: its chunks' capacity, or the bytes
// written to a spilled one.
func (a *arena) bytes() int64 {
	var n int64
	for _, c := range a.chunks {
		if a.spill != nil {
			n += int64(len(c))
		} else {
			n += int64(cap(c))
		}
	}
	return n
}
