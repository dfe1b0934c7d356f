package plan

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// Node is a logical plan node.
type Node interface {
	// Schema is the node's output columns.
	Schema() types.Schema
	// Inputs are the node's children.
	Inputs() []Node
	// Describe is the one-line form used by EXPLAIN.
	Describe() string
	// Updating reports whether the node's output carries updates or
	// deletes (-U/+U/-D) rather than inserts only.
	Updating() bool
	// WithInputs returns a copy of the node over other inputs (as many as
	// Inputs returns), for rewrite rules.
	WithInputs(ins []Node) Node
}

// SQL is where an operator comes from in the SQL text, for messages: the
// construct it is planned for and its position.
type SQL struct {
	What string // "GROUP BY", "SELECT DISTINCT", "LEFT JOIN", ...
	At   token.Position
}

// Scan reads a table. Its output is the table's full row: physical columns
// first as the connector produces them, then computed columns.
type Scan struct {
	Table connector.Table
	// Out is the full output schema, computed columns included.
	Out types.Schema
	// Computed holds, for each output column past the physical ones, the
	// expression over the physical row (a computed column or PROCTIME()).
	Computed []expr.Node
	// Watermark is the WATERMARK expression over the full row; nil if none.
	Watermark expr.Node
	// RowtimeCol is the index of the rowtime column; -1 if none.
	RowtimeCol int
	// ProctimeCol is the index of a PROCTIME() column; -1 if none.
	ProctimeCol int
	// IdleTimeoutMillis marks partitions idle; 0 never does.
	IdleTimeoutMillis int64
	// Alias is the name the query gives the table, for EXPLAIN.
	Alias string
	// Changelog says the source gives rows of every kind (its format is
	// a changelog format such as debezium-json): the scan is updating.
	Changelog bool
	// Upsert says the changelog is an upsert stream keyed by the primary
	// key (no -U rows; a deletion may carry only the key): a
	// ChangelogNormalize follows the scan.
	Upsert bool
	// Used says which columns of Out the query reads (nil: all); the
	// others are NULL (see optimizer.PruneScans). Table.Read says which
	// columns of the connector's row those need.
	Used []bool
	// HintAt holds the options of Table that an OPTIONS hint set, at the
	// hint's key, for positioned errors.
	HintAt map[string]token.Position
}

// Schema implements Node.
func (s *Scan) Schema() types.Schema { return s.Out }

// Inputs implements Node.
func (s *Scan) Inputs() []Node { return nil }

// Updating implements Node.
func (s *Scan) Updating() bool { return s.Changelog || s.Upsert }

// Describe implements Node.
func (s *Scan) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TableSourceScan(table=[%s], fields=[%s]", s.Table.Name, strings.Join(s.Out.Names(), ", "))
	if s.Watermark != nil {
		fmt.Fprintf(&b, ", watermark=[%s]", s.Watermark)
	}
	switch {
	case s.Upsert:
		b.WriteString(", changelogMode=[I,UA,D]")
	case s.Changelog:
		b.WriteString(", changelogMode=[I,UB,UA,D]")
	}
	b.WriteString(")")
	return b.String()
}

// Values is a constant relation.
type Values struct {
	Rows [][]types.Value
	Out  types.Schema
}

// Schema implements Node.
func (v *Values) Schema() types.Schema { return v.Out }

// Inputs implements Node.
func (v *Values) Inputs() []Node { return nil }

// Updating implements Node.
func (v *Values) Updating() bool { return false }

// Describe implements Node.
func (v *Values) Describe() string {
	return fmt.Sprintf("Values(rows=%d, fields=[%s])", len(v.Rows), strings.Join(v.Out.Names(), ", "))
}

// Calc filters then projects: the fused WHERE and SELECT list.
type Calc struct {
	Input Node
	// Filter is the condition; nil keeps every row.
	Filter expr.Node
	// Projs are the output expressions over the input row.
	Projs []expr.Node
	Out   types.Schema
}

// Schema implements Node.
func (c *Calc) Schema() types.Schema { return c.Out }

// Inputs implements Node.
func (c *Calc) Inputs() []Node { return []Node{c.Input} }

// Updating implements Node.
func (c *Calc) Updating() bool { return c.Input.Updating() }

