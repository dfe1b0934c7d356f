package sigma

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestParseString: wildcards and the backslash escapes of the
// specification's table.
func TestParseString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`abc`, `abc`},
		{`a*b?c`, `a[*]b[?]c`},
		{`a\*b\?c`, `a*b?c`},
		{`C:\Windows`, `C:\Windows`},  // a plain backslash
		{`C:\\Windows`, `C:\Windows`}, // doubled, the same
		{`a\\*`, `a\[*]`},             // a backslash, then a wildcard
		{`a\\\*`, `a\*`},              // a backslash and a plain *
		{`a\\\\b`, `a\\b`},            // four are two
		{`a\\\b`, `a\\b`},             // three before another character are two
		{`trailing\`, `trailing\`},
		{`**`, `[*][*]`},
	} {
		var b strings.Builder
		for _, c := range parseString(c.in) {
			switch c.kind {
			case chunkLit:
				b.WriteString(c.text)
			case chunkStar:
				b.WriteString("[*]")
			case chunkOne:
				b.WriteString("[?]")
			}
		}
		if b.String() != c.want {
			t.Errorf("parseString(%q) = %q, want %q", c.in, b.String(), c.want)
		}
	}
}

// TestWindash: the dashes that begin a flag become any dash; others stay.
func TestWindash(t *testing.T) {
	re := func(s string) *regexp.Regexp {
		r, _ := parseString(s).windash().regexForm()
		return regexp.MustCompile(r)
	}
	for _, c := range []struct {
		pattern      string
		match, other []string
	}{
		{" -s ", []string{" -s ", " /s ", " \u2013s ", " \u2014s ", " \u2015s "}, []string{" s ", " +s ", " _s "}},
		{"-param-name", []string{"-param-name", "/param-name", "\u2013param-name"}, []string{"-param/name", "-param\u2013name"}},
		{"/c", []string{"-c", "/c"}, []string{"c"}},
		{"a-b", []string{"a-b"}, []string{"a/b"}},            // inside a word
		{"x -", []string{"x -"}, []string{"x /"}},            // no word after it
		{"\u2014flag", []string{"-flag", "\u2014flag"}, nil}, // any of the five is one
	} {
		r := re(c.pattern)
		for _, s := range c.match {
			if !r.MatchString(s) {
				t.Errorf("windash %q does not match %q (%s)", c.pattern, s, r)
			}
		}
		for _, s := range c.other {
			if r.MatchString(s) {
				t.Errorf("windash %q matches %q (%s)", c.pattern, s, r)
			}
		}
	}
}

// TestBase64Offsets: wherever a value sits in a text, the base64 of the
// text holds the variant of its offset; each variant is the same for
// every text around the value.
func TestBase64Offsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	for range 2000 {
		v := text(1 + rng.IntN(12))
		variants := base64Offsets(v)
		pre, post := text(rng.IntN(10)), text(rng.IntN(10))
		enc := base64.StdEncoding.EncodeToString([]byte(pre + v + post))
		found := false
		for _, x := range variants {
			found = found || strings.Contains(enc, x)
		}
		if !found && len(v) >= 3 {
			t.Fatalf("base64(%q + %q + %q) = %s holds none of %q", pre, v, post, enc, variants)
		}
	}
	// The specification's example values.
	if got := base64Offsets("http://"); strings.Join(got, " ") != "aHR0cDovL h0dHA6Ly odHRwOi8v" {
		t.Errorf("base64Offsets(http://) = %q", got)
	}
}

// TestNumberRange: the expression of a range of numbers matches exactly
// the numbers in it, in decimal and hexadecimal.
func TestNumberRange(t *testing.T) {
	check := func(lo, hi, base, maxLen int) {
		t.Helper()
		re := regexp.MustCompile("^(?:" + numberRange(lo, hi, base, maxLen) + ")$")
		top := 1
		for range maxLen {
			top *= base
		}
		for v := 0; v < top; v++ {
			if v > 300 && v < top-300 && (v < lo-3 || v > hi+3) && v%97 != 0 {
				continue // away from the range's ends: a sample
			}
			s := strconv.FormatInt(int64(v), base)
			if got, want := re.MatchString(s), lo <= v && v <= hi; got != want {
				t.Fatalf("numberRange(%d, %d, base %d) = %s: %s matches %v", lo, hi, base, re, s, got)
			}
			if v > 0 && re.MatchString("0"+s) {
				t.Fatalf("numberRange(%d, %d, base %d) = %s matches 0%s", lo, hi, base, re, s)
			}
		}
	}
	for lo := 0; lo < 256; lo++ {
		for _, hi := range []int{lo, lo + 1, lo | 7, lo | 15, lo | 63, 255, (lo + 37) % 256} {
			if hi >= lo && hi < 256 {
				check(lo, hi, 10, 3)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		lo := rng.IntN(65536)
		hi := lo + rng.IntN(65536-lo)
		check(lo, hi, 16, 4)
	}
}

// TestCIDR: a range's expression matches exactly the texts of the
// addresses in it, IPv4 and IPv6 (in every way an IPv6 address is
// written).
func TestCIDR(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	texts := func(a netip.Addr) []string {
		if a.Is4() {
			return []string{a.String()}
		}
		s := a.String()
		return []string{s, a.StringExpanded(), strings.ToUpper(s), s + "%eth0", expandedNoZeros(a)}
	}
	near := func(p netip.Prefix) netip.Addr {
		// An address in the prefix or one bit away from it.
		b := p.Addr().AsSlice()
		for i := range b {
			if i*8 >= p.Bits() {
				b[i] = byte(rng.IntN(256))
			} else if rng.IntN(8) == 0 {
				b[i] ^= 1 << rng.IntN(8)
			}
		}
		a, _ := netip.AddrFromSlice(b)
		return a
	}
	for _, s := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.1.128/25", "192.168.1.7/32", "0.0.0.0/0",
		"100.64.0.0/10", "2001:db8::/32", "fe80::/10", "fc00::/7", "2001:db8:abcd:12::/63", "2001:db8:1:2:3:4:5:6/128",
		"2001:db8:1:2:3:4:5:0/127", "2001:db8::/31", "2001:db8::/33", "8000::/1", "::/0"} {
		p := netip.MustParsePrefix(s)
		re, err := cidrRegex(p)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		r := regexp.MustCompile(re)
		for range 3000 {
			a := near(p)
			for _, txt := range texts(a) {
				if got, want := r.MatchString(txt), p.Contains(a); got != want {
					t.Fatalf("%s = %s: %s matches %v", s, re, txt, got)
				}
			}
		}
	}
	for _, s := range []string{"::1/128", "64:ff9b::/96", "2001:0:1::/48"} {
		if _, err := cidrRegex(netip.MustParsePrefix(s)); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}

// expandedNoZeros writes an IPv6 address in full groups without leading
// zeros (1:0:0:0:0:0:0:5).
func expandedNoZeros(a netip.Addr) string {
	b := a.As16()
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = fmt.Sprintf("%x", int(b[2*i])<<8|int(b[2*i+1]))
	}
	return strings.Join(parts, ":")
}

// TestSQLNumber: YAML's ways of writing numbers become SQL literals.
func TestSQLNumber(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"4688", "4688"}, {"0x1F", "31"}, {"-12", "-12"}, {"1_000", "1000"}, {"2.5", "2.5"}, {"1e3", "1e3"},
		{"0755", "755"}, {"18446744073709551615", "18446744073709551615"}, {"abc", ""}, {"1.2.3", ""}, {"", ""},
	} {
		if got, _ := sqlNumber(c.in); got != c.want {
			t.Errorf("sqlNumber(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
