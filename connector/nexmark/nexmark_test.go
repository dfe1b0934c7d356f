package nexmark

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/types"
)

var (
	personType = types.RowOf(
		types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "state", Type: types.String}, types.Field{Name: "dateTime", Type: types.Timestamp(3)})
	auctionType = types.RowOf(
		types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "seller", Type: types.BigInt},
		types.Field{Name: "category", Type: types.BigInt}, types.Field{Name: "dateTime", Type: types.Timestamp(3)},
		types.Field{Name: "expires", Type: types.Timestamp(3)})
	bidType = types.RowOf(
		types.Field{Name: "auction", Type: types.BigInt}, types.Field{Name: "bidder", Type: types.BigInt},
		types.Field{Name: "price", Type: types.BigInt}, types.Field{Name: "channel", Type: types.String},
		types.Field{Name: "dateTime", Type: types.Timestamp(3)})
	schema = types.Schema{Columns: []types.Column{
		{Name: "event_type", Type: types.Int}, {Name: "person", Type: personType},
		{Name: "auction", Type: auctionType}, {Name: "bid", Type: bidType}}}
)

func source(t *testing.T, opts map[string]string) *Source {
	t.Helper()
	o := connector.Options{"connector": "nexmark", "base-time": "2024-01-01 00:00:00"}
	for k, v := range opts {
		o[k] = v
	}
	s, err := New().CreateSource(connector.Table{Name: "nx", Schema: schema, Options: o}, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Source)
}

// readAll reads partition p after offset; rows keep their origins.
func readAll(t *testing.T, s *Source, p int, after int64) []types.Row {
	t.Helper()
	r, err := s.OpenAfter(context.Background(), p, after)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for {
		b := types.NewBatch(1000, 4)
		err := r.Read(context.Background(), b, 1000)
		for _, row := range b.Rows {
			rows = append(rows, types.Row{Kind: row.Kind, Origin: row.Origin, Vals: append([]types.Value(nil), row.Vals...)})
		}
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func format(r types.Row) string {
	var parts []string
	for i, v := range r.Vals {
		parts = append(parts, types.FormatValue(v, schema.Columns[i].Type))
	}
	return strings.Join(parts, "|")
}

// TestDeterministic: any split into partitions, and resuming after an
// offset, give the same events.
func TestDeterministic(t *testing.T) {
	one := readAll(t, source(t, map[string]string{"events.num": "10007", "seed": "3"}), 0, 0)
	s := source(t, map[string]string{"events.num": "10007", "seed": "3", "partitions": "3"})
	seen := 0
	for p := range 3 {
		rows := readAll(t, s, p, 0)
		for k, r := range rows {
			n := k*3 + p
			if got, want := format(r), format(one[n]); got != want {
				t.Fatalf("partition %d row %d (event %d):\n got %s\nwant %s", p, k, n, got, want)
			}
		}
		seen += len(rows)
		resumed := readAll(t, s, p, 100)
		if len(resumed) != len(rows)-100 || format(resumed[0]) != format(rows[100]) || resumed[0].Origin.Offset != 101 {
			t.Fatalf("partition %d resumed after 100: %d rows from offset %d", p, len(resumed), resumed[0].Origin.Offset)
		}
	}
	if seen != 10007 {
		t.Fatalf("%d events over 3 partitions, want 10007", seen)
	}
	other := readAll(t, source(t, map[string]string{"events.num": "100", "seed": "4"}), 0, 0)
	if format(other[60]) == format(one[60]) {
		t.Errorf("seeds 3 and 4 give the same bid")
	}
}

func TestSchemaErrors(t *testing.T) {
	for _, tc := range []struct {
		col  types.Column
		want string
	}{
		{types.Column{Name: "bids", Type: bidType}, "unknown column 'bids'"},
		{types.Column{Name: "event_type", Type: types.String}, "event_type must be an integer"},
		{types.Column{Name: "bid", Type: types.BigInt}, "must be a ROW<...> of the fields auction, bidder"},
		{types.Column{Name: "bid", Type: types.RowOf(types.Field{Name: "prize", Type: types.BigInt})}, "unknown field 'prize'"},
		{types.Column{Name: "bid", Type: types.RowOf(types.Field{Name: "price", Type: types.String})}, "field price must be BIGINT"},
	} {
		_, err := New().CreateSource(connector.Table{Name: "nx", Schema: types.Schema{Columns: []types.Column{tc.col}},
			Options: connector.Options{"connector": "nexmark"}}, connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want %q", tc.col.Name, tc.col.Type, err, tc.want)
		}
	}
	for opt, want := range map[string]string{
		"events.num=-1":           "'events.num' must not be negative",
		"rate.shape=saw":          "'rate.shape' must be 'square' or 'sine'",
		"bid.hot-ratio.bidders=0": "from 1 (no hot ones) up",
		"person.avg-size=big":     "cannot parse",
		"first-event.rate=0":      "'first-event.rate' must be a number of events per second above 0",
		"base-time=yesterday":     "expected 'yyyy-MM-dd HH:mm:ss'",
		"partitions=0":            "'partitions' must be between",
		"events.nmu=3":            "events.nmu",
	} {
		k, v, _ := strings.Cut(opt, "=")
		_, err := New().CreateSource(connector.Table{Name: "nx", Schema: schema,
			Options: connector.Options{"connector": "nexmark", k: v}}, connector.Env{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", opt, err, want)
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	o := connector.Options{"connector": "nexmark", "base-time": "2024-01-01 00:00:00"}
	s, err := New().CreateSource(connector.Table{Name: "nx", Schema: fullSchema, Options: o}, connector.Env{})
	if err != nil {
		b.Fatal(err)
	}
	r, _ := s.Open(context.Background(), 0)
	batch := types.NewBatch(1024, 4)
	b.ReportAllocs()
	cpu := cputime.Seconds()
	for i := 0; i < b.N; i += 1024 {
		batch.Reset()
		if err := r.Read(context.Background(), batch, 1024); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(float64(b.N)/c, "events/cpu-s")
	}
}
