package filterset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

var schema = types.Schema{Columns: []types.Column{{Name: "s", Type: types.String}, {Name: "d", Type: types.Double}}}

// conds builds a condition per text: "s LIKE <pattern>" for a string,
// "1 / d > 0" for "d".
func conds(t *testing.T, texts ...string) []expr.Node {
	t.Helper()
	b := expr.NewBuilder(expr.NewRegistry())
	s := &expr.Column{Index: 0, Name: "s", T: types.String}
	d := &expr.Column{Index: 1, Name: "d", T: types.Double}
	var out []expr.Node
	for _, text := range texts {
		var n expr.Node
		var err error
		if text == "d" {
			one := &expr.Literal{V: types.DoubleValue(1), T: types.Double}
			zero := &expr.Literal{V: types.DoubleValue(0), T: types.Double}
			var q expr.Node
			if q, err = b.Call("/", one, d); err == nil {
				n, err = b.Call(">", q, zero)
			}
		} else {
			n, err = b.Call("LIKE", s, &expr.Literal{V: types.StringValue(text), T: types.String})
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func selectRows(t *testing.T, set *Set, rows ...[]types.Value) [][]int32 {
	t.Helper()
	b := &types.Batch{}
	for _, r := range rows {
		b.Rows = append(b.Rows, types.Row{Vals: r, Origin: types.Origin{Part: -1}})
	}
	sel := &exec.Selection{Rows: make([][]int32, 8)}
	if err := set.Select(b, sel); err != nil {
		t.Fatal(err)
	}
	return sel.Rows
}

// A group whose values never repeat turns its cache off after a window,
// gives its memory back, and keeps selecting the right rows.
func TestCacheTurnsOff(t *testing.T) {
	p, err := NewPlan(conds(t, "%7%", "a%"), schema, &expr.Env{})
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(1 << 30)
	p.Budget = budget
	m := &exec.Metrics{}
	set, err := p.New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	for i := range window + 10 {
		v := fmt.Sprintf("a%d", i)
		rows := selectRows(t, set, []types.Value{types.StringValue(v), types.NullValue})
		want7 := len(rows[0]) == 1
		if has7 := containsByte(v, '7'); has7 != want7 || len(rows[1]) != 1 {
			t.Fatalf("value %s: rule 0 kept %v, rule 1 %v", v, rows[0], rows[1])
		}
	}
	g := m.FilterGroups()[0]
	if g.Uncached.Load() == 0 || g.Misses.Load() != window || g.Hits.Load() != 0 {
		t.Errorf("uncached %d, misses %d, hits %d; want the cache off after %d misses", g.Uncached.Load(), g.Misses.Load(), g.Hits.Load(), window)
	}
	if budget.Used() != 0 || g.Bytes.Load() != 0 {
		t.Errorf("the cache off still holds %d bytes (%d counted)", budget.Used(), g.Bytes.Load())
	}
}

func containsByte(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}

// A budget too small for all values drops the older generation and stays
// within its bytes; values cached again are found. (The values are longer
// than the exact tier takes: this is the fingerprints' cache.)
func TestCacheBudget(t *testing.T) {
	p, err := NewPlan(conds(t, "%1%", "%2%"), schema, &expr.Env{})
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(100 * (entryBytes + 8))
	p.Budget = budget
	m := &exec.Metrics{}
	set, err := p.New(m)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for i := range 120 {
			v := fmt.Sprintf("v%d", i%60+round*30) + strings.Repeat("x", smallLen)
			rows := selectRows(t, set, []types.Value{types.StringValue(v), types.NullValue})
			if (len(rows[0]) == 1) != containsByte(v, '1') || (len(rows[1]) == 1) != containsByte(v, '2') {
				t.Fatalf("value %s: %v", v, rows[:2])
			}
			if budget.Used() > 100*(entryBytes+8) {
				t.Fatalf("%d bytes held, above the budget", budget.Used())
			}
		}
	}
	g := m.FilterGroups()[0]
	if g.Evictions.Load() == 0 || g.Hits.Load() == 0 {
		t.Errorf("evictions %d, hits %d: want both", g.Evictions.Load(), g.Hits.Load())
	}
	set.Close()
	if budget.Used() != 0 {
		t.Errorf("closed, the set still holds %d bytes", budget.Used())
	}
}

// 0.0 and -0.0 are distinct values to a condition (1 / d > 0): they must
// not share a fingerprint.
func TestNegativeZero(t *testing.T) {
	p, err := NewPlan(conds(t, "d"), schema, &expr.Env{})
	if err != nil {
		t.Fatal(err)
	}
	p.Budget = NewBudget(1 << 20)
	set, err := p.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	negZero := types.DoubleValue(0)
	negZero = types.DoubleValue(-negZero.Float())
	for _, c := range []struct {
		d    types.Value
		keep bool
	}{{types.DoubleValue(0), true}, {negZero, false}, {types.DoubleValue(0), true}, {negZero, false}} {
		rows := selectRows(t, set, []types.Value{types.NullValue, c.d})
		if (len(rows[0]) == 1) != c.keep {
			t.Errorf("d = %v: kept %v, want %v", c.d.Float(), rows[0], c.keep)
		}
	}
}

// Short values are first cached exactly by their text; past smallMax
// distinct values the exact tier gives way to the fingerprints, its bytes
// given back, and the rows kept stay right throughout.
func TestCacheExactTier(t *testing.T) {
	p, err := NewPlan(conds(t, "%1%", "%2%"), schema, &expr.Env{})
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(1 << 30)
	p.Budget = budget
	m := &exec.Metrics{}
	set, err := p.New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	var c *cache
	for _, g := range set.groups {
		if g.cache != nil {
			c = g.cache
		}
	}
	check := func(v string) {
		rows := selectRows(t, set, []types.Value{types.StringValue(v), types.NullValue})
		if (len(rows[0]) == 1) != containsByte(v, '1') || (len(rows[1]) == 1) != containsByte(v, '2') {
			t.Fatalf("value %s: %v", v, rows[:2])
		}
	}
	for range 2 {
		for i := range 100 {
			check(fmt.Sprintf("v%d", i))
		}
	}
	g := m.FilterGroups()[0]
	if c.small == nil || len(c.small) != 100 || g.Hits.Load() != 100 || g.Misses.Load() != 100 {
		t.Fatalf("exact tier %d values, %d hits, %d misses: want 100 values, 100 hits and 100 misses", len(c.small), g.Hits.Load(), g.Misses.Load())
	}
	if budget.Used() != c.smallBytes || c.smallBytes == 0 {
		t.Fatalf("%d bytes used, the exact tier holds %d", budget.Used(), c.smallBytes)
	}
	for i := range smallMax + 10 {
		check(fmt.Sprintf("w%d", i))
	}
	if c.small != nil || c.cur.used+c.old.used == 0 {
		t.Fatalf("exact tier %v, %d fingerprints: the tier should have given way", c.small != nil, c.cur.used+c.old.used)
	}
	if budget.Used() != c.cur.bytes+c.old.bytes {
		t.Fatalf("%d bytes used, the fingerprints hold %d", budget.Used(), c.cur.bytes+c.old.bytes)
	}
	hits := g.Hits.Load()
	check("w4100")
	check("v1")
	if g.Hits.Load() != hits+1 {
		t.Fatalf("hits %d, want %d: a value seen after the switch is found by its fingerprint", g.Hits.Load(), hits+1)
	}
}
