package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// An exchange allocates nothing per output when it opens: between two
// keyed stages there is one exchange per upstream task, each with an
// output per downstream task, so that memory set aside per output is
// paid parallelism² times.
func TestHashExchangeOpenAllocatesNothingPerOutput(t *testing.T) {
	outs := make([]exec.Output, exec.MaxParallelism)
	for i := range outs {
		outs[i] = exec.Discard{}
	}
	ctx := &exec.Context{Ctx: context.Background()}
	allocs := testing.AllocsPerRun(10, func() {
		h := &exec.HashExchange{Keys: []int{0}, Outputs: outs}
		if err := h.Open(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 4 {
		t.Fatalf("opening an exchange with %d outputs made %v allocations, want a few whatever the outputs", len(outs), allocs)
	}
}

// A stage with more tasks than exec.MaxParallelism is refused before
// anything is built.
func TestGraphRefusesParallelismAboveMax(t *testing.T) {
	built := 0
	source := &exec.Stage{Name: "src", Source: memory.NewBounded([]types.Row{row("a", 1)}),
		Build: func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }}
	keyed := &exec.Stage{Name: "keyed", Inputs: []*exec.Stage{source}, Parallelism: exec.MaxParallelism + 1, KeyBy: []int{0},
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			built++
			return &exec.Chain{Head: out}, nil
		}}
	err := (&exec.Graph{Stages: []*exec.Stage{source, keyed}}).Run(context.Background(), exec.RunOptions{})
	want := fmt.Sprintf("stage keyed: parallelism %d is above the maximum of %d", exec.MaxParallelism+1, exec.MaxParallelism)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if built > 0 {
		t.Fatalf("%d tasks were built before the error", built)
	}
}

// The inbox's combined watermark, idleness and end follow the rule (the
// minimum over active senders; finished senders count as MaxWatermark,
// idle ones are left out; when every unfinished sender is idle, the
// largest watermark any of them reached) whatever the interleaving of
// many senders' messages. The model recomputes it from scratch after
// every message.
func TestInboxCombinedWatermarkMatchesModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 1 + rng.IntN(40)
		in := exec.NewInbox(n, 1<<16)
		ctx := &exec.Context{Ctx: context.Background()}
		senders := make([]exec.Output, n)
		for i := range senders {
			senders[i] = in.Sender(i)
			senders[i].Open(ctx)
		}
		rec := &recorder{}
		tail := &idleRecorder{}

		// The model.
		wms := make([]int64, n)
		for i := range wms {
			wms[i] = exec.MinWatermark
		}
		idle, done := make([]bool, n), make([]bool, n)
		out, allIdle, finished := exec.MinWatermark, false, 0
		var want []int64
		var wantIdle []bool
		step := func() {
			combined, active := exec.MaxWatermark, 0
			for i := range wms {
				if !done[i] && !idle[i] {
					active++
					combined = min(combined, wms[i])
				}
			}
			if active == 0 && finished < n {
				highest := exec.MinWatermark
				for i := range wms {
					if !done[i] {
						highest = max(highest, wms[i])
					}
				}
				if highest > out {
					out = highest
					want = append(want, out)
				}
				if !allIdle {
					allIdle = true
					wantIdle = append(wantIdle, true)
				}
				return
			}
			if allIdle {
				allIdle = false
				wantIdle = append(wantIdle, false)
			}
			if combined > out {
				out = combined
				want = append(want, out)
			}
		}

		var msgs int
		for finished < n {
			i := rng.IntN(n)
			if done[i] {
				continue
			}
			msgs++
			var err error
			switch r := rng.IntN(20); {
			case r < 12:
				w := wms[i]
				if w == exec.MinWatermark {
					w = 0
				}
				w += int64(rng.IntN(5))
				err = senders[i].Watermark(w)
				wms[i], idle[i] = max(wms[i], w), false
			case r < 15:
				err = senders[i].SetIdle(true)
				idle[i] = true
			case r < 18:
				err = senders[i].SetIdle(false)
				idle[i] = false
			default:
				err = senders[i].Finish()
				done[i], wms[i] = true, exec.MaxWatermark
				finished++
			}
			if err != nil {
				t.Fatal(err)
			}
			step()
		}
		if err := in.Run(context.Background(), rec, tail); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rec.watermarks) != fmt.Sprint(want) {
			t.Fatalf("seed %d, %d senders, %d messages: watermarks\n%v\nwant\n%v", seed, n, msgs, rec.watermarks, want)
		}
		if fmt.Sprint(tail.idle) != fmt.Sprint(wantIdle) {
			t.Fatalf("seed %d, %d senders: idleness %v, want %v", seed, n, tail.idle, wantIdle)
		}
	}
}

