package expr

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/types"
)

// badNode carries a bind error through a test table.
type badNode struct{ err error }

func (b *badNode) Type() types.Type { return types.Null }
func (b *badNode) String() string   { return "BAD(" + b.err.Error() + ")" }

// kit builds test expressions over the test row.
type kit struct {
	b *Builder
}

func newKit() *kit { return &kit{b: NewBuilder(NewRegistry())} }

func firstBad(args []Node) Node {
	for _, a := range args {
		if b, ok := a.(*badNode); ok {
			return b
		}
	}
	return nil
}

func (k *kit) call(name string, args ...Node) Node {
	if b := firstBad(args); b != nil {
		return b
	}
	n, err := k.b.Call(name, args...)
	if err != nil {
		return &badNode{err}
	}
	return n
}

func (k *kit) cast(x Node, t types.Type) Node {
	if b := firstBad([]Node{x}); b != nil {
		return b
	}
	n, err := k.b.Cast(x, t, false)
	if err != nil {
		return &badNode{err}
	}
	return n
}

func (k *kit) tryCast(x Node, t types.Type) Node {
	if b := firstBad([]Node{x}); b != nil {
		return b
	}
	n, err := k.b.Cast(x, t, true)
	if err != nil {
		return &badNode{err}
	}
	return n
}

func (k *kit) caseOf(operand Node, pairs []Node, els Node) Node {
	var whens, thens []Node
	for i := 0; i < len(pairs); i += 2 {
		whens = append(whens, pairs[i])
		thens = append(thens, pairs[i+1])
	}
	all := append(append([]Node{}, pairs...), operand, els)
	for _, a := range all {
		if a != nil {
			if b, ok := a.(*badNode); ok {
				return b
			}
		}
	}
	n, err := k.b.Case(operand, whens, thens, els)
	if err != nil {
		return &badNode{err}
	}
	return n
}

// Literals typed as the planner types them.
func I(n int64) Node {
	return &Literal{V: types.IntValue(types.KindInt, n), T: types.Int.WithNullable(false)}
}
func BI(n int64) Node {
	return &Literal{V: types.BigIntValue(n), T: types.BigInt.WithNullable(false)}
}
func F(f float64) Node { return &Literal{V: types.DoubleValue(f), T: types.Double.WithNullable(false)} }
func S(s string) Node {
	return &Literal{V: types.CharValue(s), T: types.Char(max(len([]rune(s)), 1)).WithNullable(false)}
}
func B(b bool) Node { return &Literal{V: types.BoolValue(b), T: types.Boolean.WithNullable(false)} }

var Null Node = &Literal{V: types.NullValue, T: types.Null}

// UB is the UNKNOWN literal: a NULL BOOLEAN.
var UB Node = &Literal{V: types.NullValue, T: types.Boolean}

func Dec(s string) Node {
	v, err := types.ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return &Literal{V: v, T: types.Decimal(types.DecimalPrecision(v), v.Scale()).WithNullable(false)}
}

func TS(s string) Node {
	m, err := types.ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	p := 0
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		p = len(s) - i - 1
	}
	return &Literal{V: types.TimestampValue(m), T: types.Timestamp(p).WithNullable(false)}
}

func DT(s string) Node {
	d, err := types.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return &Literal{V: types.DateValue(d), T: types.Date.WithNullable(false)}
}

func IntervalDT(micros int64) Node {
	return &Literal{V: types.IntervalDayTimeValue(micros), T: types.IntervalDT.WithNullable(false)}
}

func IntervalYM(months int64) Node {
	return &Literal{V: types.IntervalYearMonthValue(months), T: types.IntervalYM.WithNullable(false)}
}

