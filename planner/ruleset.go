package planner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// RulesetFromDDL converts CREATE RULESET into a catalog view of version
// 1, after checking that its rules plan over its source.
func (p *Planner) RulesetFromDDL(cr *ast.CreateRuleset) (*catalog.View, error) {
	name, err := p.ObjectName(cr.Name)
	if err != nil {
		return nil, err
	}
	v := &catalog.View{Name: name, Ruleset: cr, File: p.File, Version: 1}
	if _, _, err := p.bindRuleset(cr.Name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// AlterRuleset returns ruleset v with the change of alter, checked as
// RulesetFromDDL checks a new one: the next version for a change of its
// rules or policy (a rollback's holds the definition of version n, a
// promotion the shadow's), the same version with another shadow or none
// for SHADOW and DROP SHADOW.
func (p *Planner) AlterRuleset(v *catalog.View, alter *ast.AlterRuleset) (*catalog.View, error) {
	if v.Ruleset == nil {
		return nil, p.errorf(alter.Name, "'%s' is a view, not a ruleset", v.Name)
	}
	next := *v
	def := *v.Ruleset
	def.Rules = slices.Clone(def.Rules)
	next.Ruleset = &def
	next.RuleFiles = slices.Clone(v.RuleFiles)
	for len(next.RuleFiles) < len(def.Rules) {
		next.RuleFiles = append(next.RuleFiles, nil)
	}
	next.Version, next.Previous = v.Version+1, keptVersions(v)
	action := &ast.Ident{NamePos: alter.ActionPos}
	find := func(name *ast.Ident) (int, error) {
		var names []string
		for i, r := range def.Rules {
			if r.Name.Name == name.Name {
				return i, nil
			}
			names = append(names, r.Name.Name)
		}
		return -1, p.errorf(name, "ruleset '%s' has no rule '%s'%s", v.Name, name.Name, suggest.Hint(name.Name, names))
	}
	switch alter.Action {
	case "ROLLBACK":
		old := v.RulesetVersion(int(alter.Version))
		if old == nil {
			return nil, token.NewError(p.File, alter.VersionPos, "ruleset '%s' has no version %d: it is at version %d, and keeps its earlier ones", v.Name, alter.Version, v.Version)
		}
		setDefinition(&next, old)
	case "ADD":
		for _, r := range def.Rules {
			if strings.EqualFold(r.Name.Name, alter.Rule.Name.Name) {
				return nil, p.errorf(alter.Rule.Name, "ruleset '%s' already has a rule '%s'", v.Name, r.Name.Name)
			}
		}
		def.Rules = append(def.Rules, alter.Rule)
		next.RuleFiles = append(next.RuleFiles, p.File)
	case "ALTER":
		i, err := find(alter.Rule.Name)
		if err != nil {
			return nil, err
		}
		r := *alter.Rule
		r.Name = def.Rules[i].Name
		r.Disabled = def.Rules[i].Disabled
		def.Rules[i] = &r
		next.RuleFiles[i] = p.File
	case "DROP":
		i, err := find(alter.Target)
		if err != nil {
			return nil, err
		}
		def.Rules = slices.Delete(def.Rules, i, i+1)
		next.RuleFiles = slices.Delete(next.RuleFiles, i, i+1)
	case "ENABLE", "DISABLE":
		i, err := find(alter.Target)
		if err != nil {
			return nil, err
		}
		r := *def.Rules[i]
		r.Disabled = alter.Action == "DISABLE"
		def.Rules[i] = &r
	case "SET MATCH":
		if err := p.checkMatch(alter.Match); err != nil {
			return nil, err
		}
		def.Match = alter.Match
		def.Match.At = token.NoPos // written in another file than the ruleset's
	case "SET EXCEPT":
		def.Except, next.ExceptFile = alter.Except, p.File
	case "DROP EXCEPT":
		if def.Except == nil {
			return nil, p.errorf(action, "ruleset '%s' has no EXCEPT WHEN to drop", v.Name)
		}
		def.Except, next.ExceptFile = nil, nil
	case "SET SUPPRESS":
		def.Suppress, next.SuppressFile = alter.Suppress, p.File
	case "DROP SUPPRESS":
		if def.Suppress == nil {
			return nil, p.errorf(action, "ruleset '%s' has no SUPPRESS BY to drop", v.Name)
		}
		def.Suppress, next.SuppressFile = nil, nil
	case "SHADOW":
		return p.shadowRuleset(v, alter)
	case "PROMOTE SHADOW":
		if v.Shadow == nil {
			return nil, p.errorf(action, "ruleset '%s' has no shadow to promote: set one with ALTER RULESET %s SHADOW (RULE ...) INTO table", v.Name, v.Name)
		}
		setDefinition(&next, v.Shadow)
		next.Shadow, next.ShadowInto = nil, ""
	case "DROP SHADOW":
		if v.Shadow == nil {
			return nil, p.errorf(action, "ruleset '%s' has no shadow to drop", v.Name)
		}
		same := *v
		same.Shadow, same.ShadowInto = nil, ""
		return &same, nil
	default:
		return nil, p.errorf(action, "unknown change of a ruleset: %s", alter.Action)
	}
	if _, _, err := p.bindRuleset(alter.Name, &next); err != nil {
		return nil, err
	}
	return &next, nil
}

// setDefinition gives ruleset v the rules, policy, exceptions and
// suppression of def (an earlier version, or a shadow), and their
// files; v keeps its name, source and comment.
func setDefinition(v *catalog.View, def *catalog.View) {
	rs := *v.Ruleset
	rs.Rules = slices.Clone(def.Ruleset.Rules)
	rs.Match, rs.Except, rs.Suppress = def.Ruleset.Match, def.Ruleset.Except, def.Ruleset.Suppress
	v.Ruleset = &rs
	v.RuleFiles = slices.Clone(def.RuleFiles)
	for i := range v.RuleFiles {
		if v.RuleFiles[i] == nil {
			v.RuleFiles[i] = def.File
		}
	}
	v.ExceptFile, v.SuppressFile = fileOr(def.ExceptFile, def.File), fileOr(def.SuppressFile, def.File)
	if def.Ruleset.Match.At.IsValid() && def.File != v.File {
		rs.Match.At = token.NoPos
	}
}

// shadowRuleset returns ruleset v with the shadow alter sets: its own
// rules (with the live policy, exceptions and suppression unless it
// gives its own) or an earlier version, into a table that takes its
// alerts.
func (p *Planner) shadowRuleset(v *catalog.View, alter *ast.AlterRuleset) (*catalog.View, error) {
	into, err := p.ObjectName(alter.Into)
	if err != nil {
		return nil, err
	}
	if into == v.Name {
		return nil, p.errorf(alter.Into, "the shadow of ruleset '%s' writes into a table, not into the ruleset", v.Name)
	}
	var sh *catalog.View
	if alter.Rules == nil {
		old := v.RulesetVersion(int(alter.Version))
		if old == nil {
			return nil, token.NewError(p.File, alter.VersionPos, "ruleset '%s' has no version %d: it is at version %d, and keeps its earlier ones", v.Name, alter.Version, v.Version)
		}
		sh = &catalog.View{Name: v.Name, Ruleset: v.Ruleset, File: v.File, Version: old.Version}
		setDefinition(sh, old)
	} else {
		sh = &catalog.View{Name: v.Name, File: v.File}
		def := *v.Ruleset
		def.Rules = alter.Rules
		sh.Ruleset = &def
		for range alter.Rules {
			sh.RuleFiles = append(sh.RuleFiles, p.File)
		}
		sh.ExceptFile, sh.SuppressFile = v.ExceptFile, v.SuppressFile
		if alter.Match.Kind != "" {
			if err := p.checkMatch(alter.Match); err != nil {
				return nil, err
			}
			def.Match = alter.Match
			def.Match.At = token.NoPos
		}
		if alter.Except != nil {
			def.Except, sh.ExceptFile = alter.Except, p.File
		}
		if alter.Suppress != nil {
			def.Suppress, sh.SuppressFile = alter.Suppress, p.File
		}
	}
	next := *v
	next.Shadow, next.ShadowInto = sh, into
	if _, _, err := p.bindRulesetAs(alter.Name, shadowView(&next), true); err != nil {
		return nil, err
	}
	if _, err := p.shadowSink(&next, nil); err != nil {
		return nil, p.errorf(alter.Into, "%s", shadowSinkError(err))
	}
	return &next, nil
}

// maxRulesetVersions is how many earlier versions of a ruleset are kept
// for ALTER RULESET ... ROLLBACK TO VERSION.
const maxRulesetVersions = 100

// keptVersions returns v with at most maxRulesetVersions-1 versions
// before it (the older ones let go).
func keptVersions(v *catalog.View) *catalog.View {
	head := v
	for i := 1; v != nil; i++ {
		if i == maxRulesetVersions-1 && v.Previous != nil {
			cut := *v
			cut.Previous = nil
			return rebuild(head, v, &cut)
		}
		v = v.Previous
	}
	return head
}

// rebuild copies the chain from head down to old, which it replaces
// with repl (the chain's versions are shared by the jobs that planned
// them, and are not changed).
func rebuild(head, old, repl *catalog.View) *catalog.View {
	if head == old {
		return repl
	}
	c := *head
	c.Previous = rebuild(head.Previous, old, repl)
	return &c
}

// bindRuleset plans ruleset v over its source.
func (p *Planner) bindRuleset(at ast.Node, v *catalog.View) (plan.Node, *scope, error) {
	if live := p.shadowing[v.Name]; live != nil {
		return p.bindRulesetAs(at, shadowView(live), true)
	}
	return p.bindRulesetAs(at, v, false)
}

// shadowView returns the shadow of ruleset v as a ruleset of its own, of
// the version its alerts carry.
func shadowView(v *catalog.View) *catalog.View {
	sh := *v.Shadow
	sh.Version = v.ShadowVersion()
	return &sh
}

// fileOr returns f, or else def.
func fileOr(f, def *token.File) *token.File {
	if f != nil {
		return f
	}
	return def
}

// checkMatch checks the numbers of a match policy.
func (p *Planner) checkMatch(m ast.RulesetMatch) error {
	at := &ast.Ident{NamePos: m.At}
	switch m.Kind {
	case "AT LEAST":
		if m.N < 1 {
			return p.errorf(at, "MATCH AT LEAST needs 1 rule or more, not %d", m.N)
		}
	case "AT LEAST PERCENT":
		if m.N < 1 || m.N > 100 {
			return p.errorf(at, "MATCH AT LEAST n PERCENT needs n from 1 to 100, not %d", m.N)
		}
	}
	return nil
}

// bindRulesetAs plans ruleset v (the shadow of the ruleset of its name,
// if shadow) over its source.
func (p *Planner) bindRulesetAs(at ast.Node, v *catalog.View, shadow bool) (plan.Node, *scope, error) {
	if p.viewDepth > 32 {
		return nil, nil, p.errorf(at, "views are nested more than 32 deep at '%s' (or a ruleset reads itself)", v.Name)
	}
	rs := v.Ruleset
	saved, savedCTEs := p.File, p.ctes
	defer func() { p.File, p.ctes = saved, savedCTEs }()
	p.File, p.ctes = v.File, nil
	p.viewDepth++
	in, sc, err := p.bindTableRef(rs.Source, nil)
	p.viewDepth--
	if err != nil {
		return nil, nil, err
	}
	if in.Updating() {
		return nil, nil, p.errorf(rs.Source, "ruleset '%s' reads '%s', whose rows are updated: a ruleset raises alerts over rows that are only inserted (an append-only table or view)", v.Name, rs.Source)
	}
	if shadow {
		if kind := statefulNode(in); kind != "" {
			return nil, nil, p.errorf(at, "ruleset '%s' cannot have a shadow: it reads '%s', computed with state (%s), which a shadow would compute again; "+
				"a shadow needs a source without state (a table, or a view of filters, projections, unions and lookups)", v.Name, rs.Source, kind)
		}
	}
	n := &plan.Ruleset{Input: in, Name: v.Name, Version: v.Version, Shadow: shadow, Match: rs.Match.Kind, N: rs.Match.N}
	if n.Match == "" {
		n.Match = "ANY"
	}
	m := rs.Match
	if !m.At.IsValid() {
		m.At = rs.Name.Pos()
	}
	if err := p.checkMatch(m); err != nil {
		return nil, nil, err
	}
	for _, c := range plan.RulesetColumns {
		for _, have := range sc.cols {
			if strings.EqualFold(have.name, c.Name) {
				return nil, nil, p.errorf(rs.Source, "ruleset '%s' adds a column '%s' to the rows of '%s', which has one: rename it in a view", v.Name, c.Name, rs.Source)
			}
		}
	}
	if rs.Except != nil {
		p.File = fileOr(v.ExceptFile, v.File)
		if n.Except, err = p.bindCondition(rs.Except, sc, "EXCEPT WHEN"); err != nil {
			return nil, nil, err
		}
	}
	seen := map[string]bool{}
	type ordered struct {
		rule plan.Rule
		at   int
	}
	var rules []ordered
	for i, r := range rs.Rules {
		if i < len(v.RuleFiles) && v.RuleFiles[i] != nil {
			p.File = v.RuleFiles[i]
		} else {
			p.File = v.File
		}
		key := strings.ToLower(r.Name.Name)
		if seen[key] {
			return nil, nil, p.errorf(r.Name, "ruleset '%s' has two rules named '%s'", v.Name, r.Name.Name)
		}
		seen[key] = true
		cond, err := p.bindCondition(r.When, sc, "WHEN")
		if err != nil {
			return nil, nil, err
		}
		sev := "medium"
		if r.Severity != "" {
			sev = strings.ToLower(r.Severity)
			if !slices.Contains(plan.Severities, sev) {
				return nil, nil, token.NewError(p.File, r.SeverityPos, "unknown severity '%s': a rule's severity is one of %s%s",
					r.Severity, strings.Join(plan.Severities, ", "), suggest.Hint(sev, plan.Severities))
			}
		}
		if !r.Disabled {
			rules = append(rules, ordered{plan.Rule{Name: r.Name.Name, Cond: cond, Severity: sev, Priority: r.Priority, Tags: r.Tags}, i})
		}
	}
	// Priority order: the higher PRIORITY first, then as written.
	slices.SortStableFunc(rules, func(a, b ordered) int { return cmp.Compare(b.rule.Priority, a.rule.Priority) })
	for _, r := range rules {
		n.Rules = append(n.Rules, r.rule)
	}
	out := sc.schema()
	out.Columns = append(slices.Clip(out.Columns), plan.RulesetColumns...)
	n.Out = out
	osc := &scope{cols: slices.Clone(sc.cols)}
	for _, c := range plan.RulesetColumns {
		osc.cols = append(osc.cols, scopeCol{name: c.Name, typ: c.Type})
	}
	var node plan.Node = n
	if rs.Suppress != nil {
		p.File = fileOr(v.SuppressFile, v.File)
		if node, err = p.bindSuppress(n, osc, rs.Suppress); err != nil {
			return nil, nil, err
		}
	}
	p.File = saved
	return p.alias(node, osc, v.Name, nil, nil)
}

// statefulNode names a node of plan n that keeps state (as EXPLAIN
// names it), or returns "" when n keeps none.
func statefulNode(n plan.Node) string {
	switch n.(type) {
	case *plan.Scan, *plan.Values, *plan.Calc, *plan.Union, *plan.Expand, *plan.Correlate, *plan.LookupJoin, *plan.Ruleset:
	default:
		d := n.Describe()
		if i := strings.IndexByte(d, '('); i > 0 {
			d = d[:i]
		}
		return d
	}
	for _, in := range n.Inputs() {
		if kind := statefulNode(in); kind != "" {
			return kind
		}
	}
	return ""
}

// bindSuppress plans SUPPRESS BY over the alerts of ruleset n, whose
// columns osc holds.
func (p *Planner) bindSuppress(n *plan.Ruleset, osc *scope, s *ast.RulesetSuppress) (plan.Node, error) {
	out := n.Out.Columns
	sup := &plan.Suppress{Input: n, Ruleset: n.Name, Shadow: n.Shadow, TimeCol: -1, CountCol: len(out) - 1}
	for _, k := range s.Keys {
		e, err := p.bindExpr(&ast.ColumnRef{Parts: []*ast.Ident{k}}, osc)
		if err != nil {
			return nil, err
		}
		c, ok := e.(*expr.Column)
		if !ok {
			return nil, p.errorf(k, "SUPPRESS BY takes columns of the alerts: '%s' is not one", k.Name)
		}
		if c.Index == sup.CountCol {
			return nil, p.errorf(k, "SUPPRESS BY cannot key by %s, which it computes", out[c.Index].Name)
		}
		if slices.Contains(sup.Keys, c.Index) {
			return nil, p.errorf(k, "column '%s' is twice in SUPPRESS BY", k.Name)
		}
		sup.Keys = append(sup.Keys, c.Index)
	}
	iv, err := p.bindInterval(s.Interval)
	if err != nil {
		return nil, err
	}
	lit := iv.(*expr.Literal)
	if lit.V.Kind() != types.KindIntervalDayTime {
		return nil, p.errorf(s.Interval, "SUPPRESS BY ... FOR takes an interval of days, hours, minutes or seconds, not of months or years")
	}
	if sup.Interval = lit.V.Int(); sup.Interval <= 0 {
		return nil, p.errorf(s.Interval, "SUPPRESS BY ... FOR takes a positive interval")
	}
	for i, c := range out {
		if c.Type.TimeAttr == types.RowTime {
			sup.TimeCol = i
			break
		}
	}
	return sup, nil
}

// ShadowSinks returns the sinks of the shadows of the rulesets that
// sinks read (each once): the alerts of each shadow, evaluated over the
// rows of the ruleset's source, into its table.
func (p *Planner) ShadowSinks(sinks []*plan.Sink, acceptsUpdates SinkAcceptsUpdates) ([]*plan.Sink, error) {
	seen := map[string]bool{}
	var names []string
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if r, ok := n.(*plan.Ruleset); ok && !r.Shadow && !seen[r.Name] {
			seen[r.Name] = true
			names = append(names, r.Name)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	for _, s := range sinks {
		walk(s.Input)
	}
	var out []*plan.Sink
	for _, name := range names {
		_, v, err := p.Catalog.Lookup(name)
		if err != nil || v == nil || v.Shadow == nil {
			continue
		}
		for _, s := range sinks {
			if s.Table.Name == v.ShadowInto {
				return nil, fmt.Errorf("the shadow of ruleset '%s' writes into table '%s', which this job writes too: give the shadow a table of its own", name, v.ShadowInto)
			}
		}
		s, err := p.shadowSink(v, acceptsUpdates)
		if err != nil {
			return nil, fmt.Errorf("the shadow of ruleset '%s' cannot write into table '%s': %s", name, v.ShadowInto, shadowSinkError(err))
		}
		out = append(out, s)
	}
	return out, nil
}

// shadowSink plans INSERT INTO <its table> SELECT * FROM <the shadow of
// ruleset v>.
func (p *Planner) shadowSink(v *catalog.View, acceptsUpdates SinkAcceptsUpdates) (*plan.Sink, error) {
	ident := func(name string) *ast.ObjectName { return &ast.ObjectName{Parts: []*ast.Ident{{Name: name}}} }
	ins := &ast.Insert{Table: ident(v.ShadowInto), Query: &ast.Query{Body: &ast.Select{
		Items: []*ast.SelectItem{{Star: true}},
		From:  &ast.TableName{Name: ident(v.Name)},
	}}}
	saved := p.shadowing
	p.shadowing = map[string]*catalog.View{v.Name: v}
	defer func() { p.shadowing = saved }()
	return p.PlanInsert(ins, acceptsUpdates)
}

// shadowSinkError is the message of an error planning a shadow's sink,
// without the position (in no file).
func shadowSinkError(err error) string {
	var te *token.Error
	if errors.As(err, &te) {
		return te.Msg
	}
	return err.Error()
}