// Describe implements Node.
func (c *Calc) Describe() string {
	var b strings.Builder
	b.WriteString("Calc(select=[")
	for i, p := range c.Projs {
		if i > 0 {
			b.WriteString(", ")
		}
		s := p.String()
		name := c.Out.Columns[i].Name
		if col, ok := p.(*expr.Column); ok && col.Name == name {
			b.WriteString(s)
		} else {
			fmt.Fprintf(&b, "%s AS %s", s, name)
		}
	}
	b.WriteString("]")
	if c.Filter != nil {
		fmt.Fprintf(&b, ", where=[%s]", c.Filter)
	}
	b.WriteString(")")
	return b.String()
}

// IsIdentity reports whether the Calc neither filters nor changes its input.
func (c *Calc) IsIdentity() bool {
	if c.Filter != nil || len(c.Projs) != c.Input.Schema().Len() {
		return false
	}
	for i, p := range c.Projs {
		col, ok := p.(*expr.Column)
		if !ok || col.Index != i || c.Out.Columns[i].Name != c.Input.Schema().Columns[i].Name {
			return false
		}
	}
	return true
}

// WindowTVF appends window_start, window_end and window_time to each input
// row (one row per window the input row belongs to).
type WindowTVF struct {
	Input   Node
	Spec    window.Spec
	TimeCol int
	// PartitionKeys are SESSION's PARTITION BY columns.
	PartitionKeys []int
	Out           types.Schema
}

// Schema implements Node.
func (w *WindowTVF) Schema() types.Schema { return w.Out }

// Inputs implements Node.
func (w *WindowTVF) Inputs() []Node { return []Node{w.Input} }

// Updating implements Node.
func (w *WindowTVF) Updating() bool { return false }

// Describe implements Node.
func (w *WindowTVF) Describe() string {
	return fmt.Sprintf("WindowTableFunction(window=[%s], time_col=[%s])", w.Spec,
		w.Input.Schema().Columns[w.TimeCol].Name)
}

// WindowAggregate aggregates rows per key and event-time window, emitting
// each window's rows once when the watermark passes its end. Output: the
// keys, window_start, window_end, window_time, then one column per call.
//
// Attached is a cascaded window aggregation, Flink's window-attached
// windowing: the input's rows carry their window (the rows of a window
// aggregation, a window Top-N or a window join) in the columns StartCol
// and EndCol, and each row counts in that window; TimeCol is -1 and Spec
// is the input's window.
type WindowAggregate struct {
	Input            Node
	Spec             window.Spec
	TimeCol          int
	Attached         bool
	StartCol, EndCol int
	Keys             []int
	PartitionKeys    []int
	Calls            []agg.Call
	Out              types.Schema
}

// Schema implements Node.
func (w *WindowAggregate) Schema() types.Schema { return w.Out }

// Inputs implements Node.
func (w *WindowAggregate) Inputs() []Node { return []Node{w.Input} }

// Updating implements Node.
func (w *WindowAggregate) Updating() bool { return false }

// Describe implements Node.
func (w *WindowAggregate) Describe() string {
	in := w.Input.Schema()
	if w.Attached {
		kind, params, _ := strings.Cut(w.Spec.String(), "(")
		return fmt.Sprintf("WindowAggregate(groupBy=[%s], window=[%s(win_start=[%s], win_end=[%s], %s], select=[%s])",
			colNames(in, w.Keys), kind, in.Columns[w.StartCol].Name, in.Columns[w.EndCol].Name, params, callNames(in, w.Calls))
	}
	return fmt.Sprintf("WindowAggregate(groupBy=[%s], window=[%s], time_col=[%s], select=[%s])",
		colNames(in, w.Keys), w.Spec, in.Columns[w.TimeCol].Name, callNames(in, w.Calls))
}

// GroupAggregate is a non-windowed GROUP BY: an updating result per key.
// Output: the keys, then one column per call.
type GroupAggregate struct {
	Input Node
	Keys  []int
	Calls []agg.Call
	Out   types.Schema
	// SQL is the construct the aggregation is planned for (GROUP BY,
	// SELECT DISTINCT, UNION, an aggregate call), for messages.
	SQL SQL
}

// Schema implements Node.
func (g *GroupAggregate) Schema() types.Schema { return g.Out }

// Inputs implements Node.
func (g *GroupAggregate) Inputs() []Node { return []Node{g.Input} }

// Updating implements Node: results change as rows arrive.
func (g *GroupAggregate) Updating() bool { return true }

