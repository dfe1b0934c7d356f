package expr

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/types"
)

type cmpOp uint8

const (
	opEQ cmpOp = iota
	opNE
	opLT
	opLE
	opGT
	opGE
)

var cmpOps = map[string]cmpOp{"=": opEQ, "<>": opNE, "<": opLT, "<=": opLE, ">": opGT, ">=": opGE}

// test applies the operator to a three-way comparison result.
func (o cmpOp) test(c int) bool {
	switch o {
	case opEQ:
		return c == 0
	case opNE:
		return c != 0
	case opLT:
		return c < 0
	case opLE:
		return c <= 0
	case opGT:
		return c > 0
	}
	return c >= 0
}

// testFloat applies the operator as Java does for doubles: every comparison
// with NaN is false except <>.
func (o cmpOp) testFloat(a, b float64) bool {
	switch o {
	case opEQ:
		return a == b
	case opNE:
		return a != b
	case opLT:
		return a < b
	case opLE:
		return a <= b
	case opGT:
		return a > b
	}
	return a >= b
}

// cmpMode is how two comparable values are compared.
type cmpMode uint8

const (
	modeInt     cmpMode = iota // both read as int64 (integers, dates, times, timestamps, intervals, booleans)
	modeFloat                  // numeric, at least one approximate
	modeExact                  // exact numeric with a DECIMAL
	modeString                 // strings or byte strings
	modeGeneric                // types.Compare
	modeNull                   // one side is the NULL type: always NULL
)

func compareMode(a, b types.Type) cmpMode {
	ak, bk := a.Kind, b.Kind
	switch {
	case ak == types.KindNull || bk == types.KindNull:
		return modeNull
	case ak.IsNumeric() && bk.IsNumeric():
		switch {
		case ak == types.KindFloat || ak == types.KindDouble || bk == types.KindFloat || bk == types.KindDouble:
			return modeFloat
		case ak == types.KindDecimal || bk == types.KindDecimal:
			return modeExact
		}
		return modeInt
	case ak.IsString() && bk.IsString(), ak.IsBinary() && bk.IsBinary():
		return modeString
	case ak == bk && (ak == types.KindBoolean || ak == types.KindDate || ak == types.KindTime ||
		ak.IsTimestamp() || ak == types.KindIntervalDayTime || ak == types.KindIntervalYearMonth):
		return modeInt
	}
	return modeGeneric
}

// coerceCompare makes two operands comparable, inserting casts where a
// conversion is needed (DATE to TIMESTAMP, TIMESTAMP to TIMESTAMP_LTZ), or
// reports that they cannot be compared.
func (b *Builder) coerceCompare(op string, x, y Node) (Node, Node, error) {
	a, c := x.Type(), y.Type()
	ak, ck := a.Kind, c.Kind
	switch {
	case ak == types.KindNull || ck == types.KindNull:
		return x, y, nil
	case ak.IsNumeric() && ck.IsNumeric():
		if compareMode(a, c) == modeFloat {
			// Approximate comparisons read both sides as DOUBLE.
			return b.coerce(x, types.Double), b.coerce(y, types.Double), nil
		}
		return x, y, nil
	case ak.IsString() && ck.IsString(), ak.IsBinary() && ck.IsBinary():
		return x, y, nil
	case (ak.IsTimestamp() || ak == types.KindDate) && (ck.IsTimestamp() || ck == types.KindDate):
		if ak == ck {
			return x, y, nil
		}
		t, _ := types.CommonType(a, c)
		return b.coerce(x, t), b.coerce(y, t), nil
	case ak == ck && ak != types.KindArray && ak != types.KindMap && ak != types.KindRow && ak != types.KindMultiset:
		return x, y, nil
	}
	if t, ok := types.CommonType(a, c); ok && (ak == types.KindArray || ak == types.KindRow || ak == types.KindMap || ak == types.KindMultiset) {
		return b.coerce(x, t), b.coerce(y, t), nil
	}
	return nil, nil, fmt.Errorf("cannot compare %s with %s in '%s'", plain(a), plain(c), op)
}

