package expr

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	resyntax "regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/types"
)

var psCol = &Column{Index: 0, Name: "x", T: types.String}

// patternNode builds the predicate p stands for over psCol, as the
// planner would: x LIKE 'p' ESCAPE 'e', REGEXP(x, 'p'), POSITION('p' IN
// x) > 0.
func patternNode(k *kit, p Pattern) Node {
	var args []Node
	switch p.Kind {
	case Like, SimilarTo:
		args = []Node{psCol, S(p.Text)}
		if p.Escape != 0 {
			args = append(args, S(string(p.Escape)))
		}
		return k.call(p.Kind.String(), args...)
	case Regexp:
		return k.call("REGEXP", psCol, S(p.Text))
	}
	return k.call(">", k.call("POSITION", S(p.Text), psCol), I(0))
}

// referencePredicate compiles p's predicate through the normal path.
func referencePredicate(t testing.TB, k *kit, p Pattern) (func(string) bool, error) {
	n := patternNode(k, p)
	if bad, ok := n.(*badNode); ok {
		t.Fatalf("%s: %v", p, bad.err)
	}
	pred, err := CompilePredicate(n, nil)
	if err != nil {
		return nil, err
	}
	row := make([]types.Value, 1)
	return func(s string) bool {
		row[0] = types.StringValue(s)
		ok, err := pred(row)
		if err != nil {
			t.Fatalf("%s on %q: %v", p, s, err)
		}
		return ok
	}, nil
}

func hasBit(dst []uint64, i int) bool { return dst[i>>6]&(1<<(i&63)) != 0 }

// Pieces of random patterns and strings: ASCII and non-ASCII letters,
// both cases, the Kelvin sign and the long s (which fold to k and s),
// U+FFFD and invalid UTF-8, line breaks, metacharacters.
var (
	psText  = []string{"a", "b", "c", "ab", "bc", "abc", "A", "B", "AB", "é", "É", "世", "k", "K", "\u212a", "s", "S", "ſ", "\ufffd", "\xff", "\xe4\xb8", " ", "\n", "x", ".", "/", "ks", "%", "_", "\\", "!"}
	psLike  = []string{"%", "_", "\\%", "\\_", "\\\\", "!%", "!_", "!!", "\\", "!"}
	psSim   = []string{"%", "_", "[ab]", "[^a]", "(a|bc)", "+", "*", "?", "{2}", "|", "[[:digit:]]", "(", ")", "\\%", ".", "$", "^"}
	psRegex = []string{"a", "ab", "abc", "(?i)ab", "(?i)ks", "(?i)Sk", "(?i)é", "^", "$", "\\b", ".", "[ab]", "(a|bc)", "(ab|cd)", "x+", "(?s:.*)", ".*", "\\.",
		"é", "\ufffd", "(?m)^a", "|", "()", "a{2}", "\\Aab", "b\\z", "[^b]", "(?i)(ab|KS)", "a?", "\\d", "(", "["}
)

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

// randomPattern makes a pattern of a random kind; it may not compile.
func randomPattern(r *rand.Rand) Pattern {
	var b strings.Builder
	n := r.IntN(5)
	p := Pattern{Kind: PatternKind(r.IntN(4))}
	switch p.Kind {
	case Like, SimilarTo:
		if r.IntN(3) == 0 {
			p.Escape = '\\'
			if r.IntN(2) == 0 {
				p.Escape = '!'
			}
		}
		extra := psLike
		if p.Kind == SimilarTo {
			extra = psSim
		}
		for range n {
			if r.IntN(2) == 0 {
				b.WriteString(pick(r, extra))
			} else {
				b.WriteString(pick(r, psText))
			}
		}
		// Most rules are literal tests: '%lit%', 'lit%', '%lit'.
		switch r.IntN(6) {
		case 0:
			p.Text = "%" + b.String() + "%"
		case 1:
			p.Text = b.String() + "%"
		case 2:
			p.Text = "%" + b.String()
		default:
			p.Text = b.String()
		}
		return p
	case Regexp:
		for range n {
			if r.IntN(3) == 0 {
				b.WriteString(pick(r, psText))
			} else {
				b.WriteString(pick(r, psRegex))
			}
		}
	default:
		for range n {
			b.WriteString(pick(r, psText))
		}
	}
	p.Text = b.String()
	return p
}

