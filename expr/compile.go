package expr

import (
	"fmt"
	"slices"
	"time"

	"github.com/sluicesql/sluice/types"
)

// Env is what compiled expressions may read besides the row: the clock and
// the session time zone.
type Env struct {
	// Now returns the current time in microseconds since the epoch (for
	// CURRENT_TIMESTAMP, NOW, PROCTIME ...). Nil means the wall clock.
	Now func() int64
	// Location is the session time zone (table.local-time-zone); nil
	// means UTC. It applies to TIMESTAMP_LTZ conversions and to the
	// functions that read the local date or time.
	Location *time.Location
}

// Eval evaluates a compiled expression over one input row. An Eval may keep
// per-instance scratch state (buffers, regular expression caches, random
// generators): it is not safe for concurrent use. Compile one per worker.
// Runtime failures (integer division by zero, a CAST that cannot convert)
// are returned as errors; the row values are never modified.
type Eval func(row []types.Value) (types.Value, error)

// tri is a three-valued truth value.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

var triValues = [...]types.Value{triFalse: types.BoolValue(false), triTrue: types.BoolValue(true), triNull: types.NullValue}

// triEval evaluates a BOOLEAN expression to a three-valued result without
// building a Value.
type triEval func(row []types.Value) (tri, error)

// compiler carries the environment while a tree is compiled.
type compiler struct {
	loc *time.Location
	now func() int64
	// cse, if set, shares repeated sub-expressions (see cse.go).
	cse *cse
	// check is set by Check: what is compiled is never evaluated.
	check bool
}

func newCompiler(env *Env) *compiler {
	c := &compiler{loc: time.UTC, now: func() int64 { return time.Now().UnixMicro() }}
	if env != nil {
		if env.Location != nil {
			c.loc = env.Location
		}
		if env.Now != nil {
			c.now = env.Now
		}
	}
	return c
}

// Compile compiles n into a closure. Constant sub-expressions are folded
// first, so constant patterns (LIKE, REGEXP, DATE_FORMAT formats) and IN
// lists are prepared once here and never per row.
func Compile(n Node, env *Env) (Eval, error) {
	c := newCompiler(env)
	n = c.fold(n)
	c.cse = planCSE([]Node{n})
	e, err := c.compile(n)
	if err != nil || c.cse == nil {
		return e, err
	}
	s := c.cse
	return func(row []types.Value) (types.Value, error) {
		s.nextRow()
		return e(row)
	}, nil
}

// Check returns the error Compile returns for n, without preparing what
// only evaluating n needs: a constant regular expression is parsed, not
// compiled. The planner checks every call with a constant argument (a
// pattern, a format) so that a bad one is reported where it is written,
// and a rule set has thousands.
func Check(n Node, env *Env) error {
	c := newCompiler(env)
	n = c.fold(n) // evaluates constant calls: not checked only
	c.check = true
	_, err := c.compile(n)
	return err
}

// CompilePredicate compiles a BOOLEAN expression into a filter: it returns
// true only when the expression is TRUE (NULL and FALSE give false).
func CompilePredicate(n Node, env *Env) (func(row []types.Value) (bool, error), error) {
	if k := n.Type().Kind; k != types.KindBoolean && k != types.KindNull {
		return nil, fmt.Errorf("cannot use %s as a condition: it is %s, not BOOLEAN", n, plain(n.Type()))
	}
	c := newCompiler(env)
	n = c.fold(n)
	c.cse = planCSE([]Node{n})
	t, err := c.compileTri(n)
	if err != nil {
		return nil, err
	}
	if s := c.cse; s != nil {
		return func(row []types.Value) (bool, error) {
			s.nextRow()
			r, err := t(row)
			return r == triTrue, err
		}, nil
	}
	return func(row []types.Value) (bool, error) {
		r, err := t(row)
		return r == triTrue, err
	}, nil
}