func bindCompare(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) != 2 {
		return nil, types.Type{}, fmt.Errorf("'%s' takes 2 operands, got %d", name, len(args))
	}
	x, y, err := b.coerceCompare(name, args[0], args[1])
	if err != nil {
		return nil, types.Type{}, err
	}
	out := []Node{x, y}
	t := nullableIf(types.Boolean, out)
	if name == "IS DISTINCT FROM" || name == "IS NOT DISTINCT FROM" {
		t = types.Boolean.WithNullable(false)
	}
	return out, t, nil
}

// comparer returns a function comparing two non-NULL values in a mode
// (not modeFloat or modeNull).
func comparer(mode cmpMode) func(a, b types.Value) int {
	switch mode {
	case modeInt:
		return func(a, b types.Value) int {
			x, y := a.Int(), b.Int()
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	case modeExact:
		return types.CompareDecimal
	case modeString:
		return func(a, b types.Value) int { return strings.Compare(a.Str(), b.Str()) }
	}
	return types.Compare
}

// compareTri builds a three-valued comparison of two operands.
func (c *compiler) compareTri(op cmpOp, xn, yn Node) (triEval, error) {
	mode := compareMode(xn.Type(), yn.Type())
	if mode == modeNull {
		return c.nullTri(xn, yn)
	}
	x, err := c.compile(xn)
	if err != nil {
		return nil, err
	}
	col, isCol := xn.(*Column)
	lit, isLit := yn.(*Literal)
	if isLit && lit.V.IsNull() {
		return c.nullTri(xn, yn)
	}
	if isCol && isLit {
		idx := col.Index
		k := lit.V
		switch mode {
		case modeInt:
			kv := k.Int()
			return func(row []types.Value) (tri, error) {
				v := row[idx]
				if v.IsNull() {
					return triNull, nil
				}
				a := v.Int()
				var r int
				if a < kv {
					r = -1
				} else if a > kv {
					r = 1
				}
				return triOf(op.test(r)), nil
			}, nil
		case modeFloat:
			kf := k.Float()
			return func(row []types.Value) (tri, error) {
				v := row[idx]
				if v.IsNull() {
					return triNull, nil
				}
				return triOf(op.testFloat(v.Float(), kf)), nil
			}, nil
		case modeString:
			ks := k.Str()
			if op == opEQ {
				return func(row []types.Value) (tri, error) {
					v := row[idx]
					if v.IsNull() {
						return triNull, nil
					}
					return triOf(v.Str() == ks), nil
				}, nil
			}
			return func(row []types.Value) (tri, error) {
				v := row[idx]
				if v.IsNull() {
					return triNull, nil
				}
				return triOf(op.test(strings.Compare(v.Str(), ks))), nil
			}, nil
		}
	}
	y, err := c.compile(yn)
	if err != nil {
		return nil, err
	}
	if isLit {
		k := lit.V
		switch mode {
		case modeFloat:
			kf := k.Float()
			return func(row []types.Value) (tri, error) {
				v, err := x(row)
				if err != nil || v.IsNull() {
					return triNull, err
				}
				return triOf(op.testFloat(v.Float(), kf)), nil
			}, nil
		case modeInt:
			kv := k.Int()
			return func(row []types.Value) (tri, error) {
				v, err := x(row)
				if err != nil || v.IsNull() {
					return triNull, err
				}
				a := v.Int()
				var r int
				if a < kv {
					r = -1
				} else if a > kv {
					r = 1
				}
				return triOf(op.test(r)), nil
			}, nil
		default:
			cmp := comparer(mode)
			return func(row []types.Value) (tri, error) {
				v, err := x(row)
				if err != nil || v.IsNull() {
					return triNull, err
				}
				return triOf(op.test(cmp(v, k))), nil
			}, nil
		}
	}
	if mode == modeFloat {
		return func(row []types.Value) (tri, error) {
			a, err := x(row)
			if err != nil || a.IsNull() {
				return triNull, err
			}
			b, err := y(row)
			if err != nil || b.IsNull() {
				return triNull, err
			}
			return triOf(op.testFloat(a.Float(), b.Float())), nil
		}, nil
	}
	cmp := comparer(mode)
	return func(row []types.Value) (tri, error) {
		a, err := x(row)
		if err != nil || a.IsNull() {
			return triNull, err
		}
		b, err := y(row)
		if err != nil || b.IsNull() {
			return triNull, err
		}
		return triOf(op.test(cmp(a, b))), nil
	}, nil
}

// nullTri evaluates the operands (for their errors) and returns NULL.
func (c *compiler) nullTri(ns ...Node) (triEval, error) {
	evals, err := c.compileAll(ns)
	if err != nil {
		return nil, err
	}
	return func(row []types.Value) (tri, error) {
		for _, e := range evals {
			if _, err := e(row); err != nil {
				return triNull, err
			}
		}
		return triNull, nil
	}, nil
}

func compileCompare(c *compiler, call *Call) (triEval, error) {
	return c.compareTri(cmpOps[call.Name], call.Args[0], call.Args[1])
}

// equalNonNull reports whether two non-NULL values of a mode are equal.
func equalNonNull(mode cmpMode, a, b types.Value) bool {
	if mode == modeFloat {
		return numOf(a) == numOf(b)
	}
	return comparer(mode)(a, b) == 0
}

func compileDistinct(c *compiler, call *Call) (triEval, error) {
	x, err := c.compile(call.Args[0])
	if err != nil {
		return nil, err
	}
	y, err := c.compile(call.Args[1])
	if err != nil {
		return nil, err
	}
	mode := compareMode(call.Args[0].Type(), call.Args[1].Type())
	distinct := call.Name == "IS DISTINCT FROM"
	return func(row []types.Value) (tri, error) {
		a, err := x(row)
		if err != nil {
			return triNull, err
		}
		b, err := y(row)
		if err != nil {
			return triNull, err
		}
		var same bool
		switch {
		case a.IsNull() || b.IsNull():
			same = a.IsNull() && b.IsNull()
		case mode == modeNull:
			same = false
		default:
			same = equalNonNull(mode, a, b)
		}
		return triOf(same != distinct), nil
	}, nil
}

func bindBetween(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) != 3 {
		return nil, types.Type{}, fmt.Errorf("'%s' takes 3 operands, got %d", name, len(args))
	}
	out, err := b.coerceAll(name, args)
	if err != nil {
		return nil, types.Type{}, err
	}
	return out, nullableIf(types.Boolean, out), nil
}

