package sluice_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// shadowColumns are the columns of the alerts of a ruleset over the
// shared-filter tests' table ev.
const shadowColumns = `id BIGINT, s STRING, t STRING, n BIGINT, d DOUBLE, b BOOLEAN, ruleset_name STRING, ruleset_version INT,
  matched_rules ARRAY<STRING>, alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT`

// runShadowScript runs script over the shared-filter tests' table ev
// (the files of dir) with the print tables live and shadow of the
// alerts' columns, and returns the lines each printed, sorted, and the
// rows the job read.
func runShadowScript(t *testing.T, dir, script string) (live, shadow []string, read int64) {
	t.Helper()
	src := fmt.Sprintf(`CREATE TABLE ev (id BIGINT, s STRING, t STRING, n BIGINT, d DOUBLE, b BOOLEAN) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE live (%s) WITH ('connector' = 'print', 'print-identifier' = 'live');
CREATE TABLE shadow (%s) WITH ('connector' = 'print', 'print-identifier' = 'shadow');
`, dir, shadowColumns, shadowColumns) + script
	var out syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "shadow.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "live> "):
			live = append(live, l)
		case strings.HasPrefix(l, "shadow> "):
			shadow = append(shadow, l)
		}
	}
	slices.Sort(live)
	slices.Sort(shadow)
	return live, shadow, j.Metrics.RowsIn.Load()
}

// randomRules writes n random rules (the shared-filter tests'
// conditions) named prefix0, prefix1, ...
func randomRules(rng *rand.Rand, prefix string, n int) string {
	var b strings.Builder
	b.WriteString("(")
	sev := []string{"low", "medium", "high"}
	for i := range n {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		fmt.Fprintf(&b, "RULE %s%d WHEN %s SEVERITY '%s' PRIORITY %d TAGS ('%s')", prefix, i, sfCondition(rng, 3), sev[rng.IntN(3)], rng.IntN(3), prefix)
	}
	b.WriteString(")")
	return b.String()
}

// A shadow runs beside the live version in the same job, over the same
// reading of the source: the live alerts are those of the job without
// the shadow, byte for byte, and the shadow's alerts those of a ruleset
// of the shadow's rules run on its own, at the version PROMOTE SHADOW
// would give it.
func TestRulesetShadow(t *testing.T) {
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 17))
		dir := t.TempDir()
		sfInput(t, rng, dir, 1, 300)
		liveRules, shadowRules := randomRules(rng, "l", 20), randomRules(rng, "s", 25)
		create := "CREATE RULESET rs ON ev MATCH AT LEAST 2 EXCEPT WHEN id % 7 = 0 " + liveRules + ";\n"
		insert := "INSERT INTO live SELECT * FROM rs;\n"

		alone, none, read := runShadowScript(t, dir, create+insert)
		if len(none) != 0 || read != 300 {
			t.Fatalf("seed %d: without a shadow: %d shadow alerts, %d rows read", seed, len(none), read)
		}
		// The shadow: the live policy and exceptions, its own rules.
		live, shadow, read := runShadowScript(t, dir, create+"ALTER RULESET rs SHADOW "+shadowRules+" INTO shadow;\n"+insert)
		if read != 300 {
			t.Errorf("seed %d: the job with a shadow read %d rows, want 300 (one pass)", seed, read)
		}
		if !slices.Equal(live, alone) {
			t.Errorf("seed %d: the live alerts differ with a shadow:\n%s\nwithout:\n%s", seed, strings.Join(live, "\n"), strings.Join(alone, "\n"))
		}
		// The shadow's rules as version 2 of a ruleset of their own.
		_, want, _ := runShadowScript(t, dir, "CREATE RULESET rs ON ev MATCH AT LEAST 2 EXCEPT WHEN id % 7 = 0 "+shadowRules+
			";\nALTER RULESET rs SET MATCH AT LEAST 2;\nINSERT INTO shadow SELECT * FROM rs;\n")
		if len(want) == 0 {
			t.Fatalf("seed %d: the shadow's rules raise no alert", seed)
		}
		if !slices.Equal(shadow, want) {
			t.Errorf("seed %d: the shadow's alerts:\n%s\nthe same rules alone:\n%s", seed, strings.Join(shadow, "\n"), strings.Join(want, "\n"))
		}
	}
}

