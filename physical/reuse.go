package physical

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/filterset"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// scanGroup is the scans of one table definition in a job, which share one
// source stage (Flink's 'table.optimizer.reuse-source-enabled'): the
// trunk, made by the first of them built, reads the table and computes its
// computed columns and watermark once; every scan gets a branch of it
// (exec.Stage.Trunk), whose tasks run in the trunk's.
type scanGroup struct {
	// used and read are the unions of the scans' Used and Table.Read
	// (nil: every column).
	used, read []bool
	trunk      *exec.Stage
	bounded    bool
	branches   int // made so far
	// conds are the filters of the branches that are rules (see
	// exec.Stage.Rule), over rows of schema.
	conds  []expr.Node
	schema types.Schema
	name   string // of the table, for EXPLAIN
}

// shareFilters gives each trunk whose branches have rules the filter that
// evaluates them together.
func (b *builder) shareFilters() error {
	done := map[*scanGroup]bool{}
	for _, g := range b.shared {
		if done[g] || len(g.conds) == 0 {
			continue
		}
		done[g] = true
		p, err := filterset.NewPlan(g.conds, g.schema, b.env.Expr)
		if err != nil {
			return err
		}
		p.Budget, p.Name, p.NoMultiPattern = b.env.FilterBudget, g.trunk.Name, b.env.NoMultiPattern
		g.trunk.Filter = func(task int, m *exec.Metrics) (exec.BranchFilter, error) { return p.New(m) }
	}
	return nil
}

// shareScans groups the scans of the sinks' plans by what they read
// (scanKey); each group of two or more shares one source. Cluster mode
// keeps a source per scan: there, a source stage that is not a shuffle's
// writer is cut differently (see shuffleInputs).
func (b *builder) shareScans(sinks []*plan.Sink) {
	byKey := map[string][]*plan.Scan{}
	var keys []string
	// The planner binds a table once per statement: the scans of one
	// table share their parts, and their key is built once.
	known := map[scanShape]string{}
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if s, ok := n.(*plan.Scan); ok {
			sh := shapeOf(s)
			k, ok := known[sh]
			if !ok {
				k = scanKey(s)
				known[sh] = k
			}
			if byKey[k] == nil {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], s)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	for _, s := range sinks {
		walk(s.Input)
	}
	for _, k := range keys {
		scans := byKey[k]
		if len(scans) < 2 {
			continue
		}
		g := &scanGroup{used: scans[0].Used, read: scans[0].Table.Read}
		for _, s := range scans[1:] {
			g.used = unionColumns(g.used, s.Used)
			g.read = unionColumns(g.read, s.Table.Read)
		}
		if b.shared == nil {
			b.shared = map[*plan.Scan]*scanGroup{}
		}
		for _, s := range scans {
			b.shared[s] = g
		}
	}
}

// unionColumns returns the columns either of a and b marks (nil marks
// all).
func unionColumns(a, b []bool) []bool {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	out := slices.Clone(a)
	for i, v := range b {
		out[i] = out[i] || v
	}
	return out
}

// scanShape identifies what scanKey reads of a scan by the identity of its
// parts (the slices' arrays, the options' map) and the values of the
// rest: two scans of one shape have one key (the parts are not changed
// once planned). Scans with different shapes may still have one key.
type scanShape struct {
	table                 string
	options               uintptr
	schema                *types.Column
	metadata              *connector.MetadataColumn
	out                   *types.Column
	computed              *expr.Node
	primaryKey, partition *string
	// The lengths of the slices above, in order.
	lens      [6]int
	watermark string
	rowtime   int
	proctime  int
	idle      int64
	changelog bool
	upsert    bool
}

// shapeOf returns the shape of s.
func shapeOf(s *plan.Scan) scanShape {
	t := &s.Table
	sh := scanShape{
		table:     t.Name,
		options:   reflect.ValueOf(t.Options).Pointer(),
		schema:    first(t.Schema.Columns),
		metadata:  first(t.Metadata),
		out:       first(s.Out.Columns),
		computed:  first(s.Computed),
		lens:      [6]int{len(t.Schema.Columns), len(t.Metadata), len(s.Out.Columns), len(s.Computed), len(t.PrimaryKey), len(t.PartitionKeys)},
		rowtime:   s.RowtimeCol,
		proctime:  s.ProctimeCol,
		idle:      s.IdleTimeoutMillis,
		changelog: s.Changelog,
		upsert:    s.Upsert,

		primaryKey: first(t.PrimaryKey),
		partition:  first(t.PartitionKeys),
	}
	if s.Watermark != nil {
		sh.watermark = s.Watermark.String()
	}
	return sh
}

