package procgen

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func allColumns() types.Schema {
	var cols []types.Column
	for i, n := range columnNames {
		t := types.String
		switch i {
		case colTime:
			t = types.Timestamp(3)
		case colPID, colParentPID:
			t = types.BigInt
		}
		cols = append(cols, types.Column{Name: n, Type: t})
	}
	return types.NewSchema(cols...)
}

func open(t *testing.T, schema types.Schema, opts map[string]string) *Source {
	t.Helper()
	o := connector.Options{"connector": "procgen"}
	for k, v := range opts {
		o[k] = v
	}
	s, err := New().CreateSource(connector.Table{Name: "ev", Schema: schema, Options: o}, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Source)
}

// readAll reads partition p to its end.
func readAll(t *testing.T, s *Source, p int, after int64) []types.Row {
	t.Helper()
	r, err := s.OpenAfter(context.Background(), p, after)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for {
		var b types.Batch
		err := r.Read(context.Background(), &b, 1000)
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

// Every partition split and every resumed reader gives the same events.
func TestDeterministic(t *testing.T) {
	one := readAll(t, open(t, allColumns(), map[string]string{"events.num": "3000", "seed": "7"}), 0, 0)
	if len(one) != 3000 {
		t.Fatalf("%d events, want 3000", len(one))
	}
	s3 := open(t, allColumns(), map[string]string{"events.num": "3000", "seed": "7", "partitions": "3"})
	n := 0
	for p := range 3 {
		rows := readAll(t, s3, p, 0)
		for i, r := range rows {
			if r.Origin.Offset != int64(i+1) {
				t.Fatalf("partition %d row %d: offset %d", p, i, r.Origin.Offset)
			}
			want := one[i*3+p].Vals
			for c := range want {
				if types.Compare(r.Vals[c], want[c]) != 0 {
					t.Fatalf("partition %d event %d column %d: %v, want %v", p, i*3+p, c, r.Vals[c], want[c])
				}
			}
		}
		n += len(rows)
	}
	if n != 3000 {
		t.Fatalf("%d events over 3 partitions, want 3000", n)
	}
	resumed := readAll(t, open(t, allColumns(), map[string]string{"events.num": "3000", "seed": "7"}), 0, 2500)
	if len(resumed) != 500 || types.Compare(resumed[0].Vals[colCmd], one[2500].Vals[colCmd]) != 0 {
		t.Fatalf("resumed after 2500: %d events, first %v, want 500 from %v", len(resumed), resumed[0].Vals[colCmd], one[2500].Vals[colCmd])
	}
	other := readAll(t, open(t, allColumns(), map[string]string{"events.num": "3000", "seed": "8"}), 0, 0)
	same := 0
	for i := range other {
		if types.Compare(other[i].Vals[colCmd], one[i].Vals[colCmd]) == 0 {
			same++
		}
	}
	if same > 1500 {
		t.Fatalf("another seed gives %d of 3000 command lines equal", same)
	}
}

// With repetition r, about that share of events repeat a command line
// seen before, the busiest values dominate, and times advance at the rate.
func TestRepetition(t *testing.T) {
	for _, rep := range []string{"0.8", "0.5", "0"} {
		rows := readAll(t, open(t, allColumns(), map[string]string{"events.num": "100000", "repetition": rep}), 0, 0)
		seen := map[string]bool{}
		repeats := 0
		hosts := map[string]int{}
		for _, r := range rows {
			cmd := r.Vals[colCmd].Str()
			if seen[cmd] {
				repeats++
			}
			seen[cmd] = true
			hosts[r.Vals[colHost].Str()]++
		}
		share := float64(repeats) / float64(len(rows))
		want := map[string]float64{"0.8": 0.8, "0.5": 0.5, "0": 0}[rep]
		// The catalog's first sightings count as new: at most its size.
		if share > want+0.01 || share < want-0.05 {
			t.Errorf("repetition %s: %.3f of command lines repeat", rep, share)
		}
		if top := hosts[hostName(0)]; top < len(rows)/20 {
			t.Errorf("repetition %s: the busiest host has %d of %d events", rep, top, len(rows))
		}
	}
	rows := readAll(t, open(t, allColumns(), map[string]string{"events.num": "20001", "event-time.rate": "1000"}), 0, 0)
	if d := rows[20000].Vals[colTime].Int() - rows[0].Vals[colTime].Int(); d != 20_000_000 {
		t.Fatalf("20000 events at 1000/s span %d µs", d)
	}
}

// A table declares any columns in any order; wrong names, types and
// options are refused with what is expected.
func TestColumnsAndOptions(t *testing.T) {
	schema := types.NewSchema(types.Column{Name: "COMMAND_LINE", Type: types.String}, types.Column{Name: "event_time", Type: types.TimestampLTZ(3)},
		types.Column{Name: "pid", Type: types.BigInt})
	rows := readAll(t, open(t, schema, map[string]string{"events.num": "10"}), 0, 0)
	if len(rows) != 10 || len(rows[0].Vals) != 3 || rows[0].Vals[1].Kind() != types.KindTimestampLTZ || rows[0].Vals[0].Str() == "" {
		t.Fatalf("got %v", rows[0])
	}
	for _, tc := range []struct {
		schema types.Schema
		opts   connector.Options
		err    string
	}{
		{types.NewSchema(types.Column{Name: "cmdline", Type: types.String}), nil, "unknown column 'cmdline'"},
		{types.NewSchema(types.Column{Name: "pid", Type: types.Int}), nil, "column pid must be BIGINT"},
		{allColumns(), connector.Options{"repetition": "1.5"}, "'repetition' must be between 0 and 1"},
		{allColumns(), connector.Options{"catalog.size": "0"}, "'catalog.size' must be between 1 and 100000"},
		{allColumns(), connector.Options{"zipf.exponent": "-1"}, "'zipf.exponent' must be above 0"},
		{allColumns(), connector.Options{"repetiton": "0.5"}, "repetiton"},
	} {
		o := connector.Options{"connector": "procgen"}
		for k, v := range tc.opts {
			o[k] = v
		}
		_, err := New().CreateSource(connector.Table{Name: "ev", Schema: tc.schema, Options: o}, connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v %v: got %v, want %q", tc.schema.Names(), tc.opts, err, tc.err)
		}
	}
}
