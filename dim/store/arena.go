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
type arena struct {
	chunks [][]byte
}

// reserve makes room for up to n bytes in one chunk and returns the address
// at which they will start. n must not exceed chunkSize.
func (a *arena) reserve(n int) uint64 {
	if len(a.chunks) == 0 {
		c := make([]byte, 1, max(firstChunk, n+1)) // address 0 means "none"
		a.chunks = append(a.chunks, c)
	}
	last := len(a.chunks) - 1
	c := a.chunks[last]
	if len(c)+n > chunkSize {
		a.chunks = append(a.chunks, newChunk(0, chunkSize))
		last++
		c = a.chunks[last]
	} else if len(c)+n > cap(c) {
		nc := newChunk(len(c), min(chunkSize, max(2*cap(c), len(c)+n)))
		copy(nc, c)
		a.chunks[last] = nc
		c = nc
	}
	return uint64(last)<<chunkShift | uint64(len(c))
}

func newChunk(n, c int) []byte {
	b := make([]byte, n, c)
	adviseHuge(b)
	return b
}

// append appends b at the address reserve just returned.
func (a *arena) append(b []byte) {
	last := len(a.chunks) - 1
	a.chunks[last] = append(a.chunks[last], b...)
}

// trim gives back the unused capacity of the last chunk.
func (a *arena) trim() {
	if len(a.chunks) == 0 {
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

func (a *arena) bytes() int64 {
	var n int64
	for _, c := range a.chunks {
		n += int64(cap(c))
	}
	return n
}
