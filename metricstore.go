package sluice

import "github.com/sluicesql/sluice/metricstore"

// SetMetricStore gives the engine (and all its sessions) the store its
// metric groups commit their values to, once each checkpoint completes,
// and restore them into (see package metricstore); nil removes it. The
// caller owns the store: the engine does not close it. The server sets
// one over its data directory; an embedding application may set its own
// to read the metric values in process.
func (e *Engine) SetMetricStore(st *metricstore.Store) { e.metricStore.Store(st) }

// MetricStore returns the engine's metric store, or nil if it has none.
func (e *Engine) MetricStore() *metricstore.Store { return e.metricStore.Load() }
