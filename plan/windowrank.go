package plan

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// RankType is the numbering function of a Top-N.
type RankType uint8

// Numbering functions.
const (
	// RowNumberRank is ROW_NUMBER(): ties get distinct numbers.
	RowNumberRank RankType = iota
	// StandardRank is RANK(): ties share a number, the next ones skip.
	StandardRank
	// DenseRank is DENSE_RANK(): ties share a number, none is skipped.
	DenseRank
)

// String returns the SQL name of the function.
func (t RankType) String() string {
	switch t {
	case StandardRank:
		return "RANK"
	case DenseRank:
		return "DENSE_RANK"
	}
	return "ROW_NUMBER"
}

// WindowRank is a Top-N per window: ROW_NUMBER, RANK or DENSE_RANK OVER
// (PARTITION BY window_start, window_end, ... ORDER BY ...) over rows that
// carry their window (a window TVF, a window aggregate, another window
// Top-N), bounded by Limit. The rows of a window are buffered and its top
// N per partition emitted once, when the watermark passes the window's
// end: the output is append-only. Output: the input row followed by the
// number (BIGINT). A WindowRank with no Limit (0) cannot run.
type WindowRank struct {
	Input Node
	// Spec is the windowing the rows carry, for EXPLAIN.
	Spec window.Spec
	// Start and End are the input columns of window_start and window_end.
	Start, End int
	// Partition are the other PARTITION BY columns.
	Partition []int
	Order     []SortKey
	Type      RankType
	Limit     int64
	// First, if above 1, is the lowest number kept (rn BETWEEN First AND
	// Limit).
	First int64
	// At is where the numbering function is written, for errors.
	At token.Position
	// TVF: the rows come from a window TVF (not from an aggregation).
	TVF bool
	// NoNumbers: nothing downstream reads the number.
	NoNumbers bool
	Out       types.Schema
}

// Schema implements Node.
func (w *WindowRank) Schema() types.Schema { return w.Out }

// Inputs implements Node.
func (w *WindowRank) Inputs() []Node { return []Node{w.Input} }

// Updating implements Node: each window's rows are emitted once.
func (w *WindowRank) Updating() bool { return false }

// WithInputs implements Node.
func (w *WindowRank) WithInputs(ins []Node) Node {
	x := *w
	x.Input = ins[0]
	return &x
}

// Deduplicate reports whether the node is a window deduplication: the
// first row (or, ordered descending, the last) of each partition and
// window of a window TVF by a time attribute, its number unread.
func (w *WindowRank) Deduplicate() bool {
	return w.TVF && w.Limit == 1 && w.Type == RowNumberRank && w.NoNumbers && len(w.Order) == 1 &&
		w.Input.Schema().Columns[w.Order[0].Col].Type.TimeAttr != types.NoTimeAttr
}

// KeepLast reports whether a deduplication keeps the last row.
func (w *WindowRank) KeepLast() bool { return w.Deduplicate() && w.Order[0].Desc }

// Describe implements Node.
func (w *WindowRank) Describe() string {
	in := w.Input.Schema()
	spec := w.Spec.String()
	kind, params, _ := strings.Cut(spec, "(")
	win := fmt.Sprintf("%s(win_start=[%s], win_end=[%s], %s", kind, in.Columns[w.Start].Name, in.Columns[w.End].Name, params)
	if w.Deduplicate() {
		keep, order := "FirstRow", "ROWTIME"
		if w.KeepLast() {
			keep = "LastRow"
		}
		t := in.Columns[w.Order[0].Col].Type
		if t.TimeAttr == types.ProcTime {
			order = "PROCTIME"
		}
		return fmt.Sprintf("WindowDeduplicate(window=[%s], keep=[%s], partitionKeys=[%s], orderKey=[%s], order=[%s], select=[%s])",
			win, keep, colNames(in, w.Partition), in.Columns[w.Order[0].Col].Name, order, strings.Join(w.Out.Names(), ", "))
	}
	var order []string
	for _, k := range w.Order {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		order = append(order, in.Columns[k.Col].Name+" "+dir)
	}
	return fmt.Sprintf("WindowRank(window=[%s], rankType=[%s], rankRange=[%s], partitionBy=[%s], orderBy=[%s], select=[%s])",
		win, w.Type, rankRange(w.First, w.Limit), colNames(in, w.Partition), strings.Join(order, ", "), strings.Join(w.Out.Names(), ", "))
}
