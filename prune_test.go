package sluice_test

import (
	"strings"
	"testing"
)

// A job decodes only the columns it reads (optimizer.PruneScans, the json
// decoder's Prune): its rows are those of a job that reads everything; a
// value in a column no one reads that would not decode is no error, as
// with Flink's projection push-down into the json format, while one in a
// column read still follows the table's policy; computed columns that
// read unread columns are not computed, those read are.
func TestScanReadsOnlyUsedColumns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bids.jsonl", `{"auction":1,"bidder":10,"price":500,"channel":"a","url":"u\"1","dateTime":"2024-01-01 00:00:00.000","extra":"x"}
{"auction":2,"bidder":20,"price":7000,"channel":"b","url":"u2","dateTime":"not a time","extra":"y"}
{"auction":3,"bidder":"thirty","price":9000,"channel":"c","url":"u3","dateTime":"2024-01-01 00:00:02.000","extra":"z"}
`)
	ddl := `CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dt TIMESTAMP(3), extra STRING,
  cents AS price * 100, shout AS UPPER(extra))
  WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
`
	out, err := runSQL(t, nil, dir, ddl+`SELECT auction, cents FROM bids WHERE price > 600;`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedLines(out), []string{"auction, cents", "+I[2, 700000]", "+I[3, 900000]"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Reading bidder reaches the bad value on the third line.
	_, err = runSQL(t, nil, dir, ddl+`SELECT auction, bidder FROM bids WHERE price > 600;`)
	if err == nil || !strings.Contains(err.Error(), `field "bidder"`) {
		t.Fatalf("got %v, want the bad bidder reported", err)
	}
	// A computed column that reads an unread column is not computed; one
	// that is read is, from the columns it reads.
	out, err = runSQL(t, nil, dir, ddl+`SELECT shout FROM bids WHERE auction <> 2;`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedLines(out), []string{"shout", "+I[X]", "+I[Z]"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
