package nexmark

import (
	"context"
	"fmt"
	"io"
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

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	if err := connector.RejectMetadata("nexmark", t); err != nil {
		return nil, err
	}
	o := t.Options
	if err := o.CheckKnown("nexmark", []string{"connector", "events.num", "first-event.rate", "base-time",
		"rows-per-second", "seed", "partitions"}); err != nil {
		return nil, err
	}
	s := &Source{total: -1}
	var err error
	for _, c := range t.Schema.Columns {
		col, err := newColumn(c)
		if err != nil {
			return nil, fmt.Errorf("nexmark table %s: %w", t.Name, err)
		}
		s.cols = append(s.cols, col)
	}
	if _, ok := o["events.num"]; ok {
		if s.total, err = o.Int("events.num", 0); err != nil {
			return nil, err
		}
		if s.total < 0 {
			return nil, fmt.Errorf("option 'events.num' must not be negative, got %d", s.total)
		}
	}
	rate, err := o.Float("first-event.rate", 10000)
	if err != nil {
		return nil, err
	}
	if !(rate > 0 && rate <= pace.MaxRate) {
		return nil, fmt.Errorf("option 'first-event.rate' must be a number of events per second above 0 and at most 1e12, got '%s'",
			o["first-event.rate"])
	}
	s.delay = 1e6 / rate
	if v, ok := o["base-time"]; ok {
		bt, err := time.Parse("2006-01-02 15:04:05", v)
		if err != nil {
			return nil, fmt.Errorf("option 'base-time': expected 'yyyy-MM-dd HH:mm:ss', got '%s'", v)
		}
		s.base = bt.UnixMicro()
	} else if env.Now != nil {
		s.base = env.Now() / 1000 * 1000 // whole milliseconds: TIMESTAMP(3)
	} else {
		s.base = time.Now().UnixMilli() * 1000
	}
	if s.rps, err = o.Float("rows-per-second", 0); err != nil {
		return nil, err
	}
	if !(s.rps >= 0 && s.rps <= pace.MaxRate) {
		return nil, fmt.Errorf("option 'rows-per-second' must be 0 (no limit) or a number of rows per second above 0 and at most 1e12, got '%s'",
			o["rows-per-second"])
	}
	seed, err := o.Int("seed", 0)
	if err != nil {
		return nil, err
	}
	s.seed = uint64(seed)
	parts, err := o.Int("partitions", 1)
	if err != nil {
		return nil, err
	}
	if parts < 1 || parts > connector.MaxPartitions {
		return nil, fmt.Errorf("option 'partitions' must be between 1 and %d, got %d", connector.MaxPartitions, parts)
	}
	s.parts = int(parts)
	return s, nil
}

// column fills one column of the table from an event.
type column struct {
	kind    int        // -1: event_type; else the event kind whose row it is
	intKind types.Kind // event_type's declared integer kind
	fields  []int      // for a ROW: the model's field of each declared field
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

// Source is a nexmark table.
type Source struct {
	cols  []column
	total int64   // events over all partitions; -1: unbounded
	delay float64 // µs of event time between events
	base  int64   // µs: time of event 0
	rps   float64 // wall-clock limit of the table; 0: none
	seed  uint64
	parts int
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.parts }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.total >= 0 }

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
}

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.end >= 0 && r.done >= r.end {
		return io.EOF
	}
	n := int64(max)
	if r.end >= 0 {
		n = min(n, r.end-r.done)
	}
	if r.src.rps > 0 {
		var err error
		if n, err = r.pace.Take(ctx, n); err != nil {
			return err
		}
	}
	width := len(r.src.cols)
	// The ROW values of the batch share one backing array.
	var arena []types.Value
	for range n {
		r.done++
		num := (r.done-1)*int64(r.src.parts) + int64(r.part)
		kind, ev := r.gen.event(r.src, num)
		vals := b.AddRow(types.Insert, types.Origin{Part: int32(r.part), Offset: r.done}, width)
		for i, c := range r.src.cols {
			switch {
			case c.kind < 0:
				vals[i] = types.IntValue(c.intKind, int64(kind))
			case c.kind != kind:
				vals[i] = types.Value{}
			default:
				if len(arena) < len(c.fields) {
					arena = make([]types.Value, 256*len(c.fields))
				}
				fields := arena[:len(c.fields):len(c.fields)]
				arena = arena[len(c.fields):]
				for j, f := range c.fields {
					fields[j] = ev[f]
				}
				vals[i] = types.RowValue(fields)
			}
		}
	}
	return nil
}

// Close implements connector.Reader.
func (r *Reader) Close() error { return nil }
