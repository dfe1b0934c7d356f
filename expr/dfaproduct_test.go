package expr

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestDFAProduct: regular expressions that one literal triggers run as
// one product automaton, and it gives what each expression gives alone
// (Go's regexp), over ASCII, non-ASCII and invalid UTF-8, with the
// product's cache big enough and cleared every few characters.
func TestDFAProduct(t *testing.T) {
	var ps []Pattern
	for n := 1; n <= 12; n++ {
		ps = append(ps,
			Pattern{Kind: Regexp, Text: fmt.Sprintf(`-[Ee]nc[a-zA-Z]* [A-Za-z0-9+/]{%d,}`, n)},
			Pattern{Kind: Regexp, Text: fmt.Sprintf(`-enc.*é{%d}`, n%3+1)},
			Pattern{Kind: Regexp, Text: fmt.Sprintf(`(?i)-enc[0-9a-f]{%d}\z`, n)},
			Pattern{Kind: Regexp, Text: fmt.Sprintf(`\A[a-z ]*-enc [^ ]{%d} `, n)},
		)
	}
	ps = append(ps, Pattern{Kind: Regexp, Text: `x*`}, Pattern{Kind: Regexp, Text: `[0-9]{3}é`}, Pattern{Kind: Regexp, Text: `[a-c]{2}\z`})
	set, err := NewPatternSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	// The products of a literal are built as it first occurs.
	set.Match("-enc -Enc é", make([]uint64, (len(ps)+63)/64))
	products := 0
	for _, p := range set.litProd {
		if p != nil {
			products++
		}
	}
	if products == 0 || set.allProd == nil {
		t.Fatalf("%d products of literals, %v over every string: the expressions run one by one", products, set.allProd)
	}
	res := make([]*regexp.Regexp, len(ps))
	for i, p := range ps {
		res[i] = regexp.MustCompile(p.Text)
	}
	pieces := []string{"-enc", "-Enc", "-ENC", "odedCommand", " ", "a", "Z", "0", "9", "f", "+", "/", "é", "É", "\xff", "\xe4\xb8", "世", "x", "12", "\n"}
	rng := rand.New(rand.NewPCG(5, 6))
	defer func(n int) { productMaxEntries = n }(productMaxEntries)
	for _, limit := range []int{productMaxEntries, 1} {
		productMaxEntries = limit
		set, err := NewPatternSet(ps)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]uint64, (len(ps)+63)/64)
		matched := 0
		for range 3000 {
			var b strings.Builder
			for range rng.IntN(30) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			s := b.String()
			set.Match(s, dst)
			for i, re := range res {
				want := re.MatchString(s)
				if hasBit(dst, i) != want {
					t.Fatalf("cache limit %d: %s on %q: the set says %v, regexp %v", limit, ps[i].Text, s, !want, want)
				}
				if want {
					matched++
				}
			}
		}
		if matched < 3000 {
			t.Fatalf("only %d matches: the strings do not exercise the expressions", matched)
		}
		scans := set.allProd.scans
		for _, p := range set.litProd {
			if p != nil {
				scans += p.scans
			}
		}
		if scans < 1000 {
			t.Fatalf("the products scanned %d strings: the expressions ran one by one", scans)
		}
	}
}

// Non-ASCII text grows the product's states too: the cache stays within
// its bound whatever the characters.
func TestDFAProductBoundedOnNonASCII(t *testing.T) {
	defer func(n int) { productMaxEntries = n }(productMaxEntries)
	productMaxEntries = 64
	var ps []Pattern
	for n := 1; n <= 20; n++ {
		ps = append(ps, Pattern{Kind: Regexp, Text: fmt.Sprintf(`é[^x]{%d}ü`, n)})
	}
	set, err := NewPatternSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	res := make([]*regexp.Regexp, len(ps))
	for i, p := range ps {
		res[i] = regexp.MustCompile(p.Text)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	runes := []rune("éüßж世€") // no ASCII: only non-ASCII steps
	dst := make([]uint64, 1)
	for range 2000 {
		var b strings.Builder
		for range 5 + rng.IntN(60) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		s := b.String()
		set.Match(s, dst)
		for i, re := range res {
			if hasBit(dst, i) != re.MatchString(s) {
				t.Fatalf("%s on %q: the set says %v", ps[i].Text, s, !re.MatchString(s))
			}
		}
	}
	for _, p := range append(set.litProd, set.allProd) {
		if p != nil && len(p.next) > productMaxEntries {
			t.Fatalf("the product holds %d transitions, above its bound %d", len(p.next), productMaxEntries)
		}
	}
}
