package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/plan/optimizer"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// TableFromDDL converts CREATE TABLE into a catalog table, checking names
// and types.
func (p *Planner) TableFromDDL(ct *ast.CreateTable) (*catalog.Table, error) {
	if ct.Like != nil {
		return nil, p.errorf(ct.Like, "CREATE TABLE ... LIKE is not supported yet")
	}
	name, err := p.ObjectName(ct.Name)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{Name: name, Watermark: ct.Watermark, Options: make(map[string]string, len(ct.Options)),
		Temporary: ct.Temporary, Decl: declOf(ct), File: p.File, Columns: make([]catalog.Column, 0, len(ct.Columns))}
	seen := make(map[string]bool, len(ct.Columns))
	for _, c := range ct.Columns {
		lc := strings.ToLower(c.Name.Name)
		if seen[lc] {
			return nil, p.errorf(c.Name, "column '%s' is declared twice", c.Name.Name)
		}
		seen[lc] = true
		col := catalog.Column{Name: c.Name.Name, Computed: c.Computed, Metadata: c.Metadata,
			MetadataKey: c.MetadataKey, Virtual: c.Virtual}
		if c.Type != nil {
			typ, err := p.convertType(c.Type)
			if err != nil {
				return nil, err
			}
			col.Type = typ
		}
		t.Columns = append(t.Columns, col)
	}
	for _, k := range ct.PrimaryKey {
		if !seen[strings.ToLower(k.Name)] {
			return nil, p.errorf(k, "primary key column '%s' is not a column of the table", k.Name)
		}
		t.PrimaryKey = append(t.PrimaryKey, k.Name)
	}
	for _, k := range ct.PartitionedBy {
		i := slices.IndexFunc(ct.Columns, func(c *ast.ColumnDef) bool { return strings.EqualFold(c.Name.Name, k.Name) })
		switch {
		case i < 0:
			names := make([]string, len(ct.Columns))
			for i, c := range ct.Columns {
				names[i] = c.Name.Name
			}
			return nil, p.errorf(k, "partition column '%s' is not a column of the table%s", k.Name, hint(k.Name, names))
		case ct.Columns[i].Computed != nil || ct.Columns[i].Metadata:
			return nil, p.errorf(k, "partition column '%s' must be a physical column, not a computed or metadata one", k.Name)
		case slices.ContainsFunc(t.PartitionKeys, func(s string) bool { return strings.EqualFold(s, k.Name) }):
			return nil, p.errorf(k, "partition column '%s' is named twice", k.Name)
		}
		t.PartitionKeys = append(t.PartitionKeys, ct.Columns[i].Name.Name)
	}
	for _, o := range ct.Options {
		if _, dup := t.Options[o.Key]; dup {
			return nil, p.errorf(o, "option '%s' is given twice", o.Key)
		}
		t.Options[o.Key] = o.Value
	}
	if err := p.translateLegacy(ct, t); err != nil {
		return nil, err
	}
	if _, ok := t.Options["connector"]; !ok {
		return nil, p.errorf(ct.Name, "table '%s' needs a 'connector' option in its WITH clause", t.Name)
	}
	// Bind computed columns and the watermark now, so that mistakes are
	// reported at the DDL rather than at the first query. A table with
	// neither (a rule's sink, of thousands) has only its idle timeout to
	// check.
	computed := t.Watermark != nil
	for _, c := range t.Columns {
		computed = computed || c.Computed != nil
	}
	if !computed {
		if _, err := p.idleTimeout(ct, t); err != nil {
			return nil, err
		}
		return t, nil
	}
	if _, _, err := p.bindScan(ct, t); err != nil {
		return nil, err
	}
	return t, nil
}

// declOf returns what a catalog table keeps of its CREATE TABLE for
// positioned errors: its extent, name and options. The columns are the
// table's Columns (each computed one with its expression, the watermark
// with its): the rest of the tree, a rule set's thousands of sink tables'
// column definitions, is not kept.
func declOf(ct *ast.CreateTable) *ast.CreateTable {
	return &ast.CreateTable{Span: ct.Span, Temporary: ct.Temporary, IfNotExists: ct.IfNotExists, Name: ct.Name, Options: ct.Options}
}

