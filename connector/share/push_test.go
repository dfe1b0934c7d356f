package share

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// pushed is a job's side of connector.Pusher: the values it took, pushed
// or read, in order. Its calls never overlap (the contract), which the
// race detector checks: the slices have no lock.
type pushed struct {
	vals    []int64
	pushes  int // calls of the push
	maxRows int // the most rows a push had
	fail    error
}

func (p *pushed) take(rows []types.Row) {
	for _, r := range rows {
		p.vals = append(p.vals, r.Vals[0].Int())
	}
}

func (p *pushed) fn(rows []types.Row) error {
	if p.fail != nil {
		return p.fail
	}
	p.pushes++
	p.maxRows = max(p.maxRows, len(rows))
	p.take(rows)
	return nil
}

// readAll reads r with ReadView until p holds n values (pushed or read),
// or ReadView fails.
func (p *pushed) readAll(r connector.ViewReader, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for len(p.vals) < n && time.Now().Before(deadline) {
		rows, err := r.ReadView(context.Background(), 3)
		if err != nil {
			return err
		}
		p.take(rows)
	}
	return nil
}

// Jobs that wait for the hub's next batch get it pushed into their
// chains, at most max rows at a time, and every job gets every row once,
// in order, pushed or read, whether it takes pushes or not.
func TestSharePush(t *testing.T) {
	f := newFixture(t, Options{})
	f.src.gen = true
	const n = 60
	var rs []connector.Reader
	var ps []*pushed
	for i, job := range []string{"a", "b", "c"} {
		r := f.open(t, job, false, 0)
		defer r.Close()
		p := &pushed{}
		if i < 2 { // c reads its rows
			r.(connector.Pusher).SetPush(3, p.fn)
		}
		rs, ps = append(rs, r), append(ps, p)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	for i := range rs {
		wg.Go(func() { errs[i] = ps[i].readAll(rs[i].(connector.ViewReader), n) })
	}
	for k := range 6 {
		time.Sleep(30 * time.Millisecond) // the jobs wait
		f.push(k*10, k*10+10)
	}
	wg.Wait()
	for i, p := range ps {
		if errs[i] != nil {
			t.Fatalf("job %d: %v", i, errs[i])
		}
		if !slices.Equal(p.vals, seq(0, n)) {
			t.Fatalf("job %d took %v", i, p.vals)
		}
		if p.maxRows > 3 {
			t.Errorf("job %d: a push of %d rows, more than 3", i, p.maxRows)
		}
	}
	if ps[0].pushes == 0 || ps[1].pushes == 0 {
		t.Errorf("pushes: %d and %d: the hub queued every batch for jobs that waited", ps[0].pushes, ps[1].pushes)
	}
	if ps[2].pushes != 0 {
		t.Errorf("a job without a push got %d", ps[2].pushes)
	}
}

// A chain that fails in a push fails its job alone: its ReadView returns
// the error, from then on, and the hub goes on feeding the others, no
// longer holding a batch for it once it has left.
func TestSharePushError(t *testing.T) {
	f := newFixture(t, Options{})
	f.src.gen = true
	a := f.open(t, "a", false, 0)
	b := f.open(t, "b", false, 0)
	defer b.Close()
	boom := errors.New("boom")
	pa := &pushed{fail: boom}
	a.(connector.Pusher).SetPush(16, pa.fn)
	pb := &pushed{}
	b.(connector.Pusher).SetPush(16, pb.fn)
	done := make(chan error, 1)
	go func() { done <- pa.readAll(a.(connector.ViewReader), 1) }()
	time.Sleep(30 * time.Millisecond)
	f.push(0, 10)
	if err := pb.readAll(b.(connector.ViewReader), 10); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("the failed job read %v, not its chain's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the failed job's read did not return")
	}
	if _, err := a.(connector.ViewReader).ReadView(context.Background(), 16); !errors.Is(err, boom) {
		t.Fatalf("a read after the failure: %v", err)
	}
	a.Close()
	// Far more than the queues hold: the hub does not wait for a.
	f.push(10, 200)
	if err := pb.readAll(b.(connector.ViewReader), 200); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pb.vals, seq(0, 200)) {
		t.Fatalf("b took %v", pb.vals)
	}
}

// A hub pushes only to as many subscribers as PushFrom says, and stops
// for pushOff windows after a window whose batches were mostly full (its
// goroutine could not keep up with the source), then tries again.
func TestPusher(t *testing.T) {
	if p := (&pusher{from: -1, full: 10}); p.on(5, 1, time.Unix(0, 0)) {
		t.Error("pushes with PushFrom below 0")
	}
	p := &pusher{from: 2, full: 10}
	at := time.Unix(0, 0)
	if p.on(1, 1, at) {
		t.Error("pushes to one subscriber with PushFrom 2")
	}
	for range 3 {
		if !p.on(2, 10, at) { // full
			t.Fatal("no push in the first window")
		}
	}
	p.on(2, 1, at)
	at = at.Add(pushWindow)
	if p.on(2, 1, at) {
		t.Fatal("pushes after a window of full batches")
	}
	for i := range pushOff {
		at = at.Add(pushWindow)
		if got, want := p.on(2, 1, at), i == pushOff-1; got != want {
			t.Fatalf("window %d after the full ones: push %v", i+2, got)
		}
	}
	if !p.on(2, 1, at.Add(pushWindow)) {
		t.Fatal("no push after a window of batches not full")
	}
}
