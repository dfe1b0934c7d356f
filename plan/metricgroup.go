package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// MetricGroup computes the metrics of a metric group over the rows of its
// input: each row is passed on, in arrival order, with the current value
// of every metric for its key appended (the row folded in). Metrics that
// share a window are computed together, one key lookup a row for all.
type MetricGroup struct {
	Input   Node
	Name    string
	Version int
	// Keys are the KEY BY columns.
	Keys []int
	// TimeCol is the rowtime attribute the windows follow, or -1: the
	// input has none, and processing time is used.
	TimeCol int
	// Calls are the metrics' aggregate calls over the input's columns
	// (a pre-projection computes arguments and filters).
	Calls   []agg.Call
	Metrics []Metric
	Out     types.Schema
}

// Metric is one metric of a MetricGroup.
type Metric struct {
	Name string
	// Call is the metric's aggregate in MetricGroup.Calls.
	Call   int
	Window MetricWindow
	// Computes describes what the metric computes (its call over the
	// input's columns, and its window): a metric whose description is
	// unchanged in a new version of its group keeps its values.
	Computes string
}

// MetricWindow is the window of a metric: Kind "" (every row of the key),
// "TUMBLE", "HOP", "SESSION" (Size is the gap) or "LAST" (the rows of
// the last Size, the current one included); Size and Slide in
// microseconds.
type MetricWindow struct {
	Kind  string
	Size  int64
	Slide int64
}

// String writes the window as SQL does.
func (w MetricWindow) String() string {
	iv := func(us int64) string { return time.Duration(us * 1000).String() }
	switch w.Kind {
	case "":
		return "ALL"
	case "HOP":
		return fmt.Sprintf("HOP(%s, %s)", iv(w.Slide), iv(w.Size))
	}
	return fmt.Sprintf("%s(%s)", w.Kind, iv(w.Size))
}

// Schema implements Node.
func (m *MetricGroup) Schema() types.Schema { return m.Out }

// Inputs implements Node.
func (m *MetricGroup) Inputs() []Node { return []Node{m.Input} }

// Updating implements Node: each input row is emitted once.
func (m *MetricGroup) Updating() bool { return false }

// WithInputs implements Node.
func (m *MetricGroup) WithInputs(ins []Node) Node { c := *m; c.Input = ins[0]; return &c }

// Describe implements Node.
func (m *MetricGroup) Describe() string {
	in := m.Input.Schema()
	parts := make([]string, len(m.Metrics))
	for i, mt := range m.Metrics {
		parts[i] = mt.Name + "=" + mt.Computes
	}
	tc := "PROCTIME"
	if m.TimeCol >= 0 {
		tc = in.Columns[m.TimeCol].Name
	}
	return fmt.Sprintf("MetricGroup(name=[%s], version=[%d], keys=[%s], time=[%s], metrics=[%s])",
		m.Name, m.Version, colNames(in, m.Keys), tc, strings.Join(parts, ", "))
}

// MetricComputes is what Metric.Computes says of a call over in in a
// window.
func MetricComputes(in types.Schema, c agg.Call, w MetricWindow) string {
	return callName(in, c) + " " + w.String()
}
