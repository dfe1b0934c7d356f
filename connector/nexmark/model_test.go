package nexmark

import (
	"context"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// fullSchema is the published table, every field of every row.
var fullSchema = func() types.Schema {
	row := func(names []string) types.Type {
		var fs []types.Field
		for _, n := range names {
			typ := types.String
			switch fieldKind(n) {
			case types.KindBigInt:
				typ = types.BigInt
			case types.KindTimestamp:
				typ = types.Timestamp(3)
			}
			fs = append(fs, types.Field{Name: n, Type: typ})
		}
		return types.RowOf(fs...)
	}
	return types.Schema{Columns: []types.Column{{Name: "event_type", Type: types.Int},
		{Name: "person", Type: row(personFields)}, {Name: "auction", Type: row(auctionFields)}, {Name: "bid", Type: row(bidFields)}}}
}()

// events generates the events of the published table with opts.
func events(t *testing.T, opts map[string]string) []types.Row {
	t.Helper()
	o := connector.Options{"connector": "nexmark", "base-time": "2024-01-01 00:00:00", "first-event.rate": "1000"}
	for k, v := range opts {
		o[k] = v
	}
	s, err := New().CreateSource(connector.Table{Name: "nx", Schema: fullSchema, Options: o}, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, s.(*Source), 0, 0)
}

// within fails unless got is within tol (relative) of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*want {
		t.Errorf("%s = %.4f, want %.4f ± %.0f%%", what, got, want, tol*100)
	} else {
		t.Logf("%s = %.4f (want %.4f)", what, got, want)
	}
}

const base2024 = 1704067200000 // ms: 2024-01-01 00:00:00 UTC