// idleRecorder is a task's tail that records idleness.
type idleRecorder struct {
	exec.Discard
	idle []bool
}

func (r *idleRecorder) SetIdle(idle bool) error { r.idle = append(r.idle, idle); return nil }

// BenchmarkInboxWatermarks: every sender of an inbox advances its
// watermark once, the traffic a watermark makes between two keyed
// stages.
func BenchmarkInboxWatermarks(b *testing.B) {
	for _, n := range []int{16, 256, exec.MaxParallelism} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				in := exec.NewInbox(n, 1024)
				ctx := &exec.Context{Ctx: context.Background()}
				senders := make([]exec.Output, n)
				for i := range senders {
					senders[i] = in.Sender(i)
					senders[i].Open(ctx)
				}
				done := make(chan error, 1)
				go func() { done <- in.Run(context.Background(), exec.Discard{}, nil) }()
				for round := int64(1); round <= 4; round++ {
					for _, s := range senders {
						s.Watermark(round)
					}
				}
				for _, s := range senders {
					s.Finish()
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The job's state is the sum of its operators' gauges; a nil Metrics
// hands out gauges that ignore what they are set to.
func TestMetricsStateGauges(t *testing.T) {
	var m exec.Metrics
	a, b, c := m.StateGauge("GROUP BY"), m.StateGauge("GROUP BY"), m.StateGauge("join")
	a.Set(10, 1000)
	b.Set(5, 500)
	c.Set(2, 300)
	a.Set(11, 1100)
	if keys, bytes := m.State(); keys != 18 || bytes != 1900 {
		t.Fatalf("State() = %d, %d; want 18, 1900", keys, bytes)
	}
	if got := fmt.Sprint(m.StateByKind()); got != "map[GROUP BY:[16 1600] join:[2 300]]" {
		t.Fatalf("StateByKind() = %s", got)
	}
	var none *exec.Metrics
	none.StateGauge("join").Set(1, 1)
}

// A job stopped before its tasks run builds none of them: stopping is
// not held up by building a large graph.
func TestGraphStoppedBeforeStartBuildsNothing(t *testing.T) {
	var built atomic.Int64
	source := &exec.Stage{Name: "src", Source: memory.NewUnbounded(1),
		Build: func(task int, out exec.Output) (*exec.Chain, error) { built.Add(1); return &exec.Chain{Head: out}, nil }}
	keyed := &exec.Stage{Name: "keyed", Inputs: []*exec.Stage{source}, Parallelism: exec.MaxParallelism, KeyBy: []int{0},
		Build: func(task int, out exec.Output) (*exec.Chain, error) { built.Add(1); return &exec.Chain{Head: out}, nil }}
	stop := make(chan struct{})
	close(stop)
	if err := (&exec.Graph{Stages: []*exec.Stage{source, keyed}}).Run(context.Background(), exec.RunOptions{Stop: stop}); err != nil {
		t.Fatal(err)
	}
	if n := built.Load(); n != 0 {
		t.Fatalf("%d tasks were built after the stop", n)
	}
}

// blockingOpen is an operator whose Open waits for its context, as the
// load of a dimension table from a service that does not answer does.
type blockingOpen struct {
	exec.Discard
	opening chan struct{}
}

func (b *blockingOpen) Open(ctx *exec.Context) error {
	close(b.opening)
	<-ctx.Ctx.Done()
	return ctx.Ctx.Err()
}

// A stop while the tasks open (a dimension table loading) cancels the
// opening and ends the job without an error: no row was read, so there
// is nothing to flush.
func TestGraphStoppedWhileOpening(t *testing.T) {
	op := &blockingOpen{opening: make(chan struct{})}
	source := &exec.Stage{Name: "src", Source: memory.NewUnbounded(1),
		Build: func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }}
	sink := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{source}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: op}, nil }}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- (&exec.Graph{Stages: []*exec.Stage{source, sink}}).Run(context.Background(), exec.RunOptions{Stop: stop})
	}()
	<-op.opening
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("a job stopped while opening: %v, want no error", err)
	}
}
