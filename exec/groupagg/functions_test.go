package groupagg

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// TestFunctions runs every built-in aggregate through the operator on
// hand-computed input. Key x has values; key e has only NULLs (an "empty"
// group for every function that skips NULLs); key y checks DECIMAL
// exactness (0.10 + 0.20 is 0.30, not 0.30000000000000004).
func TestFunctions(t *testing.T) {
	schema := []types.Type{types.String, types.Int, types.Decimal(10, 2), types.Double, types.String, types.Boolean}
	input := []string{
		"+I x 1 1.00 2.0 p true",
		"+I x 2 2.00 4.0 q false",
		"+I x 4 2.00 4.0 p true",
		"+I x NULL NULL NULL NULL NULL",
		"+I e NULL NULL NULL NULL NULL",
		"+I y 0 0.10 0 s true",
		"+I y 0 0.20 0 t true",
	}
	// Columns: 1 i INT, 2 d DECIMAL(10, 2), 3 f DOUBLE, 4 s STRING, 5 b BOOLEAN.
	for _, tc := range []struct {
		call      callSpec
		resultTyp string
		x, e, y   string // "~v": a DOUBLE within 1e-12 of v
	}{
		{callSpec{name: "COUNT"}, "BIGINT NOT NULL", "4", "1", "2"},
		{callSpec{name: "COUNT", args: []int{1}}, "BIGINT NOT NULL", "3", "0", "2"},
		{callSpec{name: "COUNT", args: []int{2}, distinct: true}, "BIGINT NOT NULL", "2", "0", "2"},
		{callSpec{name: "SUM", args: []int{1}}, "INT", "7", "NULL", "0"},
		{callSpec{name: "SUM", args: []int{2}}, "DECIMAL(38, 2)", "5.00", "NULL", "0.30"},
		{callSpec{name: "SUM", args: []int{2}, distinct: true}, "DECIMAL(38, 2)", "3.00", "NULL", "0.30"},
		{callSpec{name: "SUM", args: []int{3}}, "DOUBLE", "10.0", "NULL", "0.0"},
		{callSpec{name: "SUM0", args: []int{1}}, "INT NOT NULL", "7", "0", "0"},
		{callSpec{name: "AVG", args: []int{1}}, "INT", "2", "NULL", "0"}, // 7/3: integer division
		{callSpec{name: "AVG", args: []int{2}}, "DECIMAL(38, 6)", "1.666667", "NULL", "0.150000"},
		{callSpec{name: "AVG", args: []int{3}}, "DOUBLE", "~3.3333333333333335", "NULL", "~0"},
		{callSpec{name: "MIN", args: []int{2}}, "DECIMAL(10, 2)", "1.00", "NULL", "0.10"},
		{callSpec{name: "MAX", args: []int{1}}, "INT", "4", "NULL", "0"},
		{callSpec{name: "MAX", args: []int{4}}, "STRING", "q", "NULL", "t"},
		{callSpec{name: "FIRST_VALUE", args: []int{4}}, "STRING", "p", "NULL", "s"},
		{callSpec{name: "LAST_VALUE", args: []int{2}}, "DECIMAL(10, 2)", "2.00", "NULL", "0.20"},
		{callSpec{name: "LISTAGG", args: []int{4}}, "STRING", "p,q,p", "NULL", "s,t"},
		{callSpec{name: "LISTAGG", args: []int{4}, distinct: true}, "STRING", "p,q", "NULL", "s,t"},
		{callSpec{name: "VAR_POP", args: []int{3}}, "DOUBLE", "~0.8888888888888888", "NULL", "~0"},
		{callSpec{name: "VAR_SAMP", args: []int{3}}, "DOUBLE", "~1.3333333333333333", "NULL", "~0"},
		{callSpec{name: "STDDEV_POP", args: []int{3}}, "DOUBLE", "~0.9428090415820634", "NULL", "~0"},
		{callSpec{name: "STDDEV_SAMP", args: []int{3}}, "DOUBLE", "~1.1547005383792515", "NULL", "~0"},
		{callSpec{name: "STDDEV_POP", args: []int{1}}, "DOUBLE", "~1.247219128924647", "NULL", "~0"},
		{callSpec{name: "BOOL_AND", args: []int{5}}, "BOOLEAN", "FALSE", "NULL", "TRUE"},
		{callSpec{name: "BOOL_OR", args: []int{5}}, "BOOLEAN", "TRUE", "NULL", "TRUE"},
		{callSpec{name: "COLLECT", args: []int{1}}, "MULTISET<INT NOT NULL> NOT NULL", "{1=1, 2=1, 4=1}", "{}", "{0=2}"},
	} {
		name := tc.call.name
		if tc.call.distinct {
			name += "_DISTINCT"
		}
		t.Run(name+"/"+schema[tc.call.args0()].String(), func(t *testing.T) {
			s := spec{schema: schema, keys: []int{0}, calls: []callSpec{tc.call}}
			h := newHarness(t, s)
			if got := h.out.types[1].String(); got != tc.resultTyp {
				t.Fatalf("result type %s, want %s", got, tc.resultTyp)
			}
			got := h.batch(input...)
			want := map[string]string{"x": tc.x, "e": tc.e, "y": tc.y}
			if len(got) != 3 {
				t.Fatalf("got %q", got)
			}
			for _, row := range got {
				key, val, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(row, "+I["), "]"), ", ")
				w := want[key]
				if strings.HasPrefix(w, "~") {
					wf, _ := strconv.ParseFloat(w[1:], 64)
					gf, err := strconv.ParseFloat(val, 64)
					if err != nil || math.Abs(gf-wf) > 1e-12 {
						t.Errorf("key %s: %s, want %s within 1e-12", key, val, w[1:])
					}
					continue
				}
				if val != w {
					t.Errorf("key %s: %s, want %s", key, val, w)
				}
			}
		})
	}
}

// args0 is the first argument column, or 0 for COUNT(*).
func (c callSpec) args0() int {
	if len(c.args) == 0 {
		return 0
	}
	return c.args[0]
}
