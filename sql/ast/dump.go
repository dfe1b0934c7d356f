package ast

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/sql/token"
)

// Dump returns an indented S-expression of the tree rooted at n, for tests
// and debugging. Positions are left out, as are nil, false, zero and empty
// fields; identifiers print as written (in backquotes if they were quoted)
// and object names dotted.
func Dump(n Node) string {
	var d dumper
	d.value(reflect.ValueOf(n), 0)
	return d.b.String()
}

type dumper struct {
	b strings.Builder
}

var (
	posType   = reflect.TypeFor[token.Pos]()
	spanType  = reflect.TypeFor[Span]()
	identType = reflect.TypeFor[*Ident]()
	nameType  = reflect.TypeFor[*ObjectName]()
	kindType  = reflect.TypeFor[LiteralKind]()
)

func (d *dumper) indent(n int) {
	d.b.WriteByte('\n')
	for i := 0; i < n; i++ {
		d.b.WriteString("  ")
	}
}

// isZero reports whether a field is left out of the dump.
func isZero(v reflect.Value) bool {
	if v.Type() == kindType {
		return false
	}
	switch v.Kind() {
	case reflect.Slice:
		return v.IsNil()
	}
	return v.IsZero()
}

// isSimple reports whether v prints on one line.
func isSimple(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return true
		}
		return isSimple(v.Elem())
	case reflect.Pointer:
		if v.IsNil() || v.Type() == identType || v.Type() == nameType {
			return true
		}
		return false
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if !isSimple(v.Index(i)) {
				return false
			}
		}
		return true
	}
	return true
}

// simpleNode reports whether every shown field of the struct v is simple.
func simpleNode(v reflect.Value) bool {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		if t.Field(i).Type == posType || t.Field(i).Type == spanType || isZero(f) {
			continue
		}
		if !isSimple(f) || f.Kind() == reflect.Slice && f.Len() > 4 {
			return false
		}
	}
	return true
}

func (d *dumper) value(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			d.b.WriteString("nil")
			return
		}
		d.value(v.Elem(), depth)
	case reflect.Pointer:
		if v.IsNil() {
			d.b.WriteString("nil")
			return
		}
		switch x := v.Interface().(type) {
		case *Ident:
			d.ident(x)
			return
		case *ObjectName:
			for i, part := range x.Parts {
				if i > 0 {
					d.b.WriteByte('.')
				}
				d.ident(part)
			}
			return
		case *bool:
			d.b.WriteString(strconv.FormatBool(*x))
			return
		}
		d.node(v.Elem(), depth)
	case reflect.Struct:
		d.node(v, depth)
	case reflect.Slice:
		if isSimple(v) && v.Len() <= 4 {
			d.b.WriteByte('[')
			for i := 0; i < v.Len(); i++ {
				if i > 0 {
					d.b.WriteString(", ")
				}
				d.value(v.Index(i), depth)
			}
			d.b.WriteByte(']')
			return
		}
		d.b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			d.indent(depth + 1)
			d.value(v.Index(i), depth+1)
		}
		d.b.WriteByte(']')
	case reflect.String:
		d.b.WriteString(strconv.Quote(v.String()))
	case reflect.Bool:
		d.b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int:
		if v.Type() == kindType {
			d.b.WriteString(LiteralKind(v.Int()).String())
			return
		}
		d.b.WriteString(strconv.FormatInt(v.Int(), 10))
	default:
		d.b.WriteString(v.String())
	}
}

// ident prints an identifier as written: in backquotes if it was quoted.
func (d *dumper) ident(x *Ident) {
	if x.Quoted {
		d.b.WriteString("`" + strings.ReplaceAll(x.Name, "`", "``") + "`")
		return
	}
	d.b.WriteString(x.Name)
}

func (d *dumper) node(v reflect.Value, depth int) {
	t := v.Type()
	d.b.WriteByte('(')
	d.b.WriteString(t.Name())
	simple := simpleNode(v)
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		ft := t.Field(i)
		if ft.Type == posType || ft.Type == spanType || isZero(f) {
			continue
		}
		if simple {
			d.b.WriteByte(' ')
		} else {
			d.indent(depth + 1)
		}
		d.b.WriteString(ft.Name)
		d.b.WriteString(": ")
		d.value(f, depth+1)
	}
	d.b.WriteByte(')')
}
