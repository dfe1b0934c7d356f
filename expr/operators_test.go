package expr

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestArithmetic(t *testing.T) {
	k := newKit()
	c := k.call
	cases := []exprCase{
		// integers
		{c("+", I(2), I(3)), "5"},
		{c("+", col("i"), col("b")), "4"},
		{c("-", col("b"), I(10)), "-13"},
		{c("*", I(6), I(7)), "42"},
		{c("/", I(7), I(2)), "3"},
		{c("/", I(-7), I(2)), "-3"},
		{c("%", I(-7), I(3)), "-1"},
		{c("MOD", I(7), I(-3)), "1"},
		{c("/", I(1), I(0)), "ERROR: cannot evaluate (1 / 0): division by zero"},
		{c("%", col("i"), I(0)), "ERROR: cannot evaluate (i % 0): division by zero"},
		{c("+", I(2147483647), I(1)), "-2147483648"}, // INT wraps as in Java
		{c("+", BI(2147483647), I(1)), "2147483648"},
		{c("NEG", col("b")), "3"},
		{c("+", col("n"), I(1)), "NULL"},
		{c("*", Null, I(1)), "NULL"},
		// approximate
		{c("*", col("f"), I(2)), "5.0"},
		{c("/", col("f"), I(0)), "Infinity"},
		{c("+", F(0.1), F(0.2)), "0.30000000000000004"},
		{c("%", F(7.5), I(2)), "1.5"},
		{c("-", col("d"), col("f")), "9.8"},
		// exact decimals
		{c("+", Dec("0.1"), Dec("0.2")), "0.3"},
		{c("*", Dec("1.00"), Dec("2.5")), "2.500"},
		{c("-", Dec("1.00"), Dec("0.015")), "0.985"},
		{c("/", Dec("1.00"), I(3)), "0.3333333333333"}, // DECIMAL(3,2) / DECIMAL(10,0): scale max(6, 2+10+1) = 13
		{c("/", I(1), Dec("3.0")), "0.333333"},         // scale max(6, 0+2+1) = 6
		{c("+", col("d"), I(1)), "13.30"},
		{c("*", col("d"), col("b")), "-36.90"},
		{c("%", Dec("7.5"), I(2)), "1.5"},
		{c("/", Dec("1.0"), Dec("0.0")), "ERROR: cannot evaluate (1.0 / 0.0): division by zero"},
		{c("NEG", Dec("1.50")), "-1.50"},
		// intervals and date/time
		{c("+", col("ts"), IntervalDT(types.MicrosPerDay+types.MicrosPerHour)), "2020-04-16 09:05:00.123"},
		{c("-", col("ts"), IntervalYM(2)), "2020-02-15 08:05:00.123"},
		{c("+", IntervalYM(1), DT("2020-01-31")), "2020-02-29"},
		{c("+", DT("2020-01-31"), IntervalDT(2*types.MicrosPerDay)), "2020-02-02"},
		{c("+", IntervalDT(types.MicrosPerHour), IntervalDT(30*types.MicrosPerMinute)), "+0 01:30:00.000"},
		{c("*", IntervalDT(types.MicrosPerHour), I(3)), "+0 03:00:00.000"},
		{c("*", I(2), IntervalYM(7)), "+1-02"},
		{c("+", col("ltz"), IntervalDT(types.MicrosPerSecond)), "2020-04-15 08:05:01.123"},
		{c("+", IntervalDT(types.MicrosPerSecond), col("ltz")), "2020-04-15 08:05:01.123"},
		{c("-", col("ts"), IntervalDT(4*types.MicrosPerSecond)), "2020-04-15 08:04:56.123"},
		// bind errors
		{c("+", col("s"), I(1)), "BIND ERROR: cannot apply '+' to (STRING, INT): expected (NUMERIC, NUMERIC) or (TEMPORAL, INTERVAL) or (INTERVAL, INTERVAL)"},
		{c("-", col("ts"), col("ts")), "BIND ERROR: cannot apply '-' to (TIMESTAMP(3), TIMESTAMP(3)): subtracting date/time values is not supported, use TIMESTAMPDIFF(unit, a, b)"},
	}
	runCases(t, cases, fixedEnv(nil))
}

