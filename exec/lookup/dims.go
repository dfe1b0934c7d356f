package lookup

import (
	"context"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/types"
)

// Shared is a Dim over a table of a dim.Registry, loaded in full and
// shared.
type Shared struct{ H *dim.Handle }

// LookupBatch implements Dim: the keys are looked up together, their
// memory accesses overlapping.
func (s Shared) LookupBatch(_ context.Context, keys [][]types.Value, visit func(i int, row []types.Value) bool) error {
	s.H.LookupBatch(keys, visit)
	return nil
}

// Close implements Dim: it releases the handle.
func (s Shared) Close() error {
	s.H.Release()
	return nil
}

// Keyed is a Dim over a connector that fetches rows by key.
type Keyed struct {
	L       connector.KeyLookuper
	KeyCols []int
	buf     [][]types.Value
}

// LookupBatch implements Dim: the connector's LookupBatch if it has one
// (a round trip for the keys its cache misses), else a Lookup per key.
func (k *Keyed) LookupBatch(ctx context.Context, keys [][]types.Value, visit func(i int, row []types.Value) bool) error {
	if b, ok := k.L.(connector.BatchKeyLookuper); ok {
		return b.LookupBatch(ctx, k.KeyCols, keys, visit)
	}
	for i, key := range keys {
		rows, err := k.L.Lookup(ctx, k.KeyCols, key, k.buf[:0])
		k.buf = rows
		if err != nil {
			return err
		}
		for _, r := range rows {
			if !visit(i, r) {
				break
			}
		}
	}
	return nil
}

// CacheStats returns the counters of the connector's per-job cache; false
// if it has none.
func (k *Keyed) CacheStats() (lookupcache.Stats, bool) {
	c, ok := k.L.(lookupcache.Cached)
	if !ok {
		return lookupcache.Stats{}, false
	}
	return c.CacheStats(), true
}

// Close implements Dim: it closes the connector's lookup source.
func (k *Keyed) Close() error { return k.L.Close() }
