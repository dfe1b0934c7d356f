package nexmark

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/sluicesql/sluice/types"
)

// Constants of the reference model that its table options do not set.
const (
	firstPersonID   = 1000
	firstAuctionID  = 1000
	firstCategoryID = 10
	categories      = 5

	// activePeople is how many of the newest people place auctions and
	// bids; inFlightAuctions how many of the newest auctions get bids.
	activePeople     = 1000
	inFlightAuctions = 100
	// idLead is how many IDs beyond the newest person or auction a random
	// pick may name (people and auctions that appear a little later).
	idLead = 10
	// hotGroup: the hot seller, bidder and auction is one of each group
	// of this many newest ones.
	hotGroup = 100
	// One bid in hotChannelsRatio comes through a named channel.
	hotChannelsRatio = 2
	channelCount     = 10000
	minStringLength  = 3

	extraPoolSize = 1 << 20
)

var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	channels   = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// Read-only tables shared by every source: they hold no state, so two
// engines in one process see the same constants.
var (
	tablesOnce sync.Once
	fullNames  []string // firstNames × lastNames, "first last"
	cardGroups []string // "0000" ... "9999"
	extraPool  string   // random lowercase letters, sliced for 'extra'
)

func initTables() {
	tablesOnce.Do(func() {
		for _, f := range firstNames {
			for _, l := range lastNames {
				fullNames = append(fullNames, f+" "+l)
			}
		}
		cardGroups = make([]string, 10000)
		for i := range cardGroups {
			cardGroups[i] = string([]byte{byte('0' + i/1000), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)})
		}
		r := rand.New(rand.NewPCG(0x6e65786d61726b, 1))
		pool := make([]byte, 0, extraPoolSize)
		for len(pool) < extraPoolSize {
			x := r.Uint64()
			for k := 0; k < 12 && len(pool) < extraPoolSize; k++ {
				pool = append(pool, byte('a'+x%26))
				x /= 26
			}
		}
		extraPool = string(pool)
	})
}

// model is the generator's configuration: the table options that shape
// the events.
type model struct {
	personProp, auctionProp, bidProp, totalProp int64

	avgPerson, avgAuction, avgBid int64 // bytes

	hotAuctionRatio, hotSellersRatio, hotBiddersRatio int

	base int64 // ms: the reference's base time

	// delays are µs of event time between events: one entry for a
	// constant rate, else the steps of the rate shape, each lasting
	// stepMs and holding stepEvents[i] events, cycling every epochEvents
	// events.
	delays      []float64
	stepEvents  []int64
	stepMs      int64
	epochEvents int64

	urls *channelURLs
}

// channelURLs are the bids' channels and URLs: four named channels with
// a URL each, and channelCount numbered ones, nine in ten of whose URLs
// carry a channel_id.
type channelURLs struct {
	hot [4]string
	// numbered holds each channel's name beside its URL: a bid reads
	// both, with one cache miss.
	numbered [channelCount]struct{ name, url string }
}

// newChannelURLs builds the channels' URLs from seed.
func newChannelURLs(seed uint64) *channelURLs {
	c := &channelURLs{}
	r := rand.New(rand.NewPCG(seed, 0x75726c73))
	var g generator
	g.rng = r
	for i := range c.hot {
		c.hot[i] = string(g.appendBaseURL(nil))
	}
	for i := range c.numbered {
		c.numbered[i].name = "channel-" + strconv.Itoa(i)
		b := g.appendBaseURL(nil)
		if r.IntN(10) > 0 {
			// The reference's id: the bits of i reversed, as a Java int,
			// made positive (which leaves the smallest int as it is).
			id := int32(bits.Reverse32(uint32(i)))
			if id < 0 && id != math.MinInt32 {
				id = -id
			}
			b = strconv.AppendInt(append(b, "&channel_id="...), int64(id), 10)
		}
		c.numbered[i].url = string(b)
	}
	return c
}

// timestamp returns the event time in ms of event number num (the
// reference's event numbers count from 1).
func (m *model) timestamp(num int64) int64 {
	if len(m.delays) == 1 {
		return m.base + int64(float64(num)*m.delays[0])/1000
	}
	epoch, k := num/m.epochEvents, num%m.epochEvents
	ts := m.base + epoch*m.stepMs*int64(len(m.delays))
	for i, d := range m.delays {
		if k < m.stepEvents[i] {
			return ts + int64(float64(k)*d)/1000
		}
		k -= m.stepEvents[i]
		ts += m.stepMs
	}
	return ts // not reached: k < epochEvents
}

// lastPerson is the newest person (base 0) at event id; the one the
// event creates if it is a person.
func (m *model) lastPerson(id int64) int64 {
	epoch, off := id/m.totalProp, id%m.totalProp
	if off >= m.personProp {
		off = m.personProp - 1
	}
	return epoch*m.personProp + off
}

