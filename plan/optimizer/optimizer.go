// Package optimizer rewrites logical plans. Rules are an explicit, ordered
// list; each has a stable ID that EXPLAIN and tests can name. A rule is a
// function from a node to a node, applied bottom-up over the whole tree.
package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// Rule is one rewrite.
type Rule struct {
	// ID names the rule.
	ID string
	// Apply rewrites n (whose inputs are already rewritten); it returns n
	// itself when it does not apply.
	Apply func(o *Optimizer, n plan.Node) plan.Node
}

// Optimizer applies rules in order.
type Optimizer struct {
	Builder *expr.Builder
	Rules   []Rule
}

// New returns an optimizer with the default rules.
func New(b *expr.Builder) *Optimizer {
	return &Optimizer{Builder: b, Rules: DefaultRules()}
}

// DefaultRules returns the rules Sluice applies, in order.
func DefaultRules() []Rule {
	return []Rule{
		{ID: "merge-calc", Apply: mergeCalc},
		{ID: "remove-identity-calc", Apply: removeIdentityCalc},
	}
}

// Optimize rewrites the tree rooted at n.
func (o *Optimizer) Optimize(n plan.Node) plan.Node {
	n = o.rewriteInputs(n)
	for _, r := range o.Rules {
		n = r.Apply(o, n)
	}
	return n
}

func (o *Optimizer) rewriteInputs(n plan.Node) plan.Node {
	ins := n.Inputs()
	if len(ins) == 0 {
		return n
	}
	out := make([]plan.Node, len(ins))
	for i, in := range ins {
		out[i] = o.Optimize(in)
	}
	return n.WithInputs(out)
}

// mergeCalc fuses Calc(Calc(x)) into one Calc over x: the outer
// expressions are rewritten over x, and the filters are ANDed (inner
// first). It applies only when every inner expression that the outer
// one uses more than once is a plain column or a constant, so that no
// computation (and no nondeterministic call) is duplicated.
func mergeCalc(o *Optimizer, n plan.Node) plan.Node {
	outer, ok := n.(*plan.Calc)
	if !ok {
		return n
	}
	inner, ok := outer.Input.(*plan.Calc)
	if !ok {
		return n
	}
	uses := map[int]int{}
	count := func(e expr.Node) {
		for _, c := range expr.Columns(e) {
			uses[c]++
		}
	}
	for _, p := range outer.Projs {
		count(p)
	}
	if outer.Filter != nil {
		count(outer.Filter)
	}
	for c, k := range uses {
		if k > 1 && !cheap(inner.Projs[c]) {
			return n
		}
	}
	sub := func(e expr.Node) expr.Node {
		return expr.MapColumns(e, func(c *expr.Column) expr.Node { return inner.Projs[c.Index] })
	}
	merged := &plan.Calc{Input: inner.Input, Filter: inner.Filter, Out: outer.Out}
	for _, p := range outer.Projs {
		merged.Projs = append(merged.Projs, sub(p))
	}
	if outer.Filter != nil {
		f := sub(outer.Filter)
		if merged.Filter == nil {
			merged.Filter = f
		} else {
			and, err := o.Builder.Call("AND", merged.Filter, f)
			if err != nil {
				return n
			}
			merged.Filter = and
		}
	}
	// Keep the outer column names and types (time attributes included).
	for i, p := range merged.Projs {
		if !p.Type().SameKind(outer.Out.Columns[i].Type) {
			return n
		}
	}
	return merged
}

func cheap(e expr.Node) bool {
	switch e.(type) {
	case *expr.Column, *expr.Literal:
		return true
	}
	return false
}

// removeIdentityCalc drops a Calc that neither filters nor changes its input.
func removeIdentityCalc(o *Optimizer, n plan.Node) plan.Node {
	if c, ok := n.(*plan.Calc); ok && c.IsIdentity() {
		return c.Input
	}
	return n
}