func TestArithmeticTypes(t *testing.T) {
	k := newKit()
	tests := []struct {
		n    Node
		want string
	}{
		{k.call("+", I(1), BI(2)), "BIGINT NOT NULL"},
		{k.call("+", col("i"), col("n")), "INT"},
		{k.call("/", I(1), I(2)), "INT NOT NULL"},
		{k.call("%", BI(10), I(3)), "INT NOT NULL"},
		{k.call("+", Dec("1.5"), Dec("0.25")), "DECIMAL(4, 2) NOT NULL"},
		{k.call("*", col("d"), I(2)), "DECIMAL(20, 2)"},
		{k.call("/", col("d"), I(2)), "DECIMAL(21, 13)"},
		{k.call("+", col("d"), col("f")), "DOUBLE"},
		{k.call("+", col("ts"), IntervalDT(1)), "TIMESTAMP(3)"},
	}
	for _, tc := range tests {
		if b, ok := tc.n.(*badNode); ok {
			t.Errorf("bind error: %v", b.err)
			continue
		}
		if got := tc.n.Type().String(); got != tc.want {
			t.Errorf("%s: type %s, want %s", tc.n, got, tc.want)
		}
	}
}

func TestComparison(t *testing.T) {
	k := newKit()
	c := k.call
	cases := []exprCase{
		{c("=", I(1), I(1)), "TRUE"},
		{c("<>", I(1), I(1)), "FALSE"},
		{c("<", col("b"), col("i")), "TRUE"},
		{c(">=", col("i"), BI(7)), "TRUE"},
		{c("=", col("d"), Dec("12.3")), "TRUE"},
		{c("=", col("d"), F(12.3)), "TRUE"},
		{c(">", col("d"), I(12)), "TRUE"},
		{c("<", I(12), col("d")), "TRUE"},
		{c("=", col("f"), Dec("2.50")), "TRUE"},
		{c("=", col("s"), S("hello")), "TRUE"},
		{c("<", col("s"), S("help")), "TRUE"},
		{c("=", S("a"), S("a ")), "FALSE"},
		{c("=", col("n"), I(1)), "NULL"},
		{c("=", I(1), Null), "NULL"},
		{c("=", F(0).(*Literal), F(0)), "TRUE"},
		{c("=", col("ts"), TS("2020-04-15 08:05:00.123")), "TRUE"},
		{c("<", col("dt"), col("ts")), "TRUE"},
		{c("=", col("dt"), TS("2020-04-15 00:00:00")), "TRUE"},
		{c("=", col("ltz"), col("ts")), "TRUE"}, // UTC session zone
		{c("=", col("flag"), B(true)), "TRUE"},
		{c("=", col("arr"), c("ARRAY", I(1), I(2), I(3))), "TRUE"},
		{c("IS DISTINCT FROM", col("n"), Null), "FALSE"},
		{c("IS DISTINCT FROM", col("n"), I(1)), "TRUE"},
		{c("IS NOT DISTINCT FROM", col("i"), BI(7)), "TRUE"},
		{c("IS NOT DISTINCT FROM", col("ns"), col("ns")), "TRUE"},
		{c("=", col("s"), I(1)), "BIND ERROR: cannot compare STRING with INT in '='"},
		{c("<", col("dt"), I(1)), "BIND ERROR: cannot compare DATE with INT in '<'"},
		{c("BETWEEN", col("i"), I(1), I(7)), "TRUE"},
		{c("BETWEEN", col("i"), I(8), I(9)), "FALSE"},
		{c("NOT BETWEEN", col("i"), I(8), I(9)), "TRUE"},
		{c("BETWEEN", col("i"), Null, I(5)), "FALSE"}, // 7 <= 5 is FALSE, so FALSE
		{c("BETWEEN", col("i"), Null, I(9)), "NULL"},
		{c("NOT BETWEEN", col("i"), Null, I(5)), "TRUE"},
		{c("BETWEEN", col("d"), I(12), F(12.5)), "TRUE"},
		{c("IN", col("i"), I(1), I(7), I(9)), "TRUE"},
		{c("IN", col("i"), I(1), I(2)), "FALSE"},
		{c("IN", col("i"), I(1), Null), "NULL"},
		{c("IN", col("i"), I(7), Null), "TRUE"},
		{c("NOT IN", col("i"), I(1), I(2)), "TRUE"},
		{c("NOT IN", col("i"), I(1), Null), "NULL"},
		{c("NOT IN", col("i"), I(7)), "FALSE"},
		{c("IN", col("n"), I(1)), "NULL"},
		{c("IN", col("s"), S("x"), S("hello")), "TRUE"},
		{c("IN", col("d"), I(12), Dec("12.30")), "TRUE"},
		{c("IN", col("d"), I(12), F(12.3)), "TRUE"},
		{c("IN", col("i"), col("b"), c("+", col("b"), I(10))), "TRUE"},
		{c("IN", col("i"), col("b"), col("n")), "NULL"},
		{c("IN", col("s"), I(1)), "BIND ERROR: cannot compare STRING with INT in 'IN'"},
	}
	runCases(t, cases, fixedEnv(nil))
}

