package sluice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// sfProjections are the SELECT lists of the rules, with their sinks'
// columns: most pick columns (which rules of one list share), in the
// table's order or not; one computes.
var sfProjections = [][2]string{
	{"id", "id BIGINT"},
	{"id, s", "id BIGINT, v STRING"},
	{"id, n, s", "id BIGINT, n BIGINT, v STRING"},
	{"id, UPPER(t)", "id BIGINT, v STRING"},
}

// sfProjection returns the SELECT list of rule r and its sink's columns.
func sfProjection(r string) (string, string) {
	p := sfProjections[len(r)%len(sfProjections)]
	return p[0], p[1]
}

// sfRun runs rules (one INSERT each into a print sink named after it, of
// the columns sfProjection gives, id first, of the rows it keeps) as one
// statement set over the JSON files of dir, with the given SETs first,
// and returns each rule's rows as printed, in the order its sink
// received them.
func sfRun(t *testing.T, dir string, rules []string, sets ...string) map[string][]string {
	t.Helper()
	var b strings.Builder
	for _, s := range sets {
		b.WriteString(s + ";\n")
	}
	fmt.Fprintf(&b, "CREATE TABLE ev (id BIGINT, s STRING, t STRING, n BIGINT, d DOUBLE, b BOOLEAN) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", dir)
	for i, r := range rules {
		_, cols := sfProjection(r)
		fmt.Fprintf(&b, "CREATE TABLE r%d (%s) WITH ('connector' = 'print', 'print-identifier' = 'r%d');\n", i, cols, i)
	}
	b.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for i, r := range rules {
		list, _ := sfProjection(r)
		fmt.Fprintf(&b, "INSERT INTO r%d SELECT %s FROM ev WHERE %s;\n", i, list, r)
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
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		name, row, _ := strings.Cut(line, "> ")
		if !strings.HasPrefix(row, "+I[") {
			t.Fatalf("line %q: not an insertion", line)
		}
		got[name] = append(got[name], row)
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
	seeds := uint64(6)
	if s := os.Getenv("SLUICE_SF_SEEDS"); s != "" { // more: SLUICE_SF_SEEDS=200
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = n
	}
	for seed := range seeds {
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

// firstDiff describes where two lists of ids or rows first differ.
func firstDiff[T comparable](got, want []T) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %v, want %v", i, got[i], want[i])
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

// Rules over a source read by one task run their sinks in that task; with
// checkpoints in state.dir and exactly-once part files, a run over an
// input that grew takes up where the last one ended: each rule's rows,
// once each.
func TestSharedFiltersResume(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"hits", "misses"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "{\"id\": %d, \"s\": \"v%d\"}\n", i, i%7)
		}
		return b.String()
	}
	writeFile(t, dir, "in.jsonl", lines(0, 700))
	job := `
SET 'state.dir' = '$DIR/state';
CREATE TABLE ev (id BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE hits (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/hits', 'format' = 'json');
CREATE TABLE misses (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/misses', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO hits SELECT id FROM ev WHERE s IN ('v1', 'v3');
INSERT INTO misses SELECT id FROM ev WHERE s NOT LIKE 'v%' OR id < 0;
END;`
	if _, err := runSQL(t, nil, dir, job); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "in.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(lines(700, 1400))
	f.Close()
	if _, err := runSQL(t, nil, dir, job); err != nil {
		t.Fatal(err)
	}
	read := func(d string) []int {
		files, _ := filepath.Glob(filepath.Join(dir, d, "part-*"))
		var ids []int
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if line == "" {
					continue
				}
				var r struct{ ID int }
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	var want []int
	for i := range 1400 {
		if i%7 == 1 || i%7 == 3 {
			want = append(want, i)
		}
	}
	if got := read("hits"); !slices.Equal(got, want) {
		t.Errorf("hits: %d rows, want %d: %s", len(got), len(want), firstDiff(got, want))
	}
	if got := read("misses"); len(got) != 0 {
		t.Errorf("misses: %v", got)
	}
}

// Rules over an unbounded source read by one task: their sinks run in the
// source's task, which acknowledges the checkpoints for them. A run
// cancelled mid-way (as a crash) has committed what its checkpoints
// covered (each output file is extended at every commit), and the next
// run takes up from there: each rule's output is exactly its rows of the
// events read, each once.
func TestSharedFiltersCheckpointed(t *testing.T) {
	dir := t.TempDir()
	rules := []string{"user_name LIKE 'CORP%'", "REGEXP(command_line, 'svchost|chrome') AND user_name <> 'root'"}
	var b strings.Builder
	fmt.Fprintf(&b, `SET 'state.dir' = '%s/state';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE ev (event_time TIMESTAMP(3), user_name STRING, command_line STRING)
WITH ('connector' = 'procgen', 'rows-per-second' = '4000', 'event-time.rate' = '1000');
`, dir)
	for i := range rules {
		fmt.Fprintf(&b, "CREATE TABLE r%d (t STRING) WITH ('connector' = 'filesystem', 'path' = '%s/r%d.jsonl', 'format' = 'json');\n", i, dir, i)
	}
	b.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for i, r := range rules {
		fmt.Fprintf(&b, "INSERT INTO r%d SELECT CAST(event_time AS STRING) FROM ev WHERE %s;\n", i, r)
	}
	b.WriteString("END;\n")
	run := func(stop func(*sluice.Job)) {
		e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		res, err := e.Exec(context.Background(), "rules.sql", []byte(b.String()))
		if err != nil {
			t.Fatal(sluice.FormatError(err, []byte(b.String())))
		}
		job := res[len(res)-1].Job
		time.Sleep(1500 * time.Millisecond)
		stop(job)
		if err := job.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(i int) []string {
		var ts []string
		for _, f := range []string{filepath.Join(dir, fmt.Sprintf("r%d.jsonl", i))} {
			data, _ := os.ReadFile(f)
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if line == "" {
					continue
				}
				var r struct{ T string }
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				ts = append(ts, r.T)
			}
		}
		slices.Sort(ts)
		return ts
	}
	run((*sluice.Job).Cancel)
	if len(read(0)) == 0 {
		t.Fatal("the cancelled run committed nothing: no checkpoint completed")
	}
	run((*sluice.Job).Stop)
	got := [][]string{read(0), read(1)}
	last := ""
	for _, g := range got {
		if len(g) > 0 && g[len(g)-1] > last {
			last = g[len(g)-1]
		}
	}
	// The same events, bounded at the last one kept, each rule alone.
	end, err := time.Parse("2006-01-02 15:04:05.000", last)
	if err != nil {
		t.Fatal(err)
	}
	n := end.Sub(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)).Milliseconds() + 1
	for i, r := range rules {
		want := sfReference(t, fmt.Sprintf(`CREATE TABLE ev (event_time TIMESTAMP(3), user_name STRING, command_line STRING)
WITH ('connector' = 'procgen', 'events.num' = '%d', 'event-time.rate' = '1000');
CREATE TABLE out (t STRING) WITH ('connector' = 'print');
INSERT INTO out SELECT CAST(event_time AS STRING) FROM ev WHERE %s;`, n, r))
		if !slices.Equal(got[i], want) {
			t.Errorf("rule %d (WHERE %s): %d rows over %d events, alone %d", i, r, len(got[i]), n, len(want))
		}
	}
}

