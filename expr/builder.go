package expr

import (
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// Builder builds bound, typed expression nodes: it resolves function names
// in a Registry, checks argument types, inserts implicit casts and computes
// result types. The planner's binder resolves column names and calls it;
// it builds only Column and Literal nodes by hand.
type Builder struct {
	fns *Registry
}

// NewBuilder returns a builder over the functions in fns.
func NewBuilder(fns *Registry) *Builder { return &Builder{fns: fns} }

// Registry returns the function registry the builder resolves names in.
func (b *Builder) Registry() *Registry { return b.fns }

// Call builds a call of the operator or function name (any case) on args.
// Operators are named by their SQL spelling: "+", "-", "*", "/", "%",
// "NEG", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "NOT", "IS NULL",
// "IS NOT NULL", "IS TRUE", "IS FALSE", "IS NOT TRUE", "IS NOT FALSE",
// "IS UNKNOWN", "IS NOT UNKNOWN", "IS DISTINCT FROM",
// "IS NOT DISTINCT FROM", "LIKE", "NOT LIKE", "SIMILAR TO",
// "NOT SIMILAR TO", "IN", "NOT IN", "BETWEEN", "NOT BETWEEN", "||",
// "ITEM", "FIELD", "ROW", "ARRAY", "MAP". Errors name the function and
// the types; the binder adds the position.
func (b *Builder) Call(name string, args ...Node) (Node, error) {
	uname := strings.ToUpper(name)
	f, err := b.fns.Lookup(uname)
	if err != nil {
		if _, terr := b.fns.LookupTable(uname); terr == nil {
			return nil, fmt.Errorf("table function '%s' can only be called in LATERAL TABLE(...)", name)
		}
		return nil, fmt.Errorf("unknown function '%s'%s", name, suggest.Hint(name, b.fns.Names()))
	}
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("cannot apply '%s': argument %d is missing", uname, i+1)
		}
	}
	if f.builtin == nil {
		return b.bindUser(f, args)
	}
	bound, t, err := f.builtin.bind(b, uname, append([]Node(nil), args...))
	if err != nil {
		return nil, err
	}
	return &Call{Name: uname, Fn: f, Args: bound, T: t}, nil
}

// bindUser binds a call of a user-defined scalar function.
func (b *Builder) bindUser(f *ScalarFunction, args []Node) (Node, error) {
	ts := argTypes(args)
	out := append([]Node(nil), args...)
	if f.Args != nil {
		n := len(f.Args)
		if (!f.Variadic && len(args) != n) || (f.Variadic && len(args) < n-1) {
			return nil, fmt.Errorf("cannot apply '%s' to %s: expected %s", f.Name, typeList(ts), declList(f.Args, f.Variadic))
		}
		for i, a := range args {
			want := f.Args[min(i, n-1)]
			if !types.Assignable(a.Type(), want) {
				return nil, fmt.Errorf("cannot apply '%s' to %s: expected %s", f.Name, typeList(ts), declList(f.Args, f.Variadic))
			}
			out[i] = b.coerce(a, want)
		}
	}
	var t types.Type
	if f.ResultType != nil {
		var err error
		if t, err = f.ResultType(argTypes(out)); err != nil {
			return nil, fmt.Errorf("cannot apply '%s' to %s: %w", f.Name, typeList(ts), err)
		}
	} else {
		t = f.Result
	}
	if !f.CallOnNull && anyNullable(out) {
		t = t.WithNullable(true)
	}
	return &Call{Name: f.Name, Fn: f, Args: out, T: t}, nil
}

// TableCall is a bound call of a table function: the rows it emits have
// the schema Out.
type TableCall struct {
	Fn   *TableFunction
	Args []Node
	Out  types.Schema
}

// String prints the call.
func (t *TableCall) String() string {
	var b strings.Builder
	b.WriteString(t.Fn.Name + "(")
	joinArgs(&b, t.Args)
	b.WriteString(")")
	return b.String()
}

// TableCall binds a call of the table function name on args.
func (b *Builder) TableCall(name string, args ...Node) (*TableCall, error) {
	f, err := b.fns.LookupTable(name)
	if err != nil {
		return nil, err
	}
	ts := argTypes(args)
	out := append([]Node(nil), args...)
	if f.Args != nil {
		n := len(f.Args)
		if (!f.Variadic && len(args) != n) || (f.Variadic && len(args) < n-1) {
			return nil, fmt.Errorf("cannot apply '%s' to %s: expected %s", f.Name, typeList(ts), declList(f.Args, f.Variadic))
		}
		for i, a := range args {
			want := f.Args[min(i, n-1)]
			if !types.Assignable(a.Type(), want) {
				return nil, fmt.Errorf("cannot apply '%s' to %s: expected %s", f.Name, typeList(ts), declList(f.Args, f.Variadic))
			}
			out[i] = b.coerce(a, want)
		}
	}
	schema := f.Result
	if f.ResultType != nil {
		var err error
		if schema, err = f.ResultType(argTypes(out)); err != nil {
			return nil, fmt.Errorf("cannot apply '%s' to %s: %w", f.Name, typeList(ts), err)
		}
	}
	return &TableCall{Fn: f, Args: out, Out: schema}, nil
}

