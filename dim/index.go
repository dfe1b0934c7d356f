package dim

import (
	"github.com/sluicesql/sluice/dim/store"
	"github.com/sluicesql/sluice/types"
)

// Index is a dimension table indexed by one key set.
type Index interface {
	// Lookup calls visit with every row (all columns, key columns
	// included) whose key columns equal key, until visit returns false,
	// and returns the number of rows visited. A row is valid only during
	// its visit. key has no NULL; its values have the kinds of their
	// columns up to types.KeyKind (an integer key has the column's
	// integer kind).
	Lookup(key []types.Value, visit func(row []types.Value) bool) int
	// Rows is the number of rows indexed.
	Rows() int
	// Bytes is the memory the index holds, roughly.
	Bytes() int64
}

// Builder builds an Index of rows with the given column types, keyed by
// keyCols. each calls yield with every row; yield copies what it keeps.
type Builder func(colTypes []types.Type, keyCols []int, each func(yield func(row []types.Value) error) error) (Index, error)

// DefaultBuilder is the Builder a Registry uses unless told otherwise: the
// compact store (dim/store).
var DefaultBuilder Builder = BuildStore

// BuildStore builds an Index in the compact store: hashed keys, packed
// values, no Go object per row.
func BuildStore(colTypes []types.Type, keyCols []int, each func(yield func(row []types.Value) error) error) (Index, error) {
	return store.Build(colTypes, keyCols, each)
}
