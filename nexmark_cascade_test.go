package sluice_test

import (
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
	dir := t.TempDir()
	script, err := nexmarkSuite(t).Script("q5", 20000, 1000, dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	plan, err := e.Explain("q5.sql", []byte(script))
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
	out := filepath.Join(dir, "q5.csv")
	q5 := strings.Replace(script, "'connector' = 'blackhole'",
		"'connector' = 'filesystem', 'path' = '"+out+"', 'format' = 'csv'", 1)
	if err := e2.Run(context.Background(), "q5.sql", []byte(q5)); err != nil {
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
