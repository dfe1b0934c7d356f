package pace

import (
	"context"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when the pacer sleeps or the test
// says so, and records the sleeps.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) pacer(rate float64) *Pacer {
	return &Pacer{Rate: rate, Now: func() time.Time { return c.now },
		Sleep: func(_ context.Context, d time.Duration) error {
			c.sleeps = append(c.sleeps, d)
			c.now = c.now.Add(d)
			return nil
		}}
}

func TestTake(t *testing.T) {
	ctx := context.Background()
	c := &fakeClock{now: time.Unix(1000, 0)}
	p := c.pacer(0.5) // a row every 2 s
	if n, _ := p.Take(ctx, 10); n != 1 {
		t.Fatalf("first take: %d rows, want the first row at once", n)
	}
	if n, _ := p.Take(ctx, 10); n != 0 || len(c.sleeps) != 1 || c.sleeps[0] != MaxWait {
		t.Fatalf("second take: %d rows after sleeps %v; want none after a wait of %v", n, c.sleeps, MaxWait)
	}
	c.now = c.now.Add(1850 * time.Millisecond) // 50 ms before the second row
	if n, _ := p.Take(ctx, 10); n != 1 || c.sleeps[1] != 50*time.Millisecond {
		t.Fatalf("take before the second row: %d rows after sleeps %v; want it after a wait of 50ms", n, c.sleeps)
	}
	c.now = c.now.Add(10 * time.Second)
	if n, _ := p.Take(ctx, 3); n != 3 {
		t.Fatalf("take after 10 s: %d rows, want the 3 asked for (5 are due)", n)
	}
	if n, _ := p.Take(ctx, 10); n != 2 {
		t.Fatalf("take: %d rows, want the 2 still due", n)
	}
}

// Rates too small or too large for a time.Duration or an int64 neither
// spin (a take that returns at once with no row, again and again) nor
// overflow.
func TestTakeExtremeRates(t *testing.T) {
	ctx := context.Background()
	for _, rate := range []float64{1e-10, 1e-300} {
		c := &fakeClock{now: time.Unix(1000, 0)}
		p := c.pacer(rate)
		if n, _ := p.Take(ctx, 10); n != 1 {
			t.Fatalf("rate %v: first take %d rows, want 1", rate, n)
		}
		for i := range 3 {
			if n, _ := p.Take(ctx, 10); n != 0 || len(c.sleeps) != i+1 || c.sleeps[i] != MaxWait {
				t.Fatalf("rate %v: take %d gave %d rows after sleeps %v; want none after waiting %v each time", rate, i, n, c.sleeps, MaxWait)
			}
		}
	}
	for _, rate := range []float64{1e12, 1e30} {
		c := &fakeClock{now: time.Unix(1000, 0)}
		p := c.pacer(rate)
		p.Take(ctx, 1)
		c.now = c.now.Add(time.Second)
		for range 3 {
			if n, _ := p.Take(ctx, 1024); n != 1024 || len(c.sleeps) != 0 {
				t.Fatalf("rate %v: take gave %d rows after sleeps %v; want 1024 at once", rate, n, c.sleeps)
			}
		}
	}
}

func TestTakeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pacer{Rate: 1e-3}
	if n, err := p.Take(ctx, 1); n != 1 || err != nil {
		t.Fatalf("first take: %d, %v", n, err)
	}
	cancel()
	if _, err := p.Take(ctx, 1); err == nil {
		t.Fatal("a take waiting under a cancelled context returned no error")
	}
}

// Above 1/Batch rows a second, rows come in batches of about Batch: a
// take with fewer due waits for the rest of the batch.
func TestTakeBatches(t *testing.T) {
	ctx := context.Background()
	c := &fakeClock{now: time.Unix(1000, 0)}
	p := c.pacer(2000) // 20 rows in 10 ms
	if n, _ := p.Take(ctx, 1000); n != 1 || len(c.sleeps) != 0 {
		t.Fatalf("first take: %d rows after sleeps %v; want the first row at once", n, c.sleeps)
	}
	if n, _ := p.Take(ctx, 1000); n != 20 || len(c.sleeps) != 1 || c.sleeps[0] != 10*time.Millisecond {
		t.Fatalf("second take: %d rows after sleeps %v; want 20 after 10ms", n, c.sleeps)
	}
	c.now = c.now.Add(3 * time.Millisecond) // 6 rows due
	if n, _ := p.Take(ctx, 1000); n != 20 || len(c.sleeps) != 2 || c.sleeps[1] != 7*time.Millisecond {
		t.Fatalf("take with 6 rows due: %d rows after sleeps %v; want 20 after 7ms", n, c.sleeps)
	}
	if n, _ := p.Take(ctx, 5); n != 5 || len(c.sleeps) != 3 || c.sleeps[2] != 2500*time.Microsecond {
		t.Fatalf("take of 5: %d rows after sleeps %v; want 5 after 2.5ms", n, c.sleeps)
	}
	c.now = c.now.Add(time.Second)
	if n, _ := p.Take(ctx, 1000); n != 1000 || len(c.sleeps) != 3 {
		t.Fatalf("take after a second: %d rows after sleeps %v; want the 1,000 asked for at once", n, c.sleeps)
	}
}