// Program is a filter and projections compiled together over the same
// input row, as a Calc evaluates them: a deterministic sub-expression
// that occurs more than once among them is evaluated at most once per row
// (see cse.go).
type Program struct {
	// Filter is the compiled condition (see CompilePredicate), nil when
	// there is none.
	Filter func(row []types.Value) (bool, error)
	// Projs are the compiled projections, in order.
	Projs []Eval
	// NextRow, when not nil, must be called before the filter or any
	// projection is evaluated over a new row (or over a row whose values
	// changed): it forgets the shared values of the previous one.
	NextRow func()
}

// CompileProgram compiles filter (nil for none) and projs into one
// Program; see Program.
func CompileProgram(filter Node, projs []Node, env *Env) (*Program, error) {
	if filter != nil {
		if k := filter.Type().Kind; k != types.KindBoolean && k != types.KindNull {
			return nil, fmt.Errorf("cannot use %s as a condition: it is %s, not BOOLEAN", filter, plain(filter.Type()))
		}
	}
	c := newCompiler(env)
	roots := make([]Node, 0, len(projs)+1)
	if filter != nil {
		filter = c.fold(filter)
		roots = append(roots, filter)
	}
	for _, p := range projs {
		roots = append(roots, c.fold(p))
	}
	c.cse = planCSE(roots)
	p := &Program{}
	if filter != nil {
		t, err := c.compileTri(roots[0])
		if err != nil {
			return nil, err
		}
		p.Filter = func(row []types.Value) (bool, error) {
			r, err := t(row)
			return r == triTrue, err
		}
		roots = roots[1:]
	}
	p.Projs = make([]Eval, len(roots))
	for i, r := range roots {
		e, err := c.compile(r)
		if err != nil {
			return nil, err
		}
		p.Projs[i] = e
	}
	if c.cse != nil {
		p.NextRow = c.cse.nextRow
	}
	return p, nil
}

// Fold replaces constant sub-expressions of n (see IsConstant) by their
// values, and simplifies AND/OR with a constant FALSE/TRUE operand. A
// constant whose evaluation fails (1/0) is left in place: the error then
// surfaces when a row is evaluated, as in Flink. A sub-expression with
// nothing to fold is returned as it is, not copied (nodes are never
// changed once built).
func Fold(n Node, env *Env) (Node, error) {
	return newCompiler(env).fold(n), nil
}

func (c *compiler) fold(n Node) Node {
	switch x := n.(type) {
	case *Column, *Literal:
		return n
	case *Call:
		var args []Node // made when an operand folds to another node
		allLit := true
		for i, a := range x.Args {
			f := c.fold(a)
			if f != a && args == nil {
				args = slices.Clone(x.Args)
			}
			if args != nil {
				args[i] = f
			}
			if _, ok := f.(*Literal); !ok {
				allLit = false
			}
		}
		y := x
		if args != nil {
			y = &Call{Name: x.Name, Fn: x.Fn, Args: args, T: x.T}
		}
		if s := simplifyLogic(y); s != nil {
			return s
		}
		if allLit && x.Fn != nil && !x.Fn.NonDeterministic {
			return c.evalConst(y)
		}
		return y
	case *Cast:
		y := x
		if f := c.fold(x.X); f != x.X {
			y = &Cast{X: f, T: x.T, Try: x.Try}
		}
		if _, ok := y.X.(*Literal); ok {
			return c.evalConst(y)
		}
		return y
	case *Case:
		y := &Case{T: x.T, Whens: make([]Node, len(x.Whens)), Thens: make([]Node, len(x.Thens))}
		allLit := true
		lit := func(n Node) Node {
			if n == nil {
				return nil
			}
			f := c.fold(n)
			if _, ok := f.(*Literal); !ok {
				allLit = false
			}
			return f
		}
		if x.Operand != nil {
			y.Operand = lit(x.Operand)
		}
		for i := range x.Whens {
			y.Whens[i] = lit(x.Whens[i])
			y.Thens[i] = lit(x.Thens[i])
		}
		y.Else = lit(x.Else)
		if allLit {
			return c.evalConst(y)
		}
		return y
	}
	return n
}

