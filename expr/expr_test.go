package expr

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestString(t *testing.T) {
	k := newKit()
	c := k.call
	u := &Literal{V: types.StringValue("HOUR"), T: types.String}
	tests := []struct {
		n    Node
		want string
	}{
		{c("AND", c(">", c("*", col("f"), I(2)), I(10)), c("LIKE", col("s"), S("a%"))), "(((f * 2.0) > 10.0) AND (s LIKE 'a%'))"},
		{c("NOT", c("IS NULL", col("n"))), "NOT (n IS NULL)"},
		{c("NEG", col("i")), "-i"},
		{c("IN", col("i"), I(1), I(2)), "(i IN (1, 2))"},
		{c("NOT BETWEEN", col("i"), I(1), I(2)), "(i NOT BETWEEN 1 AND 2)"},
		{c("LIKE", col("s"), S("a!%"), S("!")), "(s LIKE 'a!%' ESCAPE '!')"},
		{c("ITEM", col("arr"), I(1)), "arr[1]"},
		{c("FIELD", col("r"), S("x")), "r.x"},
		{c("EXTRACT", u, col("ts")), "EXTRACT(HOUR FROM ts)"},
		{c("FLOOR", col("ts"), u), "FLOOR(ts TO HOUR)"},
		{c("CURRENT_TIMESTAMP"), "CURRENT_TIMESTAMP"},
		{c("UPPER", S("it's")), "UPPER('it''s')"},
		{c("COALESCE", col("n"), BI(1)), "COALESCE(CAST(n AS BIGINT), CAST(1 AS BIGINT))"},
		{k.cast(col("s"), types.Int), "CAST(s AS INT)"},
		{k.tryCast(col("s"), types.Decimal(5, 2)), "TRY_CAST(s AS DECIMAL(5, 2))"},
		{k.caseOf(nil, []Node{col("flag"), I(1)}, I(2)), "CASE WHEN flag THEN 1 ELSE 2 END"},
		{k.caseOf(col("i"), []Node{I(1), S("a")}, nil), "CASE WHEN (i = 1) THEN 'a' END"},
		{&Column{Index: 3}, "$3"},
		{TS("2020-04-15 08:05:00"), "TIMESTAMP '2020-04-15 08:05:00'"},
		{DT("2020-04-15"), "DATE '2020-04-15'"},
		{Dec("12.30"), "12.30"},
		{Null, "NULL"},
	}
	for _, tc := range tests {
		if got := tc.n.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}

func TestFoldAndConstants(t *testing.T) {
	k := newKit()
	c := k.call
	n := c("+", c("*", I(2), I(3)), col("i"))
	f, err := Fold(n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.String(); got != "(6 + i)" {
		t.Errorf("Fold = %s", got)
	}
	if IsConstant(n) || !IsConstant(c("*", I(2), I(3))) {
		t.Errorf("IsConstant wrong")
	}
	if IsConstant(c("CURRENT_TIMESTAMP")) || IsConstant(c("UUID")) {
		t.Errorf("non-deterministic calls are constant")
	}
	// FALSE AND x folds to FALSE, TRUE OR x to TRUE.
	f, _ = Fold(c("AND", c("=", I(1), I(2)), c(">", col("i"), I(0))), nil)
	if got := f.String(); got != "FALSE" {
		t.Errorf("Fold(FALSE AND x) = %s", got)
	}
	f, _ = Fold(c("OR", c(">", col("i"), I(0)), B(true)), nil)
	if got := f.String(); got != "TRUE" {
		t.Errorf("Fold(x OR TRUE) = %s", got)
	}
	// A constant that fails stays in place and fails when evaluated.
	f, _ = Fold(c("/", I(1), I(0)), nil)
	if _, ok := f.(*Literal); ok {
		t.Errorf("1/0 was folded")
	}
	// Non-deterministic calls are not folded.
	f, _ = Fold(c("RAND"), nil)
	if _, ok := f.(*Literal); ok {
		t.Errorf("RAND() was folded")
	}
	// CASE with constant parts folds.
	f, _ = Fold(k.caseOf(nil, []Node{c("=", I(1), I(1)), S("a")}, S("b")), nil)
	if got := f.String(); got != "'a'" {
		t.Errorf("Fold(CASE) = %s", got)
	}
}

func TestColumns(t *testing.T) {
	k := newKit()
	c := k.call
	n := c("AND", c(">", col("f"), col("i")), c("OR", c("LIKE", col("s"), S("x")), c("<", col("i"), col("b"))))
	if got := Columns(n); !slices.Equal(got, []int{0, 1, 3, 4}) {
		t.Errorf("Columns = %v", got)
	}
	if got := Columns(I(1)); got != nil {
		t.Errorf("Columns(literal) = %v", got)
	}
	shifted := MapColumns(n, func(c *Column) Node { return &Column{Index: c.Index + 10, Name: c.Name, T: c.T} })
	if got := Columns(shifted); !slices.Equal(got, []int{10, 11, 13, 14}) {
		t.Errorf("MapColumns: Columns = %v", got)
	}
	if got := Columns(n); !slices.Equal(got, []int{0, 1, 3, 4}) {
		t.Errorf("MapColumns modified its input: %v", got)
	}
}

func TestPredicate(t *testing.T) {
	k := newKit()
	c := k.call
	tests := []struct {
		n    Node
		want bool
	}{
		{c(">", col("i"), I(5)), true},
		{c(">", col("n"), I(5)), false},           // NULL
		{c("NOT", c(">", col("n"), I(5))), false}, // NOT NULL is NULL
		{c("IS NOT TRUE", c(">", col("n"), I(5))), true},
		{c("AND", col("flag"), c("LIKE", col("s"), S("h%"))), true},
		{c("OR", col("nb"), c("=", col("i"), I(7))), true},
		{col("flag"), true},
		{col("nb"), false},
		{B(false), false},
	}
	for _, tc := range tests {
		p, err := CompilePredicate(tc.n, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.n, err)
		}
		got, err := p(testRow())
		if err != nil || got != tc.want {
			t.Errorf("%s = %v, %v; want %v", tc.n, got, err, tc.want)
		}
	}
	if _, err := CompilePredicate(col("i"), nil); err == nil {
		t.Errorf("CompilePredicate(INT): no error")
	}
}

func TestUserFunctions(t *testing.T) {
	r := NewRegistry()
	calls := 0
	err := r.Register(ScalarFunction{
		Name:   "add_tax",
		Args:   []types.Type{types.Decimal(10, 2), types.Double},
		Result: types.Decimal(10, 2),
		Eval: func(args []types.Value) (types.Value, error) {
			calls++
			rate, _ := types.DecimalFromFloat(args[1].Float(), 10, 4)
			v, err := types.DecimalMul(args[0], rate, 20, 6)
			if err != nil {
				return types.NullValue, err
			}
			r, _ := types.FitDecimal(v, 10, 2)
			return r, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(ScalarFunction{Name: "ADD_TAX", Result: types.Int, Eval: func([]types.Value) (types.Value, error) { return types.NullValue, nil }}); err == nil {
		t.Errorf("duplicate registration: no error")
	}
	if err := r.Register(ScalarFunction{Name: "upper", Result: types.Int, Eval: func([]types.Value) (types.Value, error) { return types.NullValue, nil }}); err == nil {
		t.Errorf("shadowing a built-in: no error")
	}
	if err := r.Register(ScalarFunction{Name: "no_eval", Result: types.Int}); err == nil {
		t.Errorf("function without Eval: no error")
	}
	if err := r.Register(ScalarFunction{Name: "bad name", Result: types.Int, Eval: func([]types.Value) (types.Value, error) { return types.NullValue, nil }}); err == nil {
		t.Errorf("invalid name: no error")
	}
	err = r.Register(ScalarFunction{
		Name: "fail", Variadic: true, CallOnNull: true,
		ResultType: func(args []types.Type) (types.Type, error) {
			if len(args) == 0 {
				return types.Type{}, errors.New("needs an argument")
			}
			return types.String, nil
		},
		NonDeterministic: true,
		Eval: func(args []types.Value) (types.Value, error) {
			if args[0].IsNull() {
				return types.StringValue("saw NULL"), nil
			}
			return types.NullValue, errors.New("boom")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	k := &kit{b: NewBuilder(r)}
	c := k.call
	cases := []exprCase{
		// The INT argument is converted to DECIMAL(10, 2) and the DECIMAL column to DOUBLE.
		{c("ADD_TAX", I(100), Dec("0.19")), "19.00"},
		{c("add_tax", col("d"), F(0.5)), "6.15"},
		{c("ADD_TAX", col("d"), col("n")), "NULL"},
		{c("ADD_TAX", col("s"), F(1)), "BIND ERROR: cannot apply 'ADD_TAX' to (STRING, DOUBLE): expected (DECIMAL(10, 2), DOUBLE)"},
		{c("ADD_TAX", col("d")), "BIND ERROR: cannot apply 'ADD_TAX' to (DECIMAL(10, 2)): expected (DECIMAL(10, 2), DOUBLE)"},
		{c("FAIL", col("n")), "saw NULL"},
		{c("FAIL", col("i")), "ERROR: cannot evaluate FAIL: boom"},
		{c("FAIL"), "BIND ERROR: cannot apply 'FAIL' to (): needs an argument"},
	}
	runCases(t, cases, nil)
	if calls != 2 {
		t.Errorf("Eval called %d times, want 2 (NULL arguments skip it)", calls)
	}
	if IsConstant(c("FAIL", I(1))) {
		t.Errorf("a non-deterministic user function is constant")
	}
	if err := r.Unregister("add_tax"); err != nil {
		t.Errorf("Unregister: %v", err)
	}
	if err := r.Unregister("upper"); err == nil {
		t.Errorf("Unregister(built-in): no error")
	}
}

func TestTableFunctions(t *testing.T) {
	r := NewRegistry()
	err := r.RegisterTable(TableFunction{
		Name:   "split",
		Args:   []types.Type{types.String, types.String},
		Result: types.NewSchema(types.Column{Name: "word", Type: types.String}, types.Column{Name: "len", Type: types.Int}),
		Eval: func(args []types.Value, emit func([]types.Value) error) error {
			if args[0].IsNull() {
				return nil
			}
			row := make([]types.Value, 2)
			for _, w := range strings.Split(args[0].Str(), args[1].Str()) {
				row[0], row[1] = types.StringValue(w), types.Int32Value(int32(len(w)))
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(r)
	tc, err := b.TableCall("SPLIT", col("s"), S("l"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tc.Out.String(); got != "ROW<`word` STRING, `len` INT>" {
		t.Errorf("schema = %s", got)
	}
	run, err := CompileTable(tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = run(testRow(), func(row []types.Value) error {
		got = append(got, row[0].Str()+":"+types.FormatValue(row[1], types.Int))
		return nil
	})
	if err != nil || strings.Join(got, ",") != "he:2,:0,o:1" {
		t.Errorf("rows = %v, %v", got, err)
	}
	if _, err := b.Call("split", col("s"), S(",")); err == nil || !strings.Contains(err.Error(), "LATERAL TABLE") {
		t.Errorf("calling a table function as scalar: %v", err)
	}
	if _, err := b.TableCall("splitt", col("s")); err == nil || !strings.Contains(err.Error(), `did you mean "SPLIT"`) {
		t.Errorf("unknown table function: %v", err)
	}
	if _, err := b.TableCall("split", col("i"), S(",")); err == nil {
		t.Errorf("wrong argument types: no error")
	}
}

// TestNoAllocs checks that numeric and boolean evaluation allocates nothing.
func TestNoAllocs(t *testing.T) {
	k := newKit()
	c := k.call
	row := testRow()
	for _, n := range []Node{
		c("AND", c(">", c("*", col("f"), I(2)), I(3)), c("LIKE", col("s"), S("h%"))),
		c("<=", c("+", col("i"), col("b")), I(10)),
		c("=", c("*", col("d"), I(2)), Dec("24.60")),
		c(">", c("+", col("d"), I(1)), col("b")),
		c("IN", col("i"), I(1), I(5), I(7)),
		c("BETWEEN", col("f"), I(1), I(3)),
		c("OR", c("IS NULL", col("n")), c("<>", col("s"), S("x"))),
		k.caseOf(nil, []Node{c(">", col("i"), I(5)), col("b")}, I(0)),
		c("COALESCE", col("n"), col("i")),
		c("EXTRACT", &Literal{V: types.StringValue("HOUR"), T: types.String}, col("ts")),
	} {
		e, err := Compile(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() { _, _ = e(row) })
		if allocs != 0 {
			t.Errorf("%s allocates %v per row", n, allocs)
		}
	}
}
