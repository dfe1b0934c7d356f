package expr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// cseCols are the columns of the rows the sharing tests evaluate.
var (
	cChannel = &Column{Index: 0, Name: "channel", T: types.String}
	cURL     = &Column{Index: 1, Name: "url", T: types.String}
	cQty     = &Column{Index: 2, Name: "qty", T: types.Int}
	cPrice   = &Column{Index: 3, Name: "price", T: types.Decimal(10, 2)}
)

func randomCSERow(r *rand.Rand) []types.Value {
	channels := []string{"Apple", "GOOGLE", "facebook", "Baidu", "other", ""}
	urls := []string{"https://x.com/a?channel_id=7&b=1", "channel_id=abc", "https://x.com/?q=1", "a&channel_id=", ""}
	row := []types.Value{
		types.StringValue(channels[r.IntN(len(channels))]),
		types.StringValue(urls[r.IntN(len(urls))]),
		types.Int32Value(int32(r.IntN(5) - 2)),
		types.DecimalValue(int64(r.IntN(200000)-1000), 2),
	}
	for i := range row {
		if r.IntN(8) == 0 {
			row[i] = types.NullValue
		}
	}
	return row
}

// counted registers COUNTED(INT) and RANDOMISH(INT), user functions that
// count their calls; RANDOMISH is declared non-deterministic.
func counted(t *testing.T, k *kit) (calls, randCalls *int) {
	calls, randCalls = new(int), new(int)
	reg := func(name string, nonDet bool, n *int) {
		err := k.b.fns.Register(ScalarFunction{
			Name: name, Args: []types.Type{types.Int}, Result: types.Int, NonDeterministic: nonDet,
			Eval: func(args []types.Value) (types.Value, error) {
				*n++
				return types.Int32Value(int32(args[0].Int() * 2)), nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	reg("COUNTED", false, calls)
	reg("RANDOMISH", true, randCalls)
	return calls, randCalls
}

// unshared compiles n as Compile does, but without sharing anything.
func unshared(t *testing.T, n Node) Eval {
	c := newCompiler(nil)
	e, err := c.compile(c.fold(n))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustNode(t *testing.T, n Node) Node {
	t.Helper()
	if b, ok := n.(*badNode); ok {
		t.Fatal(b.err)
	}
	return n
}

func show(v types.Value, err error) string {
	if err != nil {
		return "ERROR: " + err.Error()
	}
	return types.FormatValue(v, types.Type{Kind: v.Kind()})
}

// TestProgramSharesLikeUnshared compares a Program (filter and projections
// sharing q21's and q14's repeated calls) with each expression compiled on
// its own, without sharing, over random rows with NULLs.
func TestProgramSharesLikeUnshared(t *testing.T) {
	k := newKit()
	lower := func() Node { return k.call("LOWER", cChannel) }
	extract := func() Node { return k.call("REGEXP_EXTRACT", cURL, S("(&|^)channel_id=([^&]*)"), I(2)) }
	conv := func() Node { return k.call("*", Dec("0.908"), cPrice) }
	filter := mustNode(t, k.call("OR",
		k.call("IS NOT NULL", extract()),
		k.call("IN", lower(), S("apple"), S("google"), S("facebook"), S("baidu")),
		k.call(">", conv(), I(1000))))
	projs := []Node{
		cChannel,
		k.caseOf(nil, []Node{
			k.call("=", lower(), S("apple")), S("0"),
			k.call("=", lower(), S("google")), S("1"),
			k.call("=", lower(), S("facebook")), S("2"),
			k.call("=", lower(), S("baidu")), S("3"),
		}, extract()),
		conv(),
		k.caseOf(nil, []Node{
			k.call("AND", k.call(">", conv(), I(100)), k.call("<", conv(), I(500))), S("mid"),
			k.call(">=", conv(), I(500)), k.call("UPPER", lower()),
		}, k.call("||", lower(), k.call("UPPER", lower()))),
		// An error on some rows (qty = 0), reached from two places.
		k.call("+", k.call("/", I(100), cQty), k.call("/", I(100), cQty)),
		// A shared CASE, and a shared sub-expression inside a shared one.
		k.call("CONCAT", k.call("UPPER", lower()), k.call("UPPER", lower()), lower()),
	}
	for i := range projs {
		projs[i] = mustNode(t, projs[i])
	}
	p, err := CompileProgram(filter, projs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.NextRow == nil {
		t.Fatal("nothing shared")
	}
	wantFilter := unshared(t, filter)
	var want []Eval
	for _, n := range projs {
		want = append(want, unshared(t, n))
	}
	r := rand.New(rand.NewPCG(1, 2))
	kept, failed := 0, 0
	for range 3000 {
		row := randomCSERow(r)
		p.NextRow()
		ok, err := p.Filter(row)
		wv, werr := wantFilter(row)
		wok := werr == nil && !wv.IsNull() && wv.Bool()
		if ok != wok || (err == nil) != (werr == nil) {
			t.Fatalf("filter over %v: %v, %v; unshared %v, %v", row, ok, err, wok, werr)
		}
		if ok {
			kept++
		}
		for i, e := range p.Projs {
			got, want := show(e(row)), show(want[i](row))
			if got != want {
				t.Fatalf("%s over %v = %s, unshared %s", projs[i], row, got, want)
			}
			if strings.HasPrefix(got, "ERROR") {
				failed++
			}
		}
	}
	if kept == 0 || kept == 3000 || failed == 0 {
		t.Fatalf("rows kept %d, errors %d: the random rows do not exercise both sides", kept, failed)
	}
}

// TestSharedEvaluatedOncePerRow counts the calls of a deterministic user
// function that occurs in the filter and in three projections.
func TestSharedEvaluatedOncePerRow(t *testing.T) {
	k := newKit()
	calls, _ := counted(t, k)
	f := func() Node { return k.call("COUNTED", cQty) }
	filter := mustNode(t, k.call(">", f(), I(0)))
	projs := []Node{mustNode(t, f()), mustNode(t, k.call("+", f(), I(1))), mustNode(t, k.call("*", f(), f()))}
	p, err := CompileProgram(filter, projs, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := []types.Value{types.NullValue, types.NullValue, types.Int32Value(3), types.NullValue}
	for i := 1; i <= 3; i++ {
		p.NextRow()
		if ok, err := p.Filter(row); !ok || err != nil {
			t.Fatalf("filter: %v, %v", ok, err)
		}
		var got []string
		for _, e := range p.Projs {
			got = append(got, show(e(row)))
		}
		if s := strings.Join(got, " "); s != "6 7 36" {
			t.Fatalf("row %d: %s, want 6 7 36", i, s)
		}
		if *calls != i {
			t.Fatalf("after %d rows COUNTED was called %d times", i, *calls)
		}
		row[2] = types.Int32Value(3) // the same values, a new row
	}
	// A new row's values are computed afresh.
	p.NextRow()
	row[2] = types.Int32Value(5)
	if v, err := p.Projs[0](row); err != nil || v.Int() != 10 {
		t.Fatalf("new row: %v, %v, want 10", v, err)
	}

	// On its own, an expression shares within itself, and each call is a
	// new row.
	e, err := Compile(mustNode(t, k.call("+", f(), f())), nil)
	if err != nil {
		t.Fatal(err)
	}
	*calls = 0
	for i := int32(1); i <= 2; i++ {
		row[2] = types.Int32Value(i)
		if v, err := e(row); err != nil || v.Int() != int64(4*i) {
			t.Fatalf("COUNTED(%d) + COUNTED(%d) = %v, %v", i, i, v, err)
		}
	}
	if *calls != 2 {
		t.Fatalf("2 rows called COUNTED %d times, want 2", *calls)
	}
}

// TestSharedLazy: a shared sub-expression is evaluated only where the
// unshared expression would have evaluated it. Here it fails (division by
// zero) and sits in CASE branches and AND operands that qty = 0 does not
// reach.
func TestSharedLazy(t *testing.T) {
	k := newKit()
	calls, _ := counted(t, k)
	div := func() Node { return k.call("/", I(100), cQty) }
	cnt := func() Node { return k.call("COUNTED", div()) }
	filter := mustNode(t, k.call("AND", k.call("<>", cQty, I(0)), k.call(">", cnt(), I(0))))
	projs := []Node{
		mustNode(t, k.caseOf(nil, []Node{k.call("=", cQty, I(0)), I(-1)}, cnt())),
		mustNode(t, k.caseOf(nil, []Node{k.call("<>", cQty, I(0)), k.call("+", cnt(), div())}, I(-2))),
	}
	p, err := CompileProgram(filter, projs, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := []types.Value{types.NullValue, types.NullValue, types.Int32Value(0), types.NullValue}
	p.NextRow()
	if ok, err := p.Filter(row); ok || err != nil {
		t.Fatalf("filter over qty = 0: %v, %v; want false, no error", ok, err)
	}
	for i, e := range p.Projs {
		if v, err := e(row); err != nil || v.Int() != int64(-1-i) {
			t.Fatalf("%s over qty = 0: %v, %v", projs[i], v, err)
		}
	}
	if *calls != 0 {
		t.Fatalf("COUNTED called %d times over qty = 0, want 0", *calls)
	}
	row[2] = types.Int32Value(4)
	p.NextRow()
	if ok, err := p.Filter(row); !ok || err != nil {
		t.Fatalf("filter over qty = 4: %v, %v", ok, err)
	}
	if v, err := p.Projs[1](row); err != nil || v.Int() != 75 {
		t.Fatalf("over qty = 4: %v, %v, want 75", v, err)
	}
	if *calls != 1 {
		t.Fatalf("COUNTED called %d times over qty = 4, want 1", *calls)
	}
	// A failure reached from the second occurrence first is still an
	// error there.
	e, err := Compile(mustNode(t, k.call("+",
		k.caseOf(nil, []Node{k.call("=", cQty, I(0)), I(0)}, div()),
		div())), nil)
	if err != nil {
		t.Fatal(err)
	}
	row[2] = types.Int32Value(0)
	if _, err := e(row); err == nil || !strings.Contains(err.Error(), "zero") {
		t.Fatalf("division by zero in the second operand: %v", err)
	}
}

// TestNonDeterministicNotShared: every occurrence of a non-deterministic
// call is its own call, and so is anything containing one.
func TestNonDeterministicNotShared(t *testing.T) {
	k := newKit()
	_, randCalls := counted(t, k)
	nd := func() Node { return k.call("+", k.call("RANDOMISH", cQty), I(1)) }
	p, err := CompileProgram(mustNode(t, k.call(">", nd(), I(0))),
		[]Node{mustNode(t, nd()), mustNode(t, nd()), mustNode(t, k.call("RAND")), mustNode(t, k.call("RAND"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := []types.Value{types.NullValue, types.NullValue, types.Int32Value(1), types.NullValue}
	if p.NextRow != nil {
		p.NextRow()
	}
	if _, err := p.Filter(row); err != nil {
		t.Fatal(err)
	}
	var rands []string
	for _, e := range p.Projs {
		rands = append(rands, show(e(row)))
	}
	if *randCalls != 3 {
		t.Fatalf("RANDOMISH called %d times, want 3", *randCalls)
	}
	if rands[2] == rands[3] {
		t.Fatalf("two RAND() in one row gave the same value %s", rands[2])
	}
}

func BenchmarkProgramQ21(b *testing.B) {
	k := newKit()
	lower := func() Node { return k.call("LOWER", cChannel) }
	extract := func() Node { return k.call("REGEXP_EXTRACT", cURL, S("(&|^)channel_id=([^&]*)"), I(2)) }
	filter := k.call("OR", k.call("IS NOT NULL", extract()), k.call("IN", lower(), S("apple"), S("google"), S("facebook"), S("baidu")))
	proj := k.caseOf(nil, []Node{
		k.call("=", lower(), S("apple")), S("0"),
		k.call("=", lower(), S("google")), S("1"),
		k.call("=", lower(), S("facebook")), S("2"),
		k.call("=", lower(), S("baidu")), S("3"),
	}, extract())
	rows := make([][]types.Value, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		ch := []string{"Apple", "Google", "Facebook", "Baidu", "channel-" + fmt.Sprint(i)}[r.IntN(5)]
		url := "https://www.nexmark.com/abc/def/item.htm?query=1"
		if r.IntN(10) == 0 {
			url += "&channel_id=" + fmt.Sprint(r.IntN(1000))
		}
		rows[i] = []types.Value{types.StringValue(ch), types.StringValue(url), types.NullValue, types.NullValue}
	}
	for _, mode := range []string{"unshared", "shared"} {
		b.Run(mode, func(b *testing.B) {
			var f func(row []types.Value) (bool, error)
			var e, next func(row []types.Value) (types.Value, error)
			if mode == "shared" {
				p, err := CompileProgram(mustNodeB(b, filter), []Node{mustNodeB(b, proj)}, nil)
				if err != nil {
					b.Fatal(err)
				}
				f, e = p.Filter, p.Projs[0]
				nr := p.NextRow
				next = func([]types.Value) (types.Value, error) { nr(); return types.NullValue, nil }
			} else {
				c := newCompiler(nil)
				t, err := c.compileTri(c.fold(filter))
				if err != nil {
					b.Fatal(err)
				}
				f = func(row []types.Value) (bool, error) { r, err := t(row); return r == triTrue, err }
				e, err = c.compile(c.fold(proj))
				if err != nil {
					b.Fatal(err)
				}
				next = func([]types.Value) (types.Value, error) { return types.NullValue, nil }
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				row := rows[i&1023]
				next(row)
				if ok, _ := f(row); ok {
					e(row)
				}
			}
		})
	}
}

func mustNodeB(b *testing.B, n Node) Node {
	if bad, ok := n.(*badNode); ok {
		b.Fatal(bad.err)
	}
	return n
}

// TestCompareComputedIntWithLiteral checks the comparison of a computed
// integer with a literal against the same comparison of a column, a
// separate fast path, for every operator, NULL included.
func TestCompareComputedIntWithLiteral(t *testing.T) {
	k := newKit()
	for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
		for _, lit := range []int64{-1, 0, 1, 7} {
			direct, err := Compile(mustNode(t, k.call(op, cQty, I(lit))), nil)
			if err != nil {
				t.Fatal(err)
			}
			computed, err := Compile(mustNode(t, k.call(op, k.call("ABS", k.call("NEG", k.call("ABS", cQty))), I(lit))), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []types.Value{types.NullValue, types.Int32Value(-2), types.Int32Value(0), types.Int32Value(1), types.Int32Value(7), types.Int32Value(9)} {
				row := []types.Value{types.NullValue, types.NullValue, q, types.NullValue}
				abs := row
				if !q.IsNull() && q.Int() < 0 {
					abs = []types.Value{types.NullValue, types.NullValue, types.Int32Value(int32(-q.Int())), types.NullValue}
				}
				got, want := show(computed(row)), show(direct(abs))
				if got != want {
					t.Errorf("ABS(-ABS(%v)) %s %d = %s, want %s", q, op, lit, got, want)
				}
			}
		}
	}
}

// TestCaseConversionCache converts strings in a mix that fills, hits and
// evicts LOWER's and UPPER's cache, against the strings package.
func TestCaseConversionCache(t *testing.T) {
	k := newKit()
	lower, err := Compile(mustNode(t, k.call("LOWER", cChannel)), nil)
	if err != nil {
		t.Fatal(err)
	}
	upper, err := Compile(mustNode(t, k.call("UPPER", cChannel)), nil)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"Apple", "apple", "APPLE", "Baidu", "Straße", "ÀÉÎ", "x", "X", "Ab", "aB", "channel-12", strings.Repeat("Q", 100), ""}
	r := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		w := words[r.IntN(len(words))]
		if r.IntN(4) == 0 {
			w += fmt.Sprint(r.IntN(30))
		}
		row := []types.Value{types.StringValue(w), types.NullValue, types.NullValue, types.NullValue}
		if v, err := lower(row); err != nil || v.Str() != strings.ToLower(w) {
			t.Fatalf("LOWER(%q) = %q, %v", w, v.Str(), err)
		}
		want := strings.ReplaceAll(strings.ToUpper(w), "ß", "SS")
		if v, err := upper(row); err != nil || v.Str() != want {
			t.Fatalf("UPPER(%q) = %q, %v; want %q", w, v.Str(), err, want)
		}
	}
}
