package plan

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// LookupJoin is a processing-time temporal join (`JOIN d FOR SYSTEM_TIME
// AS OF l.proc_time ON l.k = d.k`): each row of the append-only input is
// joined, as it arrives, with the rows of the dimension table Table whose
// columns Keys equal the values of KeyExprs, looked up in the table as it
// is at that moment. The dimension is not an input and keeps no state.
// Only INNER and LEFT; the output is the input row followed by the
// dimension row (NULL when a LEFT join finds none), append-only, and it
// keeps the input's time attributes.
type LookupJoin struct {
	Input Node
	Kind  JoinKind
	// Table is the dimension table, as its connector opens it for
	// lookups (physical columns).
	Table connector.Table
	// Alias is the name the query gives the table, for EXPLAIN.
	Alias string
	// Keys are the dimension columns looked up, in ascending order: the
	// key set the dimension is indexed by.
	Keys []int
	// KeyExprs compute, from an input row, the value each of Keys must
	// equal: an input column or a constant.
	KeyExprs []expr.Node
	// Residual, if set, is the rest of ON, over the output row.
	Residual expr.Node
	Out      types.Schema
	// HintAt holds the options of Table that an OPTIONS hint set, at the
	// hint's key, for positioned errors.
	HintAt map[string]token.Position
}

// Schema implements Node.
func (j *LookupJoin) Schema() types.Schema { return j.Out }

// Inputs implements Node: the dimension table is looked up, not read.
func (j *LookupJoin) Inputs() []Node { return []Node{j.Input} }

// Updating implements Node: each input row is joined once, as it arrives.
func (j *LookupJoin) Updating() bool { return false }

// Describe implements Node, in Flink's form: lookup=[dimension column =
// input column or constant].
func (j *LookupJoin) Describe() string {
	in := j.Input.Schema()
	keys := make([]string, len(j.Keys))
	for i, k := range j.Keys {
		v := j.KeyExprs[i].String()
		if c, ok := j.KeyExprs[i].(*expr.Column); ok {
			v = in.Columns[c.Index].Name
		}
		keys[i] = j.Table.Schema.Columns[k].Name + "=" + v
	}
	where := ""
	if j.Residual != nil {
		where = ", where=[" + j.Residual.String() + "]"
	}
	return fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s]%s, select=[%s])",
		j.Table.Name, j.Kind, strings.Join(keys, ", "), where, strings.Join(j.Out.Names(), ", "))
}

// WithInputs implements Node.
func (j *LookupJoin) WithInputs(ins []Node) Node {
	x := *j
	x.Input = ins[0]
	return &x
}