// lastAuction is the newest auction (base 0) at event id; the one the
// event creates if it is an auction.
func (m *model) lastAuction(id int64) int64 {
	epoch, off := id/m.totalProp, id%m.totalProp
	switch {
	case off < m.personProp:
		epoch--
		off = m.auctionProp - 1
	case off >= m.personProp+m.auctionProp:
		off = m.auctionProp - 1
	default:
		off -= m.personProp
	}
	return epoch*m.auctionProp + off
}

// generator builds events; it reuses its buffers.
type generator struct {
	rng  *rand.Rand // draws from pcg
	pcg  rand.PCG
	vals [3][]types.Value
	buf  []byte
}

// kind is the kind of event n (from 0) of the table. Event n is the
// reference's event number n+1, with the event id n+2, of a single
// generator.
func (m *model) kind(n int64) int {
	switch rem := (n + 2) % m.totalProp; {
	case rem < m.personProp:
		return personEvent
	case rem < m.personProp+m.auctionProp:
		return auctionEvent
	}
	return bidEvent
}

// event fills v with the fields of event n, of kind m.kind(n), in the
// model's order (v holds them all).
func (g *generator) event(s *Source, n int64, kind int, v []types.Value) {
	if g.rng == nil {
		g.rng = rand.New(&g.pcg)
	}
	g.pcg.Seed(s.seed, uint64(n))
	m := &s.model
	num, id := n+1, n+2
	ts := m.timestamp(num)
	switch kind {
	case personEvent:
		g.person(m, id, ts, v)
	case auctionEvent:
		g.auction(m, num, id, ts, v)
	default:
		g.bid(m, id, ts, v)
	}
}

// fields returns a reused slice for the fields of an event of kind.
func (g *generator) fields(kind int) []types.Value {
	if g.vals[kind] == nil {
		g.vals[kind] = make([]types.Value, len(modelFields[kind]))
	}
	return g.vals[kind]
}

// pickPerson picks one of the active people, or one a little ahead.
func (g *generator) pickPerson(m *model, id int64) int64 {
	people := m.lastPerson(id) + 1
	active := min(people, activePeople)
	return people - active + g.rng.Int64N(max(active+idLead, 1))
}

// pickAuction picks one of the auctions in flight, or one a little ahead.
func (g *generator) pickAuction(m *model, id int64) int64 {
	last := m.lastAuction(id)
	lo := max(last-inFlightAuctions, 0)
	return lo + g.rng.Int64N(max(last-lo+1+idLead, 1))
}

func (g *generator) person(m *model, id, ts int64, v []types.Value) {
	name := fullNames[g.rng.IntN(len(fullNames))]
	b := g.appendString(g.buf[:0], 7, ' ')
	b = append(b, '@')
	b = g.appendString(b, 5, ' ')
	b = append(b, ".com"...)
	email := string(b)
	b = b[:0]
	for i := range 4 {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, cardGroups[g.rng.IntN(len(cardGroups))]...)
	}
	card := string(b)
	g.buf = b
	city, state := cities[g.rng.IntN(len(cities))], states[g.rng.IntN(len(states))]
	size := 8 + len(name) + len(email) + len(card) + len(city) + len(state)
	v[0] = types.IntValue(types.KindBigInt, firstPersonID+m.lastPerson(id))
	v[1] = types.StringValue(name)
	v[2] = types.StringValue(email)
	v[3] = types.StringValue(card)
	v[4] = types.StringValue(city)
	v[5] = types.StringValue(state)
	v[6] = types.TimestampValue(ts * 1000)
	v[7] = types.StringValue(g.extra(int64(size), m.avgPerson))
}

func (g *generator) auction(m *model, num, id, ts int64, v []types.Value) {
	var seller int64
	if g.rng.IntN(m.hotSellersRatio) > 0 {
		seller = m.lastPerson(id) / hotGroup * hotGroup
	} else {
		seller = g.pickPerson(m, id)
	}
	initial := g.price()
	// Open for a random time averaging how long it takes until
	// inFlightAuctions more auctions are created.
	ahead := inFlightAuctions * m.totalProp / m.auctionProp
	horizon := m.timestamp(num+ahead) - ts
	expires := ts + 1 + g.rng.Int64N(max(2*horizon, 1))
	g.buf = g.appendString(g.buf[:0], 20, ' ')
	itemName := string(g.buf)
	g.buf = g.appendString(g.buf[:0], 100, ' ')
	desc := string(g.buf)
	v[0] = types.IntValue(types.KindBigInt, firstAuctionID+m.lastAuction(id))
	v[1] = types.StringValue(itemName)
	v[2] = types.StringValue(desc)
	v[3] = types.IntValue(types.KindBigInt, initial)
	v[4] = types.IntValue(types.KindBigInt, initial+g.price())
	v[5] = types.TimestampValue(ts * 1000)
	v[6] = types.TimestampValue(expires * 1000)
	v[7] = types.IntValue(types.KindBigInt, firstPersonID+seller)
	v[8] = types.IntValue(types.KindBigInt, int64(firstCategoryID+g.rng.IntN(categories)))
	v[9] = types.StringValue(g.extra(int64(8+len(itemName)+len(desc)+40), m.avgAuction))
}

