package nexmark

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/pace"
	"github.com/sluicesql/sluice/types"
)

// Factory builds nexmark sources.
type Factory struct{}

// New returns the nexmark connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "nexmark" }

// Event kinds, the values of event_type.
const (
	personEvent  = 0
	auctionEvent = 1
	bidEvent     = 2
)

// options are the table options: the reference's, then Sluice's own.
var options = []string{"connector",
	"events.num", "stop-at", "keep-alive", "max-emit-speed",
	"first-event.rate", "next-event.rate", "rate.shape", "rate.period", "rate.limited",
	"person.proportion", "auction.proportion", "bid.proportion",
	"person.avg-size", "auction.avg-size", "bid.avg-size",
	"bid.hot-ratio.auctions", "bid.hot-ratio.bidders", "auction.hot-ratio.sellers",
	"base-time", "rows-per-second", "seed", "partitions"}

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	if err := connector.RejectMetadata("nexmark", t); err != nil {
		return nil, err
	}
	o := t.Options
	if err := o.CheckKnown("nexmark", options); err != nil {
		return nil, err
	}
	s := &Source{total: -1}
	for _, c := range t.Schema.Columns {
		col, err := newColumn(c)
		if err != nil {
			return nil, fmt.Errorf("nexmark table %s: %w", t.Name, err)
		}
		s.cols = append(s.cols, col)
	}
	for i := range s.cols {
		if c := &s.cols[i]; c.kind >= 0 {
			s.byKind[c.kind] = c
		}
	}
	if err := s.parseOptions(o, env); err != nil {
		return nil, err
	}
	initTables()
	s.model.urls = newChannelURLs(s.seed)
	return s, nil
}

