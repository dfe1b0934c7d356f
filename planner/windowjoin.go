package planner

import (
	"slices"

	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
)

// windowJoin recognizes a window join: two windowed inputs whose join keys
// pair their window_start columns and their window_end columns. It takes
// those two pairs out of j's keys and returns the WindowJoin (its Join to
// be filled in), or nil for another kind of join. It refuses a join that
// pairs only one of the bounds, and windows that differ.
func (p *Planner) windowJoin(on ast.Node, j *plan.Join) (*plan.WindowJoin, error) {
	lw, lok := windowPropsOf(j.Left)
	rw, rok := windowPropsOf(j.Right)
	if !lok || !rok {
		return nil, nil
	}
	starts, ends := -1, -1
	for i := range j.LeftKeys {
		if j.NullAware && i == len(j.LeftKeys)-1 {
			break // NOT IN's pair: no window bound, and stays last
		}
		l, r := j.LeftKeys[i], j.RightKeys[i]
		switch {
		case slices.Contains(lw.starts, l) && slices.Contains(rw.starts, r) && starts < 0:
			starts = i
		case slices.Contains(lw.ends, l) && slices.Contains(rw.ends, r) && ends < 0:
			ends = i
		}
	}
	if starts < 0 && ends < 0 {
		return nil, nil
	}
	if starts < 0 || ends < 0 {
		has, lacks := "window_end", "window_start"
		if ends < 0 {
			has, lacks = lacks, has
		}
		return nil, p.errorf(on, "the join condition equates the two sides' %s but not their %s: a window join must equate both (l.window_start = r.window_start AND l.window_end = r.window_end)",
			has, lacks)
	}
	if lw.spec != rw.spec {
		if l, r := lw.spec, rw.spec; l.LTZ != r.LTZ {
			l.LTZ, r.LTZ = false, false
			if l == r {
				return nil, p.errorf(on, "a window join needs the same window on both sides, but one side's windows are over a TIMESTAMP_LTZ time attribute (aligned in the session time zone) and the other's over a TIMESTAMP one: declare both time attributes with the same type")
			}
		}
		return nil, p.errorf(on, "a window join needs the same window on both sides, but the left input has %s and the right one %s",
			lw.spec, rw.spec)
	}
	if lw.spec.Kind == window.Session {
		return nil, p.errorf(on, "window joins over SESSION windows are not supported: use TUMBLE, HOP or CUMULATE")
	}
	wj := &plan.WindowJoin{Spec: lw.spec, LeftStart: j.LeftKeys[starts], LeftEnd: j.LeftKeys[ends],
		RightStart: j.RightKeys[starts], RightEnd: j.RightKeys[ends]}
	var lk, rk []int
	for i := range j.LeftKeys {
		if i != starts && i != ends {
			lk = append(lk, j.LeftKeys[i])
			rk = append(rk, j.RightKeys[i])
		}
	}
	j.LeftKeys, j.RightKeys = lk, rk
	return wj, nil
}
