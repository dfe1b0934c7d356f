package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// windowSpecs resolves the window of each OVER call of a select list: its
// own OVER (...), a window of the WINDOW clause (OVER w), or one refined
// (OVER (w ORDER BY ... ROWS ...)).
func (p *Planner) windowSpecs(calls []*ast.Call, windows []*ast.NamedWindow) (map[*ast.Call]*ast.WindowSpec, error) {
	seen := map[string]bool{}
	for _, w := range windows {
		name := strings.ToLower(w.Name.Name)
		if seen[name] {
			return nil, p.errorf(w.Name, "window '%s' is defined twice", w.Name.Name)
		}
		seen[name] = true
	}
	out := map[*ast.Call]*ast.WindowSpec{}
	for _, c := range calls {
		var spec *ast.WindowSpec
		var err error
		if c.OverName != nil {
			spec, err = p.namedWindow(c.OverName, windows, 0)
		} else {
			spec, err = p.refineWindow(c.Over, windows, 0)
		}
		if err != nil {
			return nil, err
		}
		out[c] = spec
	}
	return out, nil
}

func (p *Planner) namedWindow(id *ast.Ident, windows []*ast.NamedWindow, depth int) (*ast.WindowSpec, error) {
	var names []string
	for _, w := range windows {
		if strings.EqualFold(w.Name.Name, id.Name) {
			if depth > len(windows) {
				return nil, p.errorf(id, "window '%s' refers to itself", id.Name)
			}
			return p.refineWindow(w.Spec, windows, depth+1)
		}
		names = append(names, w.Name.Name)
	}
	return nil, p.errorf(id, "unknown window '%s'%s", id.Name, hint(id.Name, names))
}

// refineWindow resolves a window that names another one: it takes the
// other's PARTITION BY and ORDER BY and adds its own ORDER BY or frame.
func (p *Planner) refineWindow(spec *ast.WindowSpec, windows []*ast.NamedWindow, depth int) (*ast.WindowSpec, error) {
	if spec.Name == nil {
		return spec, nil
	}
	base, err := p.namedWindow(spec.Name, windows, depth)
	if err != nil {
		return nil, err
	}
	name := spec.Name.Name
	switch {
	case len(spec.PartitionBy) > 0:
		return nil, p.errorf(spec.PartitionBy[0], "cannot override the PARTITION BY of window '%s'", name)
	case len(spec.OrderBy) > 0 && len(base.OrderBy) > 0:
		return nil, p.errorf(spec.OrderBy[0], "cannot override the ORDER BY of window '%s'", name)
	case base.Frame != nil:
		return nil, p.errorf(spec.Name, "cannot refine window '%s': it has a frame", name)
	}
	out := &ast.WindowSpec{Span: spec.Span, PartitionBy: base.PartitionBy, OrderBy: base.OrderBy, Frame: spec.Frame}
	if len(spec.OrderBy) > 0 {
		out.OrderBy = spec.OrderBy
	}
	return out, nil
}

// overWindow is a bound window of an OVER aggregation.
type overWindow struct {
	partition []int // columns of the pre-projection
	timeCol   int
	rows      bool
	preceding int64 // -1: unbounded
	text      string
}

// bindOverAgg plans the aggregate calls f(...) OVER (...) of a select list
// over in: a pre-projection that adds the computed arguments and partition
// keys to the input row, and an OverAggregate after it. All calls must
// share one window. It returns the column of each call in the new scope.
func (p *Planner) bindOverAgg(calls []*ast.Call, specs map[*ast.Call]*ast.WindowSpec, in plan.Node, sc *scope) (plan.Node, *scope, map[*ast.Call]int, error) {
	if in.Updating() {
		kind, _, _ := strings.Cut(updatingFrom(in).Describe(), "(")
		return nil, nil, nil, p.errorf(calls[0], "OVER aggregation takes an append-only input, but its input is updating (%s): "+
			"it cannot consume updates and deletes", kind)
	}
	ac := &aggCollector{p: p, in: sc, preIx: map[string]int{}, fps: map[string]int{}, columns: true,
		pre: identity(sc.schema())}
	var win *overWindow
	for _, c := range calls {
		name := strings.ToUpper(c.Name.Last().Name)
		if !p.Aggs.Has(name) || len(c.Name.Parts) != 1 {
			return nil, nil, nil, p.errorf(c, "%s OVER is not supported: OVER windows take aggregate functions "+
				"(SUM, COUNT, AVG, MIN, MAX, ...), and ROW_NUMBER() for Top-N", name)
		}
		w, err := p.bindOverWindow(specs[c], ac)
		if err != nil {
			return nil, nil, nil, err
		}
		if win == nil {
			win = w
		} else if w.text != win.text {
			return nil, nil, nil, p.errorf(c, "OVER aggregates with different window specs are not supported: "+
				"every OVER aggregate of a SELECT must use the same window (PARTITION BY, ORDER BY and frame)")
		}
		if err := ac.add(c); err != nil {
			return nil, nil, nil, err
		}
	}
	// The pre-projection, when arguments or keys are computed.
	width := len(sc.cols)
	var input plan.Node = in
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	if len(ac.pre) > width {
		calc := &plan.Calc{Input: in, Projs: ac.pre, Out: sc.schema()}
		for i, n := range ac.pre[width:] {
			name := "$" + strconv.Itoa(width+i)
			typ := n.Type().WithoutTimeAttr()
			calc.Out.Columns = append(calc.Out.Columns, types.Column{Name: name, Type: typ})
			out.cols = append(out.cols, scopeCol{name: name, typ: typ, hidden: true})
		}
		input = calc
	}
	o := &plan.OverAggregate{Input: input, Partition: win.partition, TimeCol: win.timeCol, Rows: win.rows,
		Preceding: win.preceding, Calls: ac.calls, Out: input.Schema()}
	o.Out.Columns = append([]types.Column(nil), o.Out.Columns...)
	first := len(out.cols)
	for i, call := range ac.calls {
		name := fmt.Sprintf("w0$o%d", i)
		o.Out.Columns = append(o.Out.Columns, types.Column{Name: name, Type: call.Result})
		out.cols = append(out.cols, scopeCol{name: name, typ: call.Result, hidden: true})
	}
	over := map[*ast.Call]int{}
	for _, c := range calls {
		fp, err := p.aggFingerprint(c, sc)
		if err != nil {
			return nil, nil, nil, err
		}
		over[c] = first + ac.fps[fp]
	}
	return o, out, over, nil
}