func (s *Source) parseOptions(o connector.Options, env connector.Env) error {
	// How many events: 'events.num' (0: no limit, as in the reference)
	// and 'stop-at' (negative: no stop), whichever is smaller.
	num, err := o.Int("events.num", 0)
	if err != nil {
		return err
	}
	if num < 0 {
		return fmt.Errorf("option 'events.num' must not be negative (0: no limit), got %d", num)
	}
	stop, err := o.Int("stop-at", -1)
	if err != nil {
		return err
	}
	if num > 0 {
		s.total = num
	}
	if stop >= 0 && (s.total < 0 || stop < s.total) {
		s.total = stop
	}
	if s.keepAlive, err = o.Bool("keep-alive", false); err != nil {
		return err
	}
	fast, err := o.Bool("max-emit-speed", true)
	if err != nil {
		return err
	}
	limited, err := o.Bool("rate.limited", false)
	if err != nil {
		return err
	}
	s.eventPaced = !fast || limited

	m := &s.model
	for _, p := range []struct {
		key string
		to  *int64
		def int64
	}{{"person.proportion", &m.personProp, 1}, {"auction.proportion", &m.auctionProp, 3}, {"bid.proportion", &m.bidProp, 46}} {
		if *p.to, err = o.Int(p.key, p.def); err != nil {
			return err
		}
		if *p.to < 0 || *p.to > 1<<20 {
			return fmt.Errorf("option '%s' must be between 0 and %d, got %d", p.key, 1<<20, *p.to)
		}
	}
	m.totalProp = m.personProp + m.auctionProp + m.bidProp
	if m.totalProp == 0 {
		return fmt.Errorf("options 'person.proportion', 'auction.proportion' and 'bid.proportion' must not all be 0")
	}
	for _, p := range []struct {
		key string
		to  *int64
		def int64
	}{{"person.avg-size", &m.avgPerson, 200}, {"auction.avg-size", &m.avgAuction, 500}, {"bid.avg-size", &m.avgBid, 100}} {
		if *p.to, err = o.MemorySize(p.key, p.def); err != nil {
			return err
		}
		if *p.to > maxAvgSize {
			return fmt.Errorf("option '%s' must be at most 64 mb, got '%s'", p.key, o[p.key])
		}
	}
	for _, p := range []struct {
		key string
		to  *int
		def int64
	}{{"bid.hot-ratio.auctions", &m.hotAuctionRatio, 2}, {"bid.hot-ratio.bidders", &m.hotBiddersRatio, 4},
		{"auction.hot-ratio.sellers", &m.hotSellersRatio, 4}} {
		v, err := o.Int(p.key, p.def)
		if err != nil {
			return err
		}
		if v < 1 || v > 1<<30 {
			return fmt.Errorf("option '%s' must be a whole number from 1 (no hot ones) up, got %d", p.key, v)
		}
		*p.to = int(v)
	}

	first, err := rate(o, "first-event.rate", 10000)
	if err != nil {
		return err
	}
	next, err := rate(o, "next-event.rate", first)
	if err != nil {
		return err
	}
	period, err := o.Duration("rate.period", 600*time.Second)
	if err != nil {
		return err
	}
	if period < time.Second {
		return fmt.Errorf("option 'rate.period' must be at least 1 s, got '%s'", o["rate.period"])
	}
	shape := strings.ToLower(o.String("rate.shape", "square"))
	if shape != "square" && shape != "sine" {
		return fmt.Errorf("option 'rate.shape' must be 'square' or 'sine', got '%s'", o["rate.shape"])
	}
	m.setRates(first, next, shape, int64(period/time.Second))

	if v, ok := o["base-time"]; ok {
		bt, err := time.Parse("2006-01-02 15:04:05", v)
		if err != nil {
			return fmt.Errorf("option 'base-time': expected 'yyyy-MM-dd HH:mm:ss', got '%s'", v)
		}
		m.base = bt.UnixMilli()
	} else if env.Now != nil {
		m.base = env.Now() / 1000 // whole milliseconds: TIMESTAMP(3)
	} else {
		m.base = time.Now().UnixMilli()
	}
	if s.rps, err = o.Float("rows-per-second", 0); err != nil {
		return err
	}
	if !(s.rps >= 0 && s.rps <= pace.MaxRate) {
		return fmt.Errorf("option 'rows-per-second' must be 0 (no limit) or a number of rows per second above 0 and at most 1e12, got '%s'",
			o["rows-per-second"])
	}
	seed, err := o.Int("seed", 0)
	if err != nil {
		return err
	}
	s.seed = uint64(seed)
	parts, err := o.Int("partitions", 1)
	if err != nil {
		return err
	}
	if parts < 1 || parts > connector.MaxPartitions {
		return fmt.Errorf("option 'partitions' must be between 1 and %d, got %d", connector.MaxPartitions, parts)
	}
	s.parts = int(parts)
	return nil
}

// maxAvgSize bounds the average sizes of events.
const maxAvgSize = 64 << 20

// rate reads an event rate option.
func rate(o connector.Options, key string, def float64) (float64, error) {
	r, err := o.Float(key, def)
	if err != nil {
		return 0, err
	}
	if !(r > 0 && r <= pace.MaxRate) {
		return 0, fmt.Errorf("option '%s' must be a number of events per second above 0 and at most 1e12, got '%s'", key, o[key])
	}
	return r, nil
}

// sineSteps is how many steps approximate a sine-shaped rate.
const sineSteps = 10

// setRates sets the event-time delays between events: first events per
// second throughout when next is the same, else a square wave (first,
// then next) or a sine wave of sineSteps steps from first to next and
// back, each step lasting its share of period seconds.
func (m *model) setRates(first, next float64, shape string, period int64) {
	if first == next {
		m.delays = []float64{1e6 / first}
		return
	}
	var rates []float64
	if shape == "square" {
		rates = []float64{first, next}
	} else {
		mid, amp := (first+next)/2, (first-next)/2
		for i := range sineSteps {
			rates = append(rates, max(float64(javaRound(mid+amp*math.Cos(2*math.Pi*float64(i)/sineSteps))), 1e-9))
		}
	}
	steps := int64(len(rates))
	m.stepMs = (period + steps - 1) / steps * 1000
	m.epochEvents = 0
	for _, r := range rates {
		n := max(int64(math.Floor(float64(m.stepMs)*r/1000+1e-6)), 1)
		m.delays = append(m.delays, 1e6/r)
		m.stepEvents = append(m.stepEvents, n)
		m.epochEvents += n
	}
}

