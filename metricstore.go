package sluice

import (
	"github.com/sluicesql/sluice/exec/metricgroup"
	"github.com/sluicesql/sluice/metricstore"
	"github.com/sluicesql/sluice/types"
)

// SetMetricStore gives the engine (and all its sessions) the store its
// metric groups commit their values to, once each checkpoint completes,
// and restore them into (see package metricstore); nil removes it. The
// caller owns the store: the engine does not close it. The server sets
// one over its data directory; an embedding application may set its own
// to read the metric values in process.
func (e *Engine) SetMetricStore(st *metricstore.Store) { e.metricStore.Store(st) }

// MetricStore returns the engine's metric store, or nil if it has none.
func (e *Engine) MetricStore() *metricstore.Store { return e.metricStore.Load() }

// storePublisher publishes metric groups' values into a metric store.
type storePublisher struct{ st *metricstore.Store }

// Define implements metricgroup.Publisher: the group is (re)defined in
// the store unless it is already defined so (each task of a group's
// operator defines it as it opens).
func (p storePublisher) Define(group string, version int, keys, metrics []types.Column) error {
	g := metricstore.Group{Name: group, Version: version, Keys: keys}
	for _, m := range metrics {
		g.Metrics = append(g.Metrics, metricstore.Metric{Name: m.Name, Type: m.Type})
	}
	if have, err := p.st.Definition(group); err == nil && sameGroup(have, g) {
		return nil
	}
	return p.st.Define(g)
}

func sameGroup(a, b metricstore.Group) bool {
	if a.Version != b.Version || len(a.Keys) != len(b.Keys) || len(a.Metrics) != len(b.Metrics) {
		return false
	}
	for i := range a.Keys {
		if a.Keys[i].Name != b.Keys[i].Name || !a.Keys[i].Type.SameKind(b.Keys[i].Type) {
			return false
		}
	}
	for i := range a.Metrics {
		if a.Metrics[i].Name != b.Metrics[i].Name || !a.Metrics[i].Type.SameKind(b.Metrics[i].Type) {
			return false
		}
	}
	return true
}

// Publish implements metricgroup.Publisher: the changes are committed
// at once (event times in milliseconds, as the store keeps them).
func (p storePublisher) Publish(group string, changes []metricgroup.Change) error {
	out := make([]metricstore.Change, len(changes))
	for i, c := range changes {
		out[i] = metricstore.Change{Key: c.Key, Values: c.Values, EventTime: c.EventTime / 1000, Delete: c.Deleted}
	}
	return p.st.Commit(group, out)
}

// metricPublisher is what the engine's jobs publish metric values to:
// its metric store, or nil.
func (e *Engine) metricPublisher() metricgroup.Publisher {
	if st := e.MetricStore(); st != nil {
		return storePublisher{st}
	}
	return nil
}