// coerceAll makes a value and the values it is compared with (BETWEEN
// bounds, an IN list) comparable with one another: each must be comparable
// with the first, and where a conversion is needed all are converted to
// their common type, so that the first is converted once.
func (b *Builder) coerceAll(name string, args []Node) ([]Node, error) {
	needCast := false
	for _, e := range args[1:] {
		x, y, err := b.coerceCompare(name, args[0], e)
		if err != nil {
			return nil, err
		}
		if x != args[0] || y != e {
			needCast = true
		}
	}
	if !needCast {
		return args, nil
	}
	t, err := commonOf(name, args)
	if err != nil {
		return nil, err
	}
	if t.Kind.IsNumeric() && t.Kind != types.KindDouble && t.Kind != types.KindFloat {
		return args, nil // exact numbers compare across types
	}
	if t.Kind == types.KindFloat {
		t = types.Double
	}
	out := make([]Node, len(args))
	for i, a := range args {
		out[i] = b.coerce(a, t)
	}
	return out, nil
}

func compileBetween(c *compiler, call *Call) (triEval, error) {
	not := call.Name == "NOT BETWEEN"
	var lo, hi triEval
	var err error
	if not {
		lo, err = c.compareTri(opLT, call.Args[0], call.Args[1])
		if err == nil {
			hi, err = c.compareTri(opGT, call.Args[0], call.Args[2])
		}
	} else {
		lo, err = c.compareTri(opGE, call.Args[0], call.Args[1])
		if err == nil {
			hi, err = c.compareTri(opLE, call.Args[0], call.Args[2])
		}
	}
	if err != nil {
		return nil, err
	}
	if not {
		return orTri(lo, hi), nil
	}
	return andTri(lo, hi), nil
}

func bindIn(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) < 2 {
		return nil, types.Type{}, fmt.Errorf("'%s' needs a value and at least one list element", name)
	}
	out, err := b.coerceAll(name, args)
	if err != nil {
		return nil, types.Type{}, err
	}
	return out, nullableIf(types.Boolean, out), nil
}