// column fills one column of the table from an event.
type column struct {
	kind    int        // -1: event_type; else the event kind whose row it is
	intKind types.Kind // event_type's declared integer kind
	fields  []int      // for a ROW: the model's field of each declared field
	whole   bool       // fields are all the model's, in its order
}

// Fields of the model's rows, by kind, in Flink's order.
var (
	personFields  = []string{"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"}
	auctionFields = []string{"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"}
	bidFields     = []string{"auction", "bidder", "price", "channel", "url", "dateTime", "extra"}
	modelFields   = [][]string{personFields, auctionFields, bidFields}
	columnNames   = []string{"event_type", "person", "auction", "bid"}
)

// fieldKind is the type kind of a model field: ids, prices and categories
// are BIGINT, times TIMESTAMP(3), the rest strings.
func fieldKind(name string) types.Kind {
	switch name {
	case "id", "initialBid", "reserve", "seller", "category", "auction", "bidder", "price":
		return types.KindBigInt
	case "dateTime", "expires":
		return types.KindTimestamp
	}
	return types.KindVarChar
}

func newColumn(c types.Column) (column, error) {
	i := indexFold(columnNames, c.Name)
	if i < 0 {
		return column{}, fmt.Errorf("unknown column '%s': a nexmark table has the columns %s", c.Name, strings.Join(columnNames, ", "))
	}
	if i == 0 {
		if !c.Type.Kind.IsInteger() {
			return column{}, fmt.Errorf("column event_type must be an integer, not %s", c.Type)
		}
		return column{kind: -1, intKind: c.Type.Kind}, nil
	}
	kind := i - 1
	if c.Type.Kind != types.KindRow {
		return column{}, fmt.Errorf("column %s must be a ROW<...> of the fields %s, not %s",
			c.Name, strings.Join(modelFields[kind], ", "), c.Type)
	}
	col := column{kind: kind}
	for _, f := range c.Type.Fields {
		j := indexFold(modelFields[kind], f.Name)
		if j < 0 {
			return column{}, fmt.Errorf("column %s: unknown field '%s'; its fields are %s",
				c.Name, f.Name, strings.Join(modelFields[kind], ", "))
		}
		want := fieldKind(modelFields[kind][j])
		ok := f.Type.Kind == want || want == types.KindVarChar && f.Type.Kind.IsString() ||
			want == types.KindTimestamp && f.Type.Kind == types.KindTimestampLTZ
		if !ok {
			return column{}, fmt.Errorf("column %s: field %s must be %s, not %s", c.Name, f.Name, want, f.Type)
		}
		col.fields = append(col.fields, j)
	}
	col.whole = len(col.fields) == len(modelFields[kind])
	for j, f := range col.fields {
		col.whole = col.whole && f == j
	}
	return col, nil
}

func indexFold(names []string, name string) int {
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// arenaRows is how many rows of fields a batch allocates at a time.
const arenaRows = 64

// Source is a nexmark table.
type Source struct {
	cols       []column
	byKind     [3]*column // the ROW column of each event kind, if declared
	model      model
	total      int64   // events over all partitions; -1: unbounded
	keepAlive  bool    // idle instead of ending after the last event
	eventPaced bool    // emit events no sooner than their event time is due
	rps        float64 // wall-clock limit of the table; 0: none
	seed       uint64
	parts      int
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.parts }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.total >= 0 && !s.keepAlive }

// Generates implements connector.Generator: rows are generated whole,
// whatever columns a job reads.
func (s *Source) Generates() bool { return true }

// Open implements connector.Source.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.OpenAfter(ctx, p, 0)
}

