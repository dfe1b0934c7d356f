package expr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestACAutomaton: the automaton reports exactly the keys that occur (up
// to ASCII case) and the end of each one's first occurrence, whether all
// its states are dense or only the root's.
func TestACAutomaton(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := "abcAB/.é\xff"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for _, budget := range []int{1, 64, acDenseBudget} {
		for range 50 {
			seenKey := map[string]bool{}
			var keys []string
			for range 1 + rng.IntN(200) {
				k := asciiLower(word(1 + rng.IntN(6)))
				if !seenKey[k] {
					seenKey[k] = true
					keys = append(keys, k)
				}
			}
			a := newACAutomaton(keys, budget)
			if budget == 1 && a.ndense != 1 {
				t.Fatalf("%d dense states with a budget of one row", a.ndense)
			}
			seen := make([]uint64, (len(keys)+63)/64)
			for range 50 {
				s := word(rng.IntN(40))
				hits := a.scan(s, seen, nil)
				got := map[int32]int{}
				for _, h := range hits {
					got[h.key] = h.end
					seen[h.key>>6] &^= 1 << (h.key & 63)
				}
				lower := asciiLower(s)
				for i, k := range keys {
					want := strings.Index(lower, k)
					end, ok := got[int32(i)]
					if ok != (want >= 0) || ok && end != want+len(k)-1 {
						t.Fatalf("budget %d: key %q in %q: reported %v at %d, first at %d", budget, k, s, ok, end, want)
					}
				}
			}
		}
	}
}

// asciiLower lower-cases A-Z and leaves every other byte alone.
func asciiLower(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lowerASCII(b[i])
	}
	return string(b)
}
