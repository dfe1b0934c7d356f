package suppress

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Alerts in these tests are (key STRING, t TIMESTAMP, count BIGINT).
const (
	keyCol, timeCol, countCol = 0, 1, 2
	minute                    = int64(60_000_000)
)

type collect struct {
	exec.Passthrough
	rows []string
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		at := "null"
		if t := r.Vals[timeCol]; !t.IsNull() {
			at = fmt.Sprint(t.Int() / minute)
		}
		c.rows = append(c.rows, fmt.Sprintf("%s@%s+%d", r.Vals[keyCol].Str(), at, r.Vals[countCol].Int()))
	}
	return nil
}
func (c *collect) Watermark(int64) error { return nil }
func (c *collect) Finish() error         { return nil }
func (c *collect) Close() error          { return nil }

// alert is an alert of key k at minute m (NULL time when m < 0), read at
// offset off of partition 0.
type alert struct {
	k   string
	m   int64
	off int64
}

func batch(as ...alert) *types.Batch {
	b := &types.Batch{}
	for _, a := range as {
		t := types.TimestampValue(a.m * minute)
		if a.m < 0 {
			t = types.Value{}
		}
		vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: a.off}, 3)
		vals[keyCol], vals[timeCol], vals[countCol] = types.StringValue(a.k), t, types.IntValue(types.KindBigInt, 0)
	}
	return b
}

func open(t *testing.T, st state.Backend, timeCol int, interval int64, ctx *exec.Context) (*Operator, *collect) {
	t.Helper()
	out := &collect{}
	o, err := New(Config{ID: "s", Keys: []int{keyCol}, Interval: interval, TimeCol: timeCol, CountCol: countCol, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if ctx == nil {
		ctx = &exec.Context{}
	}
	ctx.State = st
	if err := o.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return o, out
}

// The first alert of a key set opens an interval; those within it are
// suppressed and counted; the first after it is let through with the
// count and opens the next interval. Key sets are independent, and an
// alert without a time is let through alone.
func TestSuppress(t *testing.T) {
	o, out := open(t, nil, timeCol, 10*minute, nil)
	var off int64
	send := func(k string, m int64) {
		off++
		if err := o.Process(batch(alert{k, m, off})); err != nil {
			t.Fatal(err)
		}
	}
	send("a", 0)  // let through, opens [0, 10)
	send("a", 3)  // suppressed
	send("b", 4)  // another key set: let through
	send("a", 9)  // suppressed
	send("a", 10) // the interval is over: let through with 2, opens [10, 20)
	send("a", 12) // suppressed
	send("b", 13) // b's [4, 14): suppressed
	send("a", -1) // no time: let through, counts nothing
	send("a", 35) // let through with 1
	send("b", 14) // let through with 1
	send("a", 44) // suppressed (a's [35, 45))
	send("a", 30) // earlier than the interval's start: within it, suppressed
	want := []string{"a@0+0", "b@4+0", "a@10+2", "a@null+0", "a@35+1", "b@14+1"}
	if !slices.Equal(out.rows, want) {
		t.Errorf("got %v, want %v", out.rows, want)
	}
}

// reference is the suppression of alerts as the docs state it, without
// forgetting anything: what the operator lets through, whatever it
// forgets and whenever it is checkpointed and restored.
func reference(as []alert, interval int64) []string {
	type st struct{ start, count int64 }
	keys := map[string]*st{}
	var out []string
	for _, a := range as {
		if a.m < 0 {
			out = append(out, a.k+"@null+0")
			continue
		}
		t := a.m * minute
		e := keys[a.k]
		switch {
		case e == nil:
			keys[a.k] = &st{start: t}
			out = append(out, fmt.Sprintf("%s@%d+0", a.k, a.m))
		case t < e.start+interval:
			e.count++
		default:
			out = append(out, fmt.Sprintf("%s@%d+%d", a.k, a.m, e.count))
			e.start, e.count = t, 0
		}
	}
	return out
}

// Random alerts, mostly in time order (the watermark trails the
// largest time by the greatest disorder, so no alert is late), go
// through an operator that is checkpointed, closed and restored at
// random, and gets replays of what it has read: it lets through what
// the reference does, with the same counts, and keeps only the key sets
// that still have something to carry.
func TestSuppressRandom(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 3))
		interval := int64(1+rng.IntN(20)) * minute
		disorder := int64(rng.IntN(4))
		var as []alert
		var now int64
		for i := range 300 {
			now += int64(rng.IntN(4))
			m := max(now-int64(rng.IntN(int(disorder)+1)), 0)
			if rng.IntN(50) == 0 {
				m = -1
			}
			as = append(as, alert{k: fmt.Sprintf("k%d", rng.IntN(6)), m: m, off: int64(i + 1)})
		}
		want := reference(as, interval)
		st := state.NewMemory()
		o, out := open(t, st, timeCol, interval, nil)
		var got []string
		var wm int64 = exec.MinWatermark
		for i := 0; i < len(as); {
			n := min(1+rng.IntN(10), len(as)-i)
			if err := o.Process(batch(as[i : i+n]...)); err != nil {
				t.Fatal(err)
			}
			for _, a := range as[i : i+n] {
				wm = max(wm, (a.m-disorder)*minute-1)
			}
			i += n
			if err := o.Watermark(wm); err != nil {
				t.Fatal(err)
			}
			for key, e := range o.keys {
				if e.count == 0 && o.swept >= e.start+interval {
					t.Fatalf("seed %d: key set %q kept with nothing to carry", seed, key)
				}
			}
			if rng.IntN(8) == 0 {
				// A checkpoint, a restart, and the last rows replayed.
				if err := o.Checkpoint(); err != nil {
					t.Fatal(err)
				}
				got = append(got, out.rows...)
				o.Close()
				o, out = open(t, st, timeCol, interval, nil)
				if err := o.Process(batch(as[max(i-5, 0):i]...)); err != nil {
					t.Fatal(err)
				}
			}
		}
		got = append(got, out.rows...)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d (interval %d min):\n got %v\nwant %v", seed, interval/minute, got, want)
		}
	}
}