func compileIn(c *compiler, call *Call) (triEval, error) {
	not := call.Name == "NOT IN"
	needle, err := c.compile(call.Args[0])
	if err != nil {
		return nil, err
	}
	nt := call.Args[0].Type()
	list := call.Args[1:]
	allConst := true
	for _, e := range list {
		if _, ok := e.(*Literal); !ok {
			allConst = false
		}
	}
	flip := func(r tri) tri {
		if not && r != triNull {
			return r ^ 1
		}
		return r
	}
	if allConst {
		var in func(v types.Value) bool
		hasNull := false
		vals := make([]types.Value, 0, len(list))
		modes := make([]cmpMode, 0, len(list))
		mode := modeGeneric
		for _, e := range list {
			v := e.(*Literal).V
			if v.IsNull() {
				hasNull = true
				continue
			}
			m := compareMode(nt, e.Type())
			if len(vals) == 0 {
				mode = m
			} else if m != mode {
				mode = modeGeneric
			}
			vals = append(vals, v)
			modes = append(modes, m)
		}
		switch {
		case len(vals) == 0:
			in = func(types.Value) bool { return false }
		case mode == modeInt && nt.Kind.IsInteger() && allIntegers(vals) && len(vals) <= 8:
			// A short list is faster to scan than to hash.
			ks := make([]int64, len(vals))
			for i, v := range vals {
				ks[i] = v.Int()
			}
			in = func(v types.Value) bool {
				n := v.Int()
				for _, k := range ks {
					if n == k {
						return true
					}
				}
				return false
			}
		case mode == modeInt && nt.Kind.IsInteger() && allIntegers(vals):
			set := make(map[int64]struct{}, len(vals))
			for _, v := range vals {
				set[v.Int()] = struct{}{}
			}
			in = func(v types.Value) bool { _, ok := set[v.Int()]; return ok }
		case mode == modeInt:
			in = func(v types.Value) bool {
				for _, k := range vals {
					if v.Int() == k.Int() {
						return true
					}
				}
				return false
			}
		case mode == modeString:
			set := make(map[string]struct{}, len(vals))
			for _, v := range vals {
				set[v.Str()] = struct{}{}
			}
			in = func(v types.Value) bool { _, ok := set[v.Str()]; return ok }
		default:
			in = func(v types.Value) bool {
				for i, k := range vals {
					if modes[i] != modeNull && equalNonNull(modes[i], v, k) {
						return true
					}
				}
				return false
			}
		}
		return func(row []types.Value) (tri, error) {
			v, err := needle(row)
			if err != nil || v.IsNull() {
				return triNull, err
			}
			if in(v) {
				return flip(triTrue), nil
			}
			if hasNull {
				return triNull, nil
			}
			return flip(triFalse), nil
		}, nil
	}
	evals, err := c.compileAll(list)
	if err != nil {
		return nil, err
	}
	modes := make([]cmpMode, len(list))
	for i, e := range list {
		modes[i] = compareMode(nt, e.Type())
	}
	return func(row []types.Value) (tri, error) {
		v, err := needle(row)
		if err != nil || v.IsNull() {
			return triNull, err
		}
		sawNull := false
		for i, e := range evals {
			k, err := e(row)
			if err != nil {
				return triNull, err
			}
			if k.IsNull() || modes[i] == modeNull {
				sawNull = true
				continue
			}
			if equalNonNull(modes[i], v, k) {
				return flip(triTrue), nil
			}
		}
		if sawNull {
			return triNull, nil
		}
		return flip(triFalse), nil
	}, nil
}

func allIntegers(vs []types.Value) bool {
	for _, v := range vs {
		if !v.Kind().IsInteger() {
			return false
		}
	}
	return true
}

// Logic.

func bindLogic(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	want := []signature{vsig(cBoolean, cBoolean)}
	if name == "NOT" {
		want = []signature{sig(cBoolean)}
	}
	for _, s := range want {
		if s.match(args) && (name == "NOT" || len(args) >= 2) {
			return args, nullableIf(types.Boolean, args), nil
		}
	}
	return nil, types.Type{}, argError(name, args, want)
}

func andTri(l, r triEval) triEval {
	return func(row []types.Value) (tri, error) {
		a, err := l(row)
		if err != nil || a == triFalse {
			return triFalse, err
		}
		b, err := r(row)
		if err != nil || b == triFalse {
			return triFalse, err
		}
		if a == triNull || b == triNull {
			return triNull, nil
		}
		return triTrue, nil
	}
}

