package planner

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// bindTemporalJoin plans `l [LEFT] JOIN v FOR SYSTEM_TIME AS OF l.t ON
// l.k = v.k`: an event-time temporal join of l with the versions of v, a
// table with a primary key and a watermark. The ON condition must equate
// the whole primary key of v with columns of l.
func (p *Planner) bindTemporalJoin(j *ast.Join, vt *ast.TableName) (plan.Node, *scope, error) {
	var kind plan.JoinKind
	switch j.Kind {
	case "INNER":
		kind = plan.InnerJoin
	case "LEFT":
		kind = plan.LeftJoin
	default:
		return nil, nil, p.errorf(j, "a temporal join (FOR SYSTEM_TIME AS OF) is INNER or LEFT, not %s", j.Kind)
	}
	if j.On == nil {
		return nil, nil, p.errorf(j, "a temporal or lookup join needs ON with the keys of the table joined: JOIN v FOR SYSTEM_TIME AS OF l.t ON l.k = v.k")
	}
	left, lsc, err := p.bindFrom(j.Left)
	if err != nil {
		return nil, nil, err
	}

	// AS OF: the left side's event-time attribute, or its processing-time
	// attribute for a lookup join.
	at, err := (&binder{p: p, sc: lsc}).bind(vt.SystemTime)
	if err != nil {
		return nil, nil, err
	}
	col, isCol := at.(*expr.Column)
	if isCol && at.Type().TimeAttr == types.ProcTime {
		return p.bindLookupJoin(j, vt, kind, left, lsc)
	}
	if left.Updating() {
		return nil, nil, p.errorf(j.Left, "the left side of an event-time temporal join must be append-only, but it produces updates")
	}
	switch {
	case at.Type().TimeAttr == types.ProcTime:
		return nil, nil, p.errorf(vt.SystemTime, "FOR SYSTEM_TIME AS OF must name a time attribute column of the left side, not an expression")
	case !isCol || at.Type().TimeAttr != types.RowTime:
		return nil, nil, p.errorf(vt.SystemTime, "FOR SYSTEM_TIME AS OF must name an event-time attribute of the left side (a column with a watermark), not %s", at.Type())
	}
	leftTime := col.Index

	// The versioned table: a table (not a view or CTE) with a primary key
	// and a watermark.
	name, err := p.ObjectName(vt.Name)
	if err != nil {
		return nil, nil, err
	}
	if len(vt.Name.Parts) == 1 && p.isCTE(name) {
		return nil, nil, p.errorf(vt.Name, "the versioned table of a temporal join must be a table with a PRIMARY KEY and a watermark; '%s' is a WITH query", name)
	}
	tbl, view, err := p.Catalog.Lookup(name)
	if err != nil {
		return nil, nil, p.errorf(vt.Name, "%s", err.Error())
	}
	if view != nil {
		return nil, nil, p.errorf(vt.Name, "the versioned table of a temporal join must be a table with a PRIMARY KEY and a watermark; '%s' is a view (versioned views are not supported yet)", name)
	}
	if len(tbl.PrimaryKey) == 0 {
		return nil, nil, p.errorf(vt.Name, "temporal join: table '%s' has no PRIMARY KEY; a versioned table needs one: PRIMARY KEY (k) NOT ENFORCED", name)
	}
	if tbl, err = p.hintedTable(tbl, vt.Hints); err != nil {
		return nil, nil, err
	}
	right, rsc, err := p.bindScan(vt.Name, tbl)
	if err != nil {
		return nil, nil, err
	}
	scan := right.(*plan.Scan)
	if scan.RowtimeCol < 0 {
		return nil, nil, p.errorf(vt.Name, "event-time temporal join: table '%s' has no event-time attribute; a versioned table needs a WATERMARK", name)
	}
	rightTime := scan.RowtimeCol
	if right, rsc, err = p.alias(right, rsc, name, vt.Alias, vt.ColumnAliases); err != nil {
		return nil, nil, err
	}

	nl := len(lsc.cols)
	cond, on, err := p.bindOn(j, lsc, rsc)
	if err != nil {
		return nil, nil, err
	}
	n := &plan.Join{Left: left, Right: right, Kind: kind}
	rest, err := p.joinKeys(n, j.On, cond, on, nl)
	if err != nil {
		return nil, nil, err
	}
	// The keys must cover the primary key: a version is one row per key.
	for _, pk := range tbl.PrimaryKey {
		idx := -1
		for i, c := range tbl.Columns {
			if c.Name == pk {
				idx = i
			}
		}
		found := false
		for _, r := range n.RightKeys {
			found = found || r == idx
		}
		if !found {
			return nil, nil, p.errorf(j.On, "temporal join: the primary key column '%s' of '%s' must be equated with a column of the left side in ON", pk, name)
		}
	}
	if err := p.joinResidual(n, j.On, rest); err != nil {
		return nil, nil, err
	}

	// The output: the left columns, then the versioned table's (NULL
	// when a LEFT join finds no version). The left time attribute stays
	// one: rows go out in its order, as the watermark passes.
	outScope := &scope{}
	for i, c := range on.cols {
		if i >= nl && kind == plan.LeftJoin {
			c.typ = c.typ.WithNullable(true)
		}
		if i != leftTime {
			c.typ = c.typ.WithoutTimeAttr()
		}
		outScope.cols = append(outScope.cols, c)
		n.Out.Columns = append(n.Out.Columns, types.Column{Name: c.name, Type: c.typ})
	}
	return &plan.TemporalJoin{Join: *n, LeftTime: leftTime, RightTime: rightTime}, outScope, nil
}

// isCTE reports whether name is a WITH query in scope.
func (p *Planner) isCTE(name string) bool {
	for i := len(p.ctes) - 1; i >= 0; i-- {
		if _, ok := p.ctes[i][name]; ok {
			return true
		}
	}
	return false
}
