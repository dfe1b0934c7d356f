// Package pace holds a generated source (datagen, nexmark) to a rate of
// rows per second of wall-clock time.
//
// Arithmetic is in float seconds, never in a time.Duration or an int64 of
// rows, so that no rate overflows: a rate of one row a century waits
// (MaxWait at a time), and one far above what a source can generate lets
// every read through.
package pace

import (
	"context"
	"math"
	"time"
)

// MaxWait bounds how long Take waits for the next row before it returns
// none: a source's Read must come back soon (connector.Reader), so that
// its task can take checkpoints and stop.
const MaxWait = 100 * time.Millisecond

// Batch is the stretch of rows a Take waits for when fewer are due: at
// rates above 1/Batch a source hands out rows about every Batch, as many
// as came due (Rate×Batch), not one at a time as each comes due. A
// shared source hands each of its reads to every job attached, so a
// read a row would wake a server's thousand jobs for every row.
const Batch = 10 * time.Millisecond

// MaxRate is the highest rate the generated sources accept, far above
// what any of them can generate: a table at this rate is not held back.
const MaxRate = 1e12

// Pacer lets rows through at Rate per second: the first at once, row k
// (from 0) once k/Rate seconds have passed since the first.
type Pacer struct {
	// Rate is in rows per second, positive and finite.
	Rate float64
	// Now and Sleep are the clock: default time.Now, and a timer that
	// ctx cuts short.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	start time.Time
	taken int64
}

// Take returns how many of want rows are due now and counts them as
// taken. When fewer are due than come due in Batch (and than want; at
// least one; the first row comes alone, at once), it first waits until that many are (at most MaxWait) and
// then returns those due, possibly none.
func (p *Pacer) Take(ctx context.Context, want int64) (int64, error) {
	now := p.now()
	if p.start.IsZero() {
		p.start = now
	}
	batch := int64(1)
	if b := p.Rate * Batch.Seconds(); b > 1 && p.taken > 0 { // the first row at once
		batch = max(min(int64(b), want), 1)
	}
	if n := p.due(now, want); n >= batch {
		p.taken += n
		return n, nil
	}
	// Row k (from 0) is due k/Rate seconds after the first.
	wait := float64(p.taken+batch-1)/p.Rate - now.Sub(p.start).Seconds()
	d := MaxWait
	if wait < MaxWait.Seconds() {
		d = time.Duration(math.Round(wait * float64(time.Second)))
	}
	if d > 0 {
		if err := p.sleep(ctx, d); err != nil {
			return 0, err
		}
	}
	n := p.due(p.now(), want)
	p.taken += n
	return n, nil
}

// due returns how many of want rows are due at now.
func (p *Pacer) due(now time.Time, want int64) int64 {
	// A millionth of a row of slack: a wait rounded to the nanosecond
	// must not find a row fewer due than it waited for.
	allowed := now.Sub(p.start).Seconds()*p.Rate + 1 - float64(p.taken) + 1e-6
	switch {
	case !(allowed >= 1):
		return 0
	case allowed >= float64(want):
		return want
	}
	return int64(allowed)
}

func (p *Pacer) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pacer) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