// A shadow may have its own policy, exceptions and suppression, or be an
// earlier version; PROMOTE SHADOW makes its definition the live one (a
// new version), DROP SHADOW forgets it; a job plans the shadow it
// finds.
func TestRulesetShadowLifecycle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ev.json", `{"id":1,"s":"abc","n":10}
{"id":2,"s":"xyz","n":3}
{"id":3,"s":"a","n":7}
{"id":4,"n":9}
{"id":5,"s":"b","n":1}
`)
	const create = `CREATE RULESET rs ON ev (RULE r_a WHEN s LIKE '%a%', RULE r_b WHEN n > 5);
`
	const insert = "INSERT INTO live SELECT * FROM rs;\n"
	cut := func(rows []string) []string {
		// id, matched_rules, ruleset_version, suppressed_count
		var out []string
		for _, r := range rows {
			f := strings.Split(r[strings.Index(r, "[")+1:len(r)-1], ", ")
			out = append(out, fmt.Sprintf("%s v%s %s n%s", f[0], f[7], r[strings.Index(r, "[r")+1:strings.Index(r, "], ")], f[len(f)-1]))
		}
		return out
	}
	for _, c := range []struct {
		name, alter        string
		wantLive, wantShdw []string
	}{
		{"own policy", "ALTER RULESET rs SHADOW MATCH ALL (RULE r_a WHEN s LIKE '%a%', RULE r_b WHEN n > 5) INTO shadow;",
			[]string{"1 v1 r_a, r_b n0", "3 v1 r_a, r_b n0", "4 v1 r_b n0"},
			[]string{"1 v2 r_a, r_b n0", "3 v2 r_a, r_b n0"}},
		{"own exceptions and suppression", "ALTER RULESET rs SHADOW EXCEPT WHEN id = 4 SUPPRESS BY (ruleset_name) FOR INTERVAL '1' HOUR (RULE r_a WHEN s LIKE '%a%', RULE r_b WHEN n > 5) INTO shadow;",
			[]string{"1 v1 r_a, r_b n0", "3 v1 r_a, r_b n0", "4 v1 r_b n0"},
			[]string{"1 v2 r_a, r_b n0"}},
		{"an earlier version", "ALTER RULESET rs ADD RULE r_c WHEN id = 5;\nALTER RULESET rs SHADOW VERSION 1 INTO shadow;",
			[]string{"1 v2 r_a, r_b n0", "3 v2 r_a, r_b n0", "4 v2 r_b n0", "5 v2 r_c n0"},
			[]string{"1 v1 r_a, r_b n0", "3 v1 r_a, r_b n0", "4 v1 r_b n0"}},
		{"promoted", "ALTER RULESET rs SHADOW MATCH ALL (RULE r_a WHEN s LIKE '%a%', RULE r_b WHEN n > 5) INTO shadow;\nALTER RULESET rs PROMOTE SHADOW;",
			[]string{"1 v2 r_a, r_b n0", "3 v2 r_a, r_b n0"}, nil},
		{"dropped", "ALTER RULESET rs SHADOW (RULE r_x WHEN id = 2) INTO shadow;\nALTER RULESET rs DROP SHADOW;",
			[]string{"1 v1 r_a, r_b n0", "3 v1 r_a, r_b n0", "4 v1 r_b n0"}, nil},
		{"promoted earlier version", "ALTER RULESET rs ADD RULE r_c WHEN id = 5;\nALTER RULESET rs SHADOW VERSION 1 INTO shadow;\nALTER RULESET rs PROMOTE SHADOW;",
			[]string{"1 v3 r_a, r_b n0", "3 v3 r_a, r_b n0", "4 v3 r_b n0"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			live, shadow, _ := runShadowScript(t, dir+"/ev.json", create+c.alter+"\n"+insert)
			if got := cut(live); !slices.Equal(got, c.wantLive) {
				t.Errorf("live: got %v, want %v", got, c.wantLive)
			}
			if got := cut(shadow); !slices.Equal(got, c.wantShdw) {
				t.Errorf("shadow: got %v, want %v", got, c.wantShdw)
			}
		})
	}
}

// The shadow's errors name the line, the column and the nearest name.
func TestRulesetShadowErrors(t *testing.T) {
	const create = "CREATE TABLE sh (id INT, s STRING, n INT, ruleset_name STRING, ruleset_version INT, matched_rules ARRAY<STRING>, alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT) WITH ('connector' = 'print');\n" +
		"CREATE TABLE narrow (id INT) WITH ('connector' = 'print');\n" +
		"CREATE RULESET rs ON ev (RULE alpha WHEN s = 'a');\n"
	for _, c := range []struct{ script, want string }{
		{create + "ALTER RULESET rs SHADOW (RULE a WHEN s = 'b') INTO shh;", "test.sql:6:52: unknown table 'shh' (did you mean \"sh\"?)"},
		{create + "ALTER RULESET rs SHADOW (RULE a WHEN s = 'b') INTO narrow;", "test.sql:6:52: query has 9 columns but table 'narrow' has 1: id"},
		{create + "ALTER RULESET rs SHADOW (RULE a WHEN s = 'b') INTO rs;", "test.sql:6:52: the shadow of ruleset 'rs' writes into a table, not into the ruleset"},
		{create + "ALTER RULESET rs SHADOW (RULE a WHEN ss = 'b') INTO sh;", "test.sql:6:38: column 'ss' not found in any table (did you mean \"s\"?)"},
		{create + "ALTER RULESET rs SHADOW MATCH AT LEAST 0 (RULE a WHEN s = 'b') INTO sh;", "test.sql:6:31: MATCH AT LEAST needs 1 rule or more, not 0"},
		{create + "ALTER RULESET rs SHADOW EXCEPT WHEN nn = 1 (RULE a WHEN s = 'b') INTO sh;", "test.sql:6:37: column 'nn' not found in any table (did you mean \"n\"?)"},
		{create + "ALTER RULESET rs SHADOW VERSION 4 INTO sh;", "test.sql:6:33: ruleset 'rs' has no version 4: it is at version 1, and keeps its earlier ones"},
		{create + "ALTER RULESET rs PROMOTE SHADOW;", "test.sql:6:18: ruleset 'rs' has no shadow to promote"},
		{create + "ALTER RULESET rs DROP SHADOW;", "test.sql:6:18: ruleset 'rs' has no shadow to drop"},
		{create + "ALTER RULESET rs SHADOW (RULE a WHEN s = 'b') INTO sh;\nINSERT INTO sh SELECT * FROM rs;", "test.sql:7:1: the shadow of ruleset 'rs' writes into table 'sh', which this job writes too"},
		{create + "ALTER RULESET rs SHADOW (RULE a WHEN s = 'b') INTO sh;\nDROP TABLE sh;\nINSERT INTO narrow SELECT id FROM rs;", "test.sql:8:1: the shadow of ruleset 'rs' cannot write into table 'sh': unknown table 'sh'"},
	} {
		checkRulesetError(t, c.script, c.want)
	}
}

// EXPLAIN shows the shadow's sink beside the live one.
func TestRulesetShadowExplain(t *testing.T) {
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := rulesetEvents + `CREATE TABLE out (id INT) WITH ('connector' = 'print');
CREATE TABLE sh (id INT, s STRING, n INT, ruleset_name STRING, ruleset_version INT, matched_rules ARRAY<STRING>, alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT) WITH ('connector' = 'print');
CREATE RULESET rs ON ev (RULE a WHEN s = 'a');
ALTER RULESET rs SHADOW (RULE b WHEN n > 1) INTO sh;
`
	if _, err := e.Exec(context.Background(), "x.sql", []byte(src)); err != nil {
		t.Fatal(err)
	}
	plan, err := e.Explain("q.sql", []byte("INSERT INTO out SELECT id FROM rs;"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sink(table=[out]", "Sink(table=[sh]", "Ruleset(name=[rs], version=[1], match=[ANY], rules=[a: ", "Ruleset(name=[rs], version=[2], shadow=[true], match=[ANY], rules=[b: "} {
		if !strings.Contains(plan, want) {
			t.Errorf("no %q in\n%s", want, plan)
		}
	}
}

// A shadow needs a source without state: a ruleset over a metric group
// (or an aggregation) has none.
func TestRulesetShadowStatefulSource(t *testing.T) {
	src := `CREATE TABLE logins (user_id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE METRIC GROUP g ON logins KEY BY (user_id) (METRIC n AS COUNT(*));
CREATE RULESET rs ON g (RULE a WHEN n > 1);
CREATE TABLE sh (user_id INT, ts TIMESTAMP(3), n BIGINT, ruleset_name STRING, ruleset_version INT, matched_rules ARRAY<STRING>,
  alert_severity STRING, alert_tags ARRAY<STRING>, suppressed_count BIGINT) WITH ('connector' = 'blackhole');
ALTER RULESET rs SHADOW (RULE b WHEN n > 2) INTO sh;
`
	_, err := runSQL(t, nil, "", src)
	want := "test.sql:6:15: ruleset 'rs' cannot have a shadow: it reads 'g', computed with state (MetricGroup)"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
}
