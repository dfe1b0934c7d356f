package agg

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// mustFunc looks a built-in up.
func mustFunc(t testing.TB, name string) Func {
	t.Helper()
	f, err := NewRegistry().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newAcc builds an accumulator for name over argTypes, checking the result
// type's printout when want is not empty.
func newAcc(t testing.TB, name string, appendOnly, distinct bool, want string, argTypes ...types.Type) Accumulator {
	t.Helper()
	f := mustFunc(t, name)
	rt, err := f.ResultType(argTypes)
	if err != nil {
		t.Fatal(err)
	}
	if want != "" && rt.String() != want {
		t.Fatalf("%s%v: result type %s, want %s", name, argTypes, rt, want)
	}
	c := Call{Func: f, ArgTypes: argTypes, Result: rt, Filter: -1, AppendOnly: appendOnly, Distinct: distinct}
	for i := range argTypes {
		c.Args = append(c.Args, i)
	}
	return NewGroup([]Call{c})[0]
}

func add(t testing.TB, a Accumulator, args ...types.Value) {
	t.Helper()
	if err := a.Add(args); err != nil {
		t.Fatal(err)
	}
}

func retract(t testing.TB, a Accumulator, args ...types.Value) {
	t.Helper()
	if err := a.Retract(args); err != nil {
		t.Fatal(err)
	}
}

// checkResult compares a's result with want, and also checks that a clone
// and a state round trip give the same result.
func checkResult(t testing.TB, a Accumulator, want types.Value) {
	t.Helper()
	got := a.Result()
	if !sameValue(got, want) {
		t.Fatalf("result %s, want %s", show(got), show(want))
	}
	if c := a.Clone().Result(); !sameValue(c, want) {
		t.Fatalf("clone result %s, want %s", show(c), show(want))
	}
	st := a.AppendState(nil)
	b := a.Clone()
	b.Reset()
	if err := b.LoadState(st); err != nil {
		t.Fatal(err)
	}
	if r := b.Result(); !sameValue(r, want) {
		t.Fatalf("reloaded result %s, want %s", show(r), show(want))
	}
}

// sameValue is equality including the kind and, for DECIMAL, the scale.
func sameValue(a, b types.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	if a.Kind() == types.KindDecimal && a.Scale() != b.Scale() {
		return false
	}
	if a.Kind() == types.KindDouble || a.Kind() == types.KindFloat {
		return a.Float() == b.Float()
	}
	return types.Equal(a, b)
}

func show(v types.Value) string {
	return string(appendShow(nil, v))
}

// appendShow prints v for test messages: NULL, numbers, 'strings', [elems].
func appendShow(dst []byte, v types.Value) []byte {
	switch k := v.Kind(); {
	case k == types.KindNull:
		return append(dst, "NULL"...)
	case k == types.KindBoolean:
		return strconv.AppendBool(dst, v.Bool())
	case k == types.KindFloat || k == types.KindDouble:
		return strconv.AppendFloat(dst, v.Float(), 'g', -1, 64)
	case k == types.KindDecimal:
		s := v.BigUnscaled().String()
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		if sc := v.Scale(); sc > 0 {
			for len(s) <= sc {
				s = "0" + s
			}
			s = s[:len(s)-sc] + "." + s[len(s)-sc:]
		}
		if neg {
			s = "-" + s
		}
		return append(dst, s...)
	case k.IsString() || k.IsBinary():
		return strconv.AppendQuote(dst, v.Str())
	case k == types.KindArray || k == types.KindMultiset || k == types.KindRow:
		dst = append(dst, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = appendShow(dst, e)
		}
		return append(dst, ']')
	}
	return strconv.AppendInt(dst, v.Int(), 10)
}
