package store

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// The table of the random tests: every kind a dimension table may hold.
var testCols = []types.Type{
	{Kind: types.KindInt},                                           // 0
	{Kind: types.KindBigInt},                                        // 1
	{Kind: types.KindVarChar, Precision: types.MaxLength},           // 2
	{Kind: types.KindDecimal, Precision: 10, Scale: 2},              // 3
	{Kind: types.KindTimestamp, Precision: 3},                       // 4
	{Kind: types.KindDouble},                                        // 5
	{Kind: types.KindBoolean},                                       // 6
	{Kind: types.KindChar, Precision: 3},                            // 7
	{Kind: types.KindVarBinary, Precision: types.MaxLength},         // 8
	{Kind: types.KindDate},                                          // 9
	{Kind: types.KindDecimal, Precision: 38, Scale: 4},              // 10
	{Kind: types.KindArray, Elem: &types.Type{Kind: types.KindInt}}, // 11
	{Kind: types.KindSmallInt},                                      // 12
	{Kind: types.KindFloat},                                         // 13
	{Kind: types.KindMap, Elem: &types.Type{Kind: types.KindVarChar}, Value: &types.Type{Kind: types.KindBigInt}}, // 14
}

// The key sets the tests index by: composite keys of mixed types.
var testKeySets = [][]int{
	{0},
	{2},
	{1, 2},
	{3, 4},
	{0, 2, 3, 4},
	{4, 0},
	{12, 7},
	{8},
}

// randValue returns a random value of column c; keys come from small
// domains so that they repeat.
func randValue(r *rand.Rand, c int) types.Value {
	if r.IntN(12) == 0 {
		return types.NullValue
	}
	switch c {
	case 0:
		return types.Int32Value(int32(r.IntN(40) - 20))
	case 1:
		return types.BigIntValue(int64(r.IntN(30)) * 1e12)
	case 2:
		return types.StringValue(strings.Repeat("k", r.IntN(6)) + fmt.Sprint(r.IntN(8)))
	case 3:
		return types.DecimalValue(int64(r.IntN(20)-10)*5, 2) // trailing zeros: 0.05, 0.10, ...
	case 4:
		return types.TimestampValue(int64(r.IntN(10)) * 1000)
	case 5:
		return types.DoubleValue(r.NormFloat64())
	case 6:
		return types.BoolValue(r.IntN(2) == 0)
	case 7:
		return types.CharValue(string(rune('a'+r.IntN(4))) + "  ")
	case 8:
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = byte(r.IntN(3))
		}
		return types.BytesValue(b)
	case 9:
		return types.DateValue(int64(r.IntN(20000) - 10000))
	case 10:
		if r.IntN(3) == 0 {
			u := new(big.Int).Lsh(big.NewInt(int64(r.IntN(1000)-500)), 80)
			return types.BigDecimalValue(u, 4)
		}
		return types.DecimalValue(r.Int64()>>r.IntN(64), 4)
	case 11:
		e := make([]types.Value, r.IntN(3))
		for i := range e {
			e[i] = types.Int32Value(r.Int32())
		}
		return types.ArrayValue(e)
	case 12:
		return types.IntValue(types.KindSmallInt, int64(r.IntN(6)))
	case 13:
		return types.FloatValue(float32(r.NormFloat64()))
	case 14:
		n := r.IntN(3)
		m := &types.MapValue{}
		for i := range n {
			m.Keys = append(m.Keys, types.StringValue(fmt.Sprint("m", i)))
			m.Values = append(m.Values, types.BigIntValue(r.Int64()))
		}
		return types.NewMapValue(m)
	}
	panic("no such column")
}

// valueString is a canonical text of a value, its kind and its exact
// representation, to compare rows.
func valueString(v types.Value) string {
	var b strings.Builder
	b.WriteString(v.Kind().String())
	switch k := v.Kind(); {
	case k == types.KindDecimal:
		fmt.Fprintf(&b, "(%s,%d)", v.BigUnscaled(), v.Scale())
	case k == types.KindFloat || k == types.KindDouble:
		fmt.Fprintf(&b, "(%x)", math.Float64bits(v.Float()))
	case k == types.KindArray || k == types.KindRow || k == types.KindMultiset:
		b.WriteString("[")
		for _, e := range v.Elems() {
			b.WriteString(valueString(e) + " ")
		}
		b.WriteString("]")
	case k == types.KindMap:
		b.WriteString("{")
		m := v.Map()
		for i := range m.Keys {
			b.WriteString(valueString(m.Keys[i]) + ":" + valueString(m.Values[i]) + " ")
		}
		b.WriteString("}")
	case k.IsString() || k.IsBinary():
		fmt.Fprintf(&b, "(%q)", v.Str())
	case k != types.KindNull:
		fmt.Fprintf(&b, "(%d)", v.Int())
	}
	return b.String()
}

