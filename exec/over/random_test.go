package over

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// TestAgainstBruteForce feeds random rows (out of order, some late, some
// with NULL values) and watermarks into an OVER aggregation with a random
// frame, and compares its output with recomputing each row's frame from
// scratch: the admitted rows of the partition sorted by time (arrival
// order among peers), the frame's rows picked by position or time, and
// the aggregates folded by hand. Each partition's rows must also come out
// in time order. Half of the runs checkpoint midway, go on a little in the
// old operator (whose later output is lost, as in a crash), and restart
// from the checkpoint, which also gets replays of rows it already has.
func TestAgainstBruteForce(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 11))
		rows := rng.IntN(2) == 0
		preceding := Unbounded
		if rng.IntN(4) > 0 {
			if rows {
				preceding = int64(rng.IntN(5))
			} else {
				preceding = int64(rng.IntN(4)) * 1_000_000
			}
		}
		restore := seed%2 == 1
		t.Run(fmt.Sprintf("seed%d-rows%v-preceding%d-restore%v", seed, rows, preceding, restore), func(t *testing.T) {
			h := newHarness(t, rows, preceding, false)
			if restore {
				h.durable()
			}
			var admitted []in
			var log []string
			var wm int64 = exec.MinWatermark
			maxMs := int64(0)
			var sent []row // every row sent, by offset
			feed := func(batch []row, record bool) {
				h.feed(batch...)
				if !record {
					return
				}
				for _, r := range batch {
					if r.ms*1000 > wm {
						admitted = append(admitted, in{r, len(admitted)})
					}
				}
			}
			const steps = 120
			for step := range steps {
				if restore && step == steps/2 {
					h.checkpoint()
					log = append(log, h.take()...)
					// The old operator goes on a little; its output is lost.
					cut := len(sent)
					for range 3 {
						h.feed(randomRows(rng, &sent, &maxMs)...)
						h.watermark(maxMs - 1500)
					}
					h.take()
					h.crash()
					// Replays: rows from before the checkpoint, then those after.
					h.feed(sent[max(cut-5, 0):cut]...)
					feed(sent[cut:], true)
					if got := h.take(); len(got) > 0 {
						log = append(log, got...)
					}
					wmAfter := maxMs - 1500
					if wmAfter*1000 > wm {
						h.watermark(wmAfter)
						wm = wmAfter * 1000
					}
				}
				feed(randomRows(rng, &sent, &maxMs), true)
				if rng.IntN(3) == 0 {
					if w := maxMs - int64(rng.IntN(3000)); w*1000 > wm {
						h.watermark(w)
						wm = w * 1000
					}
				}
			}
			h.watermark(exec.MaxWatermark)
			log = append(log, h.take()...)

			// Brute force.
			byPart := map[string][]in{}
			for _, r := range admitted {
				byPart[r.p] = append(byPart[r.p], r)
			}
			var want []string
			for _, rs := range byPart {
				sort.SliceStable(rs, func(i, j int) bool { return rs[i].ms < rs[j].ms })
				for i, r := range rs {
					var frame []in
					for j, x := range rs {
						var inFrame bool
						if rows {
							inFrame = j <= i && (preceding == Unbounded || j >= i-int(preceding))
						} else {
							inFrame = x.ms <= r.ms && (preceding == Unbounded || x.ms*1000 >= r.ms*1000-preceding)
						}
						if inFrame {
							frame = append(frame, x)
						}
					}
					want = append(want, expected(r.row, frame, h.out.types))
				}
			}
			// Each partition's rows come out in time order.
			last := map[string]string{}
			for _, r := range log {
				p, ts := r[3:4], r[6:29]
				if ts < last[p] {
					t.Fatalf("%s after a row at %s", r, last[p])
				}
				last[p] = ts
			}
			got := slices.Clone(log)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got (%d rows)\n%s\nwant (%d rows)\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
			}
		})
	}
}