// TestReferenceModel checks the events against the reference generator's
// model: which event is which kind, their IDs and times, the hot sellers,
// bidders and auctions at their ratios, prices, auction lengths, channels
// and URLs, and the sizes the 'extra' padding brings events to.
func TestReferenceModel(t *testing.T) {
	const total = 200000
	rows := events(t, map[string]string{"events.num": strconv.Itoa(total)})
	if len(rows) != total {
		t.Fatalf("%d events, want %d", len(rows), total)
	}
	var counts [3]int
	var personSize, auctionSize, bidSize float64
	var hotSellers, hotAuctions, hotBidders, named, numbered, withID, cheap int
	var lengthMs float64
	nextPerson, nextAuction := int64(1001), int64(1001) // the reference's first event is id 2
	channelURL := map[string]string{}
	for i, r := range rows {
		n := int64(i)
		id := n + 2 // the reference's event id
		kind := int(r.Vals[0].Int())
		if want := []int{0, 1, 1, 1}[min(id%50, 3)]; kind != want && !(id%50 >= 4 && kind == bidEvent) {
			t.Fatalf("event %d (id %d) is kind %d", n, id, kind)
		}
		counts[kind]++
		f := r.Vals[1+kind].Elems()
		ts := base2024 + n + 1       // 1000 events/s: event number n+1 at n+1 ms
		lastPerson := nextPerson - 1 // the newest person so far
		lastAuction := nextAuction - 1
		switch kind {
		case personEvent:
			if f[0].Int() != nextPerson {
				t.Fatalf("event %d: person %d, want %d", n, f[0].Int(), nextPerson)
			}
			nextPerson++
			if got := f[6].Int() / 1000; got != ts {
				t.Fatalf("event %d at %d ms, want %d", n, got, ts)
			}
			if !strings.Contains(f[2].Str(), "@") || !strings.HasSuffix(f[2].Str(), ".com") || len(f[3].Str()) != 19 {
				t.Fatalf("event %d: email %q, card %q", n, f[2].Str(), f[3].Str())
			}
			size := 8
			for _, k := range []int{1, 2, 3, 4, 5, 7} {
				size += len(f[k].Str())
			}
			personSize += float64(size)
		case auctionEvent:
			if f[0].Int() != nextAuction {
				t.Fatalf("event %d: auction %d, want %d", n, f[0].Int(), nextAuction)
			}
			lastAuction = nextAuction
			nextAuction++
			seller := f[7].Int()
			if seller == (lastPerson-1000)/100*100+1000 {
				hotSellers++
			} else if seller < max(lastPerson-1000+1-activePeople, 0)+1000 || seller > lastPerson+idLead {
				t.Fatalf("event %d: seller %d, newest person %d", n, seller, lastPerson)
			}
			if c := f[8].Int(); c < 10 || c >= 15 {
				t.Fatalf("event %d: category %d", n, c)
			}
			if f[3].Int() < 100 || f[4].Int() <= f[3].Int() {
				t.Fatalf("event %d: initial bid %d, reserve %d", n, f[3].Int(), f[4].Int())
			}
			opens, expires := f[5].Int()/1000, f[6].Int()/1000
			if opens != ts || expires <= opens {
				t.Fatalf("event %d: opens %d (want %d), expires %d", n, opens, ts, expires)
			}
			lengthMs += float64(expires - opens)
			auctionSize += float64(8 + len(f[1].Str()) + len(f[2].Str()) + 40 + len(f[9].Str()))
		case bidEvent:
			a, bidder, price := f[0].Int(), f[1].Int()-firstPersonID, f[2].Int() // bidders run firstPersonID above people
			if a == (lastAuction-1000)/100*100+1000 {
				hotAuctions++
			} else if a < lastAuction-inFlightAuctions || a > lastAuction+idLead {
				t.Fatalf("event %d: bid on auction %d, newest %d", n, a, lastAuction)
			}
			if bidder == (lastPerson-1000)/100*100+1+1000 {
				hotBidders++
			} else if bidder < max(lastPerson-1000+1-activePeople, 0)+1000 || bidder > lastPerson+idLead {
				t.Fatalf("event %d: bidder %d, newest person %d", n, bidder, lastPerson)
			}
			if price < 100 || price > 100_000_000 {
				t.Fatalf("event %d: price %d", n, price)
			}
			if price < 10000 {
				cheap++
			}
			ch, url := f[3].Str(), f[4].Str()
			if u, ok := channelURL[ch]; ok && u != url {
				t.Fatalf("channel %s has the URLs %s and %s", ch, u, url)
			}
			channelURL[ch] = url
			if !strings.HasPrefix(url, "https://www.nexmark.com/") || strings.Count(url, "/") != 6 {
				t.Fatalf("event %d: url %q", n, url)
			}
			if num, ok := strings.CutPrefix(ch, "channel-"); ok {
				numbered++
				if _, id, ok := strings.Cut(url, "&channel_id="); ok {
					withID++
					i, _ := strconv.Atoi(num)
					want := int32(bits.Reverse32(uint32(i)))
					if want < 0 && want != math.MinInt32 {
						want = -want
					}
					if id != strconv.Itoa(int(want)) {
						t.Fatalf("channel %s: channel_id %s, want %d", ch, id, want)
					}
				}
			} else {
				named++
				if strings.Contains(url, "channel_id") {
					t.Fatalf("named channel %s with %s", ch, url)
				}
			}
			if got := f[5].Int() / 1000; got != ts {
				t.Fatalf("event %d at %d ms, want %d", n, got, ts)
			}
			bidSize += float64(32 + len(f[6].Str()))
		}
	}
	// Event ids 2 ... total+1: of every 50 ids, 1 person, 3 auctions, 46 bids.
	if counts != [3]int{total / 50, total / 50 * 3, total / 50 * 46} {
		t.Fatalf("kinds: %v", counts)
	}
	people, auctions, bids := float64(counts[0]), float64(counts[1]), float64(counts[2])
	within(t, "average person size", personSize/people, 200, 0.02)
	within(t, "average auction size", auctionSize/auctions, 500, 0.02)
	within(t, "average bid size", bidSize/bids, 100, 0.02)
	// Hot ones: the pick is hot with probability 1 - 1/ratio, and a random
	// pick lands on it now and then.
	within(t, "hot seller share", float64(hotSellers)/auctions, 0.75, 0.02)
	within(t, "hot auction share", float64(hotAuctions)/bids, 0.5, 0.03)
	within(t, "hot bidder share", float64(hotBidders)/bids, 0.75, 0.02)
	within(t, "named channel share", float64(named)/bids, 0.5, 0.02)
	within(t, "share of other channels' URLs with channel_id", float64(withID)/float64(numbered), 0.9, 0.02)
	within(t, "share of prices under 100.00", float64(cheap)/bids, 1.0/3, 0.03)
	// An auction lasts on average as long as 100 auctions take to arrive:
	// 100 × 50/3 events of 1 ms.
	within(t, "average auction length (ms)", lengthMs/auctions, 100*50/3, 0.05)
	if len(channelURL) < 5000 {
		t.Errorf("%d channels, want the four named ones and thousands of numbered ones", len(channelURL))
	}
}

