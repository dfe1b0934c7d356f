package exec

import (
	"sync"
	"sync/atomic"
)

// Metrics are a job's counters. All fields are safe for concurrent use.
type Metrics struct {
	RowsIn      atomic.Int64 // rows read from sources
	RowsOut     atomic.Int64 // rows written to sinks
	LateRows    atomic.Int64 // rows dropped by window operators as late
	ReplayRows  atomic.Int64 // rows dropped as replays (offset already folded in)
	SkippedRecs atomic.Int64 // malformed records skipped by a source's policy
	ExpiredKeys atomic.Int64 // keys forgotten by the state TTL
	// SuppressedAlerts counts the alerts of rulesets dropped by their
	// SUPPRESS BY (a key set's later alerts within its interval).
	SuppressedAlerts atomic.Int64
	// Reconnects counts the connections of the job's sources and sinks
	// to their systems made again after a loss (connector.Env.Reconnects).
	Reconnects atomic.Int64
	// SinkDropped counts the messages sinks dropped by their tables'
	// policy (a full store-and-forward buffer with 'drop-oldest').
	SinkDropped atomic.Int64
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
	// Checkpoints counts the checkpoints committed (the final one
	// included); LastCheckpoint is when the last one was, in Unix
	// microseconds of the wall clock (0: none yet).
	Checkpoints, LastCheckpoint atomic.Int64
	// CheckpointDuration is how long the last checkpoint took, from the
	// request of its barriers to its commit, in microseconds.
	CheckpointDuration atomic.Int64

	mu      sync.Mutex
	gauges  []*StateGauge
	filters []*FilterGroupStats
	// meters say which flows are the inputs and outputs of which
	// operators of the plan, opGauges which gauges are their state (see
	// Meter); base holds the rows of each operator's input and output
	// that earlier runs of the graph counted.
	meters   []meterEntry
	opGauges []gaugeEntry
	base     map[*OperatorInfo]*[2]int64
}

// FilterGroupStats are the counters of one group of shared filters: the
// conditions of a job's rules over one column of one source, whose
// results are cached per value (see exec/filterset). The tasks of the
// source add to the same counters.
type FilterGroupStats struct {
	Source, Column string
	// Hits and Misses count the rows whose value was found in the cache
	// and those evaluated and added; Evictions the values dropped for
	// the memory budget; Bytes the memory held.
	Hits, Misses, Evictions, Bytes atomic.Int64
	// Uncached counts the rows evaluated while the cache was off for a
	// low hit rate.
	Uncached atomic.Int64
}

// FilterGroup returns the counters of the filter group over column of
// source, the same for every task. A nil Metrics returns counters of
// their own.
func (m *Metrics) FilterGroup(source, column string) *FilterGroupStats {
	if m == nil {
		return &FilterGroupStats{Source: source, Column: column}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range m.filters {
		if g.Source == source && g.Column == column {
			return g
		}
	}
	g := &FilterGroupStats{Source: source, Column: column}
	m.filters = append(m.filters, g)
	return g
}

// FilterGroups returns the counters of every filter group of the job.
func (m *Metrics) FilterGroups() []*FilterGroupStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*FilterGroupStats(nil), m.filters...)
}

// Replayed counts a row dropped as a replay; m may be nil.
func (m *Metrics) Replayed() {
	if m != nil {
		m.ReplayRows.Add(1)
	}
}

// StateGauge is the size of the state one operator task holds in memory:
// its keys and an estimate of their bytes. The task sets it (between
// batches) as its state changes; the job's Metrics sum the gauges.
// Operators whose state the watermark or the TTL keeps bounded need none:
// those that grow with their keys have one (GROUP BY, regular joins, Top-N
// and deduplication, ChangelogNormalize).
type StateGauge struct {
	kind        string
	keys, bytes atomic.Int64
}

// Set sets the task's keys and estimated bytes. A nil gauge ignores it.
func (g *StateGauge) Set(keys, bytes int64) {
	if g != nil {
		g.keys.Store(keys)
		g.bytes.Store(bytes)
	}
}

// StateGauge returns a new gauge of the state of an operator task of the
// given kind (e.g. "GROUP BY"), counted in the job's state. A nil Metrics
// returns nil, which ignores what it is set to.
func (m *Metrics) StateGauge(kind string) *StateGauge {
	if m == nil {
		return nil
	}
	g := &StateGauge{kind: kind}
	m.mu.Lock()
	m.gauges = append(m.gauges, g)
	m.mu.Unlock()
	return g
}

// StateGauge returns a new gauge of the state of an operator task of the
// given kind, counted in the job's state and in the state of the plan's
// operator the task's operator belongs to (see Meter): call it in Open.
// A nil Context, or one without Metrics, returns nil, which ignores what
// it is set to.
func (c *Context) StateGauge(kind string) *StateGauge {
	if c == nil {
		return nil
	}
	g := c.Metrics.StateGauge(kind)
	if g != nil && c.op != nil {
		c.Metrics.mu.Lock()
		c.Metrics.opGauges = append(c.Metrics.opGauges, gaugeEntry{g: g, info: c.op})
		c.Metrics.mu.Unlock()
	}
	return g
}

// dropStateGauges forgets the gauges, meters and tasks of an earlier run
// of the job's graph (cluster mode runs it again on every assignment),
// keeping the rows its operators counted; m may be nil.
func (m *Metrics) dropStateGauges() {
	if m != nil {
		m.mu.Lock()
		m.gauges = nil
		m.newRun()
		m.mu.Unlock()
	}
}

// State returns the keys held in memory by the job's operators whose
// state grows with their keys, and an estimate of their bytes. After the
// job has ended it is what they held at the end.
func (m *Metrics) State() (keys, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range m.gauges {
		keys += g.keys.Load()
		bytes += g.bytes.Load()
	}
	return keys, bytes
}

// StateByKind returns State per kind of operator.
func (m *Metrics) StateByKind() map[string][2]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][2]int64{}
	for _, g := range m.gauges {
		s := out[g.kind]
		out[g.kind] = [2]int64{s[0] + g.keys.Load(), s[1] + g.bytes.Load()}
	}
	return out
}
