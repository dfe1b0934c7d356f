package planner

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
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

// AlterRuleset returns the next version of ruleset v with the change of
// alter, checked as RulesetFromDDL checks a new one.
func (p *Planner) AlterRuleset(v *catalog.View, alter *ast.AlterRuleset) (*catalog.View, error) {
	if v.Ruleset == nil {
		return nil, p.errorf(alter.Name, "'%s' is a view, not a ruleset", v.Name)
	}
	def := *v.Ruleset
	def.Rules = slices.Clone(def.Rules)
	files := slices.Clone(v.RuleFiles)
	for len(files) < len(def.Rules) {
		files = append(files, nil)
	}
	find := func() (int, error) {
		var names []string
		for i, r := range def.Rules {
			if r.Name.Name == alter.Target.Name {
				return i, nil
			}
			names = append(names, r.Name.Name)
		}
		return -1, p.errorf(alter.Target, "ruleset '%s' has no rule '%s'%s", v.Name, alter.Target.Name, suggest.Hint(alter.Target.Name, names))
	}
	switch alter.Action {
	case "ROLLBACK":
		old := v.RulesetVersion(int(alter.Version))
		if old == nil {
			return nil, token.NewError(p.File, alter.VersionPos, "ruleset '%s' has no version %d: it is at version %d, and keeps its earlier ones", v.Name, alter.Version, v.Version)
		}
		def.Rules, def.Match = slices.Clone(old.Ruleset.Rules), old.Ruleset.Match
		files = slices.Clone(old.RuleFiles)
	case "ADD":
		for _, r := range def.Rules {
			if strings.EqualFold(r.Name.Name, alter.Rule.Name.Name) {
				return nil, p.errorf(alter.Rule.Name, "ruleset '%s' already has a rule '%s'", v.Name, r.Name.Name)
			}
		}
		def.Rules = append(def.Rules, alter.Rule)
		files = append(files, p.File)
	case "DROP":
		i, err := find()
		if err != nil {
			return nil, err
		}
		def.Rules = slices.Delete(def.Rules, i, i+1)
		files = slices.Delete(files, i, i+1)
	case "ENABLE", "DISABLE":
		i, err := find()
		if err != nil {
			return nil, err
		}
		r := *def.Rules[i]
		r.Disabled = alter.Action == "DISABLE"
		def.Rules[i] = &r
	}
	next := &catalog.View{Name: v.Name, Ruleset: &def, File: v.File, Version: v.Version + 1, RuleFiles: files, Previous: keptVersions(v)}
	if _, _, err := p.bindRuleset(alter.Name, next); err != nil {
		return nil, err
	}
	return next, nil
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
	n := &plan.Ruleset{Input: in, Name: v.Name, Version: v.Version, Match: rs.Match.Kind, N: rs.Match.N}
	if n.Match == "" {
		n.Match = "ANY"
	}
	switch n.Match {
	case "AT LEAST":
		if n.N < 1 {
			return nil, nil, p.errorf(matchAt(rs), "MATCH AT LEAST needs 1 rule or more, not %d", n.N)
		}
	case "AT LEAST PERCENT":
		if n.N < 1 || n.N > 100 {
			return nil, nil, p.errorf(matchAt(rs), "MATCH AT LEAST n PERCENT needs n from 1 to 100, not %d", n.N)
		}
	}
	for _, c := range plan.RulesetColumns {
		for _, have := range sc.cols {
			if strings.EqualFold(have.name, c.Name) {
				return nil, nil, p.errorf(rs.Source, "ruleset '%s' adds a column '%s' to the rows of '%s', which has one: rename it in a view", v.Name, c.Name, rs.Source)
			}
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
	p.File = saved
	return p.alias(n, osc, v.Name, nil, nil)
}

// matchAt is where a ruleset's policy is written, or its name.
func matchAt(rs *ast.CreateRuleset) ast.Node {
	if rs.Match.At.IsValid() {
		return &ast.Ident{NamePos: rs.Match.At}
	}
	return rs.Name
}
