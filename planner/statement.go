package planner

import (
	"slices"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// TableFromDDL converts CREATE TABLE into a catalog table, checking names
// and types.
func (p *Planner) TableFromDDL(ct *ast.CreateTable) (*catalog.Table, error) {
	if ct.Like != nil {
		return nil, p.errorf(ct.Like, "CREATE TABLE ... LIKE is not supported yet")
	}
	t := &catalog.Table{Name: ct.Name.Last().Name, Watermark: ct.Watermark, Options: map[string]string{},
		Temporary: ct.Temporary, Decl: ct, File: p.File}
	seen := map[string]bool{}
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
	if _, ok := t.Options["connector"]; !ok {
		return nil, p.errorf(ct.Name, "table '%s' needs a 'connector' option in its WITH clause", t.Name)
	}
	// Bind computed columns and the watermark now, so that mistakes are
	// reported at the DDL rather than at the first query.
	if _, _, err := p.bindScan(ct, t); err != nil {
		return nil, err
	}
	return t, nil
}

// ViewFromDDL converts CREATE VIEW into a catalog view after checking that
// its query plans.
func (p *Planner) ViewFromDDL(cv *ast.CreateView) (*catalog.View, error) {
	v := &catalog.View{Name: cv.Name.Last().Name, Query: cv.Query, File: p.File}
	for _, c := range cv.Columns {
		v.Columns = append(v.Columns, c.Name)
	}
	if _, _, err := p.bindView(cv.Name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// SinkAcceptsUpdates says whether a sink connector takes -U/+U/-D rows.
type SinkAcceptsUpdates func(t connector.Table) bool

// PlanInsert plans INSERT INTO table query.
func (p *Planner) PlanInsert(ins *ast.Insert, acceptsUpdates SinkAcceptsUpdates) (*plan.Sink, error) {
	if ins.Overwrite {
		return nil, p.errorf(ins, "INSERT OVERWRITE is not supported in streaming mode")
	}
	name := ins.Table.Last().Name
	tbl, view, err := p.Catalog.Lookup(name)
	if err != nil {
		return nil, p.errorf(ins.Table, "%s", err.Error())
	}
	if view != nil {
		return nil, p.errorf(ins.Table, "cannot insert into view '%s'", name)
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
	projs := make([]expr.Node, target.Len())
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
	if !identity {
		q = &plan.Calc{Input: q, Projs: projs, Out: target}
	}
	sinkTable := connector.Table{Name: name, Schema: target, PrimaryKey: tbl.PrimaryKey, PartitionKeys: tbl.PartitionKeys, Options: tbl.Options}
	if q.Updating() && (acceptsUpdates == nil || !acceptsUpdates(sinkTable)) {
		if sc := changelogScan(q); sc != nil {
			return nil, p.errorf(ins.Table, "table sink '%s' (connector '%s') doesn't support consuming update changes, which are produced by the query: table '%s' is read as a changelog (its format '%s' is a changelog format); write to a sink that takes updates, such as one with a changelog format, or 'print'",
				name, tbl.Options["connector"], sc.Table.Name, cmpOr(sc.Table.Options["format"], sc.Table.Options["value.format"]))
		}
		return nil, p.errorf(ins.Table, "table sink '%s' (connector '%s') doesn't support consuming update changes, which are produced by the query (a non-windowed GROUP BY, DISTINCT, UNION, or an outer join or a join of updating inputs); use a window aggregation, an inner join of append-only inputs, or a sink that takes updates such as 'print'",
			name, tbl.Options["connector"])
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
	if len(notNull) > 0 {
		q = &plan.ConstraintEnforcer{Input: q, NotNull: notNull, Names: names}
	}
	return &plan.Sink{Input: q, Table: sinkTable}, nil
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
