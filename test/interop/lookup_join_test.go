package interop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestLookupJoinPostgres(t *testing.T) { testLookupJoin(t, postgresDB(t)) }
func TestLookupJoinMySQL(t *testing.T)    { testLookupJoin(t, mysqlDB(t)) }

// testLookupJoin runs SQL lookup joins of a stream with a dimension table
// in the database, loaded in full (FULL) and looked up key by key through
// the job's cache (PARTIAL, NONE), on a composite key with a duplicate and
// a one-column key set of the same table, and checks the rows against the
// table's contents (dimRows).
func testLookupJoin(t *testing.T, d *jdbcDB) {
	name := d.createDim(t)
	dir := t.TempDir()
	stream := `{"o":1,"id":1,"region":"eu"}
{"o":2,"id":2,"region":"eu"}
{"o":3,"id":2,"region":"us"}
{"o":4,"id":3,"region":"us"}
{"o":5,"id":null,"region":"eu"}
{"o":6,"id":1,"region":"eu"}
`
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"FULL", "PARTIAL", "NONE"} {
		cache := "'lookup.cache' = '" + mode + "'"
		if mode == "PARTIAL" {
			cache += ", 'lookup.partial-cache.max-rows' = '10'"
		}
		ddl := fmt.Sprintf(`
CREATE TABLE s (o INT, id INT, region STRING, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE dim (id INT, region STRING, name STRING, price DECIMAL(10, 2))
WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', 'username' = '%s', %s);
`, filepath.Join(dir, "s.jsonl"), d.url, name, d.user, cache)
		t.Run(mode, func(t *testing.T) {
			got := runSluice(t, ddl+`SELECT s.o, d.name, d.price FROM s
LEFT JOIN dim FOR SYSTEM_TIME AS OF s.pt AS d ON s.id = d.id AND s.region = d.region`)
			want := map[string]int{"[1, one, 1.50]": 2, "[2, two, 2.00]": 1, "[2, two again, null]": 1,
				"[3, two in us, -3.25]": 1, "[4, null, null]": 1, "[5, null, null]": 1}
			// o = 6 repeats o = 1's key: the same row.
			want["[6, one, 1.50]"], want["[1, one, 1.50]"] = 1, 1
			if diff := diff(want, got); diff != "" {
				t.Errorf("composite key:\n%s", diff)
			}
			got = runSluice(t, ddl+`SELECT s.o, d.region FROM s
JOIN dim FOR SYSTEM_TIME AS OF s.pt AS d ON s.id = d.id WHERE d.price > 0`)
			want = map[string]int{"[1, eu]": 1, "[6, eu]": 1, "[2, eu]": 1, "[3, eu]": 1}
			if diff := diff(want, got); diff != "" {
				t.Errorf("one-column key:\n%s", diff)
			}
		})
	}
}
