package expr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// Conditional functions.

func bindCoalesce(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	min := 1
	if name == "IFNULL" {
		min = 2
	}
	if len(args) < min || (name == "IFNULL" && len(args) != 2) {
		return nil, types.Type{}, argError(name, args, []signature{vsig(cAny, cAny)})
	}
	t, err := commonOf(name, args)
	if err != nil {
		return nil, types.Type{}, err
	}
	out := make([]Node, len(args))
	nullable := true
	for i, a := range args {
		out[i] = b.coerce(a, t)
		if !a.Type().Nullable() {
			nullable = false
		}
	}
	return out, t.WithNullable(nullable), nil
}

func compileCoalesce(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(row []types.Value) (types.Value, error) {
		for _, a := range args {
			v, err := a(row)
			if err != nil {
				return types.NullValue, err
			}
			if !v.IsNull() {
				return v, nil
			}
		}
		return types.NullValue, nil
	}, nil
}

func bindNullIf(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) != 2 {
		return nil, types.Type{}, argError(name, args, []signature{sig(cAny, cAny)})
	}
	x, y, err := b.coerceCompare(name, args[0], args[1])
	if err != nil {
		return nil, types.Type{}, err
	}
	return []Node{x, y}, x.Type().WithoutTimeAttr().WithNullable(true), nil
}

func compileNullIf(c *compiler, call *Call, args []Eval) (Eval, error) {
	mode := compareMode(call.Args[0].Type(), call.Args[1].Type())
	return func(row []types.Value) (types.Value, error) {
		a, err := args[0](row)
		if err != nil || a.IsNull() {
			return types.NullValue, err
		}
		b, err := args[1](row)
		if err != nil {
			return types.NullValue, err
		}
		if !b.IsNull() && mode != modeNull && equalNonNull(mode, a, b) {
			return types.NullValue, nil
		}
		return a, nil
	}, nil
}

func bindIf(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) != 3 || !cBoolean.match(args[0]) {
		return nil, types.Type{}, argError(name, args, []signature{sig(cBoolean, cAny, cAny)})
	}
	t, err := commonOf(name, args[1:])
	if err != nil {
		return nil, types.Type{}, err
	}
	out := []Node{args[0], b.coerce(args[1], t), b.coerce(args[2], t)}
	return out, nullableIf(t, out[1:]), nil
}

func compileIf(c *compiler, call *Call, args []Eval) (Eval, error) {
	cond, err := c.compileTri(call.Args[0])
	if err != nil {
		return nil, err
	}
	return func(row []types.Value) (types.Value, error) {
		r, err := cond(row)
		if err != nil {
			return types.NullValue, err
		}
		if r == triTrue {
			return args[1](row)
		}
		return args[2](row)
	}, nil
}

func bindGreatest(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) < 1 {
		return nil, types.Type{}, argError(name, args, []signature{vsig(cAny, cAny)})
	}
	t, err := commonOf(name, args)
	if err != nil {
		return nil, types.Type{}, err
	}
	switch k := t.Kind; {
	case k == types.KindArray, k == types.KindMap, k == types.KindRow, k == types.KindMultiset:
		return nil, types.Type{}, fmt.Errorf("cannot apply '%s' to %s: the values are not ordered", name, typeList(argTypes(args)))
	}
	out := make([]Node, len(args))
	for i, a := range args {
		out[i] = b.coerce(a, t)
	}
	return out, nullableIf(t, out), nil
}

func compileGreatest(c *compiler, call *Call, args []Eval) (Eval, error) {
	greatest := call.Name == "GREATEST"
	mode := compareMode(call.T, call.T)
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		best := vs[0]
		for _, v := range vs[1:] {
			var less bool
			if mode == modeFloat {
				less = numOf(v) < numOf(best)
			} else {
				less = comparer(mode)(v, best) < 0
			}
			if less != greatest {
				best = v
			}
		}
		return best, nil
	}), nil
}

// Collections and rows.

func bindItem(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cArray, cInteger), sig(cMap, cAny)}
	if len(args) != 2 {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	t := args[0].Type()
	switch {
	case sigs[0].match(args) && t.Kind == types.KindArray:
		return args, t.Elem.WithNullable(true), nil
	case t.Kind == types.KindMap:
		k := *t.Elem
		if !types.Assignable(args[1].Type(), k) && !(k.Kind.IsNumeric() && args[1].Type().Kind.IsNumeric()) {
			return nil, types.Type{}, fmt.Errorf("cannot look up a key of type %s in %s", plain(args[1].Type()), plain(t))
		}
		return args, t.Value.WithNullable(true), nil
	}
	return nil, types.Type{}, argError(name, args, sigs)
}

func compileItem(c *compiler, call *Call, args []Eval) (Eval, error) {
	if call.Args[0].Type().Kind == types.KindArray {
		return strict2(args[0], args[1], func(a, i types.Value) (types.Value, error) {
			es := a.Elems()
			n := i.Int()
			if n < 1 || n > int64(len(es)) {
				return types.NullValue, nil
			}
			return es[n-1], nil
		}), nil
	}
	mode := compareMode(*call.Args[0].Type().Elem, call.Args[1].Type())
	return strict2(args[0], args[1], func(m, k types.Value) (types.Value, error) {
		mv := m.Map()
		if mv == nil {
			return types.NullValue, nil
		}
		for i, key := range mv.Keys {
			if !key.IsNull() && mode != modeNull && equalNonNull(mode, key, k) {
				return mv.Values[i], nil
			}
		}
		return types.NullValue, nil
	}), nil
}