// TestModelOptions: the published options change the shares of event
// kinds, the sizes and the hot ratios as the reference's do.
func TestModelOptions(t *testing.T) {
	rows := events(t, map[string]string{"events.num": "40000",
		"person.proportion": "10", "auction.proportion": "10", "bid.proportion": "80",
		"bid.avg-size": "1kb", "person.avg-size": "20b",
		"bid.hot-ratio.auctions": "1", "bid.hot-ratio.bidders": "1", "auction.hot-ratio.sellers": "1"})
	var counts [3]int
	var bidSize float64
	var lastAuction int64 = 999
	hot := 0
	for _, r := range rows {
		kind := int(r.Vals[0].Int())
		counts[kind]++
		f := r.Vals[1+kind].Elems()
		switch kind {
		case personEvent:
			if f[7].Str() != "" {
				t.Fatalf("person larger than person.avg-size padded with %q", f[7].Str())
			}
		case auctionEvent:
			lastAuction = f[0].Int()
		case bidEvent:
			bidSize += float64(32 + len(f[6].Str()))
			if lastAuction >= 1200 && f[0].Int() == (lastAuction-1000)/100*100+1000 {
				hot++
			}
		}
	}
	if counts != [3]int{4000, 4000, 32000} {
		t.Fatalf("kinds %v, want 10:10:80 of 40000", counts)
	}
	within(t, "average bid size", bidSize/float64(counts[2]), 1024, 0.02)
	// With a ratio of 1 no bid goes to the hot auction on purpose; a
	// random pick among the last 111 lands there now and then.
	if share := float64(hot) / float64(counts[2]); share > 0.03 {
		t.Errorf("hot auction share %.3f with bid.hot-ratio.auctions 1, want about 1/111", share)
	}
}

// TestRateShape: with next-event.rate set apart from first-event.rate,
// event time runs at each rate in turn, each for its share of
// rate.period.
func TestRateShape(t *testing.T) {
	rows := events(t, map[string]string{"events.num": "30000", "first-event.rate": "1000", "next-event.rate": "4000",
		"rate.shape": "square", "rate.period": "10 s"})
	// Event number k = n+1: the first 5 s hold 5000 events 1 ms apart,
	// the next 5 s 20000 events 0.25 ms apart, then it starts over.
	ts := func(n int) int64 {
		r := rows[n]
		f := r.Vals[1+int(r.Vals[0].Int())].Elems()
		idx := 5 // bid, auction: dateTime is the 6th field; person's the 7th
		if r.Vals[0].Int() == personEvent {
			idx = 6
		}
		return f[idx].Int()/1000 - base2024
	}
	for n, want := range map[int]int64{0: 1, 3998: 3999, 4998: 4999, 4999: 5000, 5003: 5001, 24998: 9999, 24999: 10000, 25999: 11000} {
		if got := ts(n); got != want {
			t.Errorf("square: event %d at %d ms, want %d", n, got, want)
		}
	}
	rows = events(t, map[string]string{"events.num": "100000", "first-event.rate": "1000", "next-event.rate": "3000",
		"rate.shape": "sine", "rate.period": "10 s"})
	// Ten steps of 1 s at rates 1000 + 1000 (1 - cos): 1000, 1191, 1691,
	// ..., 3000, ..., 1191: 20,000 events in 10 s.
	if got := ts(999); got != 1000 {
		t.Errorf("sine: event 999 at %d ms, want 1000", got)
	}
	if got := ts(19999); got != 10000 {
		t.Errorf("sine: event 19999 at %d ms, want 10000 (one period)", got)
	}
}