// Describe implements Node.
func (g *GroupAggregate) Describe() string {
	in := g.Input.Schema()
	return fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", colNames(in, g.Keys), callNames(in, g.Calls))
}

// Union is UNION ALL of inputs with the same column types.
type Union struct {
	Ins []Node
	Out types.Schema
}

// Schema implements Node.
func (u *Union) Schema() types.Schema { return u.Out }

// Inputs implements Node.
func (u *Union) Inputs() []Node { return u.Ins }

// Updating implements Node.
func (u *Union) Updating() bool {
	for _, in := range u.Ins {
		if in.Updating() {
			return true
		}
	}
	return false
}

// Describe implements Node.
func (u *Union) Describe() string {
	return fmt.Sprintf("Union(all=[true], fields=[%s])", strings.Join(u.Out.Names(), ", "))
}

// SortKey is one ORDER BY key.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// Sort orders a bounded input and/or limits it. With no keys it only limits.
type Sort struct {
	Input  Node
	Keys   []SortKey
	Offset int64
	// Limit is the most rows emitted; -1 for no limit.
	Limit int64
}

// Schema implements Node.
func (s *Sort) Schema() types.Schema { return s.Input.Schema() }

// Inputs implements Node.
func (s *Sort) Inputs() []Node { return []Node{s.Input} }

// Updating implements Node.
func (s *Sort) Updating() bool { return s.Input.Updating() }

// Describe implements Node.
func (s *Sort) Describe() string {
	in := s.Input.Schema()
	var parts []string
	for _, k := range s.Keys {
		d := "ASC"
		if k.Desc {
			d = "DESC"
		}
		parts = append(parts, in.Columns[k.Col].Name+" "+d)
	}
	if len(parts) == 0 {
		return fmt.Sprintf("Limit(offset=[%d], fetch=[%d])", s.Offset, s.Limit)
	}
	return fmt.Sprintf("Sort(orderBy=[%s], offset=[%d], fetch=[%d])", strings.Join(parts, ", "), s.Offset, s.Limit)
}

// ConstraintEnforcer checks the rows on their way into a sink against the
// sink's column types, as Flink's ConstraintEnforcer does: a NULL in a
// NOT NULL column fails the job, or with
// 'table.exec.sink.not-null-enforcer' = 'DROP' drops the row (its
// NotNullEnforcer); with 'table.exec.sink.type-length-enforcer' set to
// TRIM_PAD or ERROR, the values of CHAR(n), VARCHAR(n), BINARY(n) and
// VARBINARY(n) columns are cut and padded to their length, or a value of
// another length fails the job (its LengthEnforcer). Under the default,
// IGNORE, values keep the length the query gave them.
type ConstraintEnforcer struct {
	Input Node
	// NotNull are the indexes of the NOT NULL columns, Names their names
	// in the sink.
	NotNull []int
	Names   []string
	// Length says what to do with values of another length than their
	// column's; Chars and Binaries are the columns it applies to.
	Length   LengthEnforcer
	Chars    []LengthColumn
	Binaries []LengthColumn
}

// LengthEnforcer is a value of 'table.exec.sink.type-length-enforcer'.
type LengthEnforcer uint8

// The values of 'table.exec.sink.type-length-enforcer'.
const (
	// LengthIgnore leaves values as they are (Flink's default).
	LengthIgnore LengthEnforcer = iota
	// LengthTrimPad cuts longer values to the column's length, and pads
	// shorter CHAR values with spaces and BINARY values with zero bytes.
	LengthTrimPad
	// LengthError fails the job on a value longer than its column's
	// length, or shorter than a CHAR or BINARY column's.
	LengthError
)

// LengthColumn is a sink column whose length a LengthEnforcer applies.
type LengthColumn struct {
	Col  int
	Name string
	Type types.Type
}

// Schema implements Node.
func (c *ConstraintEnforcer) Schema() types.Schema { return c.Input.Schema() }

// Inputs implements Node.
func (c *ConstraintEnforcer) Inputs() []Node { return []Node{c.Input} }

// Updating implements Node.
func (c *ConstraintEnforcer) Updating() bool { return c.Input.Updating() }

