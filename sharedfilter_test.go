package sluice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// The values of the differential tests: NULLs, empty and non-ASCII
// text, LIKE and regex metacharacters, negative zero.
var (
	sfStrings = []any{nil, "", "abc", "ABC", "a_c", "a%c", "über", "日本語テキスト", `ab\c`, "x.y", "hello world",
		"powershell -enc AAAA", `C:\Windows\system32\cmd.exe`, "aaa", "abcabc", "ñandú", "  spaced ", "a1b22c333", "Ab"}
	sfInts    = []any{nil, 0, 1, -1, 5, 100, int64(1) << 40, 7}
	sfDoubles = []any{nil, 0.0, -0.0, 1.5, -2.25, 1e10, 3.0}
	sfBools   = []any{nil, true, false}
)

// sfCondition writes a random WHERE condition over the columns s, t
// (STRING), n (BIGINT), d (DOUBLE) and b (BOOLEAN): comparisons, IN
// lists, LIKE, SIMILAR TO, REGEXP, POSITION, functions of one column,
// conditions over two columns and a non-deterministic one, joined by AND,
// OR and NOT.
func sfCondition(rng *rand.Rand, depth int) string {
	if depth > 0 && rng.IntN(3) > 0 {
		switch rng.IntN(5) {
		case 0, 1:
			return "(" + sfCondition(rng, depth-1) + " AND " + sfCondition(rng, depth-1) + ")"
		case 2, 3:
			return "(" + sfCondition(rng, depth-1) + " OR " + sfCondition(rng, depth-1) + ")"
		default:
			return "NOT (" + sfCondition(rng, depth-1) + ")"
		}
	}
	str := func() string {
		for {
			if v := sfStrings[rng.IntN(len(sfStrings))]; v != nil {
				return "'" + strings.ReplaceAll(v.(string), "'", "''") + "'"
			}
		}
	}
	col := []string{"s", "t"}[rng.IntN(2)]
	likes := []string{"%a%", "a%", "%c", "a_c", "%ü%", "_", "%", "", "abc", "%日本%", "A%", "%\\%%", "%b_", "%wer%", `%\\%`}
	regexes := []string{"^a", "b.c", "[0-9]+", "(?i)abc", "ü", "^$", "a|x", `\\`, "^[a-z]+$", "c{2,}", `\d{3}`, "(?i)^ab$"}
	similars := []string{"a%", "(a|b)%", "%[0-9]%", "abc", "_b_"}
	switch rng.IntN(24) {
	case 0:
		return fmt.Sprintf("%s = %s", col, str())
	case 1:
		return fmt.Sprintf("%s <> %s", col, str())
	case 2:
		return fmt.Sprintf("%s IN (%s, %s)", col, str(), str())
	case 3:
		return fmt.Sprintf("%s NOT IN (%s, %s)", col, str(), str())
	case 4, 5:
		p := likes[rng.IntN(len(likes))]
		if strings.Contains(p, `\`) {
			return fmt.Sprintf("%s LIKE '%s' ESCAPE '\\'", col, p)
		}
		return fmt.Sprintf("%s LIKE '%s'", col, p)
	case 6:
		return fmt.Sprintf("%s NOT LIKE '%s'", col, likes[rng.IntN(len(likes)-2)])
	case 7, 8:
		return fmt.Sprintf("REGEXP(%s, '%s')", col, regexes[rng.IntN(len(regexes))])
	case 9:
		return fmt.Sprintf("%s SIMILAR TO '%s'", col, similars[rng.IntN(len(similars))])
	case 10:
		return fmt.Sprintf("POSITION(%s IN %s) > 0", str(), col)
	case 11:
		return fmt.Sprintf("UPPER(%s) = %s", col, str())
	case 12:
		return fmt.Sprintf("CHAR_LENGTH(%s) > %d", col, rng.IntN(8))
	case 13:
		return fmt.Sprintf("%s IS NULL", col)
	case 14:
		return fmt.Sprintf("%s IS NOT NULL", col)
	case 15:
		return fmt.Sprintf("%s > %s", col, str())
	case 16:
		return fmt.Sprintf("n > %d", rng.IntN(10)-2)
	case 17:
		return fmt.Sprintf("n BETWEEN %d AND %d", rng.IntN(5)-1, rng.IntN(200))
	case 18:
		return fmt.Sprintf("n IN (%d, %d, 100)", rng.IntN(8), rng.IntN(8))
	case 19:
		return fmt.Sprintf("d < %g", []float64{0, 1.5, -1, 2e10}[rng.IntN(4)])
	case 20:
		return []string{"b", "NOT b", "b IS TRUE", "b IS NOT FALSE", "b IS NULL"}[rng.IntN(5)]
	case 21:
		return []string{"s = t", "CHAR_LENGTH(s) + n > 5", "(t LIKE '%a%' OR n > 3)", "COALESCE(s, t) LIKE 'a%'"}[rng.IntN(4)]
	case 22:
		return "RAND() < 2"
	default:
		return fmt.Sprintf("d = %g", []float64{0, 1.5, 3}[rng.IntN(3)])
	}
}

// sfRun runs rules (one INSERT each into a print sink named after it, of
// the ids of the rows it keeps) as one statement set over the JSON files
// of dir, with the given SETs first, and returns each rule's ids in the
// order its sink received them.
func sfRun(t *testing.T, dir string, rules []string, sets ...string) map[string][]int {
	t.Helper()
	var b strings.Builder
	for _, s := range sets {
		b.WriteString(s + ";\n")
	}
	fmt.Fprintf(&b, "CREATE TABLE ev (id BIGINT, s STRING, t STRING, n BIGINT, d DOUBLE, b BOOLEAN) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", dir)
	for i := range rules {
		fmt.Fprintf(&b, "CREATE TABLE r%d (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'r%d');\n", i, i)
	}
	b.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for i, r := range rules {
		fmt.Fprintf(&b, "INSERT INTO r%d SELECT id FROM ev WHERE %s;\n", i, r)
	}
	b.WriteString("END;\n")
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := []byte(b.String())
	if err := e.Run(context.Background(), "rules.sql", src); err != nil {
		t.Fatal(sluice.FormatError(err, src))
	}
	got := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var id int
		name, row, _ := strings.Cut(line, "> ")
		if _, err := fmt.Sscanf(row, "+I[%d]", &id); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[name] = append(got[name], id)
	}
	return got
}

// sfInput writes rows of random values as JSON lines into files of dir.
func sfInput(t *testing.T, rng *rand.Rand, dir string, files, rows int) {
	t.Helper()
	id := 0
	for f := range files {
		var b bytes.Buffer
		for range rows {
			id++
			rec := map[string]any{"id": id, "s": sfStrings[rng.IntN(len(sfStrings))], "t": sfStrings[rng.IntN(len(sfStrings))],
				"n": sfInts[rng.IntN(len(sfInts))], "d": sfDoubles[rng.IntN(len(sfDoubles))], "b": sfBools[rng.IntN(len(sfBools))]}
			line, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.json", f)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSharedFiltersDifferential: random rule sets over random rows keep,
// evaluated together (with a cache, with a cache too small to hold
// anything, over one file and over several), exactly the rows each rule
// keeps evaluated alone, in the same order.
func TestSharedFiltersDifferential(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			dir := t.TempDir()
			files := 1 + int(seed%2) // one task (sinks in it) or two
			sfInput(t, rng, dir, files, 600)
			rules := make([]string, 40)
			for i := range rules {
				rules[i] = sfCondition(rng, 3)
			}
			want := sfRun(t, dir, rules, "SET 'pipeline.shared-filters' = 'false'")
			for _, sets := range [][]string{nil, {"SET 'pipeline.filter-cache.size' = '1 kb'"}, {"SET 'pipeline.filter-cache.size' = '0'"},
				{"SET 'pipeline.filter-multi-pattern' = 'false'"}} {
				got := sfRun(t, dir, rules, sets...)
				for i, r := range rules {
					name := fmt.Sprintf("r%d", i)
					g, w := got[name], want[name]
					if files > 1 {
						slices.Sort(g)
						slices.Sort(w)
					}
					if !slices.Equal(g, w) {
						t.Errorf("%v: rule %s (WHERE %s) kept %d rows, alone %d: %s", sets, name, r, len(g), len(w), firstDiff(g, w))
					}
				}
			}
			// A few rules each in a job of its own.
			for i := range 3 {
				alone := sfRun(t, dir, rules[i:i+1])
				g, w := alone["r0"], slices.Clone(want[fmt.Sprintf("r%d", i)])
				if files > 1 {
					slices.Sort(g)
					slices.Sort(w)
				}
				if !slices.Equal(g, w) {
					t.Errorf("rule r%d (WHERE %s) alone kept %d rows, unshared in the set %d: %s", i, rules[i], len(g), len(w), firstDiff(g, w))
				}
			}
		})
	}
}

// firstDiff describes where two lists of ids first differ.
func firstDiff(got, want []int) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %d, want %d", i, got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("extra %v", got[len(want):min(len(got), len(want)+5)])
	}
	if len(want) > len(got) {
		return fmt.Sprintf("missing %v", want[len(got):min(len(want), len(got)+5)])
	}
	return "equal"
}
