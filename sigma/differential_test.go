package sigma_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/sigma"
)

// The differential test writes random rules over three fields (A, B, C:
// columns a, b, c) and random events, some without a field, and checks
// that the translated script alerts on exactly the events a direct
// evaluation of Sigma's semantics (below, independent of the
// translator) matches, with the conditions split into parts and whole,
// as a ruleset and as a statement set.

var (
	diffFields = []string{"A", "B", "C"}
	diffValues = []string{"x", "y", "xy", "Z"}
	diffEvents = []string{"x", "y", "xy", "z", "X", "yx", "", "zz"}
	diffMods   = []string{"", "|contains", "|startswith", "|endswith", "|neq", "|contains|all"}
)

// diffTest is a field test: field, modifiers, values (nil values: null).
type diffTest struct {
	field, mods string
	values      []string
}

// holds evaluates the test on an event as Sigma says: a missing field
// fails every test but null, strings compare without case.
func (d diffTest) holds(ev map[string]string) bool {
	v, ok := ev[strings.ToLower(d.field)]
	if d.values == nil {
		return !ok
	}
	neg := strings.Contains(d.mods, "neq")
	if !ok {
		return neg
	}
	v = strings.ToLower(v)
	one := func(w string) bool {
		w = strings.ToLower(w)
		switch {
		case strings.Contains(d.mods, "contains"):
			return strings.Contains(v, w)
		case strings.Contains(d.mods, "startswith"):
			return strings.HasPrefix(v, w)
		case strings.Contains(d.mods, "endswith"):
			return strings.HasSuffix(v, w)
		}
		return v == w
	}
	all := strings.Contains(d.mods, "all")
	res := all
	for _, w := range d.values {
		if all {
			res = res && one(w)
		} else {
			res = res || one(w)
		}
	}
	return res != neg
}

func (d diffTest) yaml() string {
	if d.values == nil {
		return d.field + ": null"
	}
	q := make([]string, len(d.values))
	for i, v := range d.values {
		q[i] = "'" + v + "'"
	}
	return d.field + d.mods + ": [" + strings.Join(q, ", ") + "]"
}

// diffCond is a condition: an identifier, not, and, or, 1 of / all of
// sel_*.
type diffCond struct {
	op   string // "id", "not", "and", "or", "1of", "allof"
	id   int
	kids []*diffCond
}

func (c *diffCond) eval(sel [][]diffTest, ev map[string]string) bool {
	ident := func(i int) bool {
		for _, t := range sel[i] {
			if !t.holds(ev) {
				return false
			}
		}
		return true
	}
	switch c.op {
	case "id":
		return ident(c.id)
	case "not":
		return !c.kids[0].eval(sel, ev)
	case "and":
		return c.kids[0].eval(sel, ev) && c.kids[1].eval(sel, ev)
	case "or":
		return c.kids[0].eval(sel, ev) || c.kids[1].eval(sel, ev)
	}
	all := c.op == "allof"
	for i := range sel {
		if ident(i) != all {
			return !all
		}
	}
	return all
}

func (c *diffCond) String() string {
	switch c.op {
	case "id":
		return fmt.Sprintf("sel_%d", c.id)
	case "not":
		return "not (" + c.kids[0].String() + ")"
	case "and", "or":
		return "(" + c.kids[0].String() + " " + c.op + " " + c.kids[1].String() + ")"
	case "1of":
		return "1 of sel_*"
	}
	return "all of sel_*"
}

func diffRandCond(rng *rand.Rand, n, depth int) *diffCond {
	if depth == 0 || rng.IntN(3) == 0 {
		switch rng.IntN(8) {
		case 0:
			return &diffCond{op: "1of"}
		case 1:
			return &diffCond{op: "allof"}
		}
		return &diffCond{op: "id", id: rng.IntN(n)}
	}
	switch rng.IntN(5) {
	case 0:
		return &diffCond{op: "not", kids: []*diffCond{diffRandCond(rng, n, depth-1)}}
	case 1, 2:
		return &diffCond{op: "and", kids: []*diffCond{diffRandCond(rng, n, depth-1), diffRandCond(rng, n, depth-1)}}
	}
	return &diffCond{op: "or", kids: []*diffCond{diffRandCond(rng, n, depth-1), diffRandCond(rng, n, depth-1)}}
}

type diffRule struct {
	sel  [][]diffTest
	cond *diffCond
}

