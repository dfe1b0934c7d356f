package sluice_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
)

// nexmarkQ5Published is Nexmark's q5 as the nexmark project publishes it
// (nexmark-flink/src/main/resources/queries/q5.sql), with its sink.
const nexmarkQ5Published = `
CREATE TABLE nexmark_q5 (
  auction  BIGINT,
  num  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM TABLE(
             HOP(TABLE bid, DESCRIPTOR(` + "`dateTime`" + `), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM TABLE(
                HOP(TABLE bid, DESCRIPTOR(` + "`dateTime`" + `), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn;
`

// nexmarkSetup is testdata/nexmark/ddl.sql over 20,000 events.
func nexmarkSetup(t *testing.T) string {
	t.Helper()
	ddl, err := os.ReadFile("testdata/nexmark/ddl.sql")
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer("$EVENTS", "20000", "$RATE", "1000").Replace(string(ddl))
}

// nexmarkQ5Want answers q5 in plain Go: in every HOP window of 10 s by 2
// s, the auctions with the most bids, and their count.
func nexmarkQ5Want(bids []nxBid) []string {
	const slide, size = int64(2 * time.Second / time.Microsecond), int64(10 * time.Second / time.Microsecond)
	counts := map[int64]map[int64]int64{} // window start → auction → bids
	for _, b := range bids {
		for s := b.at - b.at%slide; s > b.at-size; s -= slide {
			if counts[s] == nil {
				counts[s] = map[int64]int64{}
			}
			counts[s][b.auction]++
		}
	}
	var want []string
	for _, per := range counts {
		var most int64
		for _, n := range per {
			most = max(most, n)
		}
		for a, n := range per {
			if n >= most {
				want = append(want, fmt.Sprintf("[%d, %d]", a, n))
			}
		}
	}
	slices.Sort(want)
	return want
}

// TestNexmarkQ5Published: the published q5 is a window join of two window
// aggregations, the second a window aggregation of the first's rows, as
// Flink plans it: append-only, so an append-only sink takes it, with the
// rows plain Go computes from the same events.
func TestNexmarkQ5Published(t *testing.T) {
	setup := nexmarkSetup(t)
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	plan, err := e.Explain("q5.sql", []byte(setup+nexmarkQ5Published))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "WindowJoin(") || !strings.Contains(plan, "WindowAggregate(groupBy=[], window=[HOP(win_start=[starttime], win_end=[endtime]") ||
		strings.Contains(plan, "GroupAggregate") || strings.Contains(plan, " Join(") {
		t.Fatalf("q5 should be a window join of window aggregations:\n%s", plan)
	}

	e2, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "q5.csv")
	q5 := strings.Replace(nexmarkQ5Published, "'connector' = 'blackhole'",
		"'connector' = 'filesystem', 'path' = '"+out+"', 'format' = 'csv'", 1)
	if err := e2.Run(context.Background(), "q5.sql", []byte(setup+q5)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		got = append(got, "["+strings.ReplaceAll(l, ",", ", ")+"]")
	}
	slices.Sort(got)
	_, _, bids := nexmarkEvents(t)
	if want := nexmarkQ5Want(bids); !slices.Equal(got, want) || len(want) < 10 {
		t.Fatalf("q5: %d rows, want %d; first difference:\n%s", len(got), len(want), firstDifference(got, want))
	}
}

// TestNexmarkWindowResults compares the results of the window queries of
// testdata/nexmark with the same questions answered in plain Go: q5, and
// q7, which joins the bids with the highest price of each 10-second
// TUMBLE window (a window aggregation) on the price and on a time range
// ending at window_end: a regular join in Flink, since window_end is no
// time attribute.
func TestNexmarkWindowResults(t *testing.T) {
	_, _, bids := nexmarkEvents(t)
	setup := nexmarkSetup(t)
	run := func(name string) []string {
		q, err := os.ReadFile("testdata/nexmark/" + name + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		e, err := sluice.Open(sluice.Options{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.Run(context.Background(), name+".sql", []byte(setup+string(q))); err != nil {
			t.Fatal(err)
		}
		return appendOnlyRows(t, out.String())
	}

	if got, want := run("q5"), nexmarkQ5Want(bids); !slices.Equal(got, want) || len(want) < 10 {
		t.Errorf("q5: %d rows, want %d; first difference:\n%s", len(got), len(want), firstDifference(got, want))
	}

	const size = int64(10 * time.Second / time.Microsecond)
	maxPrice := map[int64]int64{} // window start → the highest price
	for _, b := range bids {
		s := b.at - b.at%size
		if p, ok := maxPrice[s]; !ok || b.price > p {
			maxPrice[s] = b.price
		}
	}
	var want []string
	for s, p := range maxPrice {
		for _, b := range bids {
			if b.price == p && b.at >= s && b.at <= s+size {
				want = append(want, fmt.Sprintf("%d, %d, %s", b.auction, b.price, time.UnixMicro(b.at).UTC().Format("2006-01-02 15:04:05.000")))
			}
		}
	}
	slices.Sort(want)
	var got []string
	for _, r := range run("q7") {
		// auction, price, bidder, dateTime, extra
		f := strings.SplitN(strings.Trim(r, "[]"), ", ", 5)
		got = append(got, strings.Join([]string{f[0], f[1], f[3]}, ", "))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("q7: %d rows, want %d; first difference:\n%s", len(got), len(want), firstDifference(got, want))
	}
}

// firstDifference shows where two sorted lists of rows part.
func firstDifference(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return "got  " + g + "\nwant " + w
		}
	}
	return ""
}