// first returns the address of the first element of s, nil when it is
// empty.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// scanKey is what a scan reads and computes, canonically: two scans with
// the same key read the same rows, with the same computed columns and
// watermark, and may share one source. It names the table, its options
// (its WITH options with any OPTIONS hint applied), sorted, its physical,
// metadata and computed columns, its keys, watermark, time attributes,
// idle timeout and changelog mode; not the columns a query uses.
func scanKey(s *plan.Scan) string {
	var b strings.Builder
	t := s.Table
	fmt.Fprintf(&b, "table %q\n", t.Name)
	opts := make([]string, 0, len(t.Options))
	for k := range t.Options {
		opts = append(opts, k)
	}
	slices.Sort(opts)
	for _, k := range opts {
		fmt.Fprintf(&b, "option %q=%q\n", k, t.Options[k])
	}
	// Without fmt for the columns: a rule set scans one table thousands
	// of times.
	for _, c := range t.Schema.Columns {
		b.WriteString("column ")
		b.WriteString(strconv.Quote(c.Name))
		b.WriteByte(' ')
		b.WriteString(c.Type.String())
		b.WriteByte('\n')
	}
	for _, m := range t.Metadata {
		fmt.Fprintf(&b, "metadata %q %q %s %v\n", m.Name, m.Key, m.Type, m.Virtual)
	}
	fmt.Fprintf(&b, "primary key %q\npartitioned by %q\n", t.PrimaryKey, t.PartitionKeys)
	for i, c := range s.Out.Columns {
		b.WriteString("out ")
		b.WriteString(strconv.Quote(c.Name))
		b.WriteByte(' ')
		b.WriteString(c.Type.String())
		if i < len(s.Computed) {
			b.WriteString(" = ")
			b.WriteString(s.Computed[i].String())
			b.WriteString(" : ")
			b.WriteString(s.Computed[i].Type().String())
		}
		b.WriteByte('\n')
	}
	if s.Watermark != nil {
		fmt.Fprintf(&b, "watermark %s\n", s.Watermark)
	}
	fmt.Fprintf(&b, "rowtime %d proctime %d idle %d changelog %v upsert %v\n",
		s.RowtimeCol, s.ProctimeCol, s.IdleTimeoutMillis, s.Changelog, s.Upsert)
	return b.String()
}

// ruleScan returns the shared scan under n whose rows n's filter may be
// evaluated with the other rules' over that source (see shareFilters).
func (b *builder) ruleScan(n *plan.Calc) (*plan.Scan, bool) {
	scan, ok := n.Input.(*plan.Scan)
	if !ok || n.Filter == nil || b.env.NoSharedFilters || b.shared[scan] == nil {
		return nil, false
	}
	return scan, true
}

// ExplainFilters describes the shared filters the job of sinks would
// have (see exec/filterset): per source, its groups of conditions. Empty
// when it has none.
func ExplainFilters(env Env, sinks ...*plan.Sink) (string, error) {
	if env.Cluster != nil || env.NoSourceReuse || env.NoSharedFilters {
		return "", nil
	}
	b := &builder{env: env}
	b.shareScans(sinks)
	var groups []*scanGroup
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if c, ok := n.(*plan.Calc); ok {
			if scan, ok := b.ruleScan(c); ok {
				g := b.shared[scan]
				if len(g.conds) == 0 {
					groups = append(groups, g)
					g.schema = scan.Schema()
					g.name = scan.Table.Name
				}
				g.conds = append(g.conds, c.Filter)
				return
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	for _, s := range sinks {
		walk(s.Input)
	}
	var out strings.Builder
	for _, g := range groups {
		p, err := filterset.NewPlan(g.conds, g.schema, env.Expr)
		if err != nil {
			return "", err
		}
		p.Name = g.name
		out.WriteString(p.String())
	}
	return out.String(), nil
}
