package planner

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// MetricGroupFromDDL converts CREATE METRIC GROUP into a catalog view of
// version 1, after checking that its metrics plan over its source.
func (p *Planner) MetricGroupFromDDL(cg *ast.CreateMetricGroup) (*catalog.View, error) {
	name, err := p.ObjectName(cg.Name)
	if err != nil {
		return nil, err
	}
	v := &catalog.View{Name: name, MetricGroup: cg, File: p.File, Version: 1}
	if _, _, err := p.bindMetricGroup(cg.Name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// AlterMetricGroup returns the next version of metric group v with the
// change of alter, checked as MetricGroupFromDDL checks a new one.
func (p *Planner) AlterMetricGroup(v *catalog.View, alter *ast.AlterMetricGroup) (*catalog.View, error) {
	if v.MetricGroup == nil {
		return nil, p.errorf(alter.Name, "'%s' is a %s, not a metric group", v.Name, strings.ToLower(v.Kind()))
	}
	def := *v.MetricGroup
	def.Metrics = slices.Clone(def.Metrics)
	files := slices.Clone(v.RuleFiles)
	for len(files) < len(def.Metrics) {
		files = append(files, nil)
	}
	find := func(id *ast.Ident) (int, error) {
		var names []string
		for i, m := range def.Metrics {
			if strings.EqualFold(m.Name.Name, id.Name) {
				return i, nil
			}
			names = append(names, m.Name.Name)
		}
		return -1, p.errorf(id, "metric group '%s' has no metric '%s'%s", v.Name, id.Name, suggest.Hint(id.Name, names))
	}
	switch alter.Action {
	case "ROLLBACK":
		old := v.RulesetVersion(int(alter.Version))
		if old == nil {
			return nil, token.NewError(p.File, alter.VersionPos, "metric group '%s' has no version %d: it is at version %d, and keeps its earlier ones", v.Name, alter.Version, v.Version)
		}
		def.Metrics = slices.Clone(old.MetricGroup.Metrics)
		files = slices.Clone(old.RuleFiles)
	case "ADD":
		for _, m := range def.Metrics {
			if strings.EqualFold(m.Name.Name, alter.Metric.Name.Name) {
				return nil, p.errorf(alter.Metric.Name, "metric group '%s' already has a metric '%s': change it with ALTER METRIC", v.Name, m.Name.Name)
			}
		}
		def.Metrics = append(def.Metrics, alter.Metric)
		files = append(files, p.File)
	case "ALTER":
		i, err := find(alter.Metric.Name)
		if err != nil {
			return nil, err
		}
		def.Metrics[i], files[i] = alter.Metric, p.File
	case "DROP":
		i, err := find(alter.Target)
		if err != nil {
			return nil, err
		}
		if len(def.Metrics) == 1 {
			return nil, p.errorf(alter.Target, "cannot drop '%s', the last metric of metric group '%s': drop the group with DROP METRIC GROUP", alter.Target.Name, v.Name)
		}
		def.Metrics = slices.Delete(def.Metrics, i, i+1)
		files = slices.Delete(files, i, i+1)
	}
	next := &catalog.View{Name: v.Name, MetricGroup: &def, File: v.File, Version: v.Version + 1, RuleFiles: files, Previous: keptVersions(v)}
	if _, _, err := p.bindMetricGroup(alter.Name, next); err != nil {
		return nil, err
	}
	return next, nil
}

// maxMetricKeys is how many KEY BY columns a metric group may have.
const maxMetricKeys = 8

// bindMetricGroup plans metric group v over its source: a pre-projection
// that computes the metrics' arguments and filters, when they are not
// columns, then the MetricGroup. Its scope is the source's columns and a
// column a metric.
func (p *Planner) bindMetricGroup(at ast.Node, v *catalog.View) (plan.Node, *scope, error) {
	if p.viewDepth > 32 {
		return nil, nil, p.errorf(at, "views are nested more than 32 deep at '%s' (or a metric group reads itself)", v.Name)
	}
	g := v.MetricGroup
	saved, savedCTEs := p.File, p.ctes
	defer func() { p.File, p.ctes = saved, savedCTEs }()
	p.File, p.ctes = v.File, nil
	p.viewDepth++
	in, sc, err := p.bindTableRef(g.Source, nil)
	p.viewDepth--
	if err != nil {
		return nil, nil, err
	}
	if in.Updating() {
		return nil, nil, p.errorf(g.Source, "metric group '%s' reads '%s', whose rows are updated: a metric group aggregates rows that are only inserted (an append-only table or view)", v.Name, g.Source)
	}
	n := &plan.MetricGroup{Name: v.Name, Version: v.Version, TimeCol: -1}
	if len(g.Keys) > maxMetricKeys {
		return nil, nil, p.errorf(g.Keys[maxMetricKeys], "a metric group has at most %d KEY BY columns", maxMetricKeys)
	}
	for _, k := range g.Keys {
		e, err := p.bindExpr(&ast.ColumnRef{Parts: []*ast.Ident{k}}, sc)
		if err != nil {
			return nil, nil, err
		}
		c, ok := e.(*expr.Column)
		if !ok {
			return nil, nil, p.errorf(k, "KEY BY takes columns of '%s'", g.Source)
		}
		if slices.Contains(n.Keys, c.Index) {
			return nil, nil, p.errorf(k, "column '%s' is twice in KEY BY", k.Name)
		}
		n.Keys = append(n.Keys, c.Index)
	}
	for i, c := range sc.cols {
		if !c.hidden && c.typ.TimeAttr == types.RowTime {
			n.TimeCol = i
			break
		}
	}
	ac := &aggCollector{p: p, in: sc, preIx: map[string]int{}, fps: map[string]int{}, columns: true,
		pre: identity(sc.schema())}
	seen := map[string]bool{}
	type bound struct {
		fp     string
		window plan.MetricWindow
	}
	var metrics []bound
	for i, m := range g.Metrics {
		if i < len(v.RuleFiles) && v.RuleFiles[i] != nil {
			p.File = v.RuleFiles[i]
		} else {
			p.File = v.File
		}
		key := strings.ToLower(m.Name.Name)
		if seen[key] {
			return nil, nil, p.errorf(m.Name, "metric group '%s' has two metrics named '%s'", v.Name, m.Name.Name)
		}
		seen[key] = true
		for _, c := range sc.cols {
			if !c.hidden && strings.EqualFold(c.name, m.Name.Name) {
				return nil, nil, p.errorf(m.Name, "metric '%s' has the name of a column of '%s': the group's rows carry both, so name it otherwise", m.Name.Name, g.Source)
			}
		}
		call, ok := m.Agg.(*ast.Call)
		if !ok || !p.isAggregate(call) || call.Over != nil || call.OverName != nil {
			return nil, nil, p.errorf(m.Agg, "a metric is one aggregate call, such as COUNT(*), SUM(amount) or COUNT(DISTINCT ip) FILTER (WHERE ok), not %s", ast.Format(m.Agg))
		}
		if err := ac.add(call); err != nil {
			return nil, nil, err
		}
		fp, err := p.aggFingerprint(call, sc)
		if err != nil {
			return nil, nil, err
		}
		w, err := p.metricWindow(m)
		if err != nil {
			return nil, nil, err
		}
		metrics = append(metrics, bound{fp, w})
	}
	p.File = v.File
	width := len(sc.cols)
	var input plan.Node = in
	out := &scope{cols: slices.Clone(sc.cols)}
	if len(ac.pre) > width {
		calc := &plan.Calc{Input: in, Projs: ac.pre, Out: sc.schema()}
		calc.Out.Columns = slices.Clone(calc.Out.Columns)
		for i, e := range ac.pre[width:] {
			name := "$" + strconv.Itoa(width+i)
			typ := e.Type().WithoutTimeAttr()
			calc.Out.Columns = append(calc.Out.Columns, types.Column{Name: name, Type: typ})
			out.cols = append(out.cols, scopeCol{name: name, typ: typ, hidden: true})
		}
		input = calc
	}
	n.Input, n.Calls = input, ac.calls
	n.Out = input.Schema()
	n.Out.Columns = slices.Clone(n.Out.Columns)
	for i, m := range metrics {
		call := ac.fps[m.fp]
		mt := plan.Metric{Name: g.Metrics[i].Name.Name, Call: call, Window: m.window, Computes: m.fp + " " + m.window.String()}
		if m.window.Kind == "LAST" {
			// A frame retracts the rows that leave it.
			n.Calls[call].AppendOnly = false
		}
		n.Metrics = append(n.Metrics, mt)
		typ := n.Calls[call].Result
		n.Out.Columns = append(n.Out.Columns, types.Column{Name: mt.Name, Type: typ})
		out.cols = append(out.cols, scopeCol{name: mt.Name, typ: typ})
	}
	// A call that no window retracts may use the cheaper accumulators.
	for i := range n.Calls {
		n.Calls[i].AppendOnly = !slices.ContainsFunc(n.Metrics, func(m plan.Metric) bool { return m.Call == i && m.Window.Kind == "LAST" })
	}
	return p.alias(n, out, v.Name, nil, nil)
}

// metricWindow binds the window of a metric.
func (p *Planner) metricWindow(m *ast.MetricDef) (plan.MetricWindow, error) {
	w := plan.MetricWindow{Kind: m.Window.Kind}
	if w.Kind == "" {
		return w, nil
	}
	value := func(lit *ast.IntervalLit, what string) (int64, error) {
		e, err := p.bindExpr(lit, &scope{})
		if err != nil {
			return 0, err
		}
		if e.Type().Kind != types.KindIntervalDayTime {
			return 0, p.errorf(lit, "the %s of a %s window is an INTERVAL of days to seconds, like INTERVAL '10' MINUTE, not %s", what, w.Kind, e.Type())
		}
		us, err := p.intervalValue(lit, e)
		if err != nil {
			return 0, err
		}
		if us <= 0 {
			return 0, p.errorf(lit, "the %s of a %s window must be positive", what, w.Kind)
		}
		return us, nil
	}
	what := "size"
	switch w.Kind {
	case "SESSION":
		what = "gap"
	case "LAST":
		what = "length"
	}
	var err error
	if w.Size, err = value(m.Window.Size, what); err != nil {
		return w, err
	}
	if w.Kind == "HOP" {
		if w.Slide, err = value(m.Window.Slide, "slide"); err != nil {
			return w, err
		}
		if w.Size%w.Slide != 0 {
			return w, p.errorf(m.Window.Size, "the size of a HOP window must be a whole multiple of its slide (HOP(slide, size))")
		}
		if w.Size/w.Slide > 1000 {
			return w, p.errorf(m.Window.Size, "a HOP window of a metric spans at most 1000 slides (its size over its slide), not %d", w.Size/w.Slide)
		}
	}
	return w, nil
}
