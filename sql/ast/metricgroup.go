package ast

import "github.com/sluicesql/sluice/sql/token"

// CreateMetricGroup is CREATE METRIC GROUP [IF NOT EXISTS] name ON source
// KEY BY (column, ...) [COMMENT 'text'] (METRIC name AS aggregate
// [WINDOW ...], ...): named metrics over the rows of a table or view,
// each an aggregate over a window of the rows of the same key.
type CreateMetricGroup struct {
	Span
	IfNotExists bool
	Name        *ObjectName
	Source      *ObjectName
	Keys        []*Ident
	Comment     string
	Metrics     []*MetricDef
}

// MetricDef is METRIC name AS aggregate [WINDOW kind (interval, ...)].
type MetricDef struct {
	Span
	Name *Ident
	// Agg is the metric's aggregate call, e.g. COUNT(*) FILTER (WHERE
	// ...), SUM(amount), COUNT(DISTINCT ip).
	Agg    Expr
	Window MetricWindow
}

// MetricWindow is the window a metric aggregates over. Kind is "" (every
// row of the key since the start), "TUMBLE" (Size), "HOP" (Slide, Size:
// Flink's HOP order), "SESSION" (Size is the gap) or "LAST" (the rows of
// the last Size, updated with each row).
type MetricWindow struct {
	Kind  string
	At    token.Pos // where WINDOW is written (NoPos: none)
	Size  *IntervalLit
	Slide *IntervalLit
}

// AlterMetricGroup is ALTER METRIC GROUP name ADD METRIC ... | ALTER
// METRIC ... | DROP METRIC name | ROLLBACK TO VERSION n: each makes a new
// version.
type AlterMetricGroup struct {
	Span
	Name   *ObjectName
	Action string     // "ADD", "ALTER", "DROP" or "ROLLBACK"
	Metric *MetricDef // ADD, ALTER
	Target *Ident     // DROP
	// Version is ROLLBACK's; VersionPos where it is written.
	Version    int64
	VersionPos token.Pos
}

func (*CreateMetricGroup) stmtNode() {}
func (*AlterMetricGroup) stmtNode()  {}