// Cast builds CAST(x AS to), or TRY_CAST when try is set. The result is
// nullable when x is (as in Flink) and always for TRY_CAST. A cast of a
// literal is evaluated right away; a literal that cannot be converted is an
// error for CAST and NULL for TRY_CAST.
func (b *Builder) Cast(x Node, to types.Type, try bool) (Node, error) {
	from := x.Type()
	if !CanCast(from, to) {
		return nil, fmt.Errorf("cannot cast %s to %s", plain(from), plain(to))
	}
	t := to.WithoutTimeAttr()
	if from.Nullable() || try {
		t = t.WithNullable(true)
	}
	if lit, ok := x.(*Literal); ok && !zoneDependent(from, to) {
		v, err := types.Cast(lit.V, from, to)
		if err != nil {
			if !try {
				return nil, err
			}
			return &Literal{V: types.NullValue, T: t.WithNullable(true)}, nil
		}
		if v.IsNull() {
			t = t.WithNullable(true)
		}
		return &Literal{V: v, T: t}, nil
	}
	return &Cast{X: x, T: t, Try: try}, nil
}

// Case builds a CASE expression. operand is nil for a searched CASE, whose
// whens must be BOOLEAN; with an operand, CASE x WHEN a THEN ... is built
// as the searched CASE WHEN x = a THEN ... (x is evaluated for each WHEN).
// els may be nil (NULL). The result type is the common type of the THEN
// and ELSE expressions.
func (b *Builder) Case(operand Node, whens, thens []Node, els Node) (Node, error) {
	if len(whens) == 0 || len(whens) != len(thens) {
		return nil, fmt.Errorf("CASE needs at least one WHEN ... THEN and as many THEN as WHEN")
	}
	ws := make([]Node, len(whens))
	for i, w := range whens {
		if operand != nil {
			eq, err := b.Call("=", operand, w)
			if err != nil {
				return nil, fmt.Errorf("cannot compare CASE operand with WHEN value: %w", err)
			}
			ws[i] = eq
			continue
		}
		if k := w.Type().Kind; k != types.KindBoolean && k != types.KindNull {
			return nil, fmt.Errorf("CASE WHEN condition must be BOOLEAN, not %s", plain(w.Type()))
		}
		ws[i] = w
	}
	results := append(append([]Node(nil), thens...), els)
	if els == nil {
		results = results[:len(thens)]
	}
	t, err := commonOf("CASE", results)
	if err != nil {
		return nil, err
	}
	if els == nil {
		t = t.WithNullable(true)
	}
	ts := make([]Node, len(thens))
	for i, th := range thens {
		ts[i] = b.coerce(th, t)
	}
	var e Node
	if els != nil {
		e = b.coerce(els, t)
	}
	return &Case{Whens: ws, Thens: ts, Else: e, T: t}, nil
}

// commonOf returns the common type of the nodes' types (see
// types.CommonType), or an error naming what for.
func commonOf(what string, ns []Node) (types.Type, error) {
	t := types.Null
	for i, n := range ns {
		if i == 0 {
			t = n.Type()
			continue
		}
		c, ok := types.CommonType(t, n.Type())
		if !ok {
			return types.Type{}, fmt.Errorf("cannot find a common type for %s: %s and %s", what, plain(t), plain(n.Type()))
		}
		t = c
	}
	return t.WithoutTimeAttr(), nil
}

// coerce converts n to type t implicitly. It adds a Cast only where the
// representation changes: string lengths and higher time precisions are
// taken as they are (CHAR to VARCHAR only relabels the value).
func (b *Builder) coerce(n Node, t types.Type) Node {
	from := n.Type()
	if !needsCast(from, t) {
		return n
	}
	target := t
	if from.Nullable() {
		target = target.WithNullable(true)
	}
	if lit, ok := n.(*Literal); ok && !zoneDependent(from, t) {
		if v, err := types.Cast(lit.V, from, t); err == nil {
			if v.IsNull() {
				target = target.WithNullable(true)
			}
			return &Literal{V: v, T: target}
		}
	}
	return &Cast{X: n, T: target}
}