// OpenAfter implements connector.Resumer: partition offsets are event
// numbers, so a resumed reader starts right after offset.
func (s *Source) OpenAfter(_ context.Context, p int, offset int64) (connector.Reader, error) {
	if p < 0 || p >= s.parts {
		return nil, fmt.Errorf("nexmark: partition %d out of range [0, %d)", p, s.parts)
	}
	if offset < 0 {
		offset = 0
	}
	r := &Reader{src: s, part: p, done: offset, end: -1, pace: pace.Pacer{Rate: s.rps / float64(s.parts)}}
	if s.total >= 0 {
		// Events p, p+P, ... below total.
		r.end = 0
		if int64(p) < s.total {
			r.end = (s.total-int64(p)-1)/int64(s.parts) + 1
		}
	}
	return r, nil
}

// Reader reads one nexmark partition.
type Reader struct {
	src  *Source
	part int
	done int64 // events of the partition read (the last offset)
	end  int64 // events of the partition; -1: unbounded

	gen  generator
	pace pace.Pacer // with a rate limit ('rows-per-second')

	// With 'max-emit-speed' off: the wall clock and event time of the
	// first event this reader emitted.
	now          func() time.Time
	start        time.Time
	startEventMs int64
}

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.end >= 0 && r.done >= r.end {
		if r.src.keepAlive {
			return idle(ctx, pace.MaxWait)
		}
		return io.EOF
	}
	n := int64(max)
	if r.end >= 0 {
		n = min(n, r.end-r.done)
	}
	if r.src.eventPaced {
		var err error
		if n, err = r.due(ctx, n); err != nil || n == 0 {
			return err
		}
	}
	if r.src.rps > 0 {
		var err error
		if n, err = r.pace.Take(ctx, n); err != nil {
			return err
		}
	}
	width := len(r.src.cols)
	// The ROW values of the batch share backing arrays of arenaRows rows,
	// small enough to be no large allocation.
	var arena []types.Value
	for range n {
		r.done++
		num := r.event(r.done)
		kind := r.src.model.kind(num)
		vals := b.AddRow(types.Insert, types.Origin{Part: int32(r.part), Offset: r.done}, width)
		c := r.src.byKind[kind]
		if c == nil {
			// The table does not declare this kind's row: draw nothing.
			for i, c := range r.src.cols {
				if c.kind < 0 {
					vals[i] = types.IntValue(c.intKind, int64(kind))
				}
			}
			continue
		}
		if len(arena) < len(c.fields) {
			arena = make([]types.Value, arenaRows*len(modelFields[bidEvent]))
		}
		fields := arena[:len(c.fields):len(c.fields)]
		arena = arena[len(c.fields):]
		if c.whole {
			// All the model's fields in its order: generate in place.
			r.gen.event(r.src, num, kind, fields)
		} else {
			ev := r.gen.fields(kind)
			r.gen.event(r.src, num, kind, ev)
			for j, f := range c.fields {
				fields[j] = ev[f]
			}
		}
		for i, c := range r.src.cols {
			switch {
			case c.kind < 0:
				vals[i] = types.IntValue(c.intKind, int64(kind))
			case c.kind == kind:
				vals[i] = types.RowValue(fields)
			}
		}
	}
	return nil
}

// event is the table's event number of the partition's offset-th event.
func (r *Reader) event(offset int64) int64 {
	return (offset-1)*int64(r.src.parts) + int64(r.part)
}

// due returns how many of the next n events are due by the wall clock,
// each its event time after the first; when none is, it waits until the
// next one is, at most pace.MaxWait, and returns none.
func (r *Reader) due(ctx context.Context, n int64) (int64, error) {
	if r.now == nil {
		r.now = time.Now
	}
	m := &r.src.model
	now := r.now()
	if r.start.IsZero() {
		r.start, r.startEventMs = now, m.timestamp(r.event(r.done+1)+1)
	}
	elapsed := now.Sub(r.start).Milliseconds()
	k := int64(0)
	for k < n && m.timestamp(r.event(r.done+k+1)+1)-r.startEventMs <= elapsed {
		k++
	}
	if k > 0 {
		return k, nil
	}
	wait := time.Duration(m.timestamp(r.event(r.done+1)+1)-r.startEventMs-elapsed) * time.Millisecond
	return 0, idle(ctx, min(wait, pace.MaxWait))
}

// idle waits d or until ctx is done.
func idle(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Close implements connector.Reader.
func (r *Reader) Close() error { return nil }
