package sluice_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/exec"
)

// TestParallelismBounded: a parallelism above exec.MaxParallelism is an
// error when it is SET (positioned at the statement) and when a job starts
// with it from the engine's initial configuration (sluice -D), instead of
// a graph whose exchanges take memory and time quadratic in it.
func TestParallelismBounded(t *testing.T) {
	const query = `
CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (k INT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;`
	tooMany := strconv.Itoa(exec.MaxParallelism + 1)
	for _, v := range []string{"1000000000", tooMany, "99999999999999999999"} {
		_, err := runSQL(t, nil, t.TempDir(), "\nSET 'parallelism.default' = '"+v+"';"+query)
		want := fmt.Sprintf("test.sql:2:1: parallelism.default must be an integer between 1 and %d", exec.MaxParallelism)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SET %s: got %v, want %q", v, err, want)
		}
	}

	e, err := sluice.Open(sluice.Options{Stdout: io.Discard, Config: map[string]string{"parallelism.default": tooMany}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Run(context.Background(), "test.sql", []byte(query))
	if err == nil || !strings.Contains(err.Error(), "parallelism.default") || !strings.Contains(err.Error(), strconv.Itoa(exec.MaxParallelism)) {
		t.Fatalf("a job started with parallelism.default = %s: got %v, want an error naming the option and its maximum", tooMany, err)
	}
}

// A generated source's partitions and rate are bounded; the error is
// positioned at the option.
func TestGeneratedSourceBounds(t *testing.T) {
	for _, tc := range []struct{ with, want string }{
		{`'connector' = 'datagen', 'number-of-rows' = '10', 'partitions' = '65536'`,
			"test.sql:2:91: table src: option 'partitions' must be between 1 and 1024, got 65536"},
		{`'connector' = 'datagen', 'rows-per-second' = '1e30'`,
			"test.sql:2:66: table src: option 'rows-per-second' must be a number of rows per second above 0 and at most 1e12, got '1e30'"},
		{`'connector' = 'nexmark', 'events.num' = '10', 'partitions' = '65536'`,
			"test.sql:2:87: table src: option 'partitions' must be between 1 and 1024, got 65536"},
	} {
		_, err := runSQL(t, nil, t.TempDir(), `
CREATE TABLE src (event_type INT) WITH (`+tc.with+`);
SELECT * FROM src;`)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.with, err, tc.want)
		}
	}
}

// TestStateSizeReported: the keys that unbounded operators hold (GROUP BY,
// regular joins, Top-N, deduplication) are counted in the job's metrics
// with an estimate of their bytes; the job's summary line shows them, and
// a job whose state passes 'table.exec.state.warn-size' is warned about,
// once, with a word on table.exec.state.ttl.
func TestStateSizeReported(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "{\"k\":%d,\"v\":%d}\n", i%2000, i)
	}
	writeFile(t, dir, "in.jsonl", b.String())
	const ddl = `
CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE u (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE out (k INT, n BIGINT) WITH ('connector' = 'blackhole');
`
	for _, tc := range []struct {
		name, query string
		keys        int64
	}{
		{"GROUP BY", `INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;`, 2000},
		{"join", `INSERT INTO out SELECT t.k, CAST(u.v AS BIGINT) FROM t JOIN u ON t.k = u.k;`, 4000},
		{"Top-N", `INSERT INTO out SELECT k, CAST(v AS BIGINT) FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t) WHERE rn <= 1;`, 2000},
		{"deduplication", `INSERT INTO out SELECT k, CAST(v AS BIGINT) FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v) AS rn FROM (SELECT k, v, v % 1000 AS g FROM t)) WHERE rn = 1;`, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.ReplaceAll("SET 'table.exec.state.warn-size' = '10 kb';"+ddl+tc.query, "$DIR", dir)
			const warning = "past 'table.exec.state.warn-size' (10 KiB)"
			var log syncBuffer
			e, err := sluice.Open(sluice.Options{Stdout: io.Discard, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			results, err := e.Exec(context.Background(), "test.sql", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			j := results[len(results)-1].Job
			if err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			keys, bytes := j.Metrics.State()
			if keys != tc.keys || bytes < 10*keys {
				t.Fatalf("state: %d keys, %d bytes; want %d keys and an estimate of their bytes", keys, bytes, tc.keys)
			}
			if out := log.String(); strings.Count(out, warning) != 1 || !strings.Contains(out, "table.exec.state.ttl") {
				t.Errorf("log %q: want one warning saying %q and naming table.exec.state.ttl", out, warning)
			}

			// Run prints the summary.
			var log2 syncBuffer
			e2, err := sluice.Open(sluice.Options{Stdout: io.Discard, Log: &log2})
			if err != nil {
				t.Fatal(err)
			}
			defer e2.Close()
			if err := e2.Run(context.Background(), "test.sql", []byte(src)); err != nil {
				t.Fatal(err)
			}
			out := log2.String()
			if want := fmt.Sprintf("; state: %d keys, about ", tc.keys); !strings.Contains(out, want) {
				t.Errorf("summary %q does not contain %q", out, want)
			}
			if n := strings.Count(out, warning); n != 1 {
				t.Errorf("log %q: %d warnings, want 1", out, n)
			}
		})
	}
}

// TestRunStopsBetweenStatements: once Run's context is done (Ctrl-C,
// SIGTERM), the statements not executed yet are not: no job starts after
// a stop.
func TestRunStopsBetweenStatements(t *testing.T) {
	var out syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = e.Run(ctx, "test.sql", []byte(`SET 'parallelism.default' = '2';
CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
SELECT * FROM src;`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := e.Config(); len(cfg) != 0 || out.String() != "" {
		t.Fatalf("a stopped Run executed statements: config %v, output %q", cfg, out.String())
	}
	if _, err := e.Exec(ctx, "test.sql", []byte(`SET 'parallelism.default' = '2';`)); err != context.Canceled {
		t.Fatalf("Exec with a done context: %v, want %v", err, context.Canceled)
	}
}

// TestCheckpointIntervalBounded: as in Flink, a checkpoint interval under
// 10 ms is refused (checkpoints back to back, each synced to disk).
func TestCheckpointIntervalBounded(t *testing.T) {
	const want = "execution.checkpointing.interval must be at least 10 ms (as in Flink), got '1 ns'"
	_, err := runSQL(t, nil, t.TempDir(), `SET 'execution.checkpointing.interval' = '1 ns';`)
	if err == nil || !strings.Contains(err.Error(), "test.sql:1:1: "+want) {
		t.Errorf("SET: got %v, want %q", err, want)
	}
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard, Config: map[string]string{"execution.checkpointing.interval": "1 ns"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Run(context.Background(), "test.sql", []byte(`
CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
SELECT * FROM src;`))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a job started with it: got %v, want %q", err, want)
	}
	if _, err := runSQL(t, nil, t.TempDir(), `SET 'execution.checkpointing.interval' = '10 ms';`); err != nil {
		t.Errorf("10 ms: %v", err)
	}
}
