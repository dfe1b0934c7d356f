package sluice_test

import (
	"slices"
	"strings"
	"testing"
)

// A join keeps only the columns read after it (the rule
// prune-join-inputs, as Flink's project-join transpose): rows that differ
// only in a dropped column still each match, so every output row keeps
// its multiplicity, for inner and outer joins and over updating inputs.
func TestJoinKeepsOnlyReadColumns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "orders.jsonl", `{"oid":1,"cust":7,"note":"x"}
{"oid":2,"cust":8,"note":"y"}
{"oid":3,"cust":9,"note":"z"}
`)
	writeFile(t, dir, "custs.jsonl", `{"cid":7,"name":"a","tier":1}
{"cid":7,"name":"b","tier":2}
{"cid":8,"name":"c","tier":3}
{"cid":8,"name":"c","tier":3}
`)
	ddl := `
CREATE TABLE orders (oid INT, cust INT, note STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/orders.jsonl', 'format' = 'json');
CREATE TABLE custs (cid INT, name STRING, tier INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/custs.jsonl', 'format' = 'json');
`
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Customer 7 has two rows that differ only in columns not read.
		{`SELECT oid FROM orders JOIN custs ON cust = cid`, []string{"+I[1]", "+I[1]", "+I[2]", "+I[2]"}},
		{`SELECT oid, tier FROM orders LEFT JOIN custs ON cust = cid WHERE oid > 1`, []string{"+I[2, 3]", "+I[2, 3]", "+I[3, null]"}},
		{`SELECT cid FROM orders RIGHT JOIN custs ON cust = cid AND note <> 'x'`, []string{"+I[7]", "+I[7]", "+I[8]", "+I[8]"}},
		// An updating input: the counts per customer, joined.
		{`SELECT oid, n FROM orders JOIN (SELECT cid, COUNT(*) AS n FROM custs GROUP BY cid) c ON cust = cid`, []string{"+I[1, 2]", "+I[2, 2]"}},
	} {
		out, err := runSQL(t, nil, dir, ddl+tc.query+";")
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got := joinNetRows(out); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.query, got, tc.want)
		}
	}
}

// joinNetRows folds printed changelog rows into the rows that remain, as
// +I[...], sorted.
func joinNetRows(printed string) []string {
	count := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(printed), "\n")[1:] {
		if len(l) < 3 {
			continue
		}
		row := l[2:]
		switch l[:2] {
		case "+I", "+U":
			count[row]++
		case "-U", "-D":
			count[row]--
		}
	}
	var out []string
	for row, n := range count {
		for range n {
			out = append(out, "+I"+row)
		}
	}
	slices.Sort(out)
	return out
}