// Describe implements Node, as Flink's execution plan names the operator:
// its NOT NULL columns, then the string columns whose length it enforces,
// then the binary ones.
func (c *ConstraintEnforcer) Describe() string {
	var parts []string
	if len(c.NotNull) > 0 {
		parts = append(parts, fmt.Sprintf("NotNullEnforcer(fields=[%s])", strings.Join(c.Names, ", ")))
	}
	for _, cols := range [][]LengthColumn{c.Chars, c.Binaries} {
		if len(cols) == 0 {
			continue
		}
		names := make([]string, len(cols))
		for i, lc := range cols {
			names[i] = lc.Name
		}
		parts = append(parts, fmt.Sprintf("LengthEnforcer(fields=[%s])", strings.Join(names, ", ")))
	}
	return "ConstraintEnforcer[" + strings.Join(parts, ", ") + "]"
}

// WithInputs implements Node.
func (c *ConstraintEnforcer) WithInputs(ins []Node) Node {
	x := *c
	x.Input = ins[0]
	return &x
}

// Sink writes its input to a table.
type Sink struct {
	Input Node
	Table connector.Table
	// HintAt holds the options of Table that an OPTIONS hint of the
	// INSERT set, at the hint's key, for positioned errors.
	HintAt map[string]token.Position
}

// Schema implements Node.
func (s *Sink) Schema() types.Schema { return s.Input.Schema() }

// Inputs implements Node.
func (s *Sink) Inputs() []Node { return []Node{s.Input} }

// Updating implements Node.
func (s *Sink) Updating() bool { return s.Input.Updating() }

// Describe implements Node.
func (s *Sink) Describe() string {
	return fmt.Sprintf("Sink(table=[%s], fields=[%s])", s.Table.Name, strings.Join(s.Input.Schema().Names(), ", "))
}

