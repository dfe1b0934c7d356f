package sluice_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/types"
)

// Query hands a SELECT's rows to a function, with their changelog kinds,
// instead of printing them; its columns come back before any row.
func TestQuery(t *testing.T) {
	var out strings.Builder
	e, err := sluice.Open(sluice.Options{Stdout: &out, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := `CREATE TABLE s (id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen', 'number-of-rows' = '5',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5');
SET 'parallelism.default' = '2';
SELECT id % 2 AS k, COUNT(*) AS n FROM s GROUP BY id % 2;`
	var mu sync.Mutex
	var got []string
	job, schema, err := e.Query(context.Background(), "q.sql", []byte(src), func(r types.Row) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Kind.String()+" "+types.FormatValue(r.Vals[0], types.Type{})+" "+types.FormatValue(r.Vals[1], types.Type{}))
		return nil
	})
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	if names := strings.Join(schema.Names(), ","); names != "k,n" {
		t.Errorf("columns %s, want k,n", names)
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 0 {
		t.Errorf("the query printed %q", out.String())
	}
	// The last update of each key is its count: 3 odd, 2 even.
	last := map[string]string{}
	kinds := map[string]int{}
	for _, line := range got {
		f := strings.Fields(line)
		kinds[f[0]]++
		if f[0] == "+I" || f[0] == "+U" {
			last[f[1]] = f[2]
		}
	}
	if last["0"] != "2" || last["1"] != "3" || kinds["-U"] == 0 {
		t.Errorf("rows %q", got)
	}
	// The job kept its state to itself: another query of the same name
	// ("select") in a new session starts from nothing, where a SELECT run
	// by Exec would find the first one's state in the engine's.
	job, _, err = e.NewSession().Query(context.Background(), "q2.sql", []byte(`SELECT COUNT(*) FROM s`), func(types.Row) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Wait(); err != nil {
		t.Errorf("a second query: %v", err)
	}
}

// A query script holds DDL, SET and one SELECT; the receiver's error
// fails the job.
func TestQueryErrors(t *testing.T) {
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	table := "CREATE TABLE s (id BIGINT) WITH ('connector' = 'datagen');\n"
	none := func(types.Row) error { return nil }
	for _, tc := range []struct{ src, want string }{
		{table + "INSERT INTO s SELECT 1;", "q.sql:2:1: a query script holds DDL, SET and one SELECT"},
		{table + "SELECT id FROM s;\nSELECT id FROM s;", "q.sql:3:1: a query script runs one SELECT, and the one at line 2, column 1"},
		{table, "the script has no SELECT"},
		{table + "SELECT nope FROM s;", "q.sql:2:8: "},
	} {
		sess := e.NewSession()
		job, _, err := sess.Query(context.Background(), "q.sql", []byte(tc.src), none)
		sess.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
		if job != nil {
			t.Errorf("%q: a job runs", tc.src)
		}
	}
	job, _, err := e.NewSession().Query(context.Background(), "q.sql", []byte(table+"SELECT id FROM s;"), func(types.Row) error {
		return io.ErrClosedPipe
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Wait(); err == nil || !strings.Contains(err.Error(), io.ErrClosedPipe.Error()) {
		t.Errorf("job ended with %v, want the receiver's error", err)
	}
	if jobs := e.Jobs(); len(jobs) > 0 {
		t.Errorf("jobs left running: %v", jobs)
	}
}
