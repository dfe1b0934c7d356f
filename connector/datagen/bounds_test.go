package datagen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// Options that would make the source spin, hang or take the machine's
// memory are errors naming the option and what it accepts.
func TestOptionBounds(t *testing.T) {
	schema := types.NewSchema(
		types.Column{Name: "x", Type: types.Int},
		types.Column{Name: "s", Type: types.String},
		types.Column{Name: "a", Type: types.ArrayOf(types.ArrayOf(types.String))},
	)
	reg := connector.NewRegistry()
	reg.Register(New())
	const rateRange = "option 'rows-per-second' must be a number of rows per second above 0 and at most 1e12, got "
	for _, tc := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"rows-per-second": "1e30"}, rateRange + "'1e30'"},
		{connector.Options{"rows-per-second": "Inf"}, rateRange + "'Inf'"},
		{connector.Options{"rows-per-second": "NaN"}, rateRange + "'NaN'"},
		{connector.Options{"rows-per-second": "-1"}, rateRange + "'-1'"},
		{connector.Options{"rows-per-second": "0"}, rateRange + "'0'"},
		{connector.Options{"partitions": "65536"}, "option 'partitions' must be between 1 and 1024, got 65536"},
		{connector.Options{"partitions": "0"}, "option 'partitions' must be between 1 and 1024, got 0"},
		{connector.Options{"fields.s.length": "16777216"},
			"the options of column s ('fields.s.*') let a generated row take up to 16.0 MiB; at most 16 MiB is allowed"},
		{connector.Options{"fields.a.length": "1000000", "fields.a.element.length": "1000000"},
			"the options of column a ('fields.a.*') let a generated row take up to"},
	} {
		tc.opts["connector"] = "datagen"
		_, err := reg.Source(connector.Table{Name: "gen", Schema: schema, Options: tc.opts}, connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.opts, err, tc.want)
		}
	}
	// The largest accepted values are accepted.
	for _, opts := range []connector.Options{
		{"rows-per-second": "1e12"}, {"rows-per-second": "0.5"}, {"rows-per-second": "1e-10"}, {"partitions": "1024"},
		{"fields.s.length": "1000000", "fields.a.length": "3", "fields.a.element.length": "3"},
	} {
		opts["connector"] = "datagen"
		if _, err := reg.Source(connector.Table{Name: "gen", Schema: schema, Options: opts}, connector.Env{}); err != nil {
			t.Errorf("%v: %v", opts, err)
		}
	}
}

// A read of large rows stops at about 16 MiB, whatever the number of
// rows asked for.
func TestReadBoundsBatchBytes(t *testing.T) {
	schema := types.NewSchema(types.Column{Name: "s", Type: types.String})
	s := newSource(t, schema, connector.Options{"fields.s.length": "1000000", "rows-per-second": "1e12", "number-of-rows": "100"}, 0)
	r, err := s.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(0, 0)
	if err := r.Read(context.Background(), b, 1024); err != nil {
		t.Fatal(err)
	}
	if n := b.Len(); n < 1 || n > 16 {
		t.Fatalf("a read of 1 MB rows gave %d rows, want 1 to 16", n)
	}
}

// At a rate far below a row per read, a read that finds no row due
// waits (at most a short while) instead of returning at once, which made
// its task spin.
func TestTinyRateWaits(t *testing.T) {
	schema := types.NewSchema(types.Column{Name: "x", Type: types.Int})
	for _, rate := range []string{"1e-10", "0.5"} {
		s := newSource(t, schema, connector.Options{"rows-per-second": rate}, 0)
		r, err := s.Open(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var sleeps []time.Duration
		r.(*Reader).pace.Sleep = func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil }
		b := types.NewBatch(16, 1)
		if err := r.Read(context.Background(), b, 16); err != nil || b.Len() != 1 {
			t.Fatalf("rate %s: first read %d rows, %v; want the first row at once", rate, b.Len(), err)
		}
		for range 3 {
			b.Reset()
			if err := r.Read(context.Background(), b, 16); err != nil || b.Len() != 0 {
				t.Fatalf("rate %s: read %d rows, %v; want none", rate, b.Len(), err)
			}
		}
		if len(sleeps) != 3 || sleeps[0] <= 0 {
			t.Fatalf("rate %s: reads that found no row due slept %v, want a positive wait each", rate, sleeps)
		}
	}
}
