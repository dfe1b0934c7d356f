package plan

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/exec/window"
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
	// Shadow: this is the ruleset's shadow, run beside the live version
	// into a table of its own.
	Shadow bool
	// Match is the policy: ANY, ALL, FIRST, AT LEAST (N rules) or AT
	// LEAST PERCENT (N percent of the rules, rounded up).
	Match string
	N     int64
	// Rules are the enabled rules in priority order.
	Rules []Rule
	// Except, if set, holds for the rows that raise no alert.
	Except expr.Node
	Out    types.Schema
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
	{Name: "suppressed_count", Type: types.BigInt.WithNullable(false)},
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
	fmt.Fprintf(&b, "Ruleset(name=[%s], version=[%d], ", r.Name, r.Version)
	if r.Shadow {
		b.WriteString("shadow=[true], ")
	}
	fmt.Fprintf(&b, "match=[%s], ", match)
	if r.Except != nil {
		fmt.Fprintf(&b, "except=[%s], ", r.Except)
	}
	b.WriteString("rules=[")
	for i, ru := range r.Rules {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", ru.Name, ru.Cond)
	}
	b.WriteString("])")
	return b.String()
}

// Suppress lets through, of the alerts of a ruleset (its input), at most
// one per key set per interval: the first alert of a key set opens an
// interval, the alerts of the key set within it are dropped and
// counted, and the next alert let through after it carries the count
// in its suppressed_count column.
type Suppress struct {
	Input Node
	// Ruleset names the ruleset; Shadow says it is its shadow's.
	Ruleset string
	Shadow  bool
	// Keys are the columns of the key set.
	Keys []int
	// Interval is in microseconds.
	Interval int64
	// TimeCol is the event-time attribute that times the alerts, or -1:
	// processing time.
	TimeCol int
	// CountCol is the suppressed_count column.
	CountCol int
}

// Schema implements Node.
func (s *Suppress) Schema() types.Schema { return s.Input.Schema() }

// Inputs implements Node.
func (s *Suppress) Inputs() []Node { return []Node{s.Input} }

// Updating implements Node.
func (s *Suppress) Updating() bool { return s.Input.Updating() }

// WithInputs implements Node.
func (s *Suppress) WithInputs(ins []Node) Node { c := *s; c.Input = ins[0]; return &c }

// Describe implements Node.
func (s *Suppress) Describe() string {
	return fmt.Sprintf("Suppress(ruleset=[%s], %skeys=[%s], interval=[%s], time=[%s])",
		s.Ruleset, s.shadow(), s.keyNames(), window.FormatDuration(s.Interval), s.timeName())
}

// Identity describes what the state of the operator means, for its ID:
// its ruleset, keys and time, not its interval (a new interval applies
// to the intervals open), nor the rules before it.
func (s *Suppress) Identity() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Suppress(ruleset=[%s], %skeys=[", s.Ruleset, s.shadow())
	cols := s.Input.Schema().Columns
	for i, k := range s.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cols[k].Name + " " + cols[k].Type.WithoutTimeAttr().String())
	}
	fmt.Fprintf(&b, "], time=[%s])", s.timeName())
	return b.String()
}

func (s *Suppress) shadow() string {
	if s.Shadow {
		return "shadow=[true], "
	}
	return ""
}

func (s *Suppress) keyNames() string {
	cols := s.Input.Schema().Columns
	names := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		names[i] = cols[k].Name
	}
	return strings.Join(names, ", ")
}

func (s *Suppress) timeName() string {
	if s.TimeCol < 0 {
		return "PROCTIME"
	}
	return s.Input.Schema().Columns[s.TimeCol].Name
}