// simplifyLogic folds AND with a FALSE operand and OR with a TRUE operand.
func simplifyLogic(call *Call) Node {
	if call.Fn == nil || call.Fn.builtin == nil || (call.Name != "AND" && call.Name != "OR") {
		return nil
	}
	absorb := call.Name == "OR" // OR absorbs TRUE, AND absorbs FALSE
	for _, a := range call.Args {
		if l, ok := a.(*Literal); ok && l.V.Kind() == types.KindBoolean && l.V.Bool() == absorb {
			return &Literal{V: types.BoolValue(absorb), T: types.Boolean.WithNullable(false)}
		}
	}
	return nil
}

// evalConst evaluates a node with literal operands; on failure it returns
// the node unchanged.
func (c *compiler) evalConst(n Node) Node {
	e, err := c.compile(n)
	if err != nil {
		return n
	}
	v, err := e(nil)
	if err != nil {
		return n
	}
	t := n.Type()
	if v.IsNull() {
		t = t.WithNullable(true)
	}
	return &Literal{V: v, T: t}
}

func (c *compiler) compile(n Node) (Eval, error) {
	if c.cse != nil {
		if sl, ok := c.cse.shared[n]; ok {
			return c.compileShared(n, sl)
		}
	}
	return c.compileNode(n)
}

// compileNode compiles n itself, even where it is a shared sub-expression.
func (c *compiler) compileNode(n Node) (Eval, error) {
	switch x := n.(type) {
	case *Column:
		idx := x.Index
		return func(row []types.Value) (types.Value, error) { return row[idx], nil }, nil
	case *Literal:
		v := x.V
		return func([]types.Value) (types.Value, error) { return v, nil }, nil
	case *Cast:
		return c.compileCast(x)
	case *Case:
		return c.compileCase(x)
	case *Call:
		if x.Fn == nil {
			return nil, fmt.Errorf("cannot compile %s: the call is not bound to a function", x.Name)
		}
		if x.Fn.builtin == nil {
			return c.compileUser(x)
		}
		if x.Fn.builtin.tri != nil {
			t, err := x.Fn.builtin.tri(c, x)
			if err != nil {
				return nil, err
			}
			return triToEval(t), nil
		}
		args, err := c.compileAll(x.Args)
		if err != nil {
			return nil, err
		}
		return x.Fn.builtin.compile(c, x, args)
	case nil:
		return nil, fmt.Errorf("cannot compile a missing expression")
	}
	return nil, fmt.Errorf("cannot compile expression node %T", n)
}

