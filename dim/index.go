package dim

import (
	"github.com/sluicesql/sluice/dim/store"
	"github.com/sluicesql/sluice/types"
)

// Index is a dimension table indexed by one key set. It is immutable and
// safe for concurrent use.
type Index interface {
	// Lookup calls visit with every row (all columns, key columns
	// included) whose key columns equal key, until visit returns false,
	// and returns the number of rows visited. A row is valid only during
	// its visit. A key with a NULL matches nothing; its values have the
	// kinds of their columns up to types.KeyKind (an integer key may have
	// another integer kind than its column).
	Lookup(key []types.Value, visit func(row []types.Value) bool) int
	// LookupBatch looks up every key of keys as Lookup does, in order,
	// and calls visit with the key's position in keys and each of its
	// rows; visit returns false to go on with the next key. It returns
	// the number of rows visited. It is the fast way to look up many
	// keys: the memory accesses of a batch's keys overlap.
	LookupBatch(keys [][]types.Value, visit func(i int, row []types.Value) bool) int
	// Rows is the number of rows indexed.
	Rows() int
	// Bytes is the memory the index holds, roughly.
	Bytes() int64
}

// IndexBuilder builds an Index from rows given one at a time.
type IndexBuilder interface {
	// Add adds a row; it copies what it keeps. It returns an error for a
	// row that does not fit the column types.
	Add(row []types.Value) error
	// Finish returns the index of the rows added.
	Finish() (Index, error)
	// Abort gives the build up, freeing what it holds.
	Abort()
}

// Builder starts an Index of rows with the given column types, keyed by
// keyCols, as cfg says (a hint of the row count, a directory to spill to).
type Builder func(colTypes []types.Type, keyCols []int, cfg store.Config) (IndexBuilder, error)

// DefaultBuilder is the Builder a Registry uses unless told otherwise: the
// compact store (dim/store).
var DefaultBuilder Builder = BuildStore

// BuildStore starts an Index in the compact store: hashed keys, packed
// values, no Go object per row.
func BuildStore(colTypes []types.Type, keyCols []int, cfg store.Config) (IndexBuilder, error) {
	b, err := store.NewBuilder(colTypes, keyCols, cfg)
	if err != nil {
		return nil, err
	}
	return storeBuilder{b}, nil
}

type storeBuilder struct{ b *store.Builder }

func (s storeBuilder) Add(row []types.Value) error { return s.b.Add(row) }
func (s storeBuilder) Abort()                      { s.b.Abort() }

func (s storeBuilder) Finish() (Index, error) {
	ix, err := s.b.Finish()
	if err != nil {
		return nil, err
	}
	return ix, nil
}