// randomRows returns a batch of 1-6 rows of 3 partitions at times around
// the newest so far (up to 2 s behind it), numbered on from sent.
func randomRows(rng *rand.Rand, sent *[]row, maxMs *int64) []row {
	var out []row
	for range 1 + rng.IntN(6) {
		ms := *maxMs + int64(rng.IntN(1500)) - 1000
		ms -= ms % 250 // peers
		ms = max(ms, 0)
		*maxMs = max(*maxMs, ms)
		r := row{p: string(rune('a' + rng.IntN(3))), ms: ms, off: int64(len(*sent) + 1)}
		if rng.IntN(6) > 0 {
			r.v = val(int64(rng.IntN(21) - 10))
		}
		*sent = append(*sent, r)
		out = append(out, r)
	}
	return out
}

// expected formats r with COUNT(*), COUNT, SUM, MIN, MAX and AVG of v over
// frame.
func expected(r row, frame []in, typs []types.Type) string {
	var n, cnt, sum int64
	var lo, hi int64
	for _, x := range frame {
		n++
		if x.v == nil {
			continue
		}
		v := *x.v
		if cnt == 0 || v < lo {
			lo = v
		}
		if cnt == 0 || v > hi {
			hi = v
		}
		cnt++
		sum += v
	}
	opt := func(v int64) types.Value {
		if cnt == 0 {
			return types.Value{}
		}
		return types.IntValue(types.KindBigInt, v)
	}
	vals := []types.Value{types.StringValue(r.p), types.TimestampValue(r.ms * 1000), {},
		types.IntValue(types.KindBigInt, n), types.IntValue(types.KindBigInt, cnt), opt(sum), opt(lo), opt(hi), {}}
	if r.v != nil {
		vals[2] = types.IntValue(types.KindBigInt, *r.v)
	}
	if cnt > 0 {
		vals[8] = types.IntValue(types.KindBigInt, sum/cnt)
	}
	return "+I" + format(vals, typs)
}

// in is an admitted input row and its arrival number.
type in struct {
	row
	seq int
}

// TestProcTimeAgainstBruteForce: by processing time, each row comes out as
// it arrives, over the rows of its partition that arrived before it (and
// itself) within the frame. Times only grow, with repeats. Half of the runs
// restart from a checkpoint midway.
func TestProcTimeAgainstBruteForce(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 17))
		rows := rng.IntN(2) == 0
		preceding := Unbounded
		if rng.IntN(4) > 0 {
			if rows {
				preceding = int64(rng.IntN(5))
			} else {
				preceding = int64(rng.IntN(4)) * 1_000_000
			}
		}
		restore := seed%2 == 1
		t.Run(fmt.Sprintf("seed%d-rows%v-preceding%d-restore%v", seed, rows, preceding, restore), func(t *testing.T) {
			h := newHarness(t, rows, preceding, true)
			if restore {
				h.durable()
			}
			var sent []row
			var got, want []string
			ms := int64(0)
			for step := range 100 {
				if restore && step == 50 {
					h.checkpoint()
					got = append(got, h.take()...)
					h.crash()
				}
				var batch []row
				for range 1 + rng.IntN(4) {
					ms += int64(rng.IntN(3)) * 250
					r := row{p: string(rune('a' + rng.IntN(3))), ms: ms, off: int64(len(sent) + 1)}
					if rng.IntN(6) > 0 {
						r.v = val(int64(rng.IntN(21) - 10))
					}
					sent = append(sent, r)
					batch = append(batch, r)
				}
				h.feed(batch...)
				if rng.IntN(4) == 0 {
					h.watermark(ms - int64(rng.IntN(5000)))
				}
			}
			got = append(got, h.take()...)
			for i, r := range sent {
				var frame []in
				var before []row
				for _, x := range sent[:i+1] {
					if x.p == r.p {
						before = append(before, x)
					}
				}
				for j, x := range before {
					var inFrame bool
					if rows {
						inFrame = preceding == Unbounded || j >= len(before)-1-int(preceding)
					} else {
						inFrame = preceding == Unbounded || x.ms*1000 >= r.ms*1000-preceding
					}
					if inFrame {
						frame = append(frame, in{row: x})
					}
				}
				want = append(want, expected(r, frame, h.out.types))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got (%d rows)\n%s\nwant (%d rows)\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
			}
		})
	}
}
