package join

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// timed is (k INT, ts TIMESTAMP(3)): the rows of both sides of the
// interval join tests.
var timed = []types.Type{types.Int, types.Timestamp(3)}

// TestIntervalAgainstNestedLoops feeds both sides rows in time order with
// the watermark an inbox would give (the lower of the sides' latest
// times), for every kind of join and random bounds, and compares the
// output with nested loops over all rows. Some runs checkpoint and go on
// in a restored operator; the state must shrink as the watermark passes.
func TestIntervalAgainstNestedLoops(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 11))
		kind := Kind(seed % 4)
		lower := int64(rng.IntN(40)-30) * 1000
		upper := lower + int64(rng.IntN(30))*1000
		t.Run(fmt.Sprintf("%s-%d[%d,%d]", kind, seed, lower/1000, upper/1000), func(t *testing.T) {
			st := state.NewMemory()
			open := func() (*Interval, *collect) {
				out := &collect{}
				o, err := NewInterval(IntervalConfig{Config: Config{ID: "ij", Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0},
					Left: timed, Right: timed, Next: out}, LeftTime: 1, RightTime: 1, Lower: lower, Upper: upper})
				if err != nil {
					t.Fatal(err)
				}
				if err := o.Open(&exec.Context{State: st}); err != nil {
					t.Fatal(err)
				}
				return o, out
			}
			o, out := open()
			type row struct{ k, ts int64 }
			var rows [2][]row
			var last [2]int64
			var off [2]int64
			var emitted []string
			maxKept := 0
			for i := range 400 {
				if i == 200 && seed%2 == 0 {
					if err := o.Checkpoint(); err != nil {
						t.Fatal(err)
					}
					emitted = append(emitted, out.rows...)
					o, out = open()
				}
				s := rng.IntN(2)
				last[s] += int64(rng.IntN(3000))
				r := row{k: int64(rng.IntN(5)), ts: last[s]}
				rows[s] = append(rows[s], r)
				off[s]++
				b := types.NewBatch(1, 2)
				v := b.AddRow(types.Insert, types.Origin{Part: int32(s), Offset: off[s]}, 2)
				v[0], v[1] = types.IntValue(types.KindInt, r.k), types.TimestampValue(r.ts*1000)
				if err := o.ProcessInput(s, b); err != nil {
					t.Fatal(err)
				}
				if err := o.Watermark(min(last[0], last[1]) * 1000); err != nil {
					t.Fatal(err)
				}
				kept := 0
				for _, s := range o.sides {
					kept += len(s.expiry)
				}
				maxKept = max(maxKept, kept)
			}
			if err := o.Watermark(exec.MaxWatermark); err != nil {
				t.Fatal(err)
			}
			emitted = append(emitted, out.rows...)
			for _, s := range o.sides {
				if len(s.expiry) != 0 || len(s.buckets) != 0 {
					t.Fatalf("rows kept after the end: %d", len(s.expiry))
				}
			}
			if maxKept >= 300 {
				t.Errorf("up to %d of 400 rows kept at once: the watermark does not clean the state", maxKept)
			}

			str := func(r row) string {
				return fmt.Sprintf("%d, %s", r.k, types.FormatValue(types.TimestampValue(r.ts*1000), timed[1]))
			}
			var want []string
			matched := [2]map[int]bool{{}, {}}
			for i, l := range rows[0] {
				for j, r := range rows[1] {
					d := (l.ts - r.ts) * 1000
					if l.k == r.k && d >= lower && d <= upper {
						want = append(want, "+I["+str(l)+", "+str(r)+"]")
						matched[0][i], matched[1][j] = true, true
					}
				}
			}
			for s, outer := range []bool{kind == Left || kind == Full, kind == Right || kind == Full} {
				if !outer {
					continue
				}
				for i, r := range rows[s] {
					if matched[s][i] {
						continue
					}
					if s == 0 {
						want = append(want, "+I["+str(r)+", NULL, NULL]")
					} else {
						want = append(want, "+I[NULL, NULL, "+str(r)+"]")
					}
				}
			}
			sort.Strings(want)
			sort.Strings(emitted)
			if g, w := strings.Join(emitted, "\n"), strings.Join(want, "\n"); g != w {
				t.Fatalf("output differs from nested loops: %d rows, want %d\ngot:\n%s\nwant:\n%s", len(emitted), len(want), g, w)
			}
		})
	}
}
