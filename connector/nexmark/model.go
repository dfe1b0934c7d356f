package nexmark

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// The shape of the auction: proportions of event kinds, first IDs, and
// how many people and auctions are active.
const (
	personShare  = 1
	auctionShare = 3
	epochEvents  = 50 // person, auctions, then bids

	firstPersonID   = 1000
	firstAuctionID  = 1000
	firstCategoryID = 10
	categories      = 5

	activePeople     = 1000
	inFlightAuctions = 100
	hotAuctionRatio  = 2 // one bid in two goes to a hot auction
	hotBidderRatio   = 4 // three bids in four come from hot bidders
	hotSellerRatio   = 4
	hotGroup         = 100 // the hot ones are the newest, in groups of this size
)

var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	channels   = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// generator builds events; it reuses its buffers.
type generator struct {
	rng  *rand.Rand // draws from pcg
	pcg  rand.PCG
	vals [3][]types.Value
	sb   strings.Builder
	buf  []byte
}

// event returns event n: its kind and its fields in the model's order.
// The slice is reused by the next call.
func (g *generator) event(s *Source, n int64) (int, []types.Value) {
	if g.rng == nil {
		g.rng = rand.New(&g.pcg)
	}
	g.pcg.Seed(s.seed, uint64(n))
	ts := s.base + int64(float64(n)*s.delay)
	ts -= ts % 1000 // TIMESTAMP(3)
	epoch, off := n/epochEvents, n%epochEvents
	switch {
	case off < personShare:
		return personEvent, g.person(epoch*personShare+off, ts)
	case off < personShare+auctionShare:
		return auctionEvent, g.auction(s, n, epoch*auctionShare+off-personShare, ts)
	}
	return bidEvent, g.bid(n, ts)
}

// people and auctions return how many of each events 0..n created.
func people(n int64) int64 {
	epoch, off := n/epochEvents, n%epochEvents
	return epoch*personShare + min(off+1, personShare)
}

func auctions(n int64) int64 {
	epoch, off := n/epochEvents, n%epochEvents
	return epoch*auctionShare + min(max(off+1-personShare, 0), auctionShare)
}

// pick returns the index of a hot one (the newest group) one time in
// ratio-1 of ratio, otherwise one of the last `active` of count.
func (g *generator) pick(count int64, ratio int, active int64) int64 {
	if count <= 0 {
		return 0
	}
	if g.rng.IntN(ratio) > 0 {
		return (count - 1) / hotGroup * hotGroup
	}
	lo := max(count-active, 0)
	return lo + g.rng.Int64N(count-lo)
}

func (g *generator) person(index, ts int64) []types.Value {
	v := grow(&g.vals[personEvent], len(personFields))
	first, last := firstNames[g.rng.IntN(len(firstNames))], lastNames[g.rng.IntN(len(lastNames))]
	v[0] = types.IntValue(types.KindBigInt, firstPersonID+index)
	v[1] = types.StringValue(first + " " + last)
	v[2] = types.StringValue(g.letters(7) + "@" + g.letters(5) + ".com")
	g.sb.Reset()
	for i := range 4 {
		if i > 0 {
			g.sb.WriteByte(' ')
		}
		g.sb.WriteString(strconv.Itoa(1000 + g.rng.IntN(9000)))
	}
	v[3] = types.StringValue(g.sb.String())
	v[4] = types.StringValue(cities[g.rng.IntN(len(cities))])
	v[5] = types.StringValue(states[g.rng.IntN(len(states))])
	v[6] = types.TimestampValue(ts)
	v[7] = types.StringValue("")
	return v
}

func (g *generator) auction(s *Source, n, index, ts int64) []types.Value {
	v := grow(&g.vals[auctionEvent], len(auctionFields))
	initial := g.price()
	// Open for a while of events: about as long as the auction stays
	// among the last inFlightAuctions.
	span := int64(inFlightAuctions * epochEvents / auctionShare)
	expires := ts + int64(float64(1+g.rng.Int64N(2*span))*s.delay)
	expires -= expires % 1000
	v[0] = types.IntValue(types.KindBigInt, firstAuctionID+index)
	v[1] = types.StringValue(g.letters(20))
	v[2] = types.StringValue(g.letters(100))
	v[3] = types.IntValue(types.KindBigInt, initial)
	v[4] = types.IntValue(types.KindBigInt, initial+g.price())
	v[5] = types.TimestampValue(ts)
	v[6] = types.TimestampValue(max(expires, ts+1000))
	v[7] = types.IntValue(types.KindBigInt, firstPersonID+g.pick(people(n), hotSellerRatio, activePeople))
	v[8] = types.IntValue(types.KindBigInt, int64(firstCategoryID+g.rng.IntN(categories)))
	v[9] = types.StringValue("")
	return v
}

func (g *generator) bid(n, ts int64) []types.Value {
	v := grow(&g.vals[bidEvent], len(bidFields))
	v[0] = types.IntValue(types.KindBigInt, firstAuctionID+g.pick(auctions(n), hotAuctionRatio, inFlightAuctions))
	v[1] = types.IntValue(types.KindBigInt, firstPersonID+g.pick(people(n), hotBidderRatio, activePeople))
	v[2] = types.IntValue(types.KindBigInt, g.price())
	named := g.rng.IntN(10) > 0
	var channel string
	var id int
	if named {
		channel = channels[g.rng.IntN(len(channels))]
	} else {
		id = g.rng.IntN(10000)
		channel = "channel-" + strconv.Itoa(id)
	}
	b := append(g.buf[:0], "https://www.nexmark.com/"...)
	for range 3 {
		b = g.appendLetters(b, 5)
		b = append(b, '/')
	}
	b = append(b, "item.htm?query=1"...)
	if !named {
		b = strconv.AppendInt(append(b, "&channel_id="...), int64(id), 10)
	}
	g.buf = b
	v[3] = types.StringValue(channel)
	v[4] = types.StringValue(string(b))
	v[5] = types.TimestampValue(ts)
	v[6] = types.StringValue("")
	return v
}

// price is in cents, from 1.00 to 1,000,000.00, log-uniform.
func (g *generator) price() int64 {
	return int64(math.Round(math.Pow(10, g.rng.Float64()*6) * 100))
}

func (g *generator) letters(n int) string {
	g.buf = g.appendLetters(g.buf[:0], n)
	return string(g.buf)
}

// appendLetters appends n random lowercase letters, five from each draw.
func (g *generator) appendLetters(b []byte, n int) []byte {
	for n > 0 {
		x := g.rng.Uint64()
		for k := 0; k < 5 && n > 0; k++ {
			b = append(b, byte('a'+x%26))
			x /= 26
			n--
		}
	}
	return b
}

func grow(s *[]types.Value, n int) []types.Value {
	if len(*s) != n {
		*s = make([]types.Value, n)
	}
	return *s
}
