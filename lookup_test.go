package sluice_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/filesystem"
	"github.com/sluicesql/sluice/types"
)

// lookupFiles writes a stream of orders and a CSV dimension of customers
// keyed by (region, cust), with a duplicate key, a NULL key and a NULL
// value.
func lookupFiles(t *testing.T, dir string) {
	writeFile(t, dir, "orders.jsonl", `{"id":1,"region":1,"cust":"a","amount":5}
{"id":2,"region":1,"cust":"b","amount":7}
{"id":3,"region":2,"cust":"a","amount":9}
{"id":4,"region":null,"cust":"a","amount":1}
{"id":5,"region":3,"cust":"z","amount":2}
{"id":6,"region":2,"cust":"c","amount":4}
`)
	writeFile(t, dir, "customers.csv", `1,a,Ann,1
1,b,Bob,2
2,a,Ada,3
2,a,Adam,1
,a,Nobody,1
2,c,Cy,2
`)
}

const lookupDDL = `
CREATE TABLE orders (id INT, region INT, cust STRING, amount INT, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '$DIR/orders.jsonl', 'format' = 'json');
CREATE TABLE customers (region BIGINT, cust STRING, name STRING, tier INT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/customers.csv', 'format' = 'csv');
`

func TestLookupJoin(t *testing.T) {
	cases := []struct {
		name, query string
		want        []string
	}{
		{"inner composite key with duplicates",
			`SELECT o.id, c.name, c.tier FROM orders AS o
			 JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.region = c.region AND o.cust = c.cust`,
			[]string{"+I[1, Ann, 1]", "+I[2, Bob, 2]", "+I[3, Ada, 3]", "+I[3, Adam, 1]", "+I[6, Cy, 2]"}},
		{"left pads misses and NULL keys",
			`SELECT o.id, c.name FROM orders AS o
			 LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON c.cust = o.cust AND c.region = o.region`,
			[]string{"+I[1, Ann]", "+I[2, Bob]", "+I[3, Ada]", "+I[3, Adam]", "+I[4, null]", "+I[5, null]", "+I[6, Cy]"}},
		{"inner with residual",
			`SELECT o.id, c.name FROM orders AS o
			 JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.region = c.region AND o.cust = c.cust AND c.tier > 1`,
			[]string{"+I[2, Bob]", "+I[3, Ada]", "+I[6, Cy]"}},
		{"left with residual on both sides",
			`SELECT o.id, c.name FROM orders AS o
			 LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c
			   ON o.region = c.region AND o.cust = c.cust AND c.tier < o.amount - 5`,
			[]string{"+I[1, null]", "+I[2, null]", "+I[3, Ada]", "+I[3, Adam]", "+I[4, null]", "+I[5, null]", "+I[6, null]"}},
		{"one key column and a constant",
			`SELECT o.id, c.name FROM orders AS o
			 JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.cust AND c.region = 2`,
			[]string{"+I[1, Ada]", "+I[1, Adam]", "+I[3, Ada]", "+I[3, Adam]", "+I[4, Ada]", "+I[4, Adam]", "+I[6, Cy]"}},
		{"a key the column's type cannot hold matches nothing",
			`SELECT o.id, c.name FROM orders AS o
			 LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON c.tier = CAST(o.id AS BIGINT) + 4294967296`,
			[]string{"+I[1, null]", "+I[2, null]", "+I[3, null]", "+I[4, null]", "+I[5, null]", "+I[6, null]"}},
		{"where on both sides",
			`SELECT o.id, c.name FROM orders AS o
			 JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.cust
			 WHERE o.amount > 4 AND c.name LIKE 'A%'`,
			[]string{"+I[1, Ann]", "+I[1, Ada]", "+I[1, Adam]", "+I[3, Ann]", "+I[3, Ada]", "+I[3, Adam]"}},
	}
	for _, c := range cases {
		// Each query on a table held on the heap, then on one spilled to
		// memory-mapped files.
		for _, spill := range []bool{false, true} {
			name := c.name
			if spill {
				name += " (spilled)"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				lookupFiles(t, dir)
				opts := sluice.Options{}
				if spill {
					opts.DimensionSpillDir = t.TempDir()
				}
				out, err := runSQLOpts(t, opts, dir, lookupDDL+c.query+";")
				if err != nil {
					t.Fatal(err)
				}
				got := sortedLines(out)[1:]
				want := append([]string(nil), c.want...)
				sortStrings(want)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// runSQLOpts runs src (with $DIR replaced by dir) on an engine opened with
// opts, printing to a buffer it returns.
func runSQLOpts(t *testing.T, opts sluice.Options, dir, src string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	opts.Stdout = &out
	e, err := sluice.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src = strings.ReplaceAll(src, "$DIR", dir)
	err = e.Run(context.Background(), "test.sql", []byte(src))
	return out.String(), err
}

// TestLookupSpillDirError: a spill directory that is not one fails the
// job that loads a dimension table, and says why.
func TestLookupSpillDirError(t *testing.T) {
	dir := t.TempDir()
	lookupFiles(t, dir)
	file := filepath.Join(dir, "customers.csv")
	_, err := runSQLOpts(t, sluice.Options{DimensionSpillDir: file}, dir, lookupDDL+`SELECT o.id, c.name FROM orders AS o
	 JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.cust;`)
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("got %v, want an error saying the spill directory is not one", err)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// countedFS is the filesystem connector under another name, counting the
// loads of its dimension sources: how many sources were loaded, and how
// often.
type countedFS struct {
	filesystem.Factory
	mu      sync.Mutex
	loaded  map[*countedSource]bool
	loads   atomic.Int64
	sources atomic.Int64
	closes  atomic.Int64
}

func (f *countedFS) Name() string { return "counted-filesystem" }

func (f *countedFS) CreateLookup(t connector.Table, env connector.Env) (connector.LookupSource, error) {
	opts := maps.Clone(t.Options)
	opts["connector"] = "filesystem"
	t.Options = opts
	s, err := f.Factory.CreateLookup(t, env)
	if err != nil {
		return nil, err
	}
	f.sources.Add(1)
	return &countedSource{FullSource: s.(connector.FullSource), f: f}, nil
}

type countedSource struct {
	connector.FullSource
	f *countedFS
}

func (s *countedSource) Close() error {
	s.f.closes.Add(1)
	return s.FullSource.Close()
}

func (s *countedSource) Load(ctx context.Context, emit func(row []types.Value) error) error {
	s.f.loads.Add(1)
	s.f.mu.Lock()
	s.f.loaded[s] = true
	s.f.mu.Unlock()
	return s.FullSource.Load(ctx, emit)
}

// TestLookupTableSharedByJobs runs two unbounded jobs that look one
// dimension table up by different key sets (inferred from their ON
// clauses) at once: the table is loaded once per key set, by one source,
// and the rows each job gets are those its key finds.
func TestLookupTableSharedByJobs(t *testing.T) {
	dir := t.TempDir()
	lookupFiles(t, dir)
	var out syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cf := &countedFS{loaded: map[*countedSource]bool{}}
	if err := e.RegisterConnector(cf); err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(`
CREATE TABLE events (id INT, pt AS PROCTIME())
WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.id.kind' = 'sequence',
      'fields.id.start' = '1', 'fields.id.end' = '1000000');
CREATE TABLE customers (region BIGINT, cust STRING, name STRING, tier INT)
WITH ('connector' = 'counted-filesystem', 'path' = '$DIR/customers.csv', 'format' = 'csv');
CREATE TABLE by_cust (id INT, name STRING) WITH ('connector' = 'print', 'print-identifier' = 'cust');
CREATE TABLE by_region (id INT, name STRING) WITH ('connector' = 'print', 'print-identifier' = 'region');
INSERT INTO by_cust SELECT e.id, c.name FROM events AS e
  JOIN customers FOR SYSTEM_TIME AS OF e.pt AS c ON c.cust = 'b' AND c.region = MOD(e.id, 2);
INSERT INTO by_region SELECT e.id, c.name FROM events AS e
  JOIN customers FOR SYSTEM_TIME AS OF e.pt AS c ON c.tier = MOD(e.id, 4) + 1;
`, "$DIR", dir)
	res, err := e.Exec(context.Background(), "jobs.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !(strings.Contains(out.String(), "cust> +I[1, Bob]") && strings.Contains(out.String(), "region> +I[2, Ada]")) {
		if time.Now().After(deadline) {
			t.Fatalf("no joined rows from both jobs:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := cf.loads.Load(); n != 2 {
		t.Errorf("%d loads, want 2: one per key set", n)
	}
	cf.mu.Lock()
	if n := len(cf.loaded); n != 1 {
		t.Errorf("%d sources loaded, want 1: one copy shared", n)
	}
	cf.mu.Unlock()
	// Exact rows: tier = id%4+1 finds Ann, Adam and Nobody (1), Bob and Cy (2),
	// Ada (3); (region, cust) = (id%2, 'b') finds Bob for odd ids.
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var id int
		var name string
		var which string
		if _, err := fmt.Sscanf(strings.NewReplacer("> +I[", " ", ",", "", "]", "").Replace(line), "%s %d %s", &which, &id, &name); err != nil {
			t.Fatalf("unexpected line %q", line)
		}
		want := map[string]map[int][]string{
			"cust":   {0: nil, 1: {"Bob"}},
			"region": {0: {"Ann", "Adam", "Nobody"}, 1: {"Bob", "Cy"}, 2: {"Ada"}, 3: nil},
		}[which]
		mod := id % 2
		if which == "region" {
			mod = id % 4
		}
		if !slices.Contains(want[mod], name) {
			t.Errorf("line %q: id %d should not join %s", line, id, name)
		}
	}
	for _, r := range res {
		if r.Job == nil {
			continue
		}
		r.Job.Cancel()
		r.Job.Wait()
	}
	// The jobs have ended: the shared table is freed, every source closed.
	if o, c := cf.sources.Load(), cf.closes.Load(); o != c {
		t.Errorf("%d lookup sources opened, %d closed", o, c)
	}
}

// TestLookupTableReloads rewrites the dimension file under a running job:
// within a few reload intervals the job joins with the new rows.
func TestLookupTableReloads(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "customers.csv", "b,Bob\n")
	var out syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := strings.ReplaceAll(`
CREATE TABLE events (id INT, pt AS PROCTIME())
WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.id.kind' = 'sequence',
      'fields.id.start' = '1', 'fields.id.end' = '1000000');
CREATE TABLE customers (cust STRING, name STRING)
WITH ('connector' = 'filesystem', 'path' = '$DIR/customers.csv', 'format' = 'csv',
      'refresh-interval' = '20 ms');
CREATE TABLE named (id INT, name STRING) WITH ('connector' = 'print');
INSERT INTO named SELECT e.id, c.name FROM events AS e
  JOIN customers FOR SYSTEM_TIME AS OF e.pt AS c ON c.cust = 'b';
`, "$DIR", dir)
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	wait := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in:\n%s", s, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait(", Bob]")
	// Replace the file at once, as a deployment would.
	writeFile(t, dir, "next.csv", "a,Ann\nb,Bert\n")
	if err := os.Rename(filepath.Join(dir, "next.csv"), filepath.Join(dir, "customers.csv")); err != nil {
		t.Fatal(err)
	}
	wait(", Bert]")
	for _, r := range res {
		if r.Job != nil {
			r.Job.Cancel()
			r.Job.Wait()
		}
	}
	// Once Bert appears, Bob never does again: the swap is atomic.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	seen := false
	for _, l := range lines {
		seen = seen || strings.HasSuffix(l, ", Bert]")
		if seen && strings.HasSuffix(l, ", Bob]") {
			t.Fatalf("Bob after Bert: %q", l)
		}
	}
}
