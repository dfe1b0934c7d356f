package dim

import (
	"github.com/sluicesql/sluice/types"
)

// mapIndex is an Index kept in a Go map from the encoded key to the rows:
// simple, and heavy (a slice and its values per row).
type mapIndex struct {
	keyCols []int
	m       map[string][][]types.Value
	rows    int
	bytes   int64
}

// BuildMapIndex builds an Index in a Go map. Rows with a NULL in a key
// column are left out: they never match.
func BuildMapIndex(colTypes []types.Type, keyCols []int, each func(yield func(row []types.Value) error) error) (Index, error) {
	ix := &mapIndex{keyCols: append([]int(nil), keyCols...), m: map[string][][]types.Value{}}
	var buf []byte
	err := each(func(row []types.Value) error {
		buf = buf[:0]
		for _, c := range keyCols {
			if row[c].IsNull() {
				return nil
			}
			buf = types.AppendKey(buf, row[c])
		}
		r := append([]types.Value(nil), row...)
		k := string(buf)
		if _, ok := ix.m[k]; !ok {
			ix.bytes += int64(len(k)) + 48
		}
		ix.m[k] = append(ix.m[k], r)
		ix.rows++
		ix.bytes += int64(len(r))*40 + 24
		for _, v := range r {
			ix.bytes += int64(len(v.Str()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Lookup implements Index. It is safe for concurrent use: the map is not
// written after it is built, and the key is encoded on the stack when it
// is small.
func (ix *mapIndex) Lookup(key []types.Value, visit func(row []types.Value) bool) int {
	var arr [64]byte
	buf := arr[:0]
	for _, v := range key {
		if v.IsNull() {
			return 0
		}
		buf = types.AppendKey(buf, v)
	}
	n := 0
	for _, r := range ix.m[string(buf)] {
		n++
		if !visit(r) {
			break
		}
	}
	return n
}

// Rows implements Index.
func (ix *mapIndex) Rows() int { return ix.rows }

// Bytes implements Index.
func (ix *mapIndex) Bytes() int64 { return ix.bytes }
