package expr

import (
	"encoding/binary"
	resyntax "regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// regexDFA answers regexp.MatchString (is there a match anywhere?) with a
// deterministic automaton built ahead of time from the same compiled
// program: one table lookup per character instead of the simulation
// Go's regexp runs. It reads the input as Go's regexp does, a rune at a
// time, each byte of invalid UTF-8 as U+FFFD.
//
// Characters are mapped to classes that the program cannot tell apart.
// Of the empty-width assertions only \A (^ without (?m)) and \z ($
// without (?m)) are supported; a program with others (\b, (?m)^), or
// whose automaton would exceed the size limits, is not compiled and is
// left to Go's regexp. The automaton is immutable: safe for concurrent
// use.
type regexDFA struct {
	ascii  [utf8.RuneSelf]uint16
	bounds []rune   // non-ASCII runes: the class of r is bclass[i] for the last i with bounds[i] <= r
	bclass []uint16 //
	nclass int
	// States are numbered by the offset of their row in next: state
	// s's row is next[s : s+nclass].
	start int32
	next  []int32 // state+class: the next state, or dfaMatch, or dfaDead
	atEnd []bool  // state/nclass accepts at the end of the input
}

const (
	dfaMatch = -1 // a match was found
	dfaDead  = -2 // no match can follow
)

// Size limits of one automaton.
const (
	dfaMaxStates  = 1000
	dfaMaxEntries = 1 << 16
	dfaMaxRanges  = 2048
)

// compileRegexDFA builds the automaton of src (which regexp.Compile
// accepts), or returns nil.
func compileRegexDFA(src string) *regexDFA {
	re, err := resyntax.Parse(src, resyntax.Perl)
	if err != nil {
		return nil
	}
	return regexDFAOf(re.Simplify(), nil)
}

// dfaScratch is the memory of building automata, kept from one to the
// next (a rule set's pattern set builds hundreds): the builder's tables,
// and the transitions, copied out at their size once built.
type dfaScratch struct {
	b     dfaBuilder
	next  []int32
	reads []bool
	rows  [][]bool
}

// regexDFAOf builds the automaton of a simplified parse tree (Perl
// flags, as regexp.Compile parses), or returns nil. sc, if set, lends its
// memory.
func regexDFAOf(re *resyntax.Regexp, sc *dfaScratch) *regexDFA {
	prog, err := resyntax.Compile(re)
	if err != nil {
		return nil
	}
	for _, in := range prog.Inst {
		if in.Op == resyntax.InstEmptyWidth && resyntax.EmptyOp(in.Arg)&^(resyntax.EmptyBeginText|resyntax.EmptyEndText) != 0 {
			return nil
		}
	}
	if sc == nil {
		sc = &dfaScratch{}
	}
	b := &sc.b
	b.reset(prog)
	d := &regexDFA{next: sc.next[:0]}
	defer func() {
		// The transitions are the scratch's: the automaton gets a copy.
		sc.next = d.next[:0]
		d.next = slices.Clip(append([]int32(nil), d.next...))
	}()
	reps, ok := b.classes(d)
	if !ok {
		return nil
	}
	// The start state reads the first character: \A holds there.
	var set dfaSet
	b.gen++
	b.add(&set, uint32(prog.Start), true)
	d.start = b.state(&set, true)
	// reads[k][c] says whether reader k (b.readers) reads the characters
	// of class c: asked once per reader a state holds, not once per state
	// and class. t is reused: state copies a new set.
	reads := slices.Grow(sc.rows[:0], len(b.readers))[:len(b.readers)]
	clear(reads)
	sc.reads = sc.reads[:0]
	defer func() { sc.rows = reads }()
	var t dfaSet
	// The next state depends only on which of the state's instructions
	// read the character: the classes that the same ones read (for a
	// state of a few instructions, most classes, which none reads) share
	// one computation, and the state where none reads it (a match may
	// start anywhere) is the same from every state. Each is still found
	// first where computing every class would find it: the states are
	// numbered alike.
	type step struct {
		reads uint64 // bit i: from.pcs[i] reads the class
		to    int32
	}
	var steps []step
	restart, restartKnown := int32(0), false
	for s := 0; s < len(b.sets); s++ {
		if len(b.sets) > dfaMaxStates || len(b.sets)*d.nclass > dfaMaxEntries {
			return nil
		}
		from := b.sets[s]
		for _, pc := range from.pcs {
			if k := b.reader[pc]; k >= 0 && reads[k] == nil {
				n := len(sc.reads)
				sc.reads = slices.Grow(sc.reads, d.nclass)[:n+d.nclass]
				reads[k] = sc.reads[n : n+d.nclass : n+d.nclass]
				for c, r := range reps {
					reads[k][c] = b.readers[k].MatchRune(r)
				}
			}
		}
		steps = steps[:0]
		masked := len(from.pcs) <= 64
		for c := range d.nclass {
			var mask uint64
			if masked {
				for i, pc := range from.pcs {
					if k := b.reader[pc]; k >= 0 && reads[k][c] {
						mask |= 1 << i
					}
				}
				if mask == 0 && restartKnown {
					d.next = append(d.next, restart)
					continue
				}
				if j := slices.IndexFunc(steps, func(x step) bool { return x.reads == mask }); j >= 0 {
					d.next = append(d.next, steps[j].to)
					continue
				}
			}
			t = dfaSet{pcs: t.pcs[:0]}
			b.gen++
			for _, pc := range from.pcs {
				if k := b.reader[pc]; k >= 0 && reads[k][c] {
					b.add(&t, prog.Inst[pc].Out, false)
				}
			}
			b.add(&t, uint32(prog.Start), false) // a match may start at any character
			to := b.state(&t, false)
			d.next = append(d.next, to)
			switch {
			case !masked:
			case mask == 0:
				restart, restartKnown = to, true
			default:
				steps = append(steps, step{reads: mask, to: to})
			}
		}
	}
	d.atEnd = make([]bool, len(b.sets))
	for s, set := range b.sets {
		// An assertion \z waits in the set for the end of the input.
		var end dfaSet
		end.atEnd = true
		b.gen++
		for _, pc := range set.pcs {
			if prog.Inst[pc].Op == resyntax.InstEmptyWidth {
				b.add(&end, prog.Inst[pc].Out, set.begin)
			}
		}
		d.atEnd[s] = end.match
	}
	for i, t := range d.next {
		if t >= 0 {
			d.next[i] = t * int32(d.nclass)
		}
	}
	if d.start >= 0 {
		d.start *= int32(d.nclass)
	}
	return d
}

// dfaSet is a state under construction: the program's instructions that
// read the next character (or wait for the end of the input), in order
// of addition.
type dfaSet struct {
	pcs   []uint32
	match bool
	begin bool // at the start of the input
	atEnd bool // at its end (only when computing atEnd)
}

// reset readies b to build prog's automaton, keeping its memory.
func (b *dfaBuilder) reset(prog *resyntax.Prog) {
	b.prog = prog
	b.reader = slices.Grow(b.reader[:0], len(prog.Inst))[:len(prog.Inst)]
	b.readers = b.readers[:0]
	b.sets = b.sets[:0]
	// About as many states as instructions, for most expressions; the
	// table is kept at most half full.
	size := 16
	for size < 2*min(len(prog.Inst), dfaMaxStates) {
		size *= 2
	}
	b.slots = slices.Grow(b.slots[:0], size)[:size]
	for i := range b.slots {
		b.slots[i] = -1
	}
	b.hashes = b.hashes[:0]
	b.pcs = b.pcs[:0]
	b.seen = slices.Grow(b.seen[:0], len(prog.Inst))[:len(prog.Inst)]
	clear(b.seen)
	b.gen = 0
}

type dfaBuilder struct {
	prog *resyntax.Prog
	// reader[pc] is the index in readers of the instruction that reads
	// as pc does, -1 when pc reads no character (see classes).
	reader  []int32
	readers []*resyntax.Inst
	sets    []dfaSet
	// slots is a hash table of the states, by the hash of their
	// instructions (hashes[id]): open addressing, -1 for empty.
	slots  []int32
	hashes []uint64
	// The memory of classes.
	byKey         map[string]int32
	classOf       map[string]uint16
	key           []byte
	points, reps  []rune
	sig           []byte
	intervalClass []uint16
	// pcs holds the instructions of the states, one after another.
	pcs []uint32
	// seen[pc] == gen when add has visited pc for the set being built:
	// empty loops ((a*)*) must not recurse forever.
	seen []uint32
	gen  uint32
}

// add follows the empty transitions from pc into set.
func (b *dfaBuilder) add(set *dfaSet, pc uint32, begin bool) {
	if b.seen[pc] == b.gen {
		return
	}
	b.seen[pc] = b.gen
	in := &b.prog.Inst[pc]
	switch in.Op {
	case resyntax.InstAlt, resyntax.InstAltMatch:
		b.add(set, in.Out, begin)
		b.add(set, in.Arg, begin)
	case resyntax.InstCapture, resyntax.InstNop:
		b.add(set, in.Out, begin)
	case resyntax.InstMatch:
		set.match = true
	case resyntax.InstFail:
	case resyntax.InstEmptyWidth:
		op := resyntax.EmptyOp(in.Arg)
		if op&resyntax.EmptyBeginText != 0 && !begin {
			return
		}
		if op&resyntax.EmptyEndText != 0 && !set.atEnd {
			set.pcs = append(set.pcs, pc)
			return
		}
		b.add(set, in.Out, begin)
	default:
		set.pcs = append(set.pcs, pc)
	}
}

// state returns the id of set's state, adding it if new; dfaMatch once a
// match is found, dfaDead when nothing is left to match.
func (b *dfaBuilder) state(set *dfaSet, begin bool) int32 {
	if set.match {
		return dfaMatch
	}
	if len(set.pcs) == 0 {
		return dfaDead
	}
	slices.Sort(set.pcs)
	// FNV-1a over the instructions; states of one hash are told apart
	// by their instructions.
	h := uint64(14695981039346656037)
	if begin {
		h = (h ^ 1) * 1099511628211
	}
	for _, pc := range set.pcs {
		h = (h ^ uint64(pc)) * 1099511628211
	}
	mask := uint64(len(b.slots) - 1)
	i := h & mask
	for ; b.slots[i] >= 0; i = (i + 1) & mask {
		id := b.slots[i]
		if s := &b.sets[id]; b.hashes[id] == h && s.begin == begin && slices.Equal(s.pcs, set.pcs) {
			return id
		}
	}
	id := int32(len(b.sets))
	b.slots[i] = id
	b.hashes = append(b.hashes, h)
	if 2*len(b.hashes) > len(b.slots) {
		b.rehash()
	}
	// A state's instructions are never changed: when b.pcs grows into a
	// new array, the earlier states keep theirs in the old one.
	b.pcs = append(b.pcs, set.pcs...)
	b.sets = append(b.sets, dfaSet{pcs: b.pcs[len(b.pcs)-len(set.pcs) : len(b.pcs) : len(b.pcs)], begin: begin})
	return id
}

// rehash doubles the states' hash table.
func (b *dfaBuilder) rehash() {
	b.slots = slices.Grow(b.slots[:0], 2*len(b.slots))[:2*len(b.slots)]
	for i := range b.slots {
		b.slots[i] = -1
	}
	mask := uint64(len(b.slots) - 1)
	for id, h := range b.hashes {
		i := h & mask
		for b.slots[i] >= 0 {
			i = (i + 1) & mask
		}
		b.slots[i] = int32(id)
	}
}

// classes splits the runes into classes that every instruction treats
// alike, fills d's class tables, and returns a rune of each class. It
// sets b.reader and b.readers: instructions that read alike (the copies
// x{100} expands to) are asked once.
func (b *dfaBuilder) classes(d *regexDFA) ([]rune, bool) {
	if b.byKey == nil {
		b.byKey, b.classOf = map[string]int32{}, map[string]uint16{}
	}
	byKey := b.byKey
	clear(byKey)
	key := b.key[:0]
	defer func() { b.key = key }()
	points := append(b.points[:0], 0)
	defer func() { b.points = points }()
	// npoints counts the points of every instruction, as if each read
	// differently: the limit on them is the same.
	npoints := len(points)
	for i := range b.prog.Inst {
		b.reader[i] = -1
		in := &b.prog.Inst[i]
		switch in.Op {
		case resyntax.InstRune, resyntax.InstRune1, resyntax.InstRuneAny, resyntax.InstRuneAnyNotNL:
		default:
			continue
		}
		var id int32
		seen := false
		if n := len(b.readers); n > 0 {
			// x{100} compiles to copies one after another.
			last := b.readers[n-1]
			seen = last.Op == in.Op && last.Arg == in.Arg && slices.Equal(last.Rune, in.Rune)
			id = int32(n - 1)
		}
		if !seen {
			key = append(key[:0], byte(in.Op))
			key = binary.LittleEndian.AppendUint32(key, in.Arg)
			for _, r := range in.Rune {
				key = binary.LittleEndian.AppendUint32(key, uint32(r))
			}
			if id, seen = byKey[string(key)]; !seen {
				id = int32(len(b.readers))
				byKey[string(key)] = id
				b.readers = append(b.readers, in)
			}
		}
		b.reader[i] = id
		from := len(points)
		single := func(r rune) { points = append(points, r, r+1) }
		switch in.Op {
		case resyntax.InstRuneAnyNotNL:
			single('\n')
		case resyntax.InstRune1:
			single(in.Rune[0])
		case resyntax.InstRune:
			if len(in.Rune) == 1 {
				r := in.Rune[0]
				single(r)
				if resyntax.Flags(in.Arg)&resyntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
						single(f)
					}
				}
				break
			}
			for i := 0; i+1 < len(in.Rune); i += 2 {
				points = append(points, in.Rune[i], in.Rune[i+1]+1)
			}
		}
		npoints += len(points) - from
		if seen {
			points = points[:from] // the same points again
		}
		if npoints > 2*dfaMaxRanges {
			return nil, false
		}
	}
	slices.Sort(points)
	points = slices.Compact(points)
	if points[len(points)-1] > unicode.MaxRune {
		points = points[:len(points)-1]
	}
	// Intervals [points[i], points[i+1]) with the same behaviour share a
	// class.
	sig := slices.Grow(b.sig[:0], len(b.readers))[:len(b.readers)]
	b.sig = sig
	classOf := b.classOf
	clear(classOf)
	reps := b.reps[:0]
	defer func() { b.reps = reps }()
	intervalClass := slices.Grow(b.intervalClass[:0], len(points))[:len(points)]
	b.intervalClass = intervalClass
	for i, p := range points {
		for j, in := range b.readers {
			sig[j] = 0
			if in.MatchRune(p) {
				sig[j] = 1
			}
		}
		c, ok := classOf[string(sig)]
		if !ok {
			c = uint16(len(reps))
			classOf[string(sig)] = c
			reps = append(reps, p)
		}
		intervalClass[i] = c
	}
	d.nclass = len(reps)
	for r, i := rune(0), 0; r < utf8.RuneSelf; r++ {
		for i+1 < len(points) && points[i+1] <= r {
			i++
		}
		d.ascii[r] = intervalClass[i]
	}
	for i, p := range points {
		if p >= utf8.RuneSelf || i+1 == len(points) || points[i+1] > utf8.RuneSelf {
			d.bounds = append(d.bounds, max(p, utf8.RuneSelf))
			d.bclass = append(d.bclass, intervalClass[i])
		}
	}
	return reps, true
}

// classOf returns the class of a non-ASCII rune.
func (d *regexDFA) classOf(r rune) uint16 {
	lo, hi := 0, len(d.bounds)
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if d.bounds[m] <= r {
			lo = m
		} else {
			hi = m
		}
	}
	return d.bclass[lo]
}

// MatchString reports whether the expression matches somewhere in s.
func (d *regexDFA) MatchString(s string) bool {
	st := d.start
	if st < 0 {
		return st == dfaMatch
	}
	next, nclass := d.next, d.nclass
	for i := 0; i < len(s); {
		var c uint16
		if b := s[i]; b < utf8.RuneSelf {
			c = d.ascii[b]
			i++
		} else {
			r, w := utf8.DecodeRuneInString(s[i:])
			c = d.classOf(r)
			i += w
		}
		st = next[int(st)+int(c)]
		if st < 0 {
			return st == dfaMatch
		}
	}
	return d.atEnd[int(st)/nclass]
}