// The test row.
var testCols = []types.Field{
	{Name: "i", Type: types.Int.WithNullable(false)},        // 0
	{Name: "b", Type: types.BigInt},                         // 1
	{Name: "d", Type: types.Decimal(10, 2)},                 // 2
	{Name: "f", Type: types.Double},                         // 3
	{Name: "s", Type: types.String},                         // 4
	{Name: "n", Type: types.Int},                            // 5
	{Name: "ts", Type: types.Timestamp(3)},                  // 6
	{Name: "dt", Type: types.Date},                          // 7
	{Name: "flag", Type: types.Boolean},                     // 8
	{Name: "ns", Type: types.String},                        // 9
	{Name: "arr", Type: types.ArrayOf(types.Int)},           // 10
	{Name: "m", Type: types.MapOf(types.String, types.Int)}, // 11
	{Name: "r", Type: types.RowOf(types.Field{Name: "x", Type: types.Int}, types.Field{Name: "y", Type: types.String})}, // 12
	{Name: "ltz", Type: types.TimestampLTZ(3)}, // 13
	{Name: "nb", Type: types.Boolean},          // 14
	{Name: "js", Type: types.String},           // 15
	{Name: "u", Type: types.String},            // 16
	{Name: "rr", Type: types.RowOf(types.Field{Name: "in", Type: types.RowOf(types.Field{Name: "z", Type: types.BigInt})}, types.Field{Name: "w", Type: types.String})}, // 17
	{Name: "nr", Type: types.RowOf(types.Field{Name: "x", Type: types.Int})},                                                                                            // 18: NULL
}

func testRow() []types.Value {
	ts, _ := types.ParseTimestamp("2020-04-15 08:05:00.123")
	dt, _ := types.ParseDate("2020-04-15")
	return []types.Value{
		types.IntValue(types.KindInt, 7),
		types.BigIntValue(-3),
		types.DecimalValue(1230, 2),
		types.DoubleValue(2.5),
		types.StringValue("hello"),
		types.NullValue,
		types.TimestampValue(ts),
		types.DateValue(dt),
		types.BoolValue(true),
		types.NullValue,
		types.ArrayValue([]types.Value{types.Int32Value(1), types.Int32Value(2), types.Int32Value(3)}),
		types.NewMapValue(&types.MapValue{
			Keys:   []types.Value{types.StringValue("a"), types.StringValue("b")},
			Values: []types.Value{types.Int32Value(1), types.Int32Value(2)},
		}),
		types.RowValue([]types.Value{types.Int32Value(1), types.StringValue("abc")}),
		types.TimestampLTZValue(ts),
		types.NullValue,
		types.StringValue(`{"a":{"b":[10,{"c":"x\"y"}]},"n":1.5e3,"t":true,"z":null,"o":{}}`),
		types.StringValue("Grüße, 世界"),
		types.RowValue([]types.Value{types.RowValue([]types.Value{types.BigIntValue(42)}), types.StringValue("w")}),
		types.NullValue,
	}
}

func col(name string) Node {
	for i, c := range testCols {
		if c.Name == name {
			return &Column{Index: i, Name: name, T: c.Type}
		}
	}
	panic("no column " + name)
}

// fixedEnv is an environment with a fixed clock: 2020-04-15 08:05:00.123456 UTC.
func fixedEnv(loc *time.Location) *Env {
	now, _ := types.ParseTimestamp("2020-04-15 08:05:00.123456")
	return &Env{Now: func() int64 { return now }, Location: loc}
}

// run evaluates n over the test row and returns its text ("NULL" for
// NULL), "BIND ERROR: ..." or "ERROR: ...". It also checks that the value's
// kind matches the node's type.
func run(t *testing.T, n Node, env *Env) string {
	t.Helper()
	if b, ok := n.(*badNode); ok {
		return "BIND ERROR: " + b.err.Error()
	}
	e, err := Compile(n, env)
	if err != nil {
		return "COMPILE ERROR: " + err.Error()
	}
	v, err := e(testRow())
	if err != nil {
		return "ERROR: " + err.Error()
	}
	if !v.IsNull() && n.Type().Kind != types.KindNull && v.Kind() != n.Type().Kind {
		t.Errorf("%s: value kind %s does not match type %s", n, v.Kind(), n.Type())
	}
	if v.IsNull() && !n.Type().Nullable() {
		t.Errorf("%s: NULL from a NOT NULL type %s", n, n.Type())
	}
	return types.FormatValue(v, n.Type())
}

type exprCase struct {
	n    Node
	want string
}

func runCases(t *testing.T, cases []exprCase, env *Env) {
	t.Helper()
	for _, tc := range cases {
		got := run(t, tc.n, env)
		if strings.HasSuffix(tc.want, "...") {
			if !strings.HasPrefix(got, strings.TrimSuffix(tc.want, "...")) {
				t.Errorf("%s = %q, want prefix %q", tc.n, got, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.n, got, tc.want)
		}
	}
}
