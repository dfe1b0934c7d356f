package sluice_test

import (
	"strings"
	"testing"
)

const scoresDDL = `
CREATE TABLE scores (id INT, player STRING, game STRING, points INT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/scores.jsonl', 'format' = 'json');
`

func writeScores(t *testing.T, dir string) {
	writeFile(t, dir, "scores.jsonl", `{"id":1,"player":"ann","game":"chess","points":5}
{"id":2,"player":"bob","game":"chess","points":9}
{"id":3,"player":"cid","game":"chess","points":7}
{"id":4,"player":"dan","game":"chess","points":3}
{"id":5,"player":"eve","game":"go","points":8}
{"id":6,"player":"fay","game":"go","points":6}
{"id":7,"player":"gus","game":"go","points":4}
`)
}

// TestOrderByHiddenColumns: ORDER BY a column the select list leaves
// out, an expression over the select list, and an aggregate (as Flink
// allows): the rows come in that order, without the hidden columns.
func TestOrderByHiddenColumns(t *testing.T) {
	dir := t.TempDir()
	writeScores(t, dir)
	for _, c := range []struct{ query, want string }{
		{`SELECT player FROM scores ORDER BY points DESC LIMIT 3;`,
			"player\n+I[bob]\n+I[eve]\n+I[cid]"},
		{`SELECT player AS p, game FROM scores ORDER BY game DESC, points + id;`,
			"p, game\n+I[gus, go]\n+I[fay, go]\n+I[eve, go]\n+I[ann, chess]\n+I[dan, chess]\n+I[cid, chess]\n+I[bob, chess]"},
		{`SELECT game FROM scores GROUP BY game ORDER BY COUNT(*);`,
			"game\n+I[go]\n+I[chess]"},
	} {
		out, err := runSQL(t, nil, dir, scoresDDL+c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got := strings.TrimSpace(out); got != c.want {
			t.Errorf("%s\ngot\n%s\nwant\n%s", c.query, got, c.want)
		}
	}
}