// sfReference runs src and returns the printed rows' single values,
// sorted.
func sfReference(t *testing.T, src string) []string {
	t.Helper()
	out, err := runSQL(t, nil, "", src)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if v, ok := strings.CutPrefix(line, "+I["); ok {
			vals = append(vals, strings.TrimSuffix(v, "]"))
		}
	}
	slices.Sort(vals)
	return vals
}

// Rules and other queries over one source in one statement set: the
// aggregate's branch feeds a stage of its own and gets every row; the
// rules' branches run their sinks in the source's task and get theirs.
func TestSharedFiltersBesideAggregate(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "{\"id\": %d, \"s\": \"v%d\"}\n", i, i%3)
	}
	writeFile(t, dir, "in.jsonl", b.String())
	out, err := runSQL(t, nil, dir, `
CREATE TABLE ev (id BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE r0 (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'r0');
CREATE TABLE r1 (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'r1');
CREATE TABLE counts (s STRING, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'counts');
EXECUTE STATEMENT SET BEGIN
INSERT INTO r0 SELECT id FROM ev WHERE s = 'v1' AND id < 30;
INSERT INTO counts SELECT s, COUNT(*) FROM ev GROUP BY s;
INSERT INTO r1 SELECT id FROM ev WHERE s LIKE '%2' AND id >= 290;
END;`)
	if err != nil {
		t.Fatal(err)
	}
	var r0, r1 []string
	final := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, row, _ := strings.Cut(line, "> ")
		switch name {
		case "r0":
			r0 = append(r0, row)
		case "r1":
			r1 = append(r1, row)
		case "counts":
			if strings.HasPrefix(row, "+I[") || strings.HasPrefix(row, "+U[") {
				k, v, _ := strings.Cut(row[3:len(row)-1], ", ")
				final[k] = v
			}
		}
	}
	want0 := []string{"+I[1]", "+I[4]", "+I[7]", "+I[10]", "+I[13]", "+I[16]", "+I[19]", "+I[22]", "+I[25]", "+I[28]"}
	if !slices.Equal(r0, want0) || !slices.Equal(r1, []string{"+I[290]", "+I[293]", "+I[296]", "+I[299]"}) {
		t.Errorf("r0 %v, r1 %v", r0, r1)
	}
	if final["v0"] != "100" || final["v1"] != "100" || final["v2"] != "100" {
		t.Errorf("counts %v", final)
	}
}

// The job's summary reports each filter group's cache: a value seen again
// is a hit.
func TestSharedFiltersSummary(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "{\"id\": %d, \"s\": \"v%d\"}\n", i, i%4)
	}
	writeFile(t, dir, "in.jsonl", b.String())
	_, log, err := runSQLLog(t, dir, `
CREATE TABLE ev (id BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE r0 (id BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE r1 (id BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
INSERT INTO r0 SELECT id FROM ev WHERE s = 'v1';
INSERT INTO r1 SELECT id FROM ev WHERE s LIKE '%2';
END;`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "shared filters of ev.s: 96 cache hits, 4 misses, 0 evicted"; !strings.Contains(log, want) {
		t.Errorf("the log lacks %q:\n%s", want, log)
	}
}