// randomSubject makes a string from text pieces and parts of the
// patterns' texts, so that literals occur often.
func randomSubject(r *rand.Rand, ps []Pattern) string {
	var b strings.Builder
	for range r.IntN(6) {
		if r.IntN(3) == 0 && len(ps) > 0 {
			t := ps[r.IntN(len(ps))].Text
			i, j := r.IntN(len(t)+1), r.IntN(len(t)+1)
			b.WriteString(t[min(i, j):max(i, j)])
		} else {
			b.WriteString(pick(r, psText))
		}
	}
	s := b.String()
	if r.IntN(4) == 0 {
		s = strings.ToUpper(s)
	}
	return s
}

// TestPatternSetDifferential: over random pattern sets and strings, the
// set gives exactly what each pattern's own compiled predicate gives, and
// AsPattern reads each predicate back as its pattern.
func TestPatternSetDifferential(t *testing.T) {
	k := newKit()
	rng := rand.New(rand.NewPCG(7, 13))
	compared, matched := 0, 0
	for round := range 300 {
		var ps []Pattern
		var refs []func(string) bool
		for range 1 + rng.IntN(40) {
			p := randomPattern(rng)
			ref, err := referencePredicate(t, k, p)
			if _, serr := NewPatternSet([]Pattern{p}); (err == nil) != (serr == nil) {
				t.Fatalf("%s: the predicate compiles with %v, the set with %v", p, err, serr)
			}
			n := patternNode(k, p)
			subj, got, neg, ok := AsPattern(n)
			if ok != (err == nil) {
				t.Fatalf("AsPattern(%s) ok = %v, compile error %v", n, ok, err)
			}
			if err != nil {
				continue
			}
			if subj != psCol || got != p || neg {
				t.Fatalf("AsPattern(%s) = %v, %#v, %v; want %#v", n, subj, got, neg, p)
			}
			ps = append(ps, p)
			refs = append(refs, ref)
		}
		set, err := NewPatternSet(ps)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]uint64, (len(ps)+63)/64)
		for range 60 {
			s := randomSubject(rng, ps)
			set.Match(s, dst)
			for i, ref := range refs {
				want := ref(s)
				if hasBit(dst, i) != want {
					t.Fatalf("round %d: %s on %q: set says %v, the predicate %v", round, ps[i], s, !want, want)
				}
				if want {
					matched++
				}
				compared++
			}
			for i := len(ps); i < len(dst)*64; i++ {
				if hasBit(dst, i) {
					t.Fatalf("bit %d set beyond %d patterns", i, len(ps))
				}
			}
		}
	}
	if compared < 100000 || matched < compared/20 {
		t.Fatalf("only %d comparisons, %d matches", compared, matched)
	}
}

// TestPatternSetLarge: a set of thousands of patterns (many sharing
// literals up to case, dense and sparse automaton states) agrees with the
// patterns one by one.
func TestPatternSetLarge(t *testing.T) {
	k := newKit()
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"power", "shell", "Power", "SHELL", "cmd", "exe", "/tmp/", "C:\\Users", "-enc", "http", "ks", "é"}
	var ps []Pattern
	var refs []func(string) bool
	for i := range 3000 {
		w := pick(rng, words) + fmt.Sprint(rng.IntN(300))
		var p Pattern
		switch i % 6 {
		case 0:
			p = Pattern{Kind: Like, Text: "%" + w + "%"}
		case 1:
			p = Pattern{Kind: Like, Text: w + "%"}
		case 2:
			p = Pattern{Kind: Like, Text: "%" + w}
		case 3:
			p = Pattern{Kind: Regexp, Text: "(?i)" + regexp.QuoteMeta(w) + "[0-9]"}
		case 4:
			p = Pattern{Kind: Regexp, Text: regexp.QuoteMeta(w) + "|" + regexp.QuoteMeta(pick(rng, words)) + "x"}
		default:
			p = Pattern{Kind: Contains, Text: w}
		}
		ref, err := referencePredicate(t, k, p)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
		refs = append(refs, ref)
	}
	set, err := NewPatternSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	if set.ac.ndense >= uint32(len(set.ac.key)) {
		t.Logf("all %d states are dense", len(set.ac.key))
	}
	dst := make([]uint64, (len(ps)+63)/64)
	matched := 0
	for range 2000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pick(rng, words))
			b.WriteString(fmt.Sprint(rng.IntN(400)))
			b.WriteString(pick(rng, []string{" ", "", "\u212a", "x", "0"}))
		}
		s := b.String()
		if rng.IntN(3) == 0 {
			s = strings.ToUpper(s)
		}
		set.Match(s, dst)
		for i, ref := range refs {
			if want := ref(s); hasBit(dst, i) != want {
				t.Fatalf("%s on %q: set says %v", ps[i], s, !want)
			} else if want {
				matched++
			}
		}
	}
	if matched < 1000 {
		t.Fatalf("only %d matches", matched)
	}
}

