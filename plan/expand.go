package plan

import (
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// Expand emits, for each input row, one row per grouping set of a GROUP BY
// with GROUPING SETS, ROLLUP or CUBE (Calcite's and Flink's Expand): the
// input columns, with NULL in the grouping columns that the set does not
// group by, then the expand id ($e) that names the set, then copies of
// grouping columns that aggregate calls read (which must see the value
// even where the set puts NULL). The aggregation above groups by the
// grouping columns and $e. Each output row keeps the input row's kind.
type Expand struct {
	Input Node
	// Projects has one entry per grouping set: for each output column, the
	// input column it copies, or -1 for NULL. The entry of the IDCol
	// column is -1: that column holds IDs[i].
	Projects [][]int
	// IDs are the expand ids, one per entry of Projects.
	IDs []int64
	// IDCol is the output column of the expand id.
	IDCol int
	Out   types.Schema
}

// Schema implements Node.
func (e *Expand) Schema() types.Schema { return e.Out }

// Inputs implements Node.
func (e *Expand) Inputs() []Node { return []Node{e.Input} }

// Updating implements Node: each input row's kind is kept.
func (e *Expand) Updating() bool { return e.Input.Updating() }

// Describe implements Node, as Flink prints it: Expand(projects=[{a, null
// AS b, 1 AS $e}, ...]).
func (e *Expand) Describe() string {
	in := e.Input.Schema()
	var b strings.Builder
	b.WriteString("Expand(projects=[")
	for i, proj := range e.Projects {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('{')
		for j, c := range proj {
			if j > 0 {
				b.WriteString(", ")
			}
			name := e.Out.Columns[j].Name
			switch {
			case j == e.IDCol:
				b.WriteString(strconv.FormatInt(e.IDs[i], 10) + " AS " + name)
			case c < 0:
				b.WriteString("null AS " + name)
			case in.Columns[c].Name == name:
				b.WriteString(name)
			default:
				b.WriteString(in.Columns[c].Name + " AS " + name)
			}
		}
		b.WriteByte('}')
	}
	b.WriteString("])")
	return b.String()
}

// WithInputs implements Node.
func (e *Expand) WithInputs(ins []Node) Node {
	x := *e
	x.Input = ins[0]
	return &x
}