// translateLegacy reads Flink's legacy table options of t ('connector.type',
// 'connector.path', 'format.type', ...) as today's, before any connector
// sees them, with a deprecation notice for each (Planner.Notify).
func (p *Planner) translateLegacy(ct *ast.CreateTable, t *catalog.Table) error {
	at := func(key string) ast.Node {
		for _, o := range ct.Options {
			if o.Key == key {
				return o
			}
		}
		return ct.Name
	}
	opts, notes, err := connector.TranslateLegacy(t.Options)
	if err != nil {
		key := ""
		if _, rest, ok := strings.Cut(err.Error(), "option '"); ok {
			key, _, _ = strings.Cut(rest, "'")
		}
		return p.errorf(at(key), "%s", err.Error())
	}
	t.Options = opts
	// In the order the options are written.
	slices.SortStableFunc(notes, func(a, b connector.Legacy) int {
		return int(at(a.Key).Pos()) - int(at(b.Key).Pos())
	})
	for _, n := range notes {
		msg := fmt.Sprintf("option '%s' is deprecated (a legacy Flink table option): it has no effect", n.Key)
		if n.Now != "" {
			msg = fmt.Sprintf("option '%s' is deprecated (a legacy Flink table option): it is read as '%s'", n.Key, n.Now)
			if t.Legacy == nil {
				t.Legacy = map[string]string{}
			}
			t.Legacy[n.Now] = n.Key
		}
		if p.Notify != nil {
			p.Notify(p.File.Position(at(n.Key).Pos()), msg)
		}
	}
	return nil
}