// needsCast reports whether a value of type from must be converted to be
// used as a value of type to.
func needsCast(from, to types.Type) bool {
	fk, tk := from.Kind, to.Kind
	switch {
	case from.SameKind(to):
		return false
	case fk == types.KindNull:
		return false
	case fk.IsString() && tk.IsString(), fk.IsBinary() && tk.IsBinary():
		// Lengths are not enforced implicitly, but the value's kind must
		// match the type's (grouping keys encode it).
		return fk != tk
	case fk == tk && (fk == types.KindTimestamp || fk == types.KindTimestampLTZ || fk == types.KindTime):
		return to.Precision < from.Precision
	case fk == types.KindDecimal && tk == types.KindDecimal:
		return from.Scale != to.Scale || to.Precision < from.Precision
	case fk == tk && fk != types.KindArray && fk != types.KindMap && fk != types.KindRow && fk != types.KindMultiset:
		return false
	}
	return true
}

// zoneDependent reports whether a cast between the types depends on the
// session time zone (so it cannot be evaluated without an Env).
func zoneDependent(from, to types.Type) bool {
	has := func(t types.Type) bool {
		ltz := false
		var walk func(t types.Type)
		walk = func(t types.Type) {
			if t.Kind == types.KindTimestampLTZ {
				ltz = true
			}
			if t.Elem != nil {
				walk(*t.Elem)
			}
			if t.Value != nil {
				walk(*t.Value)
			}
			for _, f := range t.Fields {
				walk(f.Type)
			}
		}
		walk(t)
		return ltz
	}
	return has(from) || has(to)
}

// CanCast reports whether CAST from one type to another is allowed.
func CanCast(from, to types.Type) bool {
	fk, tk := from.Kind, to.Kind
	if fk == types.KindNull || from.SameKind(to) {
		return true
	}
	switch tk {
	case types.KindBoolean:
		return fk == types.KindBoolean || fk.IsNumeric() || fk.IsString()
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindFloat, types.KindDouble, types.KindDecimal:
		return fk.IsNumeric() || fk == types.KindBoolean || fk.IsString()
	case types.KindChar, types.KindVarChar:
		return true
	case types.KindBinary, types.KindVarBinary:
		return fk.IsString() || fk.IsBinary()
	case types.KindDate:
		return fk == types.KindDate || fk.IsTimestamp() || fk.IsString()
	case types.KindTime:
		return fk == types.KindTime || fk.IsTimestamp() || fk.IsString()
	case types.KindTimestamp:
		return fk.IsTimestamp() || fk == types.KindDate || fk == types.KindTime || fk.IsString()
	case types.KindTimestampLTZ:
		return fk.IsTimestamp() || fk == types.KindDate || fk.IsString() || fk.IsNumeric()
	case types.KindIntervalDayTime, types.KindIntervalYearMonth:
		return fk == tk
	case types.KindArray, types.KindMultiset:
		return (fk == types.KindArray || fk == types.KindMultiset) && from.Elem != nil && to.Elem != nil &&
			CanCast(*from.Elem, *to.Elem)
	case types.KindMap:
		return fk == types.KindMap && from.Elem != nil && to.Elem != nil && from.Value != nil && to.Value != nil &&
			CanCast(*from.Elem, *to.Elem) && CanCast(*from.Value, *to.Value)
	case types.KindRow:
		if fk != types.KindRow || len(from.Fields) != len(to.Fields) {
			return false
		}
		for i := range from.Fields {
			if !CanCast(from.Fields[i].Type, to.Fields[i].Type) {
				return false
			}
		}
		return true
	}
	return false
}

// plain prints a type without nullability and time attribute, for errors.
func plain(t types.Type) string { return t.WithNullable(true).WithoutTimeAttr().String() }

func argTypes(args []Node) []types.Type {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return ts
}