func (c *compiler) compileAll(ns []Node) ([]Eval, error) {
	out := make([]Eval, len(ns))
	for i, a := range ns {
		e, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func triToEval(t triEval) Eval {
	return func(row []types.Value) (types.Value, error) {
		r, err := t(row)
		if err != nil {
			return types.NullValue, err
		}
		return triValues[r], nil
	}
}

// compileTri compiles a BOOLEAN expression into a three-valued evaluator.
func (c *compiler) compileTri(n Node) (triEval, error) {
	if c.cse != nil {
		if _, ok := c.cse.shared[n]; ok {
			e, err := c.compile(n)
			if err != nil {
				return nil, err
			}
			return evalToTri(e), nil
		}
	}
	if x, ok := n.(*Call); ok && x.Fn != nil && x.Fn.builtin != nil && x.Fn.builtin.tri != nil {
		return x.Fn.builtin.tri(c, x)
	}
	if l, ok := n.(*Literal); ok {
		r := triNull
		if l.V.Kind() == types.KindBoolean {
			r = triOf(l.V.Bool())
		}
		return func([]types.Value) (tri, error) { return r, nil }, nil
	}
	if col, ok := n.(*Column); ok {
		idx := col.Index
		return func(row []types.Value) (tri, error) {
			v := row[idx]
			if v.IsNull() {
				return triNull, nil
			}
			return triOf(v.Bool()), nil
		}, nil
	}
	e, err := c.compile(n)
	if err != nil {
		return nil, err
	}
	return evalToTri(e), nil
}

func evalToTri(e Eval) triEval {
	return func(row []types.Value) (tri, error) {
		v, err := e(row)
		if err != nil || v.IsNull() {
			return triNull, err
		}
		return triOf(v.Bool()), nil
	}
}

func (c *compiler) compileCast(n *Cast) (Eval, error) {
	x, err := c.compile(n.X)
	if err != nil {
		return nil, err
	}
	from, to := n.X.Type(), n.T
	if from.Kind == types.KindNull {
		return func(row []types.Value) (types.Value, error) {
			_, err := x(row)
			return types.NullValue, err
		}, nil
	}
	if from.SameKind(to.WithoutTimeAttr()) || from.WithoutTimeAttr().SameKind(to) {
		return x, nil
	}
	fk, tk := from.Kind, to.Kind
	switch {
	case fk.IsInteger() && tk.IsInteger() && fk <= tk:
		// Widening: the representation is the same.
		// Build the result from its fields rather than copying the Value:
		// it is measurably faster than relabelling a copy.
		return func(row []types.Value) (types.Value, error) {
			v, err := x(row)
			if err != nil || v.IsNull() {
				return types.NullValue, err
			}
			return types.IntValue(tk, v.Int()), nil
		}, nil
	case fk.IsInteger() && tk == types.KindDouble:
		return func(row []types.Value) (types.Value, error) {
			v, err := x(row)
			if err != nil || v.IsNull() {
				return types.NullValue, err
			}
			return types.DoubleValue(float64(v.Int())), nil
		}, nil
	case fk == types.KindFloat && tk == types.KindDouble:
		return func(row []types.Value) (types.Value, error) {
			v, err := x(row)
			if err != nil || v.IsNull() {
				return types.NullValue, err
			}
			return types.DoubleValue(v.Float()), nil
		}, nil
	case fk.IsString() && tk == types.KindVarChar && (to.Precision == types.MaxLength || to.Precision >= from.Precision && fk == types.KindChar):
		return func(row []types.Value) (types.Value, error) {
			v, err := x(row)
			return v.WithKind(types.KindVarChar), err
		}, nil
	}
	loc, try := c.loc, n.Try
	return func(row []types.Value) (types.Value, error) {
		v, err := x(row)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		r, err := types.CastIn(v, from, to, loc)
		if err != nil {
			if try {
				return types.NullValue, nil
			}
			return types.NullValue, err
		}
		return r, nil
	}, nil
}

func (c *compiler) compileCase(n *Case) (Eval, error) {
	if n.Operand != nil {
		return nil, fmt.Errorf("cannot compile CASE with an operand: build it with Builder.Case")
	}
	whens := make([]triEval, len(n.Whens))
	thens := make([]Eval, len(n.Thens))
	for i := range n.Whens {
		w, err := c.compileTri(n.Whens[i])
		if err != nil {
			return nil, err
		}
		t, err := c.compile(n.Thens[i])
		if err != nil {
			return nil, err
		}
		whens[i], thens[i] = w, t
	}
	var els Eval
	if n.Else != nil {
		var err error
		if els, err = c.compile(n.Else); err != nil {
			return nil, err
		}
	}
	return func(row []types.Value) (types.Value, error) {
		for i, w := range whens {
			r, err := w(row)
			if err != nil {
				return types.NullValue, err
			}
			if r == triTrue {
				return thens[i](row)
			}
		}
		if els != nil {
			return els(row)
		}
		return types.NullValue, nil
	}, nil
}

func (c *compiler) compileUser(n *Call) (Eval, error) {
	args, err := c.compileAll(n.Args)
	if err != nil {
		return nil, err
	}
	f := n.Fn
	eval := f.Eval
	if f.Instantiate != nil {
		if eval, err = f.Instantiate(); err != nil {
			return nil, fmt.Errorf("cannot prepare %s: %w", f.Name, err)
		}
	}
	scratch := make([]types.Value, len(args))
	return func(row []types.Value) (types.Value, error) {
		for i, a := range args {
			v, err := a(row)
			if err != nil {
				return types.NullValue, err
			}
			if v.IsNull() && !f.CallOnNull {
				clear(scratch)
				return types.NullValue, nil
			}
			scratch[i] = v
		}
		v, err := eval(scratch)
		clear(scratch)
		if err != nil {
			return types.NullValue, fmt.Errorf("cannot evaluate %s: %w", f.Name, err)
		}
		return v, nil
	}, nil
}

// CompileTable compiles a table function call: the returned function
// evaluates the arguments over an input row and emits the function's rows.
func CompileTable(t *TableCall, env *Env) (func(row []types.Value, emit func([]types.Value) error) error, error) {
	c := newCompiler(env)
	args := make([]Eval, len(t.Args))
	for i, a := range t.Args {
		e, err := c.compile(c.fold(a))
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	f := t.Fn
	eval := f.Eval
	if f.Instantiate != nil {
		var err error
		if eval, err = f.Instantiate(); err != nil {
			return nil, fmt.Errorf("cannot prepare %s: %w", f.Name, err)
		}
	}
	scratch := make([]types.Value, len(args))
	return func(row []types.Value, emit func([]types.Value) error) error {
		for i, a := range args {
			v, err := a(row)
			if err != nil {
				return err
			}
			scratch[i] = v
		}
		if err := eval(scratch, emit); err != nil {
			return fmt.Errorf("cannot evaluate %s: %w", f.Name, err)
		}
		return nil
	}, nil
}

// strict1 wraps a one-argument function: NULL in, NULL out.
func strict1(a Eval, f func(v types.Value) (types.Value, error)) Eval {
	return func(row []types.Value) (types.Value, error) {
		v, err := a(row)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		return f(v)
	}
}

// strict2 wraps a two-argument function: NULL if either argument is NULL.
func strict2(a, b Eval, f func(x, y types.Value) (types.Value, error)) Eval {
	return func(row []types.Value) (types.Value, error) {
		x, err := a(row)
		if err != nil || x.IsNull() {
			return types.NullValue, err
		}
		y, err := b(row)
		if err != nil || y.IsNull() {
			return types.NullValue, err
		}
		return f(x, y)
	}
}

// strictN wraps an n-argument function: NULL if any argument is NULL. The
// argument slice passed to f is reused between rows.
func strictN(args []Eval, f func(vs []types.Value) (types.Value, error)) Eval {
	scratch := make([]types.Value, len(args))
	return func(row []types.Value) (types.Value, error) {
		for i, a := range args {
			v, err := a(row)
			if err != nil || v.IsNull() {
				return types.NullValue, err
			}
			scratch[i] = v
		}
		return f(scratch)
	}
}

// lazyN wraps an n-argument function that sees NULL arguments.
func lazyN(args []Eval, f func(vs []types.Value) (types.Value, error)) Eval {
	scratch := make([]types.Value, len(args))
	return func(row []types.Value) (types.Value, error) {
		for i, a := range args {
			v, err := a(row)
			if err != nil {
				return types.NullValue, err
			}
			scratch[i] = v
		}
		return f(scratch)
	}
}

// constArg returns the value of argument i when it is a literal.
func constArg(call *Call, i int) (types.Value, bool) {
	if i >= len(call.Args) {
		return types.NullValue, false
	}
	if l, ok := call.Args[i].(*Literal); ok {
		return l.V, true
	}
	return types.NullValue, false
}

// evalErr wraps a runtime error with the expression that failed.
func evalErr(call *Call, err error) error {
	return fmt.Errorf("cannot evaluate %s: %w", call, err)
}