// bidderOffset is added to every bidder: the reference adds the first
// person ID to a bidder twice, so bidders run 1000 above people's IDs.
const bidderOffset = 2 * firstPersonID

func (g *generator) bid(m *model, id, ts int64, v []types.Value) {
	var auction, bidder int64
	if g.rng.IntN(m.hotAuctionRatio) > 0 {
		auction = m.lastAuction(id) / hotGroup * hotGroup
	} else {
		auction = g.pickAuction(m, id)
	}
	if g.rng.IntN(m.hotBiddersRatio) > 0 {
		// The second of the group, so that the hot bidder is not the
		// hot seller.
		bidder = m.lastPerson(id)/hotGroup*hotGroup + 1
	} else {
		bidder = g.pickPerson(m, id)
	}
	var channel, url string
	if g.rng.IntN(hotChannelsRatio) > 0 {
		i := g.rng.IntN(len(channels))
		channel, url = channels[i], m.urls.hot[i]
	} else {
		i := g.rng.IntN(channelCount)
		ch := &m.urls.numbered[i]
		channel, url = ch.name, ch.url
	}
	v[0] = types.IntValue(types.KindBigInt, firstAuctionID+auction)
	v[1] = types.IntValue(types.KindBigInt, bidderOffset+bidder)
	v[2] = types.IntValue(types.KindBigInt, g.price())
	v[3] = types.StringValue(channel)
	v[4] = types.StringValue(url)
	v[5] = types.TimestampValue(ts * 1000)
	v[6] = types.StringValue(g.extra(32, m.avgBid))
}

// price is in cents, from 1.00 to 1,000,000.00, log-uniform.
func (g *generator) price() int64 {
	return javaRound(math.Exp(g.rng.Float64()*(6*math.Ln10)) * 100)
}

// javaRound rounds half up, as Java's Math.round.
func javaRound(x float64) int64 { return int64(math.Floor(x + 0.5)) }

// extra returns the padding that brings an event of size bytes to avg
// bytes on average: avg-size less 20% to avg-size plus 20%, or nothing
// when the event is already larger. It is a slice of a pool of random
// letters, so it costs no allocation.
func (g *generator) extra(size, avg int64) string {
	if size > avg {
		return ""
	}
	want := avg - size
	delta := javaRound(float64(want) * 0.2)
	n := want - delta
	if delta > 0 {
		n += g.rng.Int64N(2 * delta)
	}
	if n >= extraPoolSize/2 {
		return string(g.appendLetters(make([]byte, 0, n), int(n)))
	}
	off := g.rng.Int64N(extraPoolSize - n)
	return extraPool[off : off+n]
}

// appendString appends a random string of 3 to max-1 characters, one in
// 13 of them special and the rest lowercase letters, without leading or
// trailing spaces.
func (g *generator) appendString(b []byte, max int, special byte) []byte {
	start := len(b)
	n := minStringLength + g.rng.IntN(max-minStringLength)
	for n > 0 {
		x := g.rng.Uint64()
		// Three characters from each draw, 21 bits each: 338 = 13 × 26
		// outcomes, of which those ≡ 0 (mod 13) are the special one.
		for k := 0; k < 3 && n > 0; k++ {
			c := (x & (1<<21 - 1)) * 338 >> 21
			x >>= 21
			if c%13 == 0 {
				b = append(b, special)
			} else {
				b = append(b, byte('a'+c/13))
			}
			n--
		}
	}
	if special == ' ' {
		s := b[start:]
		i, j := 0, len(s)
		for i < j && s[i] == ' ' {
			i++
		}
		for j > i && s[j-1] == ' ' {
			j--
		}
		if i > 0 || j < len(s) {
			copy(s, s[i:j])
			b = b[:start+j-i]
		}
	}
	return b
}

// appendBaseURL appends a URL of three random directories.
func (g *generator) appendBaseURL(b []byte) []byte {
	b = append(b, "https://www.nexmark.com/"...)
	for range 3 {
		b = g.appendString(b, 5, '_')
		b = append(b, '/')
	}
	return append(b, "item.htm?query=1"...)
}

// appendLetters appends n random lowercase letters, twelve from each draw.
func (g *generator) appendLetters(b []byte, n int) []byte {
	for n > 0 {
		x := g.rng.Uint64()
		for k := 0; k < 12 && n > 0; k++ {
			b = append(b, byte('a'+x%26))
			x /= 26
			n--
		}
	}
	return b
}