// Format prints a plan as an indented tree, one node per line, as EXPLAIN
// shows it.
func Format(n Node) string {
	var b strings.Builder
	var walk func(n Node, depth int)
	walk = func(n Node, depth int) {
		if depth > 0 {
			b.WriteString(strings.Repeat("   ", depth-1))
			b.WriteString("+- ")
		}
		b.WriteString(n.Describe())
		b.WriteByte('\n')
		for _, in := range n.Inputs() {
			walk(in, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

func colNames(s types.Schema, idx []int) string {
	names := make([]string, len(idx))
	for i, c := range idx {
		names[i] = s.Columns[c].Name
	}
	return strings.Join(names, ", ")
}

func callNames(in types.Schema, calls []agg.Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = callName(in, c)
	}
	return strings.Join(parts, ", ")
}

func callName(in types.Schema, c agg.Call) string {
	var b strings.Builder
	b.WriteString(c.Func.Name())
	b.WriteByte('(')
	if c.Distinct {
		b.WriteString("DISTINCT ")
	}
	if len(c.Args) == 0 {
		b.WriteByte('*')
	}
	b.WriteString(colNames(in, c.Args))
	b.WriteByte(')')
	if c.Filter >= 0 {
		fmt.Fprintf(&b, " FILTER %s", in.Columns[c.Filter].Name)
	}
	return b.String()
}

// Correlate calls a table function for each input row (LATERAL TABLE):
// each emitted row is the input row followed by the function's columns.
// With Left, an input row for which the function emits nothing is kept once,
// padded with NULLs.
type Correlate struct {
	Input Node
	Call  *expr.TableCall
	Left  bool
	Out   types.Schema
}

// Schema implements Node.
func (c *Correlate) Schema() types.Schema { return c.Out }

// Inputs implements Node.
func (c *Correlate) Inputs() []Node { return []Node{c.Input} }

// Updating implements Node.
func (c *Correlate) Updating() bool { return c.Input.Updating() }

// Describe implements Node.
func (c *Correlate) Describe() string {
	kind := "INNER"
	if c.Left {
		kind = "LEFT"
	}
	return fmt.Sprintf("Correlate(invocation=[%s], joinType=[%s], fields=[%s])", c.Call, kind, strings.Join(c.Out.Names(), ", "))
}

// WithInputs implements Node.
func (c *Calc) WithInputs(ins []Node) Node {
	x := *c
	x.Input = ins[0]
	return &x
}

// WithInputs implements Node.
func (w *WindowTVF) WithInputs(ins []Node) Node {
	c := *w
	c.Input = ins[0]
	return &c
}

// WithInputs implements Node.
func (w *WindowAggregate) WithInputs(ins []Node) Node {
	c := *w
	c.Input = ins[0]
	return &c
}

// WithInputs implements Node.
func (g *GroupAggregate) WithInputs(ins []Node) Node {
	c := *g
	c.Input = ins[0]
	return &c
}

// WithInputs implements Node.
func (s *Sort) WithInputs(ins []Node) Node {
	c := *s
	c.Input = ins[0]
	return &c
}

// WithInputs implements Node.
func (s *Sink) WithInputs(ins []Node) Node {
	c := *s
	c.Input = ins[0]
	return &c
}

// WithInputs implements Node.
func (c *Correlate) WithInputs(ins []Node) Node {
	x := *c
	x.Input = ins[0]
	return &x
}

// WithInputs implements Node.
func (u *Union) WithInputs(ins []Node) Node {
	c := *u
	c.Ins = ins
	return &c
}

// WithInputs implements Node.
func (s *Scan) WithInputs([]Node) Node { return s }

// WithInputs implements Node.
func (v *Values) WithInputs([]Node) Node { return v }

// JoinKind is the kind of a regular join.
type JoinKind uint8

// Join kinds.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	// SemiJoin keeps the left rows that have a match (IN, EXISTS), AntiJoin
	// those that have none (NOT IN, NOT EXISTS); their output is the left
	// row only.
	SemiJoin
	AntiJoin
)

func (k JoinKind) String() string {
	return [...]string{"InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin"}[k]
}

// Join is a regular join of two inputs on equality keys: rows of each side
// are kept (in state) and matched with the rows of the other side that
// arrive before or after them. Its output row is the left row followed by
// the right row; the side an outer join pads is NULL. Residual, if set, is
// a further condition over the output row.
type Join struct {
	Left, Right         Node
	Kind                JoinKind
	LeftKeys, RightKeys []int
	// NullSafe makes the keys compare NULL equal to NULL (IS NOT
	// DISTINCT FROM): INTERSECT and EXCEPT.
	NullSafe bool
	// NullAware makes the last key pair that of x NOT IN (SELECT y ...)
	// in an ANTI join: rows match when x = y or either is NULL (Flink's
	// null-aware anti join). The other keys partition the rows.
	NullAware bool
	Residual  expr.Node
	Out       types.Schema
	// SQL is the construct the join is planned for (LEFT JOIN, NOT
	// EXISTS, ...), for messages.
	SQL SQL
}

// PartitionKeys returns the keys that partition the rows of each side
// among tasks: all keys, but the null-aware pair, which a NULL on either
// side matches whatever the other's value.
func (j *Join) PartitionKeys() (left, right []int) {
	if j.NullAware {
		n := len(j.LeftKeys) - 1
		return j.LeftKeys[:n], j.RightKeys[:n]
	}
	return j.LeftKeys, j.RightKeys
}

// Schema implements Node.
func (j *Join) Schema() types.Schema { return j.Out }

// Inputs implements Node.
func (j *Join) Inputs() []Node { return []Node{j.Left, j.Right} }

// Updating implements Node: an outer join retracts a NULL-padded row when
// its first match arrives, an ANTI join a row when its first match does,
// and any join passes its inputs' updates on.
func (j *Join) Updating() bool {
	return j.Kind != InnerJoin && j.Kind != SemiJoin || j.Left.Updating() || j.Right.Updating()
}

// Describe implements Node.
func (j *Join) Describe() string {
	var conds []string
	ls, rs := j.Left.Schema(), j.Right.Schema()
	for i := range j.LeftKeys {
		l, r := ls.Columns[j.LeftKeys[i]].Name, rs.Columns[j.RightKeys[i]].Name
		switch {
		case j.NullSafe:
			conds = append(conds, fmt.Sprintf("IS NOT DISTINCT FROM(%s, %s)", l, r))
		case j.NullAware && i == len(j.LeftKeys)-1:
			conds = append(conds, fmt.Sprintf("OR(IS NULL(%s), IS NULL(%s), =(%s, %s))", l, r, l, r))
		default:
			conds = append(conds, fmt.Sprintf("=(%s, %s)", l, r))
		}
	}
	if j.Residual != nil {
		conds = append(conds, j.Residual.String())
	}
	cond := strings.Join(conds, ", ")
	if len(conds) > 1 {
		cond = "AND(" + cond + ")"
	}
	return fmt.Sprintf("Join(joinType=[%s], where=[%s], select=[%s])", j.Kind, cond, strings.Join(j.Out.Names(), ", "))
}

// WithInputs implements Node.
func (j *Join) WithInputs(ins []Node) Node {
	x := *j
	x.Left, x.Right = ins[0], ins[1]
	return &x
}

// IntervalJoin is a join of two append-only inputs on keys and on a bound
// between their event times: Lower <= left.time - right.time <= Upper (in
// microseconds). Rows are kept only while the watermark allows a match,
// and its output is append-only.
type IntervalJoin struct {
	Join
	LeftTime, RightTime int
	Lower, Upper        int64
}

// Updating implements Node: an interval join emits each pair once, and an
// outer side's unmatched row once it can no longer match.
func (j *IntervalJoin) Updating() bool { return false }

// Describe implements Node.
func (j *IntervalJoin) Describe() string {
	d := j.Join.Describe()
	bounds := fmt.Sprintf("windowBounds=[isRowTime=true, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d], ",
		j.Lower/1000, j.Upper/1000, j.LeftTime, j.RightTime)
	return "IntervalJoin(" + strings.Replace(strings.TrimPrefix(d, "Join("), "where=", bounds+"where=", 1)
}

// WithInputs implements Node.
func (j *IntervalJoin) WithInputs(ins []Node) Node {
	x := *j
	x.Left, x.Right = ins[0], ins[1]
	return &x
}

// TemporalJoin is an event-time temporal join: each row of the left side
// is joined with the version of the right (versioned) table valid at its
// time LeftTime, the right side's versions being timed by RightTime. Its
// keys cover the right table's primary key. Only INNER and LEFT; the
// output is append-only and keeps the left time attribute.
type TemporalJoin struct {
	Join
	LeftTime, RightTime int
}

// Updating implements Node: each left row is emitted once, when the
// watermark passes its time.
func (j *TemporalJoin) Updating() bool { return false }

// Describe implements Node.
func (j *TemporalJoin) Describe() string {
	d := j.Join.Describe()
	return "TemporalJoin(" + strings.Replace(strings.TrimPrefix(d, "Join("), "where=",
		fmt.Sprintf("asOf=[leftTimeIndex=%d, rightTimeIndex=%d], where=", j.LeftTime, j.RightTime), 1)
}

// WithInputs implements Node.
func (j *TemporalJoin) WithInputs(ins []Node) Node {
	x := *j
	x.Left, x.Right = ins[0], ins[1]
	return &x
}

// Rank numbers the rows of each partition in order (ROW_NUMBER(), RANK()
// or DENSE_RANK() OVER (PARTITION BY ... ORDER BY ...)) and keeps those
// whose number is at most Limit: Top-N, and deduplication for Limit 1. Its
// output is the input row followed by the number (BIGINT). A Rank with no
// Limit (0) cannot run: the query must filter the number in an enclosing
// query.
type Rank struct {
	Input     Node
	Partition []int
	Order     []SortKey
	Limit     int64
	// First, if above 1, is the lowest number kept: rows First to Limit
	// (rn BETWEEN First AND Limit: Flink's rank range).
	First int64
	Type  RankType
	Out   types.Schema
	// At is where the numbering function is written, for errors.
	At token.Position
	// AppendOnly: the input is append-only and ordered by processing time
	// ascending with Limit 1 (keep the first row), so that no row is ever
	// replaced.
	AppendOnly bool
	// NoNumbers: nothing downstream reads the row number, so rows that
	// only move within the top N need not be updated.
	NoNumbers bool
}

// Schema implements Node.
func (r *Rank) Schema() types.Schema { return r.Out }

// Inputs implements Node.
func (r *Rank) Inputs() []Node { return []Node{r.Input} }

// Updating implements Node: a row that enters the top N pushes another
// out, and the rows after it move down.
func (r *Rank) Updating() bool { return !r.AppendOnly }

// Describe implements Node.
func (r *Rank) Describe() string {
	in := r.Input.Schema()
	var part, order []string
	for _, p := range r.Partition {
		part = append(part, in.Columns[p].Name)
	}
	for _, k := range r.Order {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		order = append(order, in.Columns[k.Col].Name+" "+dir)
	}
	number := ""
	if r.NoNumbers {
		number = ", outputRankNumber=[false]"
	}
	return fmt.Sprintf("Rank(strategy=[%s], rankType=[%s], rankRange=[%s]%s, partitionBy=[%s], orderBy=[%s], select=[%s])",
		map[bool]string{true: "AppendFastStrategy", false: "RetractStrategy"}[!r.Input.Updating()], r.Type, rankRange(r.First, r.Limit), number,
		strings.Join(part, ", "), strings.Join(order, ", "), strings.Join(r.Out.Names(), ", "))
}

// rankRange prints the numbers a Rank keeps, as Flink's EXPLAIN does.
func rankRange(first, limit int64) string {
	end := "unbounded"
	if limit > 0 {
		end = fmt.Sprint(limit)
	}
	return fmt.Sprintf("rankStart=%d, rankEnd=%s", max(first, 1), end)
}

// WithInputs implements Node.
func (r *Rank) WithInputs(ins []Node) Node {
	x := *r
	x.Input = ins[0]
	return &x
}

// ChangelogNormalize turns the upsert stream of a source (the new row of a
// primary key, or its deletion) into a full changelog: it keeps the last
// row of each key, so that a replaced row is retracted (-U) before its
// successor (+U), and a deletion carries the deleted row.
type ChangelogNormalize struct {
	Input Node
	Keys  []int
}

// Schema implements Node.
func (c *ChangelogNormalize) Schema() types.Schema { return c.Input.Schema() }

// Inputs implements Node.
func (c *ChangelogNormalize) Inputs() []Node { return []Node{c.Input} }

// Updating implements Node.
func (c *ChangelogNormalize) Updating() bool { return true }

// Describe implements Node.
func (c *ChangelogNormalize) Describe() string {
	return "ChangelogNormalize(key=[" + colNames(c.Input.Schema(), c.Keys) + "])"
}

// WithInputs implements Node.
func (c *ChangelogNormalize) WithInputs(ins []Node) Node {
	x := *c
	x.Input = ins[0]
	return &x
}

// OverAggregate computes aggregates over a window of each row's partition
// (agg(...) OVER (PARTITION BY ... ORDER BY time ROWS|RANGE BETWEEN ...
// PRECEDING AND CURRENT ROW)). Its output is the input row followed by one
// column per call; it is append-only and keeps the input's time attribute.
type OverAggregate struct {
	Input     Node
	Partition []int
	// TimeCol is the ORDER BY column, a time attribute (rowtime or
	// proctime).
	TimeCol int
	// Rows: a ROWS frame, else RANGE.
	Rows bool
	// Preceding is where the frame starts: rows (ROWS) or microseconds
	// (RANGE) before the current row; -1 for UNBOUNDED PRECEDING.
	Preceding int64
	Calls     []agg.Call
	Out       types.Schema
}

// Schema implements Node.
func (o *OverAggregate) Schema() types.Schema { return o.Out }

// Inputs implements Node.
func (o *OverAggregate) Inputs() []Node { return []Node{o.Input} }

// Updating implements Node: each input row is emitted once, with its
// aggregates, when its frame is complete.
func (o *OverAggregate) Updating() bool { return false }

// Frame is the window frame as SQL writes it.
func (o *OverAggregate) Frame() string {
	kind, start := "RANGE", "UNBOUNDED"
	if o.Rows {
		kind = "ROWS"
	}
	switch {
	case o.Preceding < 0:
	case o.Rows:
		start = fmt.Sprint(o.Preceding)
	default:
		start = fmt.Sprint(o.Preceding / 1000) // milliseconds, as Flink prints it
	}
	if o.Preceding == 0 {
		return kind + " BETWEEN CURRENT ROW AND CURRENT ROW"
	}
	return kind + " BETWEEN " + start + " PRECEDING AND CURRENT ROW"
}

// Describe implements Node.
func (o *OverAggregate) Describe() string {
	in := o.Input.Schema()
	sel := in.Names()
	for i, c := range o.Calls {
		sel = append(sel, callName(in, c)+" AS "+o.Out.Columns[in.Len()+i].Name)
	}
	return fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s])",
		colNames(in, o.Partition), in.Columns[o.TimeCol].Name, o.Frame(), strings.Join(sel, ", "))
}

// WithInputs implements Node.
func (o *OverAggregate) WithInputs(ins []Node) Node {
	x := *o
	x.Input = ins[0]
	return &x
}