func orTri(l, r triEval) triEval {
	return func(row []types.Value) (tri, error) {
		a, err := l(row)
		if err != nil {
			return triNull, err
		}
		if a == triTrue {
			return triTrue, nil
		}
		b, err := r(row)
		if err != nil {
			return triNull, err
		}
		if b == triTrue {
			return triTrue, nil
		}
		if a == triNull || b == triNull {
			return triNull, nil
		}
		return triFalse, nil
	}
}

func compileLogic(c *compiler, call *Call) (triEval, error) {
	ts := make([]triEval, len(call.Args))
	for i, a := range call.Args {
		t, err := c.compileTri(a)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	switch call.Name {
	case "NOT":
		t := ts[0]
		return func(row []types.Value) (tri, error) {
			r, err := t(row)
			if r != triNull {
				r ^= 1
			}
			return r, err
		}, nil
	case "AND":
		acc := ts[0]
		for _, t := range ts[1:] {
			acc = andTri(acc, t)
		}
		return acc, nil
	default:
		acc := ts[0]
		for _, t := range ts[1:] {
			acc = orTri(acc, t)
		}
		return acc, nil
	}
}

func bindIs(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) != 1 {
		return nil, types.Type{}, fmt.Errorf("'%s' takes 1 operand, got %d", name, len(args))
	}
	if name != "IS NULL" && name != "IS NOT NULL" {
		if !cBoolean.match(args[0]) {
			return nil, types.Type{}, argError(name, args, []signature{sig(cBoolean)})
		}
	}
	return args, types.Boolean.WithNullable(false), nil
}

func compileIs(c *compiler, call *Call) (triEval, error) {
	name := call.Name
	if name == "IS NULL" || name == "IS NOT NULL" {
		want := name == "IS NULL"
		if col, ok := call.Args[0].(*Column); ok {
			idx := col.Index
			return func(row []types.Value) (tri, error) { return triOf(row[idx].IsNull() == want), nil }, nil
		}
		x, err := c.compile(call.Args[0])
		if err != nil {
			return nil, err
		}
		return func(row []types.Value) (tri, error) {
			v, err := x(row)
			if err != nil {
				return triNull, err
			}
			return triOf(v.IsNull() == want), nil
		}, nil
	}
	t, err := c.compileTri(call.Args[0])
	if err != nil {
		return nil, err
	}
	var match tri
	neg := strings.HasPrefix(name, "IS NOT ")
	switch strings.TrimPrefix(strings.TrimPrefix(name, "IS NOT "), "IS ") {
	case "TRUE":
		match = triTrue
	case "FALSE":
		match = triFalse
	default:
		match = triNull
	}
	return func(row []types.Value) (tri, error) {
		r, err := t(row)
		if err != nil {
			return triNull, err
		}
		return triOf((r == match) != neg), nil
	}, nil
}

// AsMembership recognizes a predicate that is TRUE exactly when a string
// or integer expression equals one of some constants: x = 'c', 'c' = x,
// x IN ('c1', 'c2', ...) compared as strings, or the same with integers
// compared as integers (the comparisons = and IN make of them). It
// returns x and the constants, NULLs left out (a NULL in an IN list
// makes a miss NULL, never TRUE). ok is false for anything else,
// negations included.
func AsMembership(n Node) (subject Node, keys []types.Value, ok bool) {
	call, isCall := n.(*Call)
	if !isCall || call.Fn == nil || call.Fn.builtin == nil {
		return nil, nil, false
	}
	var list []Node
	switch call.Name {
	case "=":
		if len(call.Args) != 2 {
			return nil, nil, false
		}
		subject, list = call.Args[0], call.Args[1:]
		if _, isLit := subject.(*Literal); isLit {
			subject, list = call.Args[1], call.Args[:1]
		}
	case "IN":
		subject, list = call.Args[0], call.Args[1:]
	default:
		return nil, nil, false
	}
	st := subject.Type()
	if !st.Kind.IsString() && !st.Kind.IsInteger() {
		return nil, nil, false
	}
	for _, e := range list {
		l, isLit := e.(*Literal)
		if !isLit {
			return nil, nil, false
		}
		if l.V.IsNull() {
			continue
		}
		switch m := compareMode(st, l.Type()); {
		case m == modeString && st.Kind.IsString():
		case m == modeInt && st.Kind.IsInteger() && l.Type().Kind.IsInteger():
		default:
			return nil, nil, false
		}
		keys = append(keys, l.V)
	}
	return subject, keys, true
}