func diffRandRule(rng *rand.Rand) diffRule {
	var r diffRule
	for range 1 + rng.IntN(3) {
		var tests []diffTest
		fields := slices.Clone(diffFields)
		rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		for _, f := range fields[:1+rng.IntN(2)] {
			t := diffTest{field: f, mods: diffMods[rng.IntN(len(diffMods))]}
			if rng.IntN(10) > 0 || t.mods != "" {
				for range 1 + rng.IntN(2) {
					t.values = append(t.values, diffValues[rng.IntN(len(diffValues))])
				}
			}
			tests = append(tests, t)
		}
		r.sel = append(r.sel, tests)
	}
	r.cond = diffRandCond(rng, len(r.sel), 3)
	return r
}

func (r diffRule) yaml(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "title: Rule %d\nname: r%d\ndetection:\n", i, i)
	for j, tests := range r.sel {
		fmt.Fprintf(&b, "  sel_%d:\n", j)
		for _, t := range tests {
			b.WriteString("    " + t.yaml() + "\n")
		}
	}
	fmt.Fprintf(&b, "  condition: '%s'\n", r.cond)
	return b.String()
}

// TestDifferential: random rules alert on what Sigma's semantics say,
// their conditions split into parts (as the script writes them) or not.
func TestDifferential(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			dir := t.TempDir()
			var evs []map[string]string
			var lines bytes.Buffer
			for id := range 300 {
				ev := map[string]string{}
				rec := map[string]any{"id": id}
				for _, f := range []string{"a", "b", "c"} {
					if rng.IntN(4) > 0 {
						ev[f] = diffEvents[rng.IntN(len(diffEvents))]
						rec[f] = ev[f]
					}
				}
				evs = append(evs, ev)
				line, _ := json.Marshal(rec)
				lines.Write(append(line, '\n'))
			}
			if err := os.WriteFile(filepath.Join(dir, "events.json"), lines.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var rules []diffRule
			var docs []string
			for i := range 60 {
				r := diffRandRule(rng)
				rules = append(rules, r)
				docs = append(docs, r.yaml(i))
			}
			want := map[string][]int{}
			for i, r := range rules {
				for id, ev := range evs {
					if r.cond.eval(r.sel, ev) {
						want[fmt.Sprintf("r%d", i)] = append(want[fmt.Sprintf("r%d", i)], id)
					}
				}
			}
			m, err := sigma.ParseMapping("m.yml", []byte("table: ev\nfields: {A: a, B: b, C: c}\nalert_columns: [id]\ncolumns: {id: BIGINT}\n"))
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := sigma.Parse("rules.yml", []byte(strings.Join(docs, "---\n")))
			if err != nil {
				t.Fatal(err)
			}
			rs := sigma.Translate(parsed, m)
			if len(rs.Failures) > 0 {
				t.Fatalf("not translated: %v", rs.Failures)
			}
			split := 0
			for _, q := range rs.Queries {
				if len(q.Parts) > 0 {
					split++
				}
			}
			alerts := 0
			for _, ids := range want {
				alerts += len(ids)
			}
			if split == 0 || alerts == 0 {
				t.Fatalf("%d conditions split, %d alerts: the test tests little", split, alerts)
			}
			t.Logf("%d rules, %d split, %d alerts", len(rules), split, alerts)
			ddl := fmt.Sprintf("CREATE TABLE ev (id BIGINT, a STRING, b STRING, c STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", dir)
			check := func(how string) {
				got, _ := runRulesets(t, rs, ddl+sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true}), "")
				for i := range rules {
					name := fmt.Sprintf("r%d", i)
					if !slices.Equal(got[name], want[name]) {
						t.Errorf("%s, ruleset: %s (%s) alerts on %v, want %v", how, name, rules[i].cond, got[name], want[name])
					}
				}
				got = diffRun(t, ddl+sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true, StatementSet: true}))
				for i := range rules {
					name := fmt.Sprintf("r%d", i)
					if !slices.Equal(got[name], want[name]) {
						t.Errorf("%s, statement set: %s (%s) alerts on %v, want %v", how, name, rules[i].cond, got[name], want[name])
					}
				}
			}
			check("split")
			for _, q := range rs.Queries {
				q.Parts = nil
			}
			check("whole")
		})
	}
}

// diffRun runs a script and returns each rule's alerted ids, sorted.
func diffRun(t *testing.T, src string) map[string][]int {
	t.Helper()
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Run(context.Background(), "rules.sql", []byte(src)); err != nil {
		t.Fatalf("%s\n%s", sluice.FormatError(err, []byte(src)), src)
	}
	got := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "+I["), "]"), ", ")
		var id int
		if len(f) != 3 {
			t.Fatalf("line %q", line)
		}
		if _, err := fmt.Sscan(f[2], &id); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[f[0]] = append(got[f[0]], id)
	}
	for _, ids := range got {
		sort.Ints(ids)
	}
	return got
}
