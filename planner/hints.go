package planner

import (
	"fmt"
	"maps"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

// Flink's query hints (written after SELECT), by what Sluice does with
// them.
var (
	// joinStrategyHints choose how a join is executed, never what it
	// returns: Sluice plans every join one way and warns that they have
	// no effect.
	joinStrategyHints = []string{"BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "NEST_LOOP"}
	// queryHints are every query hint Flink knows, for suggestions.
	queryHints = append([]string{"LOOKUP", "STATE_TTL"}, joinStrategyHints...)
)

// lookupHintKeys are the options of Flink's LOOKUP hint that change how
// lookups run but not which rows they give: Sluice warns that they have
// no effect. The retry options ('retry-predicate' = 'lookup_miss' ...)
// make a lookup wait for a row that is not there yet, which changes the
// result: a hint with them is refused.
var lookupHintKeys = []string{"table", "async", "output-mode", "capacity", "timeout"}

// checkQueryHints checks the hints written after SELECT. Flink applies
// LOOKUP and STATE_TTL, which change which rows a job gives (a retried
// lookup finds a row that arrives late; a short TTL forgets state): those
// Sluice does not implement are refused, never ignored. Join strategy
// hints, which change only how a join runs, and hints Flink does not
// know, which Flink ignores with a warning, are warned of
// (Planner.Notify).
func (p *Planner) checkQueryHints(hints []*ast.Hint) error {
	for _, h := range hints {
		name := strings.ToUpper(h.Name.Name)
		switch {
		case name == "OPTIONS":
			return p.errorf(h, "OPTIONS is a table hint: write it after the table's name, FROM t /*+ OPTIONS('key' = 'value') */")
		case name == "STATE_TTL":
			return p.errorf(h, "the STATE_TTL hint is not supported: a state time-to-live per operator changes which rows join and aggregate; "+
				"SET '%s' for the whole job instead", config.StateTTL)
		case name == "LOOKUP":
			for _, o := range h.KeyValues {
				if !containsString(lookupHintKeys, o.Key) {
					return p.errorf(o, "LOOKUP hint option '%s' is not supported (a retried lookup changes the rows a lookup join gives); "+
						"Sluice reads the options %s and ignores them%s", o.Key, strings.Join(lookupHintKeys, ", "), hint(o.Key, lookupHintKeys))
				}
			}
			p.warn(h, "the LOOKUP hint has no effect: Sluice looks dimension rows up in one way, which gives the rows the hint's options would")
		case containsString(joinStrategyHints, name):
			p.warn(h, "the join hint %s has no effect: Sluice runs every join one way; the hint would change how a join runs, not its rows", name)
		default:
			p.warn(h, "unknown hint '%s' is ignored, as Flink ignores hints it does not know%s", h.Name.Name, hint(name, queryHints))
		}
	}
	return nil
}

// warn tells Planner.Notify of a warning at n.
func (p *Planner) warn(n ast.Node, format string, args ...any) {
	if p.Notify == nil || p.File == nil {
		return
	}
	p.Notify(p.File.Position(n.Pos()), fmt.Sprintf(format, args...))
}

// hintedTable applies the table hints of one reference to t: the options
// of its OPTIONS hints are merged over the table's WITH options, as
// Flink's dynamic table options ('table.dynamic-table-options.enabled',
// true by default), a later hint's key over an earlier one's. It returns
// t itself without hints, else a copy; the connector checks the merged
// options as it checks the WITH options, and an error about a hinted one
// is positioned at the hint (catalog.Table.HintAt).
func (p *Planner) hintedTable(t *catalog.Table, hints []*ast.Hint) (*catalog.Table, error) {
	if len(hints) == 0 {
		return t, nil
	}
	if err := p.checkTableHints(hints); err != nil {
		return nil, err
	}
	on, err := config.DynamicTableOptionsEnabled(p.Config)
	if err != nil {
		return nil, p.errorf(hints[0], "%s", err.Error())
	}
	if !on {
		return nil, p.errorf(hints[0], "OPTIONS hints are switched off: SET '%s' = 'true' to apply them", config.DynamicTableOptions)
	}
	c := *t
	c.Options = maps.Clone(t.Options)
	c.HintAt = map[string]token.Position{}
	for _, h := range hints {
		for _, o := range h.KeyValues {
			c.Options[o.Key] = o.Value
			c.HintAt[o.Key] = p.File.Position(o.Pos())
		}
	}
	return &c, nil
}

// checkTableHints checks the hints written after a table's name: OPTIONS
// with 'key' = 'value' options is the one table hint.
func (p *Planner) checkTableHints(hints []*ast.Hint) error {
	for _, h := range hints {
		name := strings.ToUpper(h.Name.Name)
		switch {
		case name == "OPTIONS":
			if len(h.List) > 0 || len(h.KeyValues) == 0 {
				return p.errorf(h, "OPTIONS takes 'key' = 'value' options: t /*+ OPTIONS('key' = 'value') */")
			}
		case containsString(queryHints, name):
			return p.errorf(h, "%s is a query hint: write it after SELECT, SELECT /*+ %s(...) */ ...", name, name)
		default:
			return p.errorf(h, "unknown table hint '%s': the table hint is OPTIONS('key' = 'value')%s", h.Name.Name, hint(name, []string{"OPTIONS"}))
		}
	}
	return nil
}

// refuseHints is the error for table hints on a reference that is no
// table (a view or a WITH query), as Flink's.
func (p *Planner) refuseHints(hints []*ast.Hint, what, name string) error {
	if len(hints) == 0 {
		return nil
	}
	return p.errorf(hints[0], "%s '%s' cannot take OPTIONS hints: hints apply to tables only", what, name)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
