package suggest

import "testing"

func TestNearest(t *testing.T) {
	cands := []string{"bids", "totals", "orders", "price"}
	for _, tc := range []struct{ in, want string }{
		{"bid", "bids"},
		{"totlas", "totals"},
		{"ORDERS", "orders"},
		{"xyzzy", ""},
		{"prcie", "price"},
	} {
		if got := Nearest(tc.in, cands); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Hint("bid", cands); got != ` (did you mean "bids"?)` {
		t.Errorf("Hint = %q", got)
	}
}