// updatingFrom returns the node whose updates an updating node passes on:
// the first one down its updating inputs that has none.
func updatingFrom(n plan.Node) plan.Node {
	for _, in := range n.Inputs() {
		if in.Updating() {
			return updatingFrom(in)
		}
	}
	return n
}

// bindOverWindow binds the window of an OVER aggregation: PARTITION BY
// expressions (computed by the pre-projection), ORDER BY one time
// attribute ascending, and a frame that ends at the current row.
func (p *Planner) bindOverWindow(spec *ast.WindowSpec, ac *aggCollector) (*overWindow, error) {
	w := &overWindow{preceding: -1}
	var text strings.Builder
	for _, e := range spec.PartitionBy {
		n, err := p.bindExpr(e, ac.in)
		if err != nil {
			return nil, err
		}
		w.partition = append(w.partition, ac.preCol(n))
		fmt.Fprintf(&text, "%d,", w.partition[len(w.partition)-1])
	}
	if len(spec.OrderBy) == 0 {
		return nil, p.errorf(spec, "OVER aggregation needs ORDER BY a time attribute (a rowtime or PROCTIME() column) in its window")
	}
	if len(spec.OrderBy) > 1 {
		return nil, p.errorf(spec.OrderBy[1], "the window of an OVER aggregation can only be ordered by a single time attribute")
	}
	o := spec.OrderBy[0]
	n, err := p.bindExpr(o.Expr, ac.in)
	if err != nil {
		return nil, err
	}
	col, ok := n.(*expr.Column)
	if !ok || n.Type().TimeAttr == types.NoTimeAttr {
		return nil, p.errorf(o.Expr, "OVER windows' ordering in stream mode must be defined on a time attribute: "+
			"'%s' is %s, not a rowtime or PROCTIME() column", ast.Format(o.Expr), n.Type().WithoutTimeAttr())
	}
	if o.Desc {
		return nil, p.errorf(o, "the window of an OVER aggregation can only be ordered ascending by its time attribute")
	}
	w.timeCol = col.Index
	if f := spec.Frame; f != nil {
		w.rows = f.Rows
		if f.End != nil && f.End.Kind != "CURRENT ROW" {
			return nil, p.errorf(f.End, "OVER windows with %s are not supported: the frame must end at CURRENT ROW", f.End.Kind)
		}
		switch s := f.Start; s.Kind {
		case "UNBOUNDED PRECEDING":
		case "CURRENT ROW":
			w.preceding = 0
		case "PRECEDING":
			if f.Rows {
				if w.preceding, err = p.constInt(s.Offset, "ROWS ... PRECEDING"); err != nil {
					return nil, err
				}
				break
			}
			n, err := p.bindExpr(s.Offset, &scope{})
			if err != nil {
				return nil, err
			}
			if n.Type().Kind != types.KindIntervalDayTime {
				return nil, p.errorf(s.Offset, "RANGE ... PRECEDING over a time attribute takes an INTERVAL like INTERVAL '1' MINUTE, not %s", n.Type())
			}
			if w.preceding, err = p.intervalValue(s.Offset, n); err != nil {
				return nil, err
			}
			if w.preceding < 0 {
				return nil, p.errorf(s.Offset, "RANGE ... PRECEDING takes a non-negative interval")
			}
		default:
			return nil, p.errorf(s, "OVER windows with %s are not supported: the frame must start before the current row", s.Kind)
		}
	}
	fmt.Fprintf(&text, "|%d|%v|%d", w.timeCol, w.rows, w.preceding)
	w.text = text.String()
	return w, nil
}
