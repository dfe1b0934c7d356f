package expr

import "testing"

// planCSE shares a sub-expression reached twice, among the roots or
// within one, and plans nothing (without building keys) when fewer than
// two nodes other than columns and literals could be shared.
func TestPlanCSEFew(t *testing.T) {
	k := newKit()
	upper := func() Node { return k.call("UPPER", cChannel) }
	for _, c := range []struct {
		name   string
		roots  []Node
		shares bool
	}{
		{"one call", []Node{k.call("LIKE", cChannel, S("%a%"))}, false},
		{"leaves", []Node{cChannel, S("x"), nil}, false},
		{"one call per root, alike", []Node{upper(), upper()}, true},
		{"one call per root, unalike", []Node{upper(), k.call("LOWER", cChannel)}, false},
		{"twice in one root", []Node{k.call("CONCAT", upper(), upper())}, true},
		{"nested, unalike", []Node{k.call("UPPER", k.call("LOWER", cChannel))}, false},
	} {
		if got := planCSE(c.roots) != nil; got != c.shares {
			t.Errorf("%s: shares %v, want %v", c.name, got, c.shares)
		}
	}
}