func TestPatternSetLiteralTests(t *testing.T) {
	for _, c := range []struct {
		p   Pattern
		op  setOp
		lit string
	}{
		{Pattern{Kind: Like, Text: "%abc%"}, opContains, "abc"},
		{Pattern{Kind: Like, Text: "abc%"}, opPrefix, "abc"},
		{Pattern{Kind: Like, Text: "%abc"}, opSuffix, "abc"},
		{Pattern{Kind: Like, Text: "abc"}, opEquals, "abc"},
		{Pattern{Kind: Like, Text: ""}, opEquals, ""},
		{Pattern{Kind: Like, Text: "%"}, opAlways, ""},
		{Pattern{Kind: Like, Text: "%%"}, opAlways, ""},
		{Pattern{Kind: Like, Text: `%a\%b%`, Escape: '\\'}, opContains, "a%b"},
		{Pattern{Kind: Like, Text: `a!_%`, Escape: '!'}, opPrefix, "a_"},
		{Pattern{Kind: Like, Text: "a%b"}, opVerify, ""},
		{Pattern{Kind: Like, Text: "a_b%"}, opVerify, ""},
		{Pattern{Kind: SimilarTo, Text: "abc"}, opEquals, "abc"},
		{Pattern{Kind: SimilarTo, Text: "abc%"}, opPrefix, "abc"},
		{Pattern{Kind: SimilarTo, Text: "%abc%"}, opContains, "abc"},
		{Pattern{Kind: SimilarTo, Text: "ab|c"}, opVerify, ""},
		{Pattern{Kind: Regexp, Text: "abc"}, opContains, "abc"},
		{Pattern{Kind: Regexp, Text: "(abc)"}, opContains, "abc"},
		{Pattern{Kind: Regexp, Text: "^abc"}, opPrefix, "abc"},
		{Pattern{Kind: Regexp, Text: "abc$"}, opSuffix, "abc"},
		{Pattern{Kind: Regexp, Text: `\Aabc\z`}, opEquals, "abc"},
		{Pattern{Kind: Regexp, Text: "^abc.*"}, opPrefix, "abc"},
		{Pattern{Kind: Regexp, Text: "^.*abc"}, opVerify, ""}, // abc on the first line
		{Pattern{Kind: Regexp, Text: "^(?s:.*)abc"}, opContains, "abc"},
		{Pattern{Kind: Regexp, Text: "a\\.b"}, opContains, "a.b"},
		{Pattern{Kind: Regexp, Text: "(?i)abc"}, opVerify, ""},
		{Pattern{Kind: Regexp, Text: "(?m)^abc"}, opVerify, ""},
		{Pattern{Kind: Regexp, Text: "\ufffd"}, opVerify, ""},
		{Pattern{Kind: Regexp, Text: "^$"}, opEquals, ""},
		{Pattern{Kind: Regexp, Text: "^"}, opAlways, ""},
		{Pattern{Kind: Regexp, Text: "()"}, opAlways, ""},
		{Pattern{Kind: Regexp, Text: ""}, opNever, ""},
		{Pattern{Kind: Contains, Text: "abc"}, opContains, "abc"},
		{Pattern{Kind: Contains, Text: ""}, opAlways, ""},
	} {
		sp, err := compileSetPattern(c.p, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.p, err)
		}
		if sp.op != c.op || sp.lit != c.lit {
			t.Errorf("%s: op %d lit %q, want %d %q", c.p, sp.op, sp.lit, c.op, c.lit)
		}
	}
}

func TestPatternSetRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		p    Pattern
		want string
	}{
		{Pattern{Kind: Regexp, Text: "(?i)powershell.*-enc"}, "[powershell/i][-enc/i]"},
		{Pattern{Kind: Regexp, Text: "(?i)(mimikatz|sekurlsa)"}, "[mimikatz/i sekurlsa/i]"},
		{Pattern{Kind: Regexp, Text: "(cmd|power)shell.exe"}, "[shell][cmd power][exe]"},
		{Pattern{Kind: Regexp, Text: "(cmd|pwsh)\\.exe -c"}, "[.exe -c][cmd pwsh]"},
		{Pattern{Kind: Regexp, Text: "(abc|d)x"}, "[abc d][x]"},
		{Pattern{Kind: Regexp, Text: "a|b?"}, ""},
		{Pattern{Kind: Regexp, Text: "(?i)é+x"}, "[x/i]"},
		{Pattern{Kind: Regexp, Text: "ab\ufffdcde"}, "[cde]"},
		{Pattern{Kind: Like, Text: "a%bcd%e_f"}, "[bcd][a][e][f]"},
		{Pattern{Kind: Like, Text: "ab%cd"}, "[ab][cd]"},
		{Pattern{Kind: SimilarTo, Text: "%(x|y)abc[0-9]%"}, "[abc]"},
	} {
		sp, err := compileSetPattern(c.p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var clauses []string
		for _, c := range sp.clauses {
			var parts []string
			for _, l := range c {
				if l.fold {
					parts = append(parts, l.s+"/i")
				} else {
					parts = append(parts, l.s)
				}
			}
			clauses = append(clauses, "["+strings.Join(parts, " ")+"]")
		}
		if got := strings.Join(clauses, ""); got != c.want || sp.op != opVerify {
			t.Errorf("%s: op %d literals %s, want %s", c.p, sp.op, got, c.want)
		}
	}
}

func TestFoldUnsafe(t *testing.T) {
	var got []string
	for c, u := range foldUnsafe {
		if u {
			got = append(got, string(rune(c)))
		}
	}
	if strings.Join(got, "") != "ks" {
		t.Fatalf("ASCII letters with non-ASCII case variants: %q, want k and s", got)
	}
}

