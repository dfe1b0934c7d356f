package plan

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/exec/window"
)

// WindowJoin joins two inputs windowed by the same window (each a window
// table function or a window aggregation over one, perhaps filtered or
// projected): rows join when they are in the same window (equal
// window_start and window_end) and their keys are equal. Each window's
// rows are joined once, when the watermark passes the window's end, and
// then freed; the output is append-only. Its Join's keys are the keys
// other than the window bounds (perhaps none); SemiJoin and AntiJoin
// output the left row only.
type WindowJoin struct {
	Join
	Spec window.Spec
	// LeftStart, LeftEnd, RightStart and RightEnd are the window_start and
	// window_end columns of each side.
	LeftStart, LeftEnd, RightStart, RightEnd int
}

// Updating implements Node: each window's result is emitted once.
func (j *WindowJoin) Updating() bool { return false }

// Describe implements Node.
func (j *WindowJoin) Describe() string {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	win := func(s fmt.Stringer, start, end string) string {
		str := s.String()
		i := strings.IndexByte(str, '(')
		return fmt.Sprintf("%s(win_start=[%s], win_end=[%s], %s", str[:i], start, end, str[i+1:])
	}
	d := j.Join.Describe()
	windows := fmt.Sprintf("leftWindow=[%s], rightWindow=[%s], ",
		win(j.Spec, ls.Columns[j.LeftStart].Name, ls.Columns[j.LeftEnd].Name),
		win(j.Spec, rs.Columns[j.RightStart].Name, rs.Columns[j.RightEnd].Name))
	d = strings.Replace(strings.TrimPrefix(d, "Join("), "joinType=", windows+"joinType=", 1)
	if len(j.LeftKeys) == 0 && j.Residual == nil {
		d = strings.Replace(d, "where=[], ", "", 1)
	}
	return "WindowJoin(" + d
}

// WithInputs implements Node.
func (j *WindowJoin) WithInputs(ins []Node) Node {
	x := *j
	x.Left, x.Right = ins[0], ins[1]
	return &x
}
