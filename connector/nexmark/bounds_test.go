package nexmark

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// Rates and partition counts that would make the source spin or take
// the machine are errors naming the option and what it accepts.
func TestOptionBounds(t *testing.T) {
	const rps = "option 'rows-per-second' must be 0 (no limit) or a number of rows per second above 0 and at most 1e12, got "
	const fer = "option 'first-event.rate' must be a number of events per second above 0 and at most 1e12, got "
	for opt, want := range map[string]string{
		"rows-per-second=NaN":   rps + "'NaN'",
		"rows-per-second=Inf":   rps + "'Inf'",
		"rows-per-second=1e30":  rps + "'1e30'",
		"rows-per-second=-1":    rps + "'-1'",
		"first-event.rate=Inf":  fer + "'Inf'",
		"first-event.rate=NaN":  fer + "'NaN'",
		"first-event.rate=0":    fer + "'0'",
		"first-event.rate=1e13": fer + "'1e13'",
		"partitions=65536":      "option 'partitions' must be between 1 and 1024, got 65536",
		"partitions=0":          "option 'partitions' must be between 1 and 1024, got 0",
	} {
		k, v, _ := strings.Cut(opt, "=")
		_, err := New().CreateSource(connector.Table{Name: "nx", Schema: schema,
			Options: connector.Options{"connector": "nexmark", k: v}}, connector.Env{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", opt, err, want)
		}
	}
}

// At a rate far below a row per read, a read that finds no row due
// waits (at most a short while) instead of returning at once, which made
// its task spin.
func TestTinyRateWaits(t *testing.T) {
	for _, rate := range []string{"1e-10", "0.5"} {
		s := source(t, map[string]string{"rows-per-second": rate})
		r, err := s.Open(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var sleeps []time.Duration
		r.(*Reader).pace.Sleep = func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil }
		b := types.NewBatch(16, 4)
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
