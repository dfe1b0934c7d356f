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

// versioned is (k INT, ts TIMESTAMP(3), v INT): the versioned table of
// the temporal join tests; the probe side is timed (k, ts).
var versioned = []types.Type{types.Int, types.Timestamp(3), types.Int}

func newTemporal(t *testing.T, kind Kind, st state.Backend) (*Temporal, *collect) {
	t.Helper()
	out := &collect{}
	o, err := NewTemporal(TemporalConfig{Config: Config{ID: "tj", Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0},
		Left: timed, Right: versioned, Next: out}, LeftTime: 1, RightTime: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{State: st}); err != nil {
		t.Fatal(err)
	}
	return o, out
}

// feeder sends single rows with increasing offsets per side.
type feeder struct {
	t   *testing.T
	o   *Temporal
	off [2]int64
}

// send sends a row: k < 0 is a NULL key; v is ignored on the left.
func (f *feeder) send(side int, kind types.RowKind, k int, ms int64, v int) {
	f.t.Helper()
	f.off[side]++
	w := 2 + side
	b := types.NewBatch(1, w)
	vals := b.AddRow(kind, types.Origin{Part: int32(side), Offset: f.off[side]}, w)
	if k >= 0 {
		vals[0] = types.IntValue(types.KindInt, int64(k))
	}
	vals[1] = types.TimestampValue(ms * 1000)
	if side == 1 {
		vals[2] = types.IntValue(types.KindInt, int64(v))
	}
	if err := f.o.ProcessInput(side, b); err != nil {
		f.t.Fatal(err)
	}
}

func (f *feeder) watermark(ms int64) {
	f.t.Helper()
	if err := f.o.Watermark(ms * 1000); err != nil {
		f.t.Fatal(err)
	}
}

// TestTemporalVersions pins the rows of an event-time temporal join: each
// left row gets the version valid at its time, in time order once the
// watermark passes it; a deletion ends a version; -U is ignored; of two
// versions at one time the later counts; LEFT pads rows without a version.
func TestTemporalVersions(t *testing.T) {
	const (
		i = types.Insert
		d = types.Delete
	)
	ts := func(ms int64) string { return types.FormatValue(types.TimestampValue(ms*1000), timed[1]) }
	for _, kind := range []Kind{Inner, Left} {
		t.Run(kind.String(), func(t *testing.T) {
			o, out := newTemporal(t, kind, nil)
			f := &feeder{t: t, o: o}
			f.send(1, i, 1, 10, 100)
			f.send(1, i, 1, 20, 199)
			f.send(1, types.UpdateBefore, 1, 20, 199) // ignored
			f.send(1, types.UpdateAfter, 1, 20, 200)  // replaces 199 at 20
			f.send(0, i, 1, 25, 0)
			f.send(0, i, 1, 5, 0)
			f.send(0, i, 1, 10, 0)
			f.send(0, i, 2, 12, 0)
			f.send(0, i, -1, 13, 0) // NULL key: padded at once
			f.send(0, i, 1, 15, 0)
			f.send(1, d, 1, 30, 200)
			f.send(0, i, 1, 35, 0)
			if len(out.rows) > 1 {
				t.Fatalf("rows before the watermark: %v", out.rows)
			}
			f.watermark(40)
			var want []string
			if kind == Left {
				want = append(want, "+I[NULL, "+ts(13)+", NULL, NULL, NULL]", "+I[1, "+ts(5)+", NULL, NULL, NULL]")
			}
			want = append(want, "+I[1, "+ts(10)+", 1, "+ts(10)+", 100]")
			if kind == Left {
				want = append(want, "+I[2, "+ts(12)+", NULL, NULL, NULL]")
			}
			want = append(want, "+I[1, "+ts(15)+", 1, "+ts(10)+", 100]", "+I[1, "+ts(25)+", 1, "+ts(20)+", 200]")
			if kind == Left {
				want = append(want, "+I[1, "+ts(35)+", NULL, NULL, NULL]")
			}
			if got := strings.Join(out.rows, "\n"); got != strings.Join(want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
			}
			// The key's latest version at the watermark is a deletion:
			// nothing is kept.
			if len(o.versions) != 0 || len(o.prune) != 0 || len(o.waiting) != 0 {
				t.Fatalf("state after the watermark: %d keys, %d to prune, %d waiting", len(o.versions), len(o.prune), len(o.waiting))
			}
			// A late left row is joined at once with what is kept.
			out.rows = nil
			f.send(1, i, 3, 38, 300)
			f.send(0, i, 3, 39, 0)
			if got, want := strings.Join(out.rows, " "), "+I[3, "+ts(39)+", 3, "+ts(38)+", 300]"; got != want {
				t.Fatalf("late row: got %s, want %s", got, want)
			}
			// A retraction on the left side fails the job.
			b := types.NewBatch(1, 2)
			v := b.AddRow(types.Delete, types.Origin{Part: 0, Offset: 99}, 2)
			v[0], v[1] = types.IntValue(types.KindInt, 1), types.TimestampValue(1)
			if err := o.ProcessInput(0, b); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Fatalf("left retraction: got %v", err)
			}
		})
	}
}