func TestAsPattern(t *testing.T) {
	k := newKit()
	x := psCol
	pos := func(p string) Node { return k.call("POSITION", S(p), x) }
	contains := Pattern{Kind: Contains, Text: "ab"}
	yes := []struct {
		n    Node
		p    Pattern
		negd bool
	}{
		{k.call("LIKE", x, S("%ab%")), Pattern{Kind: Like, Text: "%ab%"}, false},
		{k.call("NOT LIKE", x, S("a_")), Pattern{Kind: Like, Text: "a_"}, true},
		{k.call("LIKE", x, S("a!%"), S("!")), Pattern{Kind: Like, Text: "a!%", Escape: '!'}, false},
		{k.call("SIMILAR TO", x, S("(a|b)+")), Pattern{Kind: SimilarTo, Text: "(a|b)+"}, false},
		{k.call("NOT SIMILAR TO", x, S("a#%"), S("#")), Pattern{Kind: SimilarTo, Text: "a#%", Escape: '#'}, true},
		{k.call("REGEXP", x, S("^a.*b$")), Pattern{Kind: Regexp, Text: "^a.*b$"}, false},
		{k.call("REGEXP", x, S("")), Pattern{Kind: Regexp, Text: ""}, false},
		{k.call("NOT", k.call("REGEXP", x, S("a"))), Pattern{Kind: Regexp, Text: "a"}, true},
		{k.call("NOT", k.call("NOT LIKE", x, S("a"))), Pattern{Kind: Like, Text: "a"}, false},
		{k.call(">", pos("ab"), I(0)), contains, false},
		{k.call("<>", pos("ab"), I(0)), contains, false},
		{k.call(">=", pos("ab"), I(1)), contains, false},
		{k.call("<", I(0), pos("ab")), contains, false},
		{k.call("<=", I(1), pos("ab")), contains, false},
		{k.call(">", pos("ab"), BI(0)), contains, false},
		{k.call("=", pos("ab"), I(0)), contains, true},
		{k.call("<", pos("ab"), I(1)), contains, true},
		{k.call("<=", pos("ab"), I(0)), contains, true},
		{k.call("=", I(0), pos("ab")), contains, true},
		{k.call(">", k.call("LOCATE", S("ab"), x), I(0)), contains, false},
		{k.call(">", k.call("LOCATE", S("ab"), x, I(1)), I(0)), contains, false},
		{k.call(">", k.call("LOCATE", S("ab"), x, I(-3)), I(0)), contains, false},
		{k.call(">", k.call("INSTR", x, S("ab")), I(0)), contains, false},
		{k.call(">", k.call("INSTR", x, S("ab"), I(1), I(1)), I(0)), contains, false},
	}
	row := make([]types.Value, 1)
	for _, c := range yes {
		if bad, ok := c.n.(*badNode); ok {
			t.Fatal(bad.err)
		}
		subj, p, neg, ok := AsPattern(c.n)
		if !ok || subj != x || p != c.p || neg != c.negd {
			t.Errorf("AsPattern(%s) = %v, %#v, %v, %v; want %#v negated %v", c.n, subj, p, neg, ok, c.p, c.negd)
			continue
		}
		// The predicate is the pattern, or its negation, on every value.
		pred, err := CompilePredicate(c.n, nil)
		if err != nil {
			t.Fatal(err)
		}
		set, err := NewPatternSet([]Pattern{p})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]uint64, 1)
		for _, s := range []string{"", "ab", "xaby", "a", "b", "a%", "(a|b)+", "aab", "ba", "a#"} {
			row[0] = types.StringValue(s)
			got, err := pred(row)
			if err != nil {
				t.Fatal(err)
			}
			set.Match(s, dst)
			if hasBit(dst, 0) != (got != neg) {
				t.Errorf("%s on %q: predicate %v, pattern %v negated %v", c.n, s, got, hasBit(dst, 0), neg)
			}
		}
	}
	// A constant pattern expression is a pattern once folded.
	concat := k.call("NOT", k.call("LIKE", x, k.call("CONCAT", S("a"), S("%"))))
	if _, _, _, ok := AsPattern(concat); ok {
		t.Errorf("AsPattern(%s) before folding: ok", concat)
	}
	folded, err := Fold(concat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if subj, p, neg, ok := AsPattern(folded); !ok || subj != x || p != (Pattern{Kind: Like, Text: "a%"}) || !neg {
		t.Errorf("AsPattern(%s) = %v, %#v, %v, %v", folded, subj, p, neg, ok)
	}
	col2 := &Column{Index: 1, Name: "y", T: types.String}
	no := []Node{
		k.call("LIKE", x, col2),                      // pattern not constant
		k.call("LIKE", x, Null),                      // NULL pattern
		k.call("LIKE", x, S("a"), Null),              // NULL escape
		k.call("LIKE", x, S("a"), S("ab")),           // escape of two characters
		k.call("LIKE", x, S("a\\"), S("\\")),         // bad escape sequence
		k.call("SIMILAR TO", x, S("a]")),             // invalid SIMILAR TO pattern
		k.call("REGEXP", x, S("(")),                  // does not compile
		k.call("REGEXP", x, k.call("UPPER", S("a"))), // not folded
		k.call("REGEXP", x, col2),
		k.call(">", pos("ab"), I(1)), // a position test, not containment
		k.call(">", pos("ab"), I(-1)),
		k.call(">=", pos("ab"), I(0)),
		k.call("<", pos("ab"), I(0)),
		k.call("=", pos("ab"), I(1)),
		k.call(">", pos("ab"), &Column{Index: 2, Name: "n", T: types.Int}),
		k.call(">", k.call("POSITION", col2, x), I(0)),
		k.call(">", k.call("LOCATE", S("ab"), x, I(2)), I(0)),
		k.call(">", k.call("INSTR", x, S("ab"), I(2)), I(0)),
		k.call(">", k.call("INSTR", x, S("ab"), I(1), I(2)), I(0)),
		k.call(">", k.call("CHAR_LENGTH", x), I(0)),
		k.call("=", x, S("ab")),
		k.call("AND", k.call("LIKE", x, S("a")), k.call("LIKE", x, S("b"))),
		x,
	}
	for _, n := range no {
		if bad, ok := n.(*badNode); ok {
			t.Fatal(bad.err)
		}
		if _, p, _, ok := AsPattern(n); ok {
			t.Errorf("AsPattern(%s) = %s, want not a pattern", n, p)
		}
	}
}

