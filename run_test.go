package sluice_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
)

// TestRunPrintsListings: Run writes what SHOW, DESCRIBE, EXPLAIN and SET
// show (they printed nothing), and no acknowledgements.
func TestRunPrintsListings(t *testing.T) {
	out, err := runSQL(t, nil, t.TempDir(), `
CREATE TABLE bids (price INT, item STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
SHOW TABLES;
SHOW FUNCTIONS;
DESCRIBE bids;
EXPLAIN SELECT item FROM bids WHERE price > 1;
SET 'parallelism.default' = '1';
SET;`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"table name\nbids\n", "function name\n", "UPPER\n", "price", "INT", "TableSourceScan(table=[bids]",
		"'parallelism.default' = '1'"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[INFO]") {
		t.Errorf("the output has acknowledgements:\n%s", out)
	}
}

// TestRunSelectsInOrder: a SELECT over bounded inputs ends before the next
// statement runs, as in Flink's SQL client: the rows of two SELECTs, and
// a listing after them, come one after the other (they interleaved).
func TestRunSelectsInOrder(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	var first []string
	for i := range 3000 {
		fmt.Fprintf(&sb, "{\"n\":%d}\n", i)
		first = append(first, fmt.Sprintf("+I[%d]", i))
	}
	writeFile(t, dir, "many.jsonl", sb.String())
	writeFile(t, dir, "few.jsonl", "{\"m\":1}\n{\"m\":2}\n")
	out, err := runSQL(t, nil, dir, `
CREATE TABLE many (n INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/many.jsonl', 'format' = 'json');
CREATE TABLE few (m INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/few.jsonl', 'format' = 'json');
SELECT n FROM many;
SELECT m FROM few;
SHOW TABLES;`)
	if err != nil {
		t.Fatal(err)
	}
	want := "n\n" + strings.Join(first, "\n") + "\nm\n+I[1]\n+I[2]\ntable name\nfew\nmany\n"
	if out != want {
		t.Errorf("the outputs are not one after the other:\n%.400s...", out)
	}
}

// TestRunUnboundedSelect: statements after a SELECT over an unbounded input
// that print nothing (DDL, INSERT) run while it runs; the next that prints
// waits for it and, the run being stopped, never runs. The log says so.
func TestRunUnboundedSelect(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", "{\"m\":1}\n")
	var out, log syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := strings.ReplaceAll(`
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10', 'fields.n.min' = '1', 'fields.n.max' = '1');
SELECT n FROM gen;
CREATE TABLE src (m INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE dst (m INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.jsonl', 'format' = 'json');
INSERT INTO dst SELECT m FROM src;
SELECT 'never' AS never;`, "$DIR", dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, "job.sql", []byte(src)) }()
	// The INSERT after the SELECT runs: its output appears.
	deadline := time.Now().Add(30 * time.Second) // a guard, not a measure
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "out.jsonl")); err == nil && strings.Contains(string(b), `"m":1`) &&
			strings.Contains(log.String(), "waits for the SELECT at job.sql:3:1") {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the INSERT after an unbounded SELECT did not run; log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "never") {
		t.Errorf("the SELECT after an unbounded one ran:\n%s", out.String())
	}
	if !strings.HasPrefix(out.String(), "n\n+I[1]\n") {
		t.Errorf("the unbounded SELECT printed:\n%.200s", out.String())
	}
}