func rowString(row []types.Value) string {
	s := make([]string, len(row))
	for i, v := range row {
		s[i] = valueString(v)
	}
	return strings.Join(s, " | ")
}

// reference is the obvious index: full key encodings in a Go map.
type reference map[string][]string

func refKey(row []types.Value, keyCols []int) (string, bool) {
	var k []byte
	for _, c := range keyCols {
		if row[c].IsNull() {
			return "", false
		}
		k = types.AppendKey(k, row[c])
	}
	return string(k), true
}

func randTable(r *rand.Rand, n int) [][]types.Value {
	rows := make([][]types.Value, n)
	for i := range rows {
		row := make([]types.Value, len(testCols))
		for c := range row {
			row[c] = randValue(r, c)
		}
		rows[i] = row
	}
	return rows
}

// build indexes rows through one reused row buffer, as a source would.
func build(t testing.TB, cols []types.Type, keyCols []int, rows [][]types.Value) *Index {
	t.Helper()
	return buildWith(t, cols, keyCols, rows, Config{})
}

// buildWith is build with a Builder configured by cfg.
func buildWith(t testing.TB, cols []types.Type, keyCols []int, rows [][]types.Value, cfg Config) *Index {
	t.Helper()
	b, err := NewBuilder(cols, keyCols, cfg)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]types.Value, len(cols))
	for _, row := range rows {
		copy(buf, row)
		if err := b.Add(buf); err != nil {
			t.Fatal(err)
		}
		clear(buf) // the index must not keep the caller's row
	}
	ix, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// probeKey returns the key of row as a prober might pass it: integers of
// another kind, CHAR as VARCHAR, DECIMALs at another scale.
func probeKey(r *rand.Rand, row []types.Value, keyCols []int) []types.Value {
	key := make([]types.Value, len(keyCols))
	for i, c := range keyCols {
		v := row[c]
		switch k := v.Kind(); {
		case k.IsInteger():
			kinds := []types.Kind{types.KindBigInt}
			for _, o := range []types.Kind{types.KindTinyInt, types.KindSmallInt, types.KindInt} {
				if lo, hi := types.IntegerRange(o); v.Int() >= lo && v.Int() <= hi {
					kinds = append(kinds, o)
				}
			}
			v = v.WithKind(kinds[r.IntN(len(kinds))])
		case k == types.KindChar:
			v = v.WithKind(types.KindVarChar)
		case k == types.KindVarChar && r.IntN(2) == 0:
			v = v.WithKind(types.KindChar)
		case k == types.KindDecimal:
			if r.IntN(2) == 0 {
				v, _ = types.FitDecimal(v, 38, v.Scale()+2)
			} else if u := v.Unscaled(); u%10 == 0 && v.Scale() > 0 {
				v = types.DecimalValue(u/10, v.Scale()-1)
			}
		}
		key[i] = v
	}
	return key
}

func lookupAll(rd *Reader, key []types.Value) []string {
	var got []string
	n := rd.Lookup(key, func(row []types.Value) bool {
		got = append(got, rowString(row))
		return true
	})
	if n != len(got) {
		panic(fmt.Sprintf("Lookup returned %d for %d rows", n, len(got)))
	}
	slices.Sort(got)
	return got
}

func TestRandomTables(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 7))
		rows := randTable(r, 50+r.IntN(3000))
		for _, keyCols := range testKeySets {
			t.Run(fmt.Sprint(seed, keyCols), func(t *testing.T) {
				checkTable(t, r, testCols, keyCols, rows, Config{})
			})
		}
	}
}

