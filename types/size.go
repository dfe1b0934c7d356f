package types

import "unsafe"

// ValueSize is the size of a Value itself.
const ValueSize = int64(unsafe.Sizeof(Value{}))

const sliceHeader = int64(unsafe.Sizeof([]Value(nil)))

// HeapSize returns, roughly, the bytes v holds outside its own struct: a
// string's bytes, a big decimal, the elements of an array, row or map
// (allocator rounding and sharing are ignored). It is for estimates of
// the memory that state and caches take.
func (v Value) HeapSize() int64 {
	switch k := v.Kind(); {
	case k.IsString() || k.IsBinary():
		return int64(len(v.Str()))
	case k == KindDecimal && v.IsBigDecimal():
		return 64
	case k == KindArray || k == KindMultiset || k == KindRow:
		e := v.Elems()
		n := sliceHeader + int64(len(e))*ValueSize
		for _, x := range e {
			n += x.HeapSize()
		}
		return n
	case k == KindMap:
		m := v.Map()
		n := 2*sliceHeader + int64(len(m.Keys)+len(m.Values))*ValueSize
		for i := range m.Keys {
			n += m.Keys[i].HeapSize() + m.Values[i].HeapSize()
		}
		return n
	}
	return 0
}

// ValuesSize returns, roughly, the bytes a slice of values takes: the
// values and what they hold.
func ValuesSize(vals []Value) int64 {
	n := sliceHeader + int64(len(vals))*ValueSize
	for _, v := range vals {
		n += v.HeapSize()
	}
	return n
}
