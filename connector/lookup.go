package connector

import (
	"context"
	"time"

	"github.com/sluicesql/sluice/types"
)

// LookupFactory is a Factory whose tables can be the dimension side of a
// lookup join (`JOIN d FOR SYSTEM_TIME AS OF s.proc_time ON s.k = d.k`).
type LookupFactory interface {
	Factory
	// CreateLookup opens t for lookups. The result is a FullSource (the
	// engine loads the whole table into its shared store and indexes
	// it) or a KeyLookuper (rows fetched per key on demand).
	CreateLookup(t Table, env Env) (LookupSource, error)
}

// LookupSource is a table opened for lookups: a FullSource or a
// KeyLookuper.
type LookupSource interface {
	Close() error
}

// FullSource is a dimension table loaded in full. The engine indexes what
// Load gives by every key set a query needs, and loads it again every
// ReloadInterval, swapping the new copy in atomically.
type FullSource interface {
	LookupSource
	// Load calls emit with every row of the table, in the physical
	// schema. emit must not keep row: it copies what it needs.
	Load(ctx context.Context, emit func(row []types.Value) error) error
	// ReloadInterval is how often to load the table again; 0: never.
	ReloadInterval() time.Duration
	// Identity names the data the source loads (its connector and
	// options): two jobs whose tables have one identity share one copy.
	Identity() string
}

// KeyLookuper fetches rows by key on demand (a database, a cache server, a
// web service). It may cache, per job, what it fetched.
type KeyLookuper interface {
	LookupSource
	// Lookup appends to dst the rows (physical schema) whose columns
	// keyCols equal key, in order; key has no NULL. The rows appended
	// must not be modified by the source afterwards.
	Lookup(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error)
}

// BatchKeyLookuper is a KeyLookuper that can look many keys up at once: a
// lookup join gives it the keys of a whole input batch, so that the keys
// its cache misses cost one round trip to the system, not one each.
type BatchKeyLookuper interface {
	KeyLookuper
	// LookupBatch calls visit with the position in keys and each row of
	// every key (none has a NULL), in the order of keys; visit returns
	// false to go on with the next key. The rows must not be modified
	// by the source afterwards.
	LookupBatch(ctx context.Context, keyCols []int, keys [][]types.Value, visit func(i int, row []types.Value) bool) error
}