func typeList(ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = plain(t)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func declList(ts []types.Type, variadic bool) string {
	s := typeList(ts)
	if variadic {
		s = s[:len(s)-1] + "...)"
	}
	return s
}

func anyNullable(args []Node) bool {
	for _, a := range args {
		if a.Type().Nullable() {
			return true
		}
	}
	return false
}

// nullableIf returns t, nullable when any argument is nullable.
func nullableIf(t types.Type, args []Node) types.Type {
	if anyNullable(args) {
		return t.WithNullable(true)
	}
	return t.WithNullable(false)
}

// class is a family of argument types in a built-in's signature.
type class uint8

const (
	cAny class = iota
	cString
	cBinary
	cStrOrBin
	cNumeric
	cInteger
	cExact
	cBoolean
	cDate
	cTime
	cTimestamp // TIMESTAMP or TIMESTAMP_LTZ
	cDatetime  // DATE, TIMESTAMP or TIMESTAMP_LTZ
	cTemporal  // DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ
	cInterval
	cArray
	cMap
	cRow
	cCollection // ARRAY, MAP or MULTISET
	cLiteral    // a string literal (a unit or a mode)
)

var classNames = [...]string{
	cAny: "ANY", cString: "STRING", cBinary: "BYTES", cStrOrBin: "STRING|BYTES", cNumeric: "NUMERIC",
	cInteger: "INTEGER", cExact: "EXACT_NUMERIC", cBoolean: "BOOLEAN", cDate: "DATE", cTime: "TIME",
	cTimestamp: "TIMESTAMP", cDatetime: "DATETIME", cTemporal: "TEMPORAL", cInterval: "INTERVAL",
	cArray: "ARRAY", cMap: "MAP", cRow: "ROW", cCollection: "ARRAY|MAP", cLiteral: "SYMBOL",
}

func (c class) match(n Node) bool {
	t := n.Type()
	k := t.Kind
	if k == types.KindNull {
		return c != cLiteral
	}
	switch c {
	case cAny:
		return true
	case cString:
		return k.IsString()
	case cBinary:
		return k.IsBinary()
	case cStrOrBin:
		return k.IsString() || k.IsBinary()
	case cNumeric:
		return k.IsNumeric()
	case cInteger:
		return k.IsInteger()
	case cExact:
		return k.IsInteger() || k == types.KindDecimal
	case cBoolean:
		return k == types.KindBoolean
	case cDate:
		return k == types.KindDate
	case cTime:
		return k == types.KindTime
	case cTimestamp:
		return k.IsTimestamp()
	case cDatetime:
		return k.IsTimestamp() || k == types.KindDate
	case cTemporal:
		return k.IsTimestamp() || k == types.KindDate || k == types.KindTime
	case cInterval:
		return k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth
	case cArray:
		return k == types.KindArray
	case cMap:
		return k == types.KindMap
	case cRow:
		return k == types.KindRow
	case cCollection:
		return k == types.KindArray || k == types.KindMap || k == types.KindMultiset
	case cLiteral:
		l, ok := n.(*Literal)
		return ok && l.V.Kind().IsString()
	}
	return false
}

// signature is one accepted list of argument classes; with variadic the
// last class repeats (zero or more times).
type signature struct {
	classes  []class
	variadic bool
}

func sig(cs ...class) signature  { return signature{classes: cs} }
func vsig(cs ...class) signature { return signature{classes: cs, variadic: true} }

func (s signature) match(args []Node) bool {
	n := len(s.classes)
	if s.variadic {
		if len(args) < n-1 {
			return false
		}
	} else if len(args) != n {
		return false
	}
	for i, a := range args {
		if !s.classes[min(i, n-1)].match(a) {
			return false
		}
	}
	return true
}

func (s signature) String() string {
	parts := make([]string, len(s.classes))
	for i, c := range s.classes {
		parts[i] = classNames[c]
	}
	if s.variadic {
		parts[len(parts)-1] += "..."
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// argError reports arguments that match none of the signatures.
func argError(name string, args []Node, sigs []signature) error {
	want := make([]string, len(sigs))
	for i, s := range sigs {
		want[i] = s.String()
	}
	return fmt.Errorf("cannot apply '%s' to %s: expected %s", name, typeList(argTypes(args)), strings.Join(want, " or "))
}

// typed builds a bind function that checks the signatures and computes the
// result type with result.
func typed(result func(args []Node) (types.Type, error), sigs ...signature) func(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	return func(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
		for _, s := range sigs {
			if s.match(args) {
				t, err := result(args)
				if err != nil {
					return nil, types.Type{}, fmt.Errorf("cannot apply '%s' to %s: %w", name, typeList(argTypes(args)), err)
				}
				return args, t, nil
			}
		}
		return nil, types.Type{}, argError(name, args, sigs)
	}
}

// strictly returns a result function for a fixed type, nullable when any
// argument is.
func strictly(t types.Type) func(args []Node) (types.Type, error) {
	return func(args []Node) (types.Type, error) { return nullableIf(t, args), nil }
}

// always returns a result function for a type that is always nullable.
func always(t types.Type) func(args []Node) (types.Type, error) {
	return func(args []Node) (types.Type, error) { return t.WithNullable(true), nil }
}

// sameAs returns a result function giving the type of argument i.
func sameAs(i int) func(args []Node) (types.Type, error) {
	return func(args []Node) (types.Type, error) {
		t := args[i].Type().WithoutTimeAttr()
		if t.Kind == types.KindNull {
			return types.Null, nil
		}
		return nullableIf(t, args), nil
	}
}

// literalString returns the value of a string literal argument.
func literalString(n Node) (string, bool) {
	l, ok := n.(*Literal)
	if !ok || !l.V.Kind().IsString() {
		return "", false
	}
	return l.V.Str(), true
}

// isUnitArg reports whether n is a string literal naming a time unit.
func isUnitArg(n Node) bool {
	s, ok := literalString(n)
	if !ok {
		return false
	}
	_, ok = unitOrder[strings.ToUpper(s)]
	return ok
}
