package expr

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluicesql/sluice/types"
)

// TestDateFormatRepeatsUnit compares DATE_FORMAT with a constant pattern,
// which keeps its last result for the unit of time the pattern prints,
// with the same pattern passed as a column (formatted afresh every row),
// over timestamps in order, around midnight and at random, in a zone
// with daylight saving time.
func TestDateFormatRepeatsUnit(t *testing.T) {
	patterns := []string{"yyyy-MM-dd", "yyyy-MM-dd HH", "yyyy-MM-dd HH:mm", "HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS",
		"EEE w D", "h a", "yyyy-MM-dd XXX", "Z z", "yyyy"}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	tsCol := &Column{Index: 0, Name: "ts", T: types.Timestamp(6)}
	ltzCol := &Column{Index: 1, Name: "ltz", T: types.TimestampLTZ(6)}
	patCol := &Column{Index: 2, Name: "p", T: types.String}
	k := newKit()
	r := rand.New(rand.NewPCG(3, 4))
	var micros []int64
	base := int64(1710054000) * types.MicrosPerSecond // 2024-03-10 07:00 UTC, a DST change in New York
	for i := range int64(3000) {
		micros = append(micros, base+i*997*types.MicrosPerSecond/7) // in order, ~2.3 min apart
	}
	for range 2000 {
		micros = append(micros, r.Int64N(1<<52)-1<<51, base+r.Int64N(2*types.MicrosPerDay))
	}
	micros = append(micros, -1, 0, 1, types.MicrosPerDay-1, types.MicrosPerDay, -types.MicrosPerDay)
	for _, p := range patterns {
		for _, c := range []*Column{tsCol, ltzCol} {
			env := &Env{Location: ny}
			memo, err := Compile(mustNode(t, k.call("DATE_FORMAT", c, S(p))), env)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := Compile(mustNode(t, k.call("DATE_FORMAT", c, patCol)), env)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range micros {
				row := []types.Value{types.TimestampValue(m), types.TimestampLTZValue(m), types.StringValue(p)}
				got, want := show(memo(row)), show(fresh(row))
				if got != want {
					t.Fatalf("DATE_FORMAT(%s, '%s') of %d = %s, formatted afresh %s", c, p, m, got, want)
				}
			}
		}
	}
}

func BenchmarkDateFormatDay(b *testing.B) {
	k := newKit()
	tsCol := &Column{Index: 0, Name: "ts", T: types.Timestamp(3)}
	e, err := Compile(mustNodeB(b, k.call("DATE_FORMAT", tsCol, S("yyyy-MM-dd"))), nil)
	if err != nil {
		b.Fatal(err)
	}
	rows := make([][]types.Value, 1024)
	for i := range rows {
		rows[i] = []types.Value{types.TimestampValue(int64(1700000000+i*100) * types.MicrosPerSecond)}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e(rows[i&1023])
	}
}