// TestThreeValuedLogic checks the truth tables of AND, OR and NOT and the
// IS predicates over TRUE, FALSE and UNKNOWN.
func TestThreeValuedLogic(t *testing.T) {
	k := newKit()
	vals := []Node{B(true), B(false), UB}
	names := []string{"TRUE", "FALSE", "NULL"}
	and := [3][3]string{
		{"TRUE", "FALSE", "NULL"},
		{"FALSE", "FALSE", "FALSE"},
		{"NULL", "FALSE", "NULL"},
	}
	or := [3][3]string{
		{"TRUE", "TRUE", "TRUE"},
		{"TRUE", "FALSE", "NULL"},
		{"TRUE", "NULL", "NULL"},
	}
	for i := range vals {
		for j := range vals {
			// Column operands so that nothing is folded away.
			a := &Column{Index: 0, Name: "a", T: types.Boolean}
			b := &Column{Index: 1, Name: "b", T: types.Boolean}
			row := []types.Value{vals[i].(*Literal).V, vals[j].(*Literal).V}
			for _, tc := range []struct {
				op   string
				want string
			}{{"AND", and[i][j]}, {"OR", or[i][j]}} {
				n, err := k.b.Call(tc.op, a, b)
				if err != nil {
					t.Fatal(err)
				}
				e, err := Compile(n, nil)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := e(row)
				if got := types.FormatValue(v, types.Boolean); got != tc.want {
					t.Errorf("%s %s %s = %s, want %s", names[i], tc.op, names[j], got, tc.want)
				}
				// The predicate form is true only for TRUE.
				p, err := CompilePredicate(n, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := p(row); got != (tc.want == "TRUE") {
					t.Errorf("predicate %s %s %s = %v", names[i], tc.op, names[j], got)
				}
				// Folding literal operands gives the same answer.
				lit, _ := k.b.Call(tc.op, vals[i], vals[j])
				if got := run(t, lit, nil); got != tc.want {
					t.Errorf("folded %s %s %s = %s, want %s", names[i], tc.op, names[j], got, tc.want)
				}
			}
		}
	}
	isTable := map[string][3]string{
		"NOT":            {"FALSE", "TRUE", "NULL"},
		"IS TRUE":        {"TRUE", "FALSE", "FALSE"},
		"IS FALSE":       {"FALSE", "TRUE", "FALSE"},
		"IS NOT TRUE":    {"FALSE", "TRUE", "TRUE"},
		"IS NOT FALSE":   {"TRUE", "FALSE", "TRUE"},
		"IS UNKNOWN":     {"FALSE", "FALSE", "TRUE"},
		"IS NOT UNKNOWN": {"TRUE", "TRUE", "FALSE"},
		"IS NULL":        {"FALSE", "FALSE", "TRUE"},
		"IS NOT NULL":    {"TRUE", "TRUE", "FALSE"},
	}
	for op, want := range isTable {
		for i := range vals {
			a := &Column{Index: 0, Name: "a", T: types.Boolean}
			n, err := k.b.Call(op, a)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := Compile(n, nil)
			v, _ := e([]types.Value{vals[i].(*Literal).V})
			if got := types.FormatValue(v, types.Boolean); got != want[i] {
				t.Errorf("%s %s = %s, want %s", names[i], op, got, want[i])
			}
		}
	}
}

func TestLogicShortCircuit(t *testing.T) {
	k := newKit()
	// FALSE AND (1/0 = 1) does not evaluate the division.
	div := k.call("=", k.call("/", col("i"), I(0)), I(1))
	cases := []exprCase{
		{k.call("AND", k.call("=", col("i"), I(0)), div), "FALSE"},
		{k.call("OR", k.call("=", col("i"), I(7)), div), "TRUE"},
		{k.call("AND", k.call("=", col("i"), I(7)), div), "ERROR: cannot evaluate (i / 0): division by zero"},
		{k.call("AND", col("s"), B(true)), "BIND ERROR: cannot apply 'AND' to (STRING, BOOLEAN): expected (BOOLEAN, BOOLEAN...)"},
	}
	runCases(t, cases, nil)
}

func TestLike(t *testing.T) {
	k := newKit()
	c := k.call
	like := func(s, p string) Node { return c("LIKE", S(s), S(p)) }
	likeEsc := func(s, p, e string) Node { return c("LIKE", S(s), S(p), S(e)) }
	cases := []exprCase{
		{like("abc", "abc"), "TRUE"},
		{like("abc", "ab"), "FALSE"},
		{like("abc", "a%"), "TRUE"},
		{like("abc", "%c"), "TRUE"},
		{like("abc", "%b%"), "TRUE"},
		{like("abc", "a%c"), "TRUE"},
		{like("abc", "a%b%c"), "TRUE"},
		{like("abc", "a%c%b"), "FALSE"},
		{like("ab", "a%b%b"), "FALSE"},
		{like("abc", "a_c"), "TRUE"},
		{like("abc", "_"), "FALSE"},
		{like("abc", "___"), "TRUE"},
		{like("", "%"), "TRUE"},
		{like("a.c", "a.c"), "TRUE"},
		{like("abc", "a.c"), "FALSE"},
		{like("a+b", "a+b"), "TRUE"},
		{like("a\nb", "a_b"), "FALSE"}, // '_' does not match a line terminator, as in Java
		{like("a\nb", "a%b"), "TRUE"},
		{like("100%", "100%"), "TRUE"},
		{likeEsc("100%", "100!%", "!"), "TRUE"},
		{likeEsc("1000", "100!%", "!"), "FALSE"},
		{likeEsc("a_b", "a!_b", "!"), "TRUE"},
		{likeEsc("axb", "a!_b", "!"), "FALSE"},
		{likeEsc("a!b", "a!!b", "!"), "TRUE"},
		{likeEsc("a%b", `a\%b`, `\`), "TRUE"},
		{likeEsc("ab", "a!b", "!"), "COMPILE ERROR: invalid escape sequence in LIKE pattern 'a!b' at 1"},
		{likeEsc("ab", "ab", "!!"), "COMPILE ERROR: invalid escape character '!!': it must be one character"},
		{like("héllo", "h_llo"), "TRUE"},
		{c("LIKE", col("s"), S("he%")), "TRUE"},
		{c("NOT LIKE", col("s"), S("he%")), "FALSE"},
		{c("LIKE", col("ns"), S("he%")), "NULL"},
		{c("LIKE", col("s"), Null), "NULL"},
		{c("LIKE", col("s"), col("s")), "TRUE"},
		{c("LIKE", col("s"), c("||", S("h"), S("%"))), "TRUE"},
		{c("LIKE", col("s"), c("CONCAT", col("ns"), S("%"))), "NULL"},
		{c("LIKE", col("i"), S("1")), "BIND ERROR: cannot apply 'LIKE' to (INT, CHAR(1)): expected (STRING, STRING) or (STRING, STRING, STRING)"},
		// SIMILAR TO
		{c("SIMILAR TO", S("abc"), S("(a|x)bc")), "TRUE"},
		{c("SIMILAR TO", S("abc"), S("a_c")), "TRUE"},
		{c("SIMILAR TO", S("abbbc"), S("ab+c")), "TRUE"},
		{c("SIMILAR TO", S("abc"), S("[a-c]%")), "TRUE"},
		{c("SIMILAR TO", S("1x"), S("[[:DIGIT:]]x")), "TRUE"},
		{c("SIMILAR TO", S("a.c"), S("a.c")), "TRUE"},
		{c("SIMILAR TO", S("abc"), S("a.c")), "FALSE"},
		{c("NOT SIMILAR TO", S("abc"), S("b%")), "TRUE"},
		{c("SIMILAR TO", S("a+c"), S("a!+c"), S("!")), "TRUE"},
	}
	runCases(t, cases, nil)
}

func TestCase(t *testing.T) {
	k := newKit()
	c := k.call
	cases := []exprCase{
		{k.caseOf(nil, []Node{c(">", col("i"), I(5)), S("big"), c(">", col("i"), I(0)), S("small")}, S("neg")), "big"},
		{k.caseOf(nil, []Node{c(">", col("i"), I(50)), S("big")}, nil), "NULL"},
		{k.caseOf(nil, []Node{col("nb"), I(1)}, I(2)), "2"}, // UNKNOWN is not TRUE
		{k.caseOf(col("i"), []Node{I(1), S("one"), I(7), S("seven")}, S("many")), "seven"},
		{k.caseOf(col("i"), []Node{BI(7), Dec("1.5")}, I(2)), "1.5"},
		{k.caseOf(col("n"), []Node{Null, S("null")}, S("else")), "else"},
		// THEN types are unified: INT and DECIMAL(2,1) give DECIMAL(11,1).
		{k.caseOf(nil, []Node{B(false), I(1)}, Dec("2.5")), "2.5"},
		{k.caseOf(nil, []Node{col("i"), I(1)}, nil), "BIND ERROR: CASE WHEN condition must be BOOLEAN, not INT"},
		{k.caseOf(nil, []Node{B(true), I(1)}, S("x")), "BIND ERROR: cannot find a common type for CASE: INT and CHAR(1)"},
		{k.caseOf(col("s"), []Node{I(1), I(1)}, nil), "BIND ERROR: cannot compare CASE operand with WHEN value: cannot compare STRING with INT in '='"},
		// A CASE only evaluates the branch it takes.
		{k.caseOf(nil, []Node{c("=", col("i"), I(7)), I(0)}, c("/", I(1), col("n"))), "0"},
	}
	runCases(t, cases, nil)
	n := k.caseOf(nil, []Node{B(false), I(1)}, Dec("2.5"))
	if got := n.Type().String(); got != "DECIMAL(11, 1) NOT NULL" {
		t.Errorf("CASE type = %s", got)
	}
}

func TestCastNodes(t *testing.T) {
	k := newKit()
	cases := []exprCase{
		{k.cast(col("s"), types.Int), "ERROR: cannot cast 'hello' to INT: invalid number"},
		{k.tryCast(col("s"), types.Int), "NULL"},
		{k.cast(S("42"), types.Int), "42"},
		{k.cast(S("x"), types.Int), "BIND ERROR: cannot cast 'x' to INT: invalid number"},
		{k.tryCast(S("x"), types.Int), "NULL"},
		{k.cast(col("d"), types.Int), "12"},
		{k.cast(col("d"), types.Decimal(2, 1)), "NULL"},
		{k.cast(col("d"), types.Decimal(4, 1)), "12.3"},
		{k.cast(col("f"), types.Int), "2"},
		{k.cast(col("i"), types.Double), "7.0"},
		{k.cast(col("i"), types.BigInt), "7"},
		{k.cast(col("i"), types.String), "7"},
		{k.cast(col("s"), types.Char(3)), "hel"},
		{k.cast(col("s"), types.VarChar(8)), "hello"},
		{k.cast(col("ts"), types.Date), "2020-04-15"},
		{k.cast(col("ts"), types.String), "2020-04-15 08:05:00.123"},
		{k.cast(col("ts"), types.Timestamp(0)), "2020-04-15 08:05:00"},
		{k.cast(col("flag"), types.Int), "1"},
		{k.cast(col("n"), types.String), "NULL"},
		{k.cast(col("arr"), types.ArrayOf(types.String)), "[1, 2, 3]"},
		{k.cast(col("r"), types.String), "(1, abc)"},
		{k.cast(col("dt"), types.Int), "BIND ERROR: cannot cast DATE to INT"},
		{k.cast(Null, types.Int), "NULL"},
	}
	runCases(t, cases, nil)
	// The result of CAST is nullable when its operand is, and TRY_CAST always.
	if n := k.cast(col("i"), types.BigInt.WithNullable(false)); n.Type().Nullable() {
		t.Errorf("CAST(NOT NULL) is nullable: %s", n.Type())
	}
	if n := k.tryCast(col("i"), types.BigInt.WithNullable(false)); !n.Type().Nullable() {
		t.Errorf("TRY_CAST is not nullable: %s", n.Type())
	}
	// Literal casts are evaluated when built.
	if _, ok := k.cast(S("42"), types.Int).(*Literal); !ok {
		t.Errorf("CAST of a literal was not folded")
	}
}