// TestStopAndKeepAlive: 'stop-at' ends the table early, 'events.num' 0
// is no limit, and 'keep-alive' keeps a finished table open.
func TestStopAndKeepAlive(t *testing.T) {
	if n := len(events(t, map[string]string{"events.num": "1000", "stop-at": "300"})); n != 300 {
		t.Errorf("stop-at 300 of 1000: %d events", n)
	}
	if n := len(events(t, map[string]string{"stop-at": "70"})); n != 70 {
		t.Errorf("stop-at 70: %d events", n)
	}
	s := source(t, map[string]string{"events.num": "0"})
	if s.Bounded() {
		t.Errorf("events.num 0 is bounded, want no limit (the reference's meaning)")
	}
	s = source(t, map[string]string{"events.num": "5", "keep-alive": "true"})
	if s.Bounded() {
		t.Errorf("keep-alive table is bounded")
	}
	r, err := s.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(16, 4)
	if err := r.Read(context.Background(), b, 16); err != nil || b.Len() != 5 {
		t.Fatalf("first read: %d rows, %v", b.Len(), err)
	}
	b.Reset()
	if err := r.Read(context.Background(), b, 16); err != nil || b.Len() != 0 {
		t.Fatalf("read after the last event: %d rows, %v; want none and no end", b.Len(), err)
	}
}

// TestEmitByEventTime: with 'max-emit-speed' off, an event is emitted
// once as much wall-clock time has passed since the first as event time.
func TestEmitByEventTime(t *testing.T) {
	s := source(t, map[string]string{"events.num": "100", "first-event.rate": "10", "max-emit-speed": "false"})
	r, err := s.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1000, 0)
	r.(*Reader).now = func() time.Time { return clock }
	b := types.NewBatch(16, 4)
	read := func() int {
		b.Reset()
		if err := r.Read(context.Background(), b, 16); err != nil {
			t.Fatal(err)
		}
		return b.Len()
	}
	if n := read(); n != 1 {
		t.Fatalf("at once: %d events, want the first", n)
	}
	clock = clock.Add(350 * time.Millisecond) // events every 100 ms
	if n := read(); n != 3 {
		t.Fatalf("after 350 ms: %d more events, want 3", n)
	}
	start := time.Now()
	if n := read(); n != 0 {
		t.Fatalf("none due: %d events", n)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Errorf("a read with no event due returned at once; want a short wait")
	}
}

// TestDeterministicInPlace: with every field declared (generated in place
// in the batch's arena) any split into partitions gives the same events
// as one partition, and the same as a table declaring a subset.
func TestDeterministicInPlace(t *testing.T) {
	one := events(t, map[string]string{"events.num": "5003", "seed": "9"})
	o := connector.Options{"connector": "nexmark", "base-time": "2024-01-01 00:00:00", "first-event.rate": "1000",
		"events.num": "5003", "seed": "9", "partitions": "4"}
	s, err := New().CreateSource(connector.Table{Name: "nx", Schema: fullSchema, Options: o}, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	str := func(r types.Row) string {
		var parts []string
		for i, v := range r.Vals {
			parts = append(parts, types.FormatValue(v, fullSchema.Columns[i].Type))
		}
		return strings.Join(parts, "|")
	}
	for p := range 4 {
		for k, r := range readAll(t, s.(*Source), p, 0) {
			if got, want := str(r), str(one[k*4+p]); got != want {
				t.Fatalf("partition %d row %d:\n got %s\nwant %s", p, k, got, want)
			}
		}
	}
	sub := readAll(t, source(t, map[string]string{"events.num": "5003", "seed": "9", "first-event.rate": "1000"}), 0, 0)
	for n, r := range sub {
		kind := int(r.Vals[0].Int())
		full := one[n].Vals[1+kind].Elems()
		part := r.Vals[1+kind].Elems()
		// bid: auction, bidder, price, channel, dateTime of the subset schema.
		if kind == bidEvent && (part[0] != full[0] || part[1] != full[1] || part[2] != full[2] || part[3].Str() != full[3].Str()) {
			t.Fatalf("event %d: the subset table's bid %v differs from the full table's %v", n, part, full)
		}
	}
}
