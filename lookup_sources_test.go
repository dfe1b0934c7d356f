package sluice_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/sluicesql/sluice"
)

// lookupOrders writes the stream of the dimension-source tests: orders
// with a customer ID (one unknown, one NULL) and a processing-time
// attribute.
const lookupOrdersDDL = `
CREATE TABLE orders (id INT, cust BIGINT, amount INT, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '$DIR/orders.jsonl', 'format' = 'json');
`

func lookupOrders(t *testing.T, dir string) {
	writeFile(t, dir, "orders.jsonl", `{"id":1,"cust":7,"amount":5}
{"id":2,"cust":8,"amount":7}
{"id":3,"cust":9,"amount":9}
{"id":4,"cust":null,"amount":1}
{"id":5,"cust":7,"amount":2}
`)
}

func expectLines(t *testing.T, out string, want ...string) {
	t.Helper()
	got := sortedLines(out)[1:]
	sortStrings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLookupJoinRedis joins a stream with customers kept as Redis hashes
// (an in-process server), looked up key by key through the job's cache:
// the cache answers the second lookup of customer 7, and a missing key
// and a NULL key match nothing.
func TestLookupJoinRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.HSet("cust:7", "name", "Ann", "tier", "2")
	mr.HSet("cust:8", "name", "Bob", "tier", "1")
	dir := t.TempDir()
	lookupOrders(t, dir)
	var log strings.Builder
	out, err := runSQLOpts(t, sluice.Options{Log: &log}, dir, lookupOrdersDDL+fmt.Sprintf(`
CREATE TABLE customers (id BIGINT, name STRING, tier INT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'redis', 'url' = 'redis://%s', 'key-prefix' = 'cust:',
      'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100');
SELECT o.id, c.name, c.tier FROM orders AS o
LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id;`, mr.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	expectLines(t, out, "+I[1, Ann, 2]", "+I[2, Bob, 1]", "+I[3, null, null]", "+I[4, null, null]", "+I[5, Ann, 2]")
	if n := mr.CommandCount(); n == 0 {
		t.Fatal("no command reached Redis")
	}
	// The five orders come in one batch: four keys (one NULL), 7 twice,
	// fetched once; 7, 8 and 9 in one pipeline.
	if want := "4 keys looked up in dimension tables, 3 found; cache: 1 hits, 3 misses; 1 round trips"; !strings.Contains(log.String(), want) {
		t.Errorf("job summary:\n%s\nwant a line with %q", log.String(), want)
	}
}

// TestLookupJoinHTTP joins a stream with customers served as a JSON array
// over HTTP, loaded in full once per key set.
func TestLookupJoinHTTP(t *testing.T) {
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		if r.Header.Get("X-Token") != "s3cret" {
			http.Error(w, "no token", http.StatusForbidden)
			return
		}
		fmt.Fprint(w, `[{"id":7,"name":"Ann","tier":2},{"id":8,"name":"Bob","tier":1},{"id":8,"name":"Bo","tier":3}]`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	lookupOrders(t, dir)
	out, err := runSQL(t, nil, dir, lookupOrdersDDL+fmt.Sprintf(`
CREATE TABLE customers (id BIGINT, name STRING, tier INT)
WITH ('connector' = 'http', 'url' = '%s/customers', 'format' = 'json', 'http.header.X-Token' = 's3cret');
SELECT o.id, c.name FROM orders AS o
JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id AND c.tier > 1;`, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	expectLines(t, out, "+I[1, Ann]", "+I[2, Bo]", "+I[5, Ann]")
	if n := gets.Load(); n != 1 {
		t.Errorf("%d GETs, want 1 (one load for the one key set)", n)
	}
}
