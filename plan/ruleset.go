package plan

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

// Ruleset raises alerts over the rows of its input: a row that its match
// policy accepts is passed on, once, with RulesetColumns appended: the
// ruleset's name and version, the rules it matched (in priority order),
// the alert's severity (the highest of theirs; under FIRST, the first's)
// and their tags.
type Ruleset struct {
	Input   Node
	Name    string
	Version int
	// Match is the policy: ANY, ALL, FIRST, AT LEAST (N rules) or AT
	// LEAST PERCENT (N percent of the rules, rounded up).
	Match string
	N     int64
	// Rules are the enabled rules in priority order.
	Rules []Rule
	Out   types.Schema
}

// Rule is a rule of a Ruleset.
type Rule struct {
	Name     string
	Cond     expr.Node
	Severity string
	Priority int64
	Tags     []string
}

// RulesetColumns are the columns a Ruleset appends to its input's.
var RulesetColumns = []types.Column{
	{Name: "ruleset_name", Type: types.String.WithNullable(false)},
	{Name: "ruleset_version", Type: types.Int.WithNullable(false)},
	{Name: "matched_rules", Type: types.ArrayOf(types.String.WithNullable(false)).WithNullable(false)},
	{Name: "alert_severity", Type: types.String.WithNullable(false)},
	{Name: "alert_tags", Type: types.ArrayOf(types.String.WithNullable(false)).WithNullable(false)},
}

// Severities are the severities a rule may have, lowest first (Sigma's
// levels).
var Severities = []string{"informational", "low", "medium", "high", "critical"}

// Needed returns how many of the rules must match under the policy (at
// least 1: the planner refuses AT LEAST 0 and 0 PERCENT); FIRST needs
// one, and the first in priority order is the alert's.
func (r *Ruleset) Needed() int {
	n := len(r.Rules)
	switch r.Match {
	case "ALL":
		return max(n, 1)
	case "AT LEAST":
		return int(min(r.N, int64(n)+1))
	case "AT LEAST PERCENT":
		// Rounded up: 50 percent of 3 rules is 2.
		return max(int((r.N*int64(n)+99)/100), 1)
	}
	return 1
}

// Schema implements Node.
func (r *Ruleset) Schema() types.Schema { return r.Out }

// Inputs implements Node.
func (r *Ruleset) Inputs() []Node { return []Node{r.Input} }

// Updating implements Node.
func (r *Ruleset) Updating() bool { return r.Input.Updating() }

// WithInputs implements Node.
func (r *Ruleset) WithInputs(ins []Node) Node { c := *r; c.Input = ins[0]; return &c }

// Describe implements Node.
func (r *Ruleset) Describe() string {
	var b strings.Builder
	match := r.Match
	switch match {
	case "AT LEAST":
		match = fmt.Sprintf("AT LEAST %d", r.N)
	case "AT LEAST PERCENT":
		match = fmt.Sprintf("AT LEAST %d PERCENT", r.N)
	}
	fmt.Fprintf(&b, "Ruleset(name=[%s], version=[%d], match=[%s], rules=[", r.Name, r.Version, match)
	for i, ru := range r.Rules {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", ru.Name, ru.Cond)
	}
	b.WriteString("])")
	return b.String()
}
