package sigma

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// CIDR ranges are tested on the text of an address (Sluice has no IP
// type): each range becomes a regular expression that matches exactly the
// texts of the addresses in it.
//
// IPv4: dotted decimal without leading zeros (10.1.2.3). The octets the
// prefix fixes are literal; the octet it cuts is a numeric range.
//
// IPv6: any text of RFC 4291 (leading zeros or not, any case, :: for a
// run of zero groups, a %zone after it). The groups the prefix fixes must
// not be zero, since a zero group may hide in a :: whose place depends on
// the rest of the address; where the group the prefix cuts may be zero,
// the :: is allowed there. Prefixes with a zero group (::1/128,
// 64:ff9b::/96) are reported as untranslatable.

// cidrRegex returns the expression matching the addresses of p.
func cidrRegex(p netip.Prefix) (string, error) {
	if p.Addr().Is4() {
		return cidr4(p), nil
	}
	return cidr6(p)
}

func cidr4(p netip.Prefix) string {
	a := p.Addr().As4()
	n := p.Bits()
	if n == 0 {
		return `^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$`
	}
	var b strings.Builder
	b.WriteByte('^')
	full := n / 8
	for i := range full {
		b.WriteString(strconv.Itoa(int(a[i])))
		if i < 3 {
			b.WriteString(`\.`)
		}
	}
	if full == 4 {
		b.WriteByte('$')
		return b.String()
	}
	if rem := n % 8; rem > 0 {
		lo := int(a[full])
		hi := lo | 0xFF>>rem
		b.WriteString("(?:" + numberRange(lo, hi, 10, 3) + ")")
		if full < 3 {
			b.WriteString(`\.`)
		} else {
			b.WriteByte('$')
		}
	}
	return b.String()
}

func cidr6(p netip.Prefix) (string, error) {
	a := p.Addr().As16()
	n := p.Bits()
	if n == 0 {
		return ":", nil
	}
	group := func(i int) int { return int(a[2*i])<<8 | int(a[2*i+1]) }
	end := `(?:%.*)?$` // after the last group: a zone, or nothing
	var b strings.Builder
	b.WriteString("(?i)^")
	full := n / 16
	for i := range full {
		g := group(i)
		if g == 0 {
			return "", fmt.Errorf("the range %s has a zero group, which an address may write as :: anywhere in a run of zeros; only ranges whose fixed groups are not zero are translated", p)
		}
		b.WriteString("0*" + strconv.FormatInt(int64(g), 16))
		if i < 7 {
			b.WriteByte(':')
		} else {
			b.WriteString(end)
		}
	}
	if rem := n % 16; rem > 0 {
		lo := group(full)
		hi := lo | 0xFFFF>>rem
		after := ":"
		if full == 7 {
			after = end
		}
		g := "0*(?:" + numberRange(lo, hi, 16, 4) + ")" + after
		if lo == 0 {
			// A zero group here may be the start of a ::.
			g = "(?::|" + g + ")"
		}
		b.WriteString(g)
	}
	return b.String(), nil
}

const digitChars = "0123456789abcdef"

// numberRange returns an expression matching the numbers lo to hi
// written in base without leading zeros, in at most maxLen digits.
func numberRange(lo, hi, base, maxLen int) string {
	var alts []string
	for l := 1; l <= maxLen; l++ {
		from, to := 0, pow(base, l)-1
		if l > 1 {
			from = pow(base, l-1)
		}
		from, to = max(from, lo), min(to, hi)
		if from <= to {
			alts = append(alts, fixedRange(digits(from, base, l), digits(to, base, l), base))
		}
	}
	return strings.Join(alts, "|")
}

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// digits writes v in base, in l digits (padded with zeros).
func digits(v, base, l int) string {
	s := strconv.FormatInt(int64(v), base)
	return strings.Repeat("0", l-len(s)) + s
}

// fixedRange returns an expression matching the digit strings of one
// length from lo to hi (lo <= hi) in base.
func fixedRange(lo, hi string, base int) string {
	if lo == hi {
		return lo
	}
	if lo[0] == hi[0] {
		return lo[:1] + group(fixedRange(lo[1:], hi[1:], base))
	}
	maxD := string(digitChars[base-1])
	rest := len(lo) - 1
	first, last := strings.IndexByte(digitChars, lo[0]), strings.IndexByte(digitChars, hi[0])
	var alts []string
	// lo's first digit with some of the rest, then the first digits
	// whose every rest is in, then hi's first digit with some.
	if rest > 0 && lo[1:] != strings.Repeat("0", rest) {
		alts = append(alts, lo[:1]+group(fixedRange(lo[1:], strings.Repeat(maxD, rest), base)))
		first++
	}
	var tail string
	if rest > 0 && hi[1:] != strings.Repeat(maxD, rest) {
		tail = hi[:1] + group(fixedRange(strings.Repeat("0", rest), hi[1:], base))
		last--
	}
	if first <= last {
		alts = append(alts, digitClass(first, last)+anyDigits(base, rest))
	}
	if tail != "" {
		alts = append(alts, tail)
	}
	return strings.Join(alts, "|")
}

// group wraps an alternation, so that it can follow a prefix.
func group(re string) string {
	if strings.Contains(re, "|") {
		return "(?:" + re + ")"
	}
	return re
}

// digitClass matches one digit, from the a-th to the z-th of digitChars.
func digitClass(a, z int) string {
	if a == z {
		return digitChars[a : a+1]
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, r := range [][2]int{{0, 9}, {10, 15}} {
		lo, hi := max(a, r[0]), min(z, r[1])
		if lo > hi {
			continue
		}
		b.WriteByte(digitChars[lo])
		if hi > lo+1 {
			b.WriteByte('-')
		}
		if hi > lo {
			b.WriteByte(digitChars[hi])
		}
	}
	b.WriteByte(']')
	return b.String()
}

// anyDigits matches n digits of base.
func anyDigits(base, n int) string {
	if n == 0 {
		return ""
	}
	c := "[0-9]"
	if base == 16 {
		c = "[0-9a-f]"
	}
	if n == 1 {
		return c
	}
	return c + "{" + strconv.Itoa(n) + "}"
}