func checkTable(t *testing.T, r *rand.Rand, cols []types.Type, keyCols []int, rows [][]types.Value, cfg Config) {
	ix := buildWith(t, cols, keyCols, rows, cfg)
	ref := reference{}
	skipped := 0
	for _, row := range rows {
		k, ok := refKey(row, keyCols)
		if !ok {
			skipped++
			continue
		}
		ref[k] = append(ref[k], rowString(row))
	}
	if ix.Rows() != len(rows)-skipped || ix.Skipped() != skipped || ix.Keys() != len(ref) {
		t.Fatalf("Rows, Skipped, Keys = %d, %d, %d; want %d, %d, %d",
			ix.Rows(), ix.Skipped(), ix.Keys(), len(rows)-skipped, skipped, len(ref))
	}
	rd := ix.NewReader()
	probed := map[string]bool{}
	for _, row := range rows {
		k, ok := refKey(row, keyCols)
		if probed[k] {
			continue // every key once, and a few NULL ones
		}
		probed[k] = ok || r.IntN(10) == 0
		key := probeKey(r, row, keyCols)
		got := lookupAll(rd, key)
		if !ok {
			if len(got) != 0 {
				t.Fatalf("key with a NULL %s matched %d rows", rowString(key), len(got))
			}
			continue
		}
		want := slices.Clone(ref[k])
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("key %s:\n got %q\nwant %q", rowString(key), got, want)
		}
	}
	checkBatch(t, rd, r, rows, keyCols)
	// Keys that are not there: shifted integers, longer strings.
	for range 200 {
		row := rows[r.IntN(len(rows))]
		key := probeKey(r, row, keyCols)
		for i, v := range key {
			switch k := v.Kind(); {
			case k.IsInteger() || k == types.KindTimestamp:
				key[i] = types.IntValue(k, v.Int()+1e6)
			case k.IsString() || k.IsBinary():
				key[i] = types.StringValue(v.Str() + "zz").WithKind(k)
			case k == types.KindDecimal:
				key[i] = types.DecimalValue(v.Unscaled()+1e6, v.Scale())
			}
		}
		k, _ := refKey(key, seq(len(key)))
		if got := lookupAll(rd, key); len(got) != len(ref[k]) {
			t.Fatalf("absent key %s matched %d rows", rowString(key), len(got))
		}
	}
}

