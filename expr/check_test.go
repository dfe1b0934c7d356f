package expr

import (
	"fmt"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// Check returns the error Compile returns: for constant regular
// expressions it parses (good or bad, in each function that takes one,
// constant-folded or not), and for everything else it compiles.
func TestCheckAgreesWithCompile(t *testing.T) {
	k := newKit()
	str := &Column{Index: 0, Name: "s", T: types.String}
	var nodes []Node
	for _, re := range []string{"a.c", "a(b", "(?i)x+", `\p{Nope}`, "[z-a]", "", "(b)"} {
		nodes = append(nodes,
			k.call("REGEXP", str, S(re)),
			k.call("REGEXP_EXTRACT", str, S(re)),
			k.call("REGEXP_EXTRACT", str, S(re), I(1)),
			k.call("REGEXP_REPLACE", str, S(re), S("x")),
			k.call("REGEXP", str, k.call("CONCAT", S(re), S("d"))),
			k.cast(k.call("REGEXP_EXTRACT", S("abc"), S(re)), types.Int),
			k.call("REGEXP", S("abc"), S(re)),
			k.call("LIKE", str, S(re)),
			k.call("SIMILAR TO", str, S(re)),
		)
	}
	nodes = append(nodes, k.call("DATE_FORMAT", TS("2024-01-01 00:00:00"), S("yyyy-MM-dd")),
		k.call("LIKE", str, S("a!"), S("!")), k.call("REGEXP", str, str),
		// A pattern folded from a constant call ('((').
		k.call("REGEXP", str, k.call("REGEXP_REPLACE", S("zz"), S("z"), S("("))))
	bad := 0
	for _, n := range nodes {
		if b, ok := n.(*badNode); ok {
			t.Fatalf("test expression does not bind: %v", b.err)
		}
		_, want := Compile(n, nil)
		got := Check(n, nil)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: Check gives %v, Compile %v", n, got, want)
		}
		if want != nil {
			bad++
		}
	}
	if bad < 10 {
		t.Errorf("only %d of %d expressions fail to compile: the test checks too little", bad, len(nodes))
	}
}