// FuzzPatternSet: patterns (one a line; the first byte picks the kind
// and the escape) against a string, the set against each predicate.
func FuzzPatternSet(f *testing.F) {
	f.Add("0%ab%\n1a\\%b\n2(?i)k+\n3é", "xABé")
	f.Add("2^$\n0\n3\n2()", "")
	f.Add("6a!%b\n2\ufffd\n2[a-c]+\\z\n1(a|b)%", "a%b\xff")
	f.Add("2(?i)(mimikatz|KS)\n0%\u212a%", "MIMI\u212aATZ")
	k := newKit()
	f.Fuzz(func(t *testing.T, spec, s string) {
		var ps []Pattern
		var refs []func(string) bool
		for _, line := range strings.Split(spec, "\n") {
			if line == "" || len(ps) >= 64 {
				continue
			}
			p := Pattern{Kind: PatternKind(line[0] % 4), Text: line[1:]}
			if line[0]&4 != 0 && (p.Kind == Like || p.Kind == SimilarTo) {
				p.Escape = '!'
			}
			ref, err := referencePredicate(t, k, p)
			if err != nil {
				continue
			}
			ps = append(ps, p)
			refs = append(refs, ref)
		}
		set, err := NewPatternSet(ps)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]uint64, (len(ps)+63)/64)
		set.Match(s, dst)
		for i, ref := range refs {
			if want := ref(s); hasBit(dst, i) != want {
				t.Fatalf("%s on %q: set says %v", ps[i], s, !want)
			}
		}
	})
}

// TestPatternSetConcurrent: one set serves several goroutines at once
// (run with -race), each getting what a lone caller gets.
func TestPatternSetConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var ps []Pattern
	for len(ps) < 200 {
		p := randomPattern(rng)
		if _, err := NewPatternSet([]Pattern{p}); err == nil {
			ps = append(ps, p)
		}
	}
	set, err := NewPatternSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	strs := make([]string, 300)
	want := make([][]uint64, len(strs))
	for i := range strs {
		strs[i] = randomSubject(rng, ps)
		want[i] = make([]uint64, (len(ps)+63)/64)
		set.Match(strs[i], want[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]uint64, (len(ps)+63)/64)
			for k := range 3 * len(strs) {
				i := (k*7 + g) % len(strs)
				set.Match(strs[i], dst)
				if !slices.Equal(dst, want[i]) {
					errs <- fmt.Sprintf("goroutine %d on %q: %x, alone %x", g, strs[i], dst, want[i])
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

// minMatchBytes is a lower bound of the bytes of any match: each rune a
// match holds takes one byte at least.
func TestMinMatchBytes(t *testing.T) {
	for _, c := range []struct {
		re   string
		want int
	}{
		{`abc`, 3}, {`a{3}`, 3}, {`[0-9]{5,}`, 5}, {`(ab|c)d`, 2}, {`x*`, 0}, {`x+y?`, 1},
		{`é`, 1}, {`(?i)k`, 1}, {`^$`, 0}, {`\bfoo\b`, 3}, {`-[Ee]nc[a-z]* [A-Z]{40,}`, 45}, {`(a{2}){3}`, 6},
	} {
		tree, err := resyntax.Parse(c.re, resyntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := minMatchBytes(tree); got != c.want {
			t.Errorf("minMatchBytes(%q) = %d, want %d", c.re, got, c.want)
		}
	}
}
