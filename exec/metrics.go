package exec

import "sync/atomic"

// Metrics are a job's counters. All fields are safe for concurrent use.
type Metrics struct {
	RowsIn      atomic.Int64 // rows read from sources
	RowsOut     atomic.Int64 // rows written to sinks
	LateRows    atomic.Int64 // rows dropped by window operators as late
	ReplayRows  atomic.Int64 // rows dropped as replays (offset already folded in)
	SkippedRecs atomic.Int64 // malformed records skipped by a source's policy
	ExpiredKeys atomic.Int64 // keys forgotten by the state TTL
	// Rows dropped on their way into a sink for a NULL in a NOT NULL
	// column ('table.exec.sink.not-null-enforcer' = 'DROP').
	NullRowsDropped atomic.Int64
	Lookups         atomic.Int64 // keys looked up by lookup joins
	LookupHits      atomic.Int64 // lookups that found a dimension row
	// Lookups of on-demand dimension tables answered by the job's cache,
	// and those it passed on to the table's system.
	LookupCacheHits, LookupCacheMisses atomic.Int64
	// Round trips to the systems of on-demand dimension tables.
	LookupFetches atomic.Int64
}

// Replayed counts a row dropped as a replay; m may be nil.
func (m *Metrics) Replayed() {
	if m != nil {
		m.ReplayRows.Add(1)
	}
}
