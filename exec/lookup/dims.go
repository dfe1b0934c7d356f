package lookup

import (
	"context"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/types"
)

// Shared is a Dim over a table of a dim.Registry, loaded in full and
// shared.
type Shared struct{ H *dim.Handle }

// Lookup implements Dim.
func (s Shared) Lookup(_ context.Context, key []types.Value, visit func(row []types.Value) bool) error {
	s.H.Lookup(key, visit)
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

// Lookup implements Dim.
func (k *Keyed) Lookup(ctx context.Context, key []types.Value, visit func(row []types.Value) bool) error {
	rows, err := k.L.Lookup(ctx, k.KeyCols, key, k.buf[:0])
	k.buf = rows
	if err != nil {
		return err
	}
	for _, r := range rows {
		if !visit(r) {
			break
		}
	}
	return nil
}

// Close implements Dim: it closes the connector's lookup source.
func (k *Keyed) Close() error { return k.L.Close() }