// Key sets are forgotten as the watermark passes their intervals when
// they have suppressed nothing, kept with a count until their next
// alert, and forgotten with it after the TTL; forgetting is written at
// the next checkpoint.
func TestSuppressForget(t *testing.T) {
	st := state.NewMemory()
	out := &collect{}
	o, err := New(Config{ID: "s", Keys: []int{keyCol}, Interval: 10 * minute, TimeCol: timeCol, CountCol: countCol, TTL: time.Hour, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{State: st}); err != nil {
		t.Fatal(err)
	}
	if err := o.Process(batch(alert{"a", 0, 1}, alert{"b", 0, 2}, alert{"b", 5, 3})); err != nil {
		t.Fatal(err)
	}
	if err := o.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	stored := func() int {
		s, _ := st.Store("s")
		n := 0
		s.Scan(nil, func(k, v []byte) bool { n++; return true })
		return n
	}
	if len(o.keys) != 2 || stored() != 2 {
		t.Fatalf("%d key sets, %d stored, want 2", len(o.keys), stored())
	}
	o.Watermark(9 * minute)
	if len(o.keys) != 2 {
		t.Fatalf("within the interval: %d key sets, want 2", len(o.keys))
	}
	o.Watermark(20 * minute) // a's interval is over; b has a count
	if _, ok := o.keys[key("a")]; ok || len(o.keys) != 1 {
		t.Fatalf("after the interval: %v", o.keys)
	}
	o.Watermark(exec.MaxWatermark) // the end of input forgets nothing
	if len(o.keys) != 1 {
		t.Fatalf("at the end of input: %d key sets", len(o.keys))
	}
	o.Checkpoint()
	if stored() != 1 {
		t.Fatalf("%d stored after the checkpoint, want 1", stored())
	}
	o.Watermark(64 * minute) // b's last alert, at 5, is not older than the TTL yet
	if len(o.keys) != 1 {
		t.Fatalf("before the TTL: %d key sets", len(o.keys))
	}
	o.Watermark(75 * minute) // now it is
	if len(o.keys) != 0 {
		t.Fatalf("after the TTL: %v", o.keys)
	}
	o.Checkpoint()
	if stored() != 0 {
		t.Fatalf("%d stored after the TTL, want 0", stored())
	}
}

func key(k string) string { return string(types.AppendKey(nil, types.StringValue(k))) }

// Under processing time, alerts are timed by the clock, and key sets are
// forgotten as it passes their intervals (Tick).
func TestSuppressProcessingTime(t *testing.T) {
	clock := int64(0)
	o, out := open(t, nil, -1, 10*minute, &exec.Context{Now: func() int64 { return clock }})
	if o.TickEvery() <= 0 {
		t.Fatal("no ticks under processing time")
	}
	send := func(k string, off int64) {
		if err := o.Process(batch(alert{k, 0, off})); err != nil {
			t.Fatal(err)
		}
	}
	send("a", 1)
	clock = 5 * minute
	send("a", 2)
	send("b", 3)
	send("b", 4)
	clock = 10 * minute
	send("a", 5) // let through with 1
	clock = 21 * minute
	o.Tick() // a's [10, 20) is over, with nothing suppressed; b still has a count
	if len(o.keys) != 1 {
		t.Fatalf("after the tick: %d key sets, want 1", len(o.keys))
	}
	want := []string{"a@0+0", "b@0+0", "a@0+1"} // the alerts' own times, not the clock's
	if !slices.Equal(out.rows, want) {
		t.Errorf("got %v, want %v", out.rows, want)
	}
}