func fieldIndex(t types.Type, name string) int {
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range t.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

func bindField(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cRow, cLiteral)}
	if !sigs[0].match(args) || args[0].Type().Kind != types.KindRow {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	t := args[0].Type()
	fname, _ := literalString(args[1])
	i := fieldIndex(t, fname)
	if i < 0 {
		names := make([]string, len(t.Fields))
		for j, f := range t.Fields {
			names[j] = f.Name
		}
		return nil, types.Type{}, fmt.Errorf("unknown field '%s' in %s%s", fname, plain(t), suggest.Hint(fname, names))
	}
	ft := t.Fields[i].Type.WithoutTimeAttr()
	if t.Nullable() {
		ft = ft.WithNullable(true)
	}
	return args, ft, nil
}

func compileField(c *compiler, call *Call, args []Eval) (Eval, error) {
	// A field of a column, or of a field of a column (a.b.c), is read
	// straight from the row along its path of field indexes: one closure
	// call per access, where nesting calls would take one per level. The
	// Nexmark tables read every column this way.
	var path []int
	n := Node(call)
	for {
		f, ok := n.(*Call)
		if !ok || f.Name != "FIELD" || f.Fn == nil || f.Fn.builtin == nil {
			break
		}
		fname, _ := literalString(f.Args[1])
		path = append(path, fieldIndex(f.Args[0].Type(), fname))
		n = f.Args[0]
	}
	if col, ok := n.(*Column); ok {
		idx := col.Index
		if len(path) == 1 {
			i := path[0]
			return func(row []types.Value) (types.Value, error) {
				// Elems of NULL is empty: a field of a NULL row is NULL.
				if es := row[idx].Elems(); i < len(es) {
					return es[i], nil
				}
				return types.NullValue, nil
			}, nil
		}
		slices.Reverse(path)
		return func(row []types.Value) (types.Value, error) {
			v := row[idx]
			for _, i := range path {
				es := v.Elems()
				if i >= len(es) {
					return types.NullValue, nil
				}
				v = es[i]
			}
			return v, nil
		}, nil
	}
	fname, _ := literalString(call.Args[1])
	i := fieldIndex(call.Args[0].Type(), fname)
	a := args[0]
	return func(row []types.Value) (types.Value, error) {
		v, err := a(row)
		if es := v.Elems(); err == nil && i < len(es) {
			return es[i], nil
		}
		return types.NullValue, err
	}, nil
}

func bindRow(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	fields := make([]types.Field, len(args))
	for i, a := range args {
		fields[i] = types.Field{Name: "EXPR$" + strconv.Itoa(i), Type: a.Type().WithoutTimeAttr()}
	}
	return args, types.RowOf(fields...).WithNullable(false), nil
}

func compileRow(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(row []types.Value) (types.Value, error) {
		out := make([]types.Value, len(args))
		for i, a := range args {
			v, err := a(row)
			if err != nil {
				return types.NullValue, err
			}
			out[i] = v
		}
		return types.RowValue(out), nil
	}, nil
}

func bindArray(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) == 0 {
		return nil, types.Type{}, fmt.Errorf("ARRAY needs at least one element")
	}
	t, err := commonOf("ARRAY elements", args)
	if err != nil {
		return nil, types.Type{}, err
	}
	out := make([]Node, len(args))
	for i, a := range args {
		out[i] = b.coerce(a, t)
	}
	return out, types.ArrayOf(t).WithNullable(false), nil
}

func bindMap(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, types.Type{}, fmt.Errorf("MAP needs key and value pairs, got %d arguments", len(args))
	}
	var keys, vals []Node
	for i := 0; i < len(args); i += 2 {
		keys = append(keys, args[i])
		vals = append(vals, args[i+1])
	}
	kt, err := commonOf("MAP keys", keys)
	if err != nil {
		return nil, types.Type{}, err
	}
	vt, err := commonOf("MAP values", vals)
	if err != nil {
		return nil, types.Type{}, err
	}
	out := make([]Node, len(args))
	for i := 0; i < len(args); i += 2 {
		out[i] = b.coerce(args[i], kt)
		out[i+1] = b.coerce(args[i+1], vt)
	}
	return out, types.MapOf(kt, vt).WithNullable(false), nil
}

func compileArray(c *compiler, call *Call, args []Eval) (Eval, error) {
	if call.Name == "MAP" {
		mode := compareMode(*call.T.Elem, *call.T.Elem)
		return func(row []types.Value) (types.Value, error) {
			m := &types.MapValue{}
		next:
			for i := 0; i < len(args); i += 2 {
				k, err := args[i](row)
				if err != nil {
					return types.NullValue, err
				}
				v, err := args[i+1](row)
				if err != nil {
					return types.NullValue, err
				}
				for j, old := range m.Keys {
					if (old.IsNull() && k.IsNull()) || (!old.IsNull() && !k.IsNull() && mode != modeNull && equalNonNull(mode, old, k)) {
						m.Values[j] = v
						continue next
					}
				}
				m.Keys = append(m.Keys, k)
				m.Values = append(m.Values, v)
			}
			return types.NewMapValue(m), nil
		}, nil
	}
	return func(row []types.Value) (types.Value, error) {
		out := make([]types.Value, len(args))
		for i, a := range args {
			v, err := a(row)
			if err != nil {
				return types.NullValue, err
			}
			out[i] = v
		}
		return types.ArrayValue(out), nil
	}, nil
}

func compileCardinality(c *compiler, call *Call, args []Eval) (Eval, error) {
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		if v.Kind() == types.KindMap {
			if m := v.Map(); m != nil {
				return int32Value(len(m.Keys)), nil
			}
			return int32Value(0), nil
		}
		return int32Value(len(v.Elems())), nil
	}), nil
}
