package sluice_test

import (
	"strings"
	"testing"
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
		{"where on both sides",
			`SELECT o.id, c.name FROM orders AS o
			 JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.cust
			 WHERE o.amount > 4 AND c.name LIKE 'A%'`,
			[]string{"+I[1, Ann]", "+I[1, Ada]", "+I[1, Adam]", "+I[3, Ann]", "+I[3, Ada]", "+I[3, Adam]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lookupFiles(t, dir)
			out, err := runSQL(t, nil, dir, lookupDDL+c.query+";")
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

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