// ViewFromDDL converts CREATE VIEW into a catalog view after checking that
// its query plans.
func (p *Planner) ViewFromDDL(cv *ast.CreateView) (*catalog.View, error) {
	name, err := p.ObjectName(cv.Name)
	if err != nil {
		return nil, err
	}
	v := &catalog.View{Name: name, Query: cv.Query, File: p.File}
	for _, c := range cv.Columns {
		v.Columns = append(v.Columns, c.Name)
	}
	if _, _, err := p.bindView(cv.Name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Signature converts a function's declared signature: its parameter
// types, and its result type or (RETURNS TABLE) the schema of its rows.
func (p *Planner) Signature(sig *ast.FunctionSignature) (params []types.Type, result types.Type, table types.Schema, err error) {
	seen := map[string]bool{}
	for _, c := range sig.Params {
		name := strings.ToLower(c.Name.Name)
		if seen[name] {
			return nil, result, table, p.errorf(c.Name, "parameter %s is declared twice", c.Name.Name)
		}
		seen[name] = true
		t, err := p.convertType(c.Type)
		if err != nil {
			return nil, result, table, err
		}
		params = append(params, t)
	}
	if sig.Returns != nil {
		result, err = p.convertType(sig.Returns)
		return params, result, table, err
	}
	seen = map[string]bool{}
	for _, c := range sig.ReturnsTable {
		name := strings.ToLower(c.Name.Name)
		if seen[name] {
			return nil, result, table, p.errorf(c.Name, "column %s is declared twice", c.Name.Name)
		}
		seen[name] = true
		t, err := p.convertType(c.Type)
		if err != nil {
			return nil, result, table, err
		}
		table.Columns = append(table.Columns, types.Column{Name: c.Name.Name, Type: t})
	}
	return params, result, table, nil
}

// SinkAcceptsUpdates says whether a sink connector takes -U/+U/-D rows.
type SinkAcceptsUpdates func(t connector.Table) bool

// PlanInsert plans INSERT INTO table query.
func (p *Planner) PlanInsert(ins *ast.Insert, acceptsUpdates SinkAcceptsUpdates) (*plan.Sink, error) {
	if ins.Overwrite {
		return nil, p.errorf(ins, "INSERT OVERWRITE is not supported in streaming mode")
	}
	name, err := p.ObjectName(ins.Table)
	if err != nil {
		return nil, err
	}
	tbl, view, err := p.Catalog.Lookup(name)
	if err != nil {
		return nil, p.errorf(ins.Table, "%s", err.Error())
	}
	if view != nil {
		return nil, p.errorf(ins.Table, "cannot insert into view '%s'", name)
	}
	if tbl, err = p.hintedTable(tbl, ins.TableHints); err != nil {
		return nil, err
	}
	// Flink writes a sink's persisted (not VIRTUAL) METADATA columns
	// through its connector, which must support their keys for writing.
	// No connector of Sluice writes metadata: refuse rather than drop
	// the column.
	for _, c := range tbl.Columns {
		if c.Metadata && !c.Virtual {
			key := cmpOr(c.MetadataKey, c.Name)
			return nil, p.errorf(ins.Table, "table '%s' cannot be written: its column '%s' is METADATA '%s', which connector '%s' does not write "+
				"(the metadata keys it supports for writing: none); declare the column VIRTUAL, or write to a table without it",
				name, c.Name, key, tbl.Options["connector"])
		}
	}
	q, _, err := p.bindQuery(ins.Query)
	if err != nil {
		return nil, err
	}
	target := tbl.Physical()
	// Map query columns onto the target's columns (all, or those listed).
	order := make([]int, target.Len()) // target column → query column, -1 for NULL
	if len(ins.Columns) == 0 {
		if q.Schema().Len() != target.Len() {
			return nil, p.errorf(ins.Query, "query has %d columns but table '%s' has %d: %s",
				q.Schema().Len(), name, target.Len(), strings.Join(target.Names(), ", "))
		}
		for i := range order {
			order[i] = i
		}
	} else {
		if len(ins.Columns) != q.Schema().Len() {
			return nil, p.errorf(ins.Query, "query has %d columns but %d target columns are listed", q.Schema().Len(), len(ins.Columns))
		}
		for i := range order {
			order[i] = -1
		}
		for qi, c := range ins.Columns {
			ti := target.Index(c.Name)
			if ti < 0 {
				return nil, p.errorf(c, "table '%s' has no column '%s'%s", name, c.Name, hint(c.Name, target.Names()))
			}
			if order[ti] >= 0 {
				return nil, p.errorf(c, "column '%s' is listed twice", c.Name)
			}
			order[ti] = qi
		}
	}
	qs := q.Schema()
	if !identityInsert(order, qs, target) {
		if q, err = p.insertProjection(ins, name, q, order, target); err != nil {
			return nil, err
		}
	}
	sinkTable := connector.Table{Name: name, Schema: target, PrimaryKey: tbl.PrimaryKey, PartitionKeys: tbl.PartitionKeys, Options: tbl.Options}
	if q.Updating() && (acceptsUpdates == nil || !acceptsUpdates(sinkTable)) {
		err := p.updatingSinkError(ins, name, tbl.Options["connector"], q)
		if len(sinkTable.PrimaryKey) == 0 && acceptsUpdates != nil {
			// A connector that takes updates by a key (jdbc, redis)
			// would take them with one.
			keyed := sinkTable
			keyed.PrimaryKey = target.Names()[:1]
			if acceptsUpdates(keyed) {
				var te *token.Error
				if errors.As(err, &te) {
					te.Msg += fmt.Sprintf("; or declare the PRIMARY KEY of '%s' (NOT ENFORCED): a '%s' table with one upserts and deletes by it",
						name, tbl.Options["connector"])
				}
			}
		}
		return nil, err
	}
	// Flink checks every NOT NULL column of the sink, whatever the query's
	// types say.
	var notNull []int
	var names []string
	for i, c := range target.Columns {
		if c.Type.NotNull {
			notNull, names = append(notNull, i), append(names, c.Name)
		}
	}
	enforcer := plan.ConstraintEnforcer{Input: q, NotNull: notNull, Names: names}
	enforcer.Length, err = config.TypeLengthEnforcer(p.Config)
	if err != nil {
		return nil, p.errorf(ins, "%s", err.Error())
	}
	if enforcer.Length != plan.LengthIgnore {
		enforcer.Chars, enforcer.Binaries = lengthColumns(target)
	}
	if len(notNull) > 0 || len(enforcer.Chars) > 0 || len(enforcer.Binaries) > 0 {
		q = &enforcer
	}
	return &plan.Sink{Input: q, Table: sinkTable, HintAt: tbl.HintAt}, nil
}

// identityInsert reports whether the query's rows, of schema qs, go into
// the target's columns as they are (insertProjection would project
// nothing): each query column into the target's column of its place,
// none cast.
func identityInsert(order []int, qs, target types.Schema) bool {
	for ti, qi := range order {
		if qi != ti {
			return false
		}
		got, want := qs.Columns[qi].Type, target.Columns[ti].Type
		if !keepsLength(got, want) && !got.SameKind(want) {
			return false
		}
	}
	return true
}

// insertProjection returns q projected onto the target's columns: order
// gives each target column's query column (-1 for NULL).
func (p *Planner) insertProjection(ins *ast.Insert, name string, q plan.Node, order []int, target types.Schema) (plan.Node, error) {
	qs := q.Schema()
	projs := make([]expr.Node, target.Len())
	out := types.Schema{Columns: slices.Clone(target.Columns)}
	identity := true
	for ti, qi := range order {
		want := target.Columns[ti].Type
		if qi < 0 {
			if want.NotNull {
				return nil, p.errorf(ins, "column '%s' of '%s' is NOT NULL and gets no value", target.Columns[ti].Name, name)
			}
			projs[ti] = &expr.Literal{V: types.NullValue, T: want}
			identity = false
			continue
		}
		var n expr.Node = &expr.Column{Index: qi, Name: qs.Columns[qi].Name, T: qs.Columns[qi].Type}
		if qi != ti {
			identity = false
		}
		got := qs.Columns[qi].Type
		if keepsLength(got, want) {
			// A string or binary value is written as the query computed
			// it, whatever the column's length: Flink leaves the length to
			// the sink's ConstraintEnforcer
			// ('table.exec.sink.type-length-enforcer'), and only an
			// explicit CAST cuts or pads. The value keeps its type on
			// the way (the ConstraintEnforcer and the sink know the
			// column's).
			projs[ti] = n
			out.Columns[ti].Type = got.WithoutTimeAttr()
			continue
		}
		if !got.SameKind(want) {
			if !types.Assignable(got.WithoutTimeAttr(), want) {
				return nil, p.errorf(ins.Query, "column %d ('%s') of the query is %s, which cannot be written to column '%s' %s of '%s'",
					qi+1, qs.Columns[qi].Name, got, target.Columns[ti].Name, want, name)
			}
			c, err := p.builder.Cast(n, want, false)
			if err != nil {
				return nil, p.wrap(ins.Query, err)
			}
			n, identity = c, false
		}
		projs[ti] = n
	}
	if identity {
		return q, nil
	}
	return &plan.Calc{Input: q, Projs: projs, Out: out}, nil
}

// keepsLength reports whether a value of type got is written into a sink
// column of type want as it is: both are strings (CHAR or VARCHAR) or both
// binary strings (BINARY or VARBINARY), of any length.
func keepsLength(got, want types.Type) bool {
	g, w := got.Kind, want.Kind
	return g.IsString() && w.IsString() || g.IsBinary() && w.IsBinary()
}

// lengthColumns returns the columns of a sink whose length Flink's
// LengthEnforcer applies: CHAR(n) and VARCHAR(n), then BINARY(n) and
// VARBINARY(n), of a length below the largest (a STRING has none to
// apply).
func lengthColumns(s types.Schema) (chars, binaries []plan.LengthColumn) {
	for i, c := range s.Columns {
		t := c.Type
		if t.Precision >= types.MaxLength {
			continue
		}
		lc := plan.LengthColumn{Col: i, Name: c.Name, Type: t}
		switch {
		case t.Kind.IsString():
			chars = append(chars, lc)
		case t.Kind.IsBinary():
			binaries = append(binaries, lc)
		}
	}
	return chars, binaries
}

// updatingSinkError is the error for an updating query q into sink name,
// which takes inserts only. As Flink's, it names the node that produces
// the update changes: the first one below the sink that turns an
// append-only input into an updating output (a GroupAggregate, an outer
// join, a Rank, the scan of a changelog), positioned at the construct it
// is planned for (the GROUP BY, the LEFT JOIN, the ROW_NUMBER ...), with
// what to do about it.
func (p *Planner) updatingSinkError(ins *ast.Insert, name, connector string, q plan.Node) error {
	// Described as EXPLAIN shows them: a Rank with its bound from the
	// enclosing filter, say.
	n := firstUpdating(optimizer.New(p.builder).Optimize(q))
	sink := fmt.Sprintf("table sink '%s' (connector '%s') doesn't support consuming update changes which is produced by node %s",
		name, connector, n.Describe())
	const takesUpdates = "a sink that takes updates ('print', 'upsert-kafka', or a changelog format such as 'debezium-json')"
	var at plan.SQL
	var advice string
	switch x := n.(type) {
	case *plan.Scan:
		if x.Upsert {
			return p.errorf(ins.Table, "%s: table '%s' is read as an upsert stream (connector '%s'), whose rows update earlier ones of the same key; write to %s",
				sink, x.Table.Name, x.Table.Options["connector"], takesUpdates)
		}
		return p.errorf(ins.Table, "%s: table '%s' is read as a changelog (its format '%s' is a changelog format); write to %s",
			sink, x.Table.Name, cmpOr(x.Table.Options["format"], x.Table.Options["value.format"]), takesUpdates)
	case *plan.GroupAggregate:
		at = x.SQL
		switch {
		case x.SQL.What == "UNION":
			advice = "UNION removes duplicates by aggregating every row it has seen, updating its result; use UNION ALL, or write to " + takesUpdates
		case x.SQL.What == "SELECT DISTINCT":
			advice = "DISTINCT over an unbounded input updates its result as rows arrive; deduplicate per window " +
				"(GROUP BY window_start, window_end, ... over a window table function), or write to " + takesUpdates
		default:
			advice = "an aggregation that is not windowed updates its results as rows arrive; aggregate per window " +
				"(GROUP BY window_start, window_end, ... over a window table function), whose results are final, or write to " + takesUpdates
		}
	case *plan.Join:
		at = x.SQL
		advice = fmt.Sprintf("%s emits a row padded with NULLs and retracts it when a match arrives; use an inner join, "+
			"an interval join (bound one side's time attribute by the other's in ON) or a window join, or write to %s", x.SQL.What, takesUpdates)
		if x.Kind == plan.AntiJoin {
			advice = fmt.Sprintf("%s retracts a row when a match for it arrives; use a window join, or write to %s", x.SQL.What, takesUpdates)
		}
	case *plan.Rank:
		at = plan.SQL{What: x.Type.String() + "()", At: x.At}
		advice = "a Top-N (or a deduplication that keeps the last row) updates its result as rows arrive; keep the first row " +
			"(ORDER BY the time attribute ASC and rownum = 1), rank per window (PARTITION BY window_start, window_end), or write to " + takesUpdates
	}
	msg := sink
	if at.What != "" {
		msg += " (" + at.What + ")"
	}
	if advice == "" {
		advice = "write to " + takesUpdates
	}
	if at.At.IsValid() {
		return &token.Error{Pos: at.At, Msg: msg + "; " + advice}
	}
	return p.errorf(ins.Table, "%s; %s", msg, advice)
}

// firstUpdating returns the node of n's tree that makes n updating: the
// first one, going down through updating inputs, whose inputs are all
// append-only (n itself, or a leaf: the scan of a changelog).
func firstUpdating(n plan.Node) plan.Node {
	for _, in := range n.Inputs() {
		if in.Updating() {
			return firstUpdating(in)
		}
	}
	return n
}

// changelogScan returns the scan of a changelog source that makes n
// updating, through nodes that are updating only when an input is; nil
// when n is updating for another reason (a GROUP BY, an outer join, ...).
func changelogScan(n plan.Node) *plan.Scan {
	switch x := n.(type) {
	case *plan.Scan:
		if x.Changelog {
			return x
		}
		return nil
	case *plan.Calc, *plan.Union, *plan.Sort, *plan.Correlate:
	case *plan.Join:
		if x.Kind != plan.InnerJoin {
			return nil
		}
	default:
		return nil
	}
	for _, in := range n.Inputs() {
		if in.Updating() {
			if sc := changelogScan(in); sc != nil {
				return sc
			}
		}
	}
	return nil
}

// updatingCause names the changelog table that makes n updating, for
// messages: " (table 'x' is read as a changelog)", or "".
func updatingCause(n plan.Node) string {
	if sc := changelogScan(n); sc != nil {
		return " (table '" + sc.Table.Name + "' is read as a changelog)"
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
