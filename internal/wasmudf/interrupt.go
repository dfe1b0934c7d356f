package wasmudf

import (
	"errors"
	"fmt"
)

// interruptExport names the global that instrument adds: an i32 that the
// watchdog sets to 1 to stop a call that overran wasm.call-timeout.
const interruptExport = "sluice$interrupt"

// fuelPerExit is how many loop iterations a call runs between two exits
// to Go.
const fuelPerExit = 1 << 16

// instrument returns a copy of module whose loops count down a fuel
// global; every fuelPerExit iterations they leave the module's machine
// code for Go (a memory.grow by 0 pages, which the runtime serves in Go)
// and trap if the interrupt global, exported as interruptExport, is set.
// A call can only run long in a loop (recursion ends in a stack
// overflow), so the watchdog stops any call by setting the interrupt.
//
// The exit matters as much as the check: machine code is not preempted,
// so a loop that never left it would hold up the collector's
// stop-the-world, and with it every goroutine, the watchdog's too.
// wazero's own way (WithCloseOnContextDone) leaves for Go at every
// iteration and watches a context with a goroutine per call, which costs
// microseconds per call; here a call costs nothing extra and an iteration
// a decrement and a branch.
func instrument(module []byte) ([]byte, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	type section struct {
		id   byte
		body []byte
	}
	var sections []section
	r := &wreader{b: module, pos: 8}
	for r.pos < len(r.b) {
		id := r.byte()
		n := r.u32()
		body := r.take(int(n))
		if r.err != nil {
			return nil, r.err
		}
		sections = append(sections, section{id, body})
	}
	// The global's index follows the imported and defined globals.
	globals := uint32(0)
	for _, s := range sections {
		switch s.id {
		case 2:
			n, err := importedGlobals(s.body)
			if err != nil {
				return nil, err
			}
			globals += n
		case 6:
			sr := &wreader{b: s.body}
			globals += sr.u32()
			if sr.err != nil {
				return nil, sr.err
			}
		}
	}
	fuel, intr := globals, globals+1
	var check []byte
	check = appendU32(append(check, 0x23), fuel)  // global.get $fuel
	check = append(check, 0x41, 0x01, 0x6b)       // i32.const 1; i32.sub
	check = appendU32(append(check, 0x24), fuel)  // global.set $fuel
	check = appendU32(append(check, 0x23), fuel)  // global.get $fuel
	check = append(check, 0x45, 0x04, 0x40)       // i32.eqz; if
	check = append(check, 0x41)                   //   i32.const fuelPerExit
	check = appendS32(check, fuelPerExit)         //
	check = appendU32(append(check, 0x24), fuel)  //   global.set $fuel
	check = append(check, 0x41, 0x00, 0x40, 0x00) //   i32.const 0; memory.grow
	check = append(check, 0x1a)                   //   drop
	check = appendU32(append(check, 0x23), intr)  //   global.get $interrupt
	check = append(check, 0x04, 0x40, 0x00, 0x0b) //   if; unreachable; end
	check = append(check, 0x0b)                   // end
	hasMemory := false
	for _, s := range sections {
		switch s.id {
		case 5:
			hasMemory = true
		case 2:
			if n, err := importedMemories(s.body); err != nil {
				return nil, err
			} else if n > 0 {
				hasMemory = true
			}
		}
	}

	out := append([]byte(nil), module[:8]...)
	emit := func(id byte, body []byte) {
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	// Known sections in the order the binary format requires them.
	rank := map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
	// $fuel = fuelPerExit, $interrupt = 0, both mutable i32.
	newGlobals := append([]byte{0x7f, 0x01, 0x41}, appendS32(nil, fuelPerExit)...)
	newGlobals = append(newGlobals, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	newExport := appendName(nil, interruptExport)
	newExport = append(newExport, 0x03)
	newExport = appendU32(newExport, intr)
	// A module without a memory gets an empty one, for the exit.
	doneMemory, doneGlobal, doneExport := hasMemory, false, false
	for _, s := range sections {
		if s.id != 0 {
			if !doneMemory && rank[s.id] > rank[5] {
				emit(5, []byte{1, 0, 0})
				doneMemory = true
			}
			if !doneGlobal && rank[s.id] > rank[6] {
				emit(6, append([]byte{2}, newGlobals...))
				doneGlobal = true
			}
			if !doneExport && rank[s.id] > rank[7] {
				emit(7, append([]byte{1}, newExport...))
				doneExport = true
			}
		}
		switch s.id {
		case 6:
			emit(6, appendToVec(s.body, newGlobals, 2))
			doneGlobal = true
		case 7:
			emit(7, appendToVec(s.body, newExport, 1))
			doneExport = true
		case 10:
			body, err := instrumentCode(s.body, check)
			if err != nil {
				return nil, err
			}
			emit(10, body)
		default:
			emit(s.id, s.body)
		}
	}
	if !doneMemory {
		emit(5, []byte{1, 0, 0})
	}
	if !doneGlobal {
		emit(6, append([]byte{2}, newGlobals...))
	}
	if !doneExport {
		emit(7, append([]byte{1}, newExport...))
	}
	return out, nil
}

// appendToVec appends k encoded entries to a vector section's body.
func appendToVec(body, entries []byte, k uint32) []byte {
	r := &wreader{b: body}
	n := r.u32()
	out := appendU32(nil, n+k)
	out = append(out, body[r.pos:]...)
	return append(out, entries...)
}

func importedGlobals(body []byte) (uint32, error) {
	g, _, err := countImports(body)
	return g, err
}

func importedMemories(body []byte) (uint32, error) {
	_, m, err := countImports(body)
	return m, err
}

// countImports counts the imported globals and memories.
func countImports(body []byte) (globals, memories uint32, err error) {
	r := &wreader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.take(int(r.u32())) // module
		r.take(int(r.u32())) // name
		switch r.byte() {
		case 0: // func
			r.u32()
		case 1: // table
			r.byte()
			r.limits()
		case 2: // memory
			r.limits()
			memories++
		case 3: // global
			r.byte()
			r.byte()
			globals++
		case 4: // tag
			r.byte()
			r.u32()
		default:
			r.fail("unknown import kind")
		}
	}
	return globals, memories, r.err
}

// instrumentCode copies the code section, inserting check after the block
// type of every loop.
func instrumentCode(body, check []byte) ([]byte, error) {
	r := &wreader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		fr := &wreader{b: r.take(int(size))}
		if r.err != nil {
			break
		}
		var fn []byte
		locals := fr.u32()
		for j := uint32(0); j < locals && fr.err == nil; j++ {
			fr.u32()
			fr.valType()
		}
		fn = append(fn, fr.b[:fr.pos]...)
		for fr.pos < len(fr.b) && fr.err == nil {
			start := fr.pos
			op := fr.byte()
			fr.immediates(op)
			fn = append(fn, fr.b[start:fr.pos]...)
			if op == 0x03 { // loop
				fn = append(fn, check...)
			}
		}
		if fr.err != nil {
			return nil, fmt.Errorf("function %d: %w", i, fr.err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	return out, r.err
}

// wreader reads the binary format; the first error sticks.
type wreader struct {
	b   []byte
	pos int
	err error
}

func (r *wreader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("cannot instrument the module: %s at byte %d", msg, r.pos)
	}
	r.pos = len(r.b)
}

func (r *wreader) byte() byte {
	if r.pos >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *wreader) take(n int) []byte {
	if n < 0 || r.pos+n > len(r.b) {
		r.fail("unexpected end")
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

// leb skips a LEB128 number and returns its value (unsigned reading).
func (r *wreader) leb() uint64 {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 number too long")
	return 0
}

func (r *wreader) u32() uint32 { return uint32(r.leb()) }

func (r *wreader) limits() {
	flags := r.byte()
	r.leb()
	if flags&1 != 0 {
		r.leb()
	}
}

func (r *wreader) valType() {
	switch t := r.byte(); t {
	case 0x63, 0x64: // (ref null? heaptype)
		r.leb()
	}
}

func (r *wreader) memarg() {
	align := r.u32()
	if align&0x40 != 0 { // multi-memory: a memory index follows
		r.u32()
	}
	r.leb()
}

// immediates skips the immediates of op.
func (r *wreader) immediates(op byte) {
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04 || op == 0x06: // block, loop, if, try
		r.leb() // block type: an s33
	case op == 0x07 || op == 0x08 || op == 0x09 || op == 0x18: // catch, throw, rethrow, delegate
		r.u32()
	case op == 0x0c || op == 0x0d || op == 0xd4 || op == 0xd6: // br, br_if, br_on_null, br_on_non_null
		r.u32()
	case op == 0x0e: // br_table
		n := r.u32()
		for i := uint32(0); i <= n && r.err == nil; i++ {
			r.u32()
		}
	case op == 0x10 || op == 0x12 || op == 0x14 || op == 0x15 || op == 0xd2: // call, return_call, call_ref, return_call_ref, ref.func
		r.u32()
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select t*
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.valType()
		}
	case op == 0x1f: // try_table
		r.leb()
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			if k := r.byte(); k < 2 {
				r.u32()
			}
			r.u32()
		}
	case op >= 0x20 && op <= 0x26: // locals, globals, table.get/set
		r.u32()
	case op >= 0x28 && op <= 0x3e: // loads and stores
		r.memarg()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.u32()
	case op == 0x41 || op == 0x42: // i32.const, i64.const
		r.leb()
	case op == 0x43:
		r.take(4)
	case op == 0x44:
		r.take(8)
	case op == 0xd0: // ref.null heaptype
		r.leb()
	case op == 0xfc:
		r.prefixFC(r.u32())
	case op == 0xfd:
		r.prefixFD(r.u32())
	case op == 0xfe:
		if sub := r.u32(); sub == 0x03 { // atomic.fence
			r.byte()
		} else {
			r.memarg()
		}
	case op <= 0x01 || op == 0x05 || op == 0x0a || op == 0x0b || op == 0x0f || op == 0x19 ||
		op == 0x1a || op == 0x1b || (op >= 0x45 && op <= 0xc4) || op == 0xd1 || op == 0xd3:
		// no immediates
	default:
		r.fail(fmt.Sprintf("unknown opcode %#x", op))
	}
}

func (r *wreader) prefixFC(sub uint32) {
	switch {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init
		r.u32()
		r.u32()
	case sub == 9 || sub == 13 || sub == 11 || sub == 15 || sub == 16 || sub == 17: // data.drop, elem.drop, memory.fill, table.grow/size/fill
		r.u32()
	case sub == 10 || sub == 12 || sub == 14: // memory.copy, table.init, table.copy
		r.u32()
		r.u32()
	default:
		r.fail(fmt.Sprintf("unknown opcode 0xfc %d", sub))
	}
}

func (r *wreader) prefixFD(sub uint32) {
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads and stores
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.take(16)
	case sub >= 21 && sub <= 34: // lane extract and replace
		r.byte()
	case sub >= 84 && sub <= 91: // lane loads and stores
		r.memarg()
		r.byte()
	}
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte { return append(appendU32(b, uint32(len(s))), s...) }
