package expr

import (
	"encoding/binary"
	"sync"
	"unicode/utf8"
)

// dfaProduct runs several regexDFAs over a string in one pass: its
// states are the tuples of the members' states, built lazily from the
// characters the strings hold, so that 150 expressions a literal
// triggers cost one table lookup a character rather than 150. A member
// that matches is reported on the transition that matched it and leaves
// the tuple, as does one that can no longer match; the empty tuple ends
// the scan.
//
// ASCII characters are mapped to the classes that no member tells apart
// and their transitions are cached; a non-ASCII rune steps each member
// (by its own classes) and then continues from the cached state of the
// resulting tuple. When the cached transitions would pass
// productMaxEntries the cache is cleared and built again from where the
// scan is (RE2's lazy automata do the same), so memory stays bounded
// whatever the input.
//
// A dfaProduct is safe for concurrent use: a scan holds its lock.
type dfaProduct struct {
	mu   sync.Mutex
	dfas []*regexDFA
	ids  []int32 // the pattern of each member
	// ascii maps an ASCII character to its class; rep is a character of
	// each class.
	ascii [utf8.RuneSelf]uint8
	rep   []byte
	ncls  int

	// The cache. tuples[s] is state s's members and their states;
	// next[s*ncls+c] the state after class c (productUnknown until
	// computed) and emit[s*ncls+c] the list (in lists; 0: none) of the
	// patterns that transition matches.
	tuples [][]productMember
	index  map[string]int32
	next   []int32
	emit   []int32
	lists  [][]int32
	start  int32
	starts []int32 // patterns that match before the first character

	key  []byte
	tmp  []productMember
	hits []int32
	// scans counts the strings scanned (for the tests).
	scans int
}

// productMember is a member of a product state: member i of the product
// in its state st (a row offset of its regexDFA).
type productMember struct {
	i, st int32
}

const productUnknown = -1 // the transition is not computed yet

// productMaxEntries bounds the cached transitions of one product (8 bytes
// each); a variable for the tests.
var productMaxEntries = 1 << 17

// newDFAProduct builds the product of dfas, which decide patterns ids.
func newDFAProduct(dfas []*regexDFA, ids []int32) *dfaProduct {
	p := &dfaProduct{dfas: dfas, ids: ids, index: map[string]int32{}}
	sigs := map[string]uint8{}
	sig := make([]byte, 2*len(dfas))
	for b := range utf8.RuneSelf {
		for j, d := range dfas {
			binary.LittleEndian.PutUint16(sig[2*j:], d.ascii[b])
		}
		c, ok := sigs[string(sig)]
		if !ok {
			c = uint8(len(p.rep))
			sigs[string(sig)] = c
			p.rep = append(p.rep, byte(b))
		}
		p.ascii[b] = c
	}
	p.ncls = len(p.rep)
	p.reset()
	return p
}

// reset empties the cache and interns the start state.
func (p *dfaProduct) reset() {
	clear(p.index)
	p.tuples = p.tuples[:0]
	p.next = p.next[:0]
	p.emit = p.emit[:0]
	p.lists = append(p.lists[:0], nil)
	p.tmp, p.starts = p.tmp[:0], p.starts[:0]
	for i, d := range p.dfas {
		switch {
		case d.start >= 0:
			p.tmp = append(p.tmp, productMember{int32(i), d.start})
		case d.start == dfaMatch:
			p.starts = append(p.starts, p.ids[i])
		}
	}
	p.start = p.intern(p.tmp)
}

// intern returns the state of tuple t (ordered by member), adding it.
func (p *dfaProduct) intern(t []productMember) int32 {
	p.key = p.key[:0]
	for _, m := range t {
		p.key = binary.LittleEndian.AppendUint32(p.key, uint32(m.i))
		p.key = binary.LittleEndian.AppendUint32(p.key, uint32(m.st))
	}
	if s, ok := p.index[string(p.key)]; ok {
		return s
	}
	s := int32(len(p.tuples))
	p.index[string(p.key)] = s
	p.tuples = append(p.tuples, append([]productMember(nil), t...))
	for range p.ncls {
		p.next = append(p.next, productUnknown)
		p.emit = append(p.emit, 0)
	}
	return s
}

// step moves the members of state s by one character: ascii class c of
// the product when r < 0, else the rune r. It appends the patterns that
// match to p.hits and returns the next state; an ASCII transition is
// cached. When the cache is full (whatever the character) it is cleared
// first, and the returned state belongs to the new cache.
func (p *dfaProduct) step(s int32, c int, r rune) int32 {
	p.tmp = p.tmp[:0]
	first := len(p.hits)
	for _, m := range p.tuples[s] {
		d := p.dfas[m.i]
		var dc uint16
		if r < 0 {
			dc = d.ascii[p.rep[c]]
		} else {
			dc = d.classOf(r)
		}
		switch st := d.next[int(m.st)+int(dc)]; st {
		case dfaMatch:
			p.hits = append(p.hits, p.ids[m.i])
		case dfaDead:
		default:
			p.tmp = append(p.tmp, productMember{m.i, st})
		}
	}
	if len(p.next)+p.ncls > productMaxEntries {
		// Full: start the cache again from the state reached (the
		// members of state s are gone with it).
		t := append([]productMember(nil), p.tmp...)
		p.reset()
		return p.intern(t)
	}
	if r >= 0 {
		return p.intern(p.tmp)
	}
	t := p.intern(p.tmp)
	e := int(s)*p.ncls + c
	p.next[e] = t
	if len(p.hits) > first {
		p.emit[e] = int32(len(p.lists))
		p.lists = append(p.lists, append([]int32(nil), p.hits[first:]...))
	}
	return t
}

// match sets in dst the bit of each member's pattern that matches str.
func (p *dfaProduct) match(str string, dst []uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scans++
	p.hits = append(p.hits[:0], p.starts...)
	s := p.start
	for i := 0; i < len(str) && len(p.tuples[s]) > 0; {
		if b := str[i]; b < utf8.RuneSelf {
			c := int(p.ascii[b])
			e := int(s)*p.ncls + c
			if t := p.next[e]; t != productUnknown {
				if l := p.emit[e]; l != 0 {
					p.hits = append(p.hits, p.lists[l]...)
				}
				s = t
			} else {
				s = p.step(s, c, -1)
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(str[i:])
		s = p.step(s, 0, r)
		i += w
	}
	for _, m := range p.tuples[s] {
		d := p.dfas[m.i]
		if d.atEnd[int(m.st)/d.nclass] {
			p.hits = append(p.hits, p.ids[m.i])
		}
	}
	for _, id := range p.hits {
		dst[id>>6] |= 1 << (id & 63)
	}
}