// TestTemporalAgainstVersions feeds random versions and probes, in time
// order per side with the watermark an inbox would give, and compares the
// output with a lookup over every version ever received. Left times are
// odd and right times even, so that no probe ties a version. Half the
// runs checkpoint and go on in a restored operator. Versions at or behind
// the watermark are pruned to one per key.
func TestTemporalAgainstVersions(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 17))
		kind := Kind(seed % 2) // inner, left
		t.Run(fmt.Sprintf("%s-%d", kind, seed), func(t *testing.T) {
			st := state.NewMemory()
			o, out := newTemporal(t, kind, st)
			f := &feeder{t: t, o: o}
			type ver struct {
				k, ts   int64
				v       int
				deleted bool
			}
			type probe struct{ k, ts int64 }
			var vers []ver
			var probes []probe
			var last [2]int64
			var emitted []string
			for n := range 600 {
				if n == 300 && seed%4 < 2 {
					if err := o.Checkpoint(); err != nil {
						t.Fatal(err)
					}
					emitted = append(emitted, out.rows...)
					o, out = newTemporal(t, kind, st)
					f.o = o
				}
				s := rng.IntN(2)
				step := int64(rng.IntN(4)) * 2
				last[s] += step
				k := int64(rng.IntN(6))
				if s == 0 {
					ts := last[0]*2 + 1
					probes = append(probes, probe{k, ts})
					f.send(0, types.Insert, int(k), ts, 0)
				} else {
					ts := last[1] * 2
					kind := types.Insert
					switch r := rng.IntN(10); {
					case r < 2:
						kind = types.Delete
					case r < 4:
						f.send(1, types.UpdateBefore, int(k), ts, -1)
						kind = types.UpdateAfter
					}
					v := rng.IntN(1000)
					vers = append(vers, ver{k, ts, v, kind == types.Delete})
					f.send(1, kind, int(k), ts, v)
				}
				wm := min(last[0]*2+1, last[1]*2)
				f.watermark(wm)
				// Kept: at most one version per key before the
				// watermark, and those at or after it.
				kept, ahead := 0, 0
				for _, l := range o.versions {
					kept += len(l.vs)
				}
				for _, v := range vers {
					if v.ts >= wm { // one at the watermark waits for it to advance
						ahead++
					}
				}
				if kept > 6+ahead {
					t.Fatalf("%d versions kept, %d of them after the watermark: the watermark does not prune", kept, ahead)
				}
			}
			f.watermark(exec.MaxWatermark / 1000)
			emitted = append(emitted, out.rows...)
			if len(o.waiting) != 0 {
				t.Fatalf("%d rows still waiting after the end", len(o.waiting))
			}
			str := func(ms int64) string { return types.FormatValue(types.TimestampValue(ms*1000), timed[1]) }
			var want []string
			for _, p := range probes {
				var found *ver
				for i := range vers {
					if vers[i].k == p.k && vers[i].ts <= p.ts && (found == nil || vers[i].ts >= found.ts) {
						found = &vers[i]
					}
				}
				switch {
				case found != nil && !found.deleted:
					want = append(want, fmt.Sprintf("+I[%d, %s, %d, %s, %d]", p.k, str(p.ts), p.k, str(found.ts), found.v))
				case kind == Left:
					want = append(want, fmt.Sprintf("+I[%d, %s, NULL, NULL, NULL]", p.k, str(p.ts)))
				}
			}
			sort.Strings(want)
			sort.Strings(emitted)
			if got := strings.Join(emitted, "\n"); got != strings.Join(want, "\n") {
				t.Fatalf("%d rows, want %d:\ngot\n%s\nwant\n%s", len(emitted), len(want), got, strings.Join(want, "\n"))
			}
		})
	}
}