// checkBatch looks keys up with LookupBatch, NULL and absent ones among
// them, and compares with a Lookup per key.
func checkBatch(t *testing.T, rd *Reader, r *rand.Rand, rows [][]types.Value, keyCols []int) {
	t.Helper()
	keys := make([][]types.Value, r.IntN(100))
	for i := range keys {
		keys[i] = probeKey(r, rows[r.IntN(len(rows))], keyCols)
		if r.IntN(10) == 0 {
			if v := keys[i][0]; v.Kind().IsInteger() {
				keys[i][0] = types.IntValue(v.Kind(), v.Int()+1e9)
			}
		}
	}
	got := make([][]string, len(keys))
	n := rd.LookupBatch(keys, func(i int, row []types.Value) bool {
		got[i] = append(got[i], rowString(row))
		return true
	})
	total := 0
	for i, key := range keys {
		slices.Sort(got[i])
		want := lookupAll(rd, key)
		total += len(want)
		if !slices.Equal(got[i], want) {
			t.Fatalf("LookupBatch, key %d %s:\n got %q\nwant %q", i, rowString(key), got[i], want)
		}
	}
	if n != total {
		t.Fatalf("LookupBatch returned %d, want %d", n, total)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestBuildSized checks that a row hint, right or wrong, changes nothing
// but the table's size.
func TestBuildSized(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	rows := randTable(r, 2000)
	keyCols := []int{0, 2}
	want := build(t, testCols, keyCols, rows)
	for _, hint := range []int{1, 100, 2000, 100000} {
		ix, err := BuildSized(testCols, keyCols, hint, func(yield func([]types.Value) error) error {
			for _, row := range rows {
				if err := yield(row); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if ix.Rows() != want.Rows() || ix.Keys() != want.Keys() {
			t.Fatalf("hint %d: %d rows, %d keys; want %d, %d", hint, ix.Rows(), ix.Keys(), want.Rows(), want.Keys())
		}
		if load := float64(ix.Keys()) / float64(len(ix.tab.slots)); load < 0.7 || load > 0.85 {
			t.Errorf("hint %d: load factor %.2f", hint, load)
		}
		a, b := ix.NewReader(), want.NewReader()
		for _, row := range rows[:300] {
			key := probeKey(r, row, keyCols)
			if got, w := lookupAll(a, key), lookupAll(b, key); !slices.Equal(got, w) {
				t.Fatalf("hint %d, key %s: got %q, want %q", hint, rowString(key), got, w)
			}
		}
	}
}

func TestStop(t *testing.T) {
	cols := []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarChar}}
	var rows [][]types.Value
	for i := range 10 {
		rows = append(rows, []types.Value{types.BigIntValue(7), types.StringValue(fmt.Sprint(i))})
	}
	ix := build(t, cols, []int{0}, rows)
	seen := 0
	n := ix.Lookup([]types.Value{types.Int32Value(7)}, func([]types.Value) bool { seen++; return seen < 3 })
	if n != 3 || seen != 3 {
		t.Fatalf("Lookup stopped after %d rows (returned %d), want 3", seen, n)
	}
	if n := ix.Lookup([]types.Value{types.NullValue}, func([]types.Value) bool { return true }); n != 0 {
		t.Fatalf("NULL key: %d rows", n)
	}
	// LookupBatch: false moves on to the next key.
	keys := [][]types.Value{{types.BigIntValue(7)}, {types.NullValue}, {types.BigIntValue(8)}, {types.IntValue(types.KindTinyInt, 7)}}
	var seenKeys []int
	n = ix.NewReader().LookupBatch(keys, func(i int, row []types.Value) bool {
		seenKeys = append(seenKeys, i)
		return false
	})
	if n != 2 || !slices.Equal(seenKeys, []int{0, 3}) {
		t.Fatalf("LookupBatch stopping at each key's first row: %d rows, keys %v; want 2, [0 3]", n, seenKeys)
	}
}

func TestKeyCast(t *testing.T) {
	cols := []types.Type{
		{Kind: types.KindTinyInt},
		{Kind: types.KindChar, Precision: 2},
		{Kind: types.KindDecimal, Precision: 6, Scale: 3},
		{Kind: types.KindVarChar},
	}
	rows := [][]types.Value{{
		types.IntValue(types.KindTinyInt, -3), types.CharValue("ab"),
		types.DecimalValue(1500, 3), types.StringValue("v"),
	}}
	ix := build(t, cols, []int{0, 1, 2}, rows)
	var got string
	n := ix.Lookup([]types.Value{types.BigIntValue(-3), types.StringValue("ab"), types.DecimalValue(15, 1)},
		func(row []types.Value) bool { got = rowString(row); return true })
	if want := rowString(rows[0]); n != 1 || got != want {
		t.Fatalf("got %d rows: %s; want %s", n, got, want)
	}
	// The values' kinds must match: a string never matches an integer.
	if n := ix.Lookup([]types.Value{types.StringValue("-3"), types.StringValue("ab"), types.DecimalValue(15, 1)},
		func([]types.Value) bool { return true }); n != 0 {
		t.Fatalf("a string key matched an integer column: %d rows", n)
	}
}

func TestBuildErrors(t *testing.T) {
	cols := []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarChar}}
	none := func(func([]types.Value) error) error { return nil }
	for _, keyCols := range [][]int{nil, {2}, {-1}, {0, 0}} {
		if _, err := Build(cols, keyCols, none); err == nil {
			t.Errorf("Build with key columns %v: no error", keyCols)
		}
	}
	for _, row := range [][]types.Value{
		{types.BigIntValue(1)},
		{types.StringValue("x"), types.StringValue("y")},
		{types.BigIntValue(1), types.BigIntValue(2)},
	} {
		_, err := Build(cols, []int{0}, func(yield func([]types.Value) error) error { return yield(row) })
		if err == nil || !strings.HasPrefix(err.Error(), "store: cannot build index: row 1") {
			t.Errorf("row %s: error %v", rowString(row), err)
		}
	}
	ix, err := Build(cols, []int{0}, none)
	if err != nil || ix.Rows() != 0 || ix.Lookup([]types.Value{types.BigIntValue(1)}, nil) != 0 {
		t.Fatalf("empty table: %v", err)
	}
}

// TestChunks indexes more rows than one arena chunk holds.
func TestChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 80 MB")
	}
	cols := []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarBinary}}
	big := strings.Repeat("x", 1<<20)
	const n = 80
	ix, err := Build(cols, []int{0}, func(yield func([]types.Value) error) error {
		for i := range n {
			v := big[:len(big)-i]
			if err := yield([]types.Value{types.BigIntValue(int64(i % 7)), types.StringValue(v).WithKind(types.KindVarBinary)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.arena.chunks) < 2 {
		t.Fatalf("%d chunks, want several", len(ix.arena.chunks))
	}
	total := 0
	for k := range 7 {
		ix.Lookup([]types.Value{types.BigIntValue(int64(k))}, func(row []types.Value) bool {
			l := len(row[1].Str())
			if i := len(big) - l; i%7 != k || row[1].Kind() != types.KindVarBinary {
				t.Fatalf("key %d: a row of length %d", k, l)
			}
			total++
			return true
		})
	}
	if total != n {
		t.Fatalf("%d rows found, want %d", total, n)
	}
}

func TestConcurrentLookups(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := randTable(r, 4000)
	keyCols := []int{0, 2}
	ix := build(t, testCols, keyCols, rows)
	want := map[string][]string{}
	for _, row := range rows {
		if k, ok := refKey(row, keyCols); ok {
			want[k] = append(want[k], rowString(row))
		}
	}
	for _, w := range want {
		slices.Sort(w)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			rd := ix.NewReader()
			for range 3000 {
				row := rows[r.IntN(len(rows))]
				k, ok := refKey(row, keyCols)
				key := probeKey(r, row, keyCols)
				var got []string
				if g%2 == 0 {
					got = lookupAll(rd, key)
				} else {
					ix.Lookup(key, func(row []types.Value) bool { got = append(got, rowString(row)); return true })
					slices.Sort(got)
				}
				if ok && !slices.Equal(got, want[k]) || !ok && len(got) != 0 {
					errs <- fmt.Sprintf("goroutine %d, key %s: got %d rows, want %d", g, rowString(key), len(got), len(want[k]))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestLookupAllocs(t *testing.T) {
	cols := []types.Type{{Kind: types.KindVarChar}, {Kind: types.KindVarChar}, {Kind: types.KindBigInt}, {Kind: types.KindDecimal, Precision: 10, Scale: 2}}
	var rows [][]types.Value
	for i := range 1000 {
		rows = append(rows, []types.Value{types.StringValue(fmt.Sprint("key", i)), types.StringValue("value"), types.BigIntValue(int64(i)), types.DecimalValue(int64(i), 2)})
	}
	ix := build(t, cols, []int{0}, rows)
	rd := ix.NewReader()
	key := []types.Value{types.StringValue("key500")}
	visit := func([]types.Value) bool { return true }
	if a := testing.AllocsPerRun(100, func() { rd.Lookup(key, visit) }); a != 0 {
		t.Fatalf("Reader.Lookup allocates %v times", a)
	}
	keys := [][]types.Value{key, {types.StringValue("key7")}, {types.StringValue("absent")}}
	bvisit := func(int, []types.Value) bool { return true }
	if a := testing.AllocsPerRun(100, func() { rd.LookupBatch(keys, bvisit) }); a != 0 {
		t.Fatalf("Reader.LookupBatch allocates %v times", a)
	}
}

// FuzzBuildLookup builds an index of rows read from the input and checks
// every key against a map.
func FuzzBuildLookup(f *testing.F) {
	f.Add([]byte("\x01\x02a\x01\x02b\x00\x00\xffc"))
	f.Add([]byte{})
	cols := []types.Type{{Kind: types.KindInt}, {Kind: types.KindVarChar}, {Kind: types.KindVarChar}, {Kind: types.KindBigInt}}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each row: key int byte (0xff: NULL), key string byte, value string
		// up to the next 0 byte.
		var rows [][]types.Value
		for len(data) >= 2 {
			row := []types.Value{types.Int32Value(int32(int8(data[0]))), types.StringValue(string(rune('a' + data[1]%3))), {}, types.BigIntValue(int64(len(rows)))}
			if data[0] == 0xff {
				row[0] = types.NullValue
			}
			data = data[2:]
			end := slices.Index(data, 0)
			if end < 0 {
				end = len(data)
			}
			if end > 0 {
				row[2] = types.StringValue(string(data[:end]))
			}
			data = data[min(end+1, len(data)):]
			rows = append(rows, row)
		}
		for _, keyCols := range [][]int{{0}, {1, 0}, {1}} {
			ix := build(t, cols, keyCols, rows)
			ref := reference{}
			for _, row := range rows {
				if k, ok := refKey(row, keyCols); ok {
					ref[k] = append(ref[k], rowString(row))
				}
			}
			rd := ix.NewReader()
			for _, row := range rows {
				key := make([]types.Value, len(keyCols))
				for i, c := range keyCols {
					key[i] = row[c]
				}
				k, _ := refKey(row, keyCols)
				want := slices.Clone(ref[k])
				slices.Sort(want)
				if got := lookupAll(rd, key); !slices.Equal(got, want) {
					t.Fatalf("key %s: got %q, want %q", rowString(key), got, want)
				}
			}
		}
	})
}
