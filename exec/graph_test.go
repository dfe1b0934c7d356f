package exec_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// recorder is an operator at the end of a chain that keeps what it sees.
type recorder struct {
	mu         sync.Mutex
	rows       []types.Row
	watermarks []int64
	finished   bool
	task       int
}

func (r *recorder) Open(ctx *exec.Context) error { r.task = ctx.Task; return nil }
func (r *recorder) Process(b *types.Batch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range b.Rows {
		r.rows = append(r.rows, types.CopyRow(row))
	}
	return nil
}
func (r *recorder) Watermark(wm int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watermarks = append(r.watermarks, wm)
	return nil
}
func (r *recorder) Finish() error      { r.mu.Lock(); r.finished = true; r.mu.Unlock(); return nil }
func (r *recorder) Close() error       { return nil }
func (r *recorder) SetIdle(bool) error { return nil }
func (r *recorder) lastWatermark() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.watermarks) == 0 {
		return exec.MinWatermark
	}
	return r.watermarks[len(r.watermarks)-1]
}

func row(key string, ts int64) types.Row {
	return types.Row{Vals: []types.Value{types.StringValue(key), types.TimestampValue(ts)}}
}

func tsWatermark(delay int64) exec.RowFunc {
	return func(r []types.Value) (types.Value, error) {
		return types.TimestampValue(r[1].Int() - delay), nil
	}
}

func TestGraphHashExchangeAndWatermarks(t *testing.T) {
	src := memory.NewBounded(
		[]types.Row{row("a", 10), row("b", 20), row("c", 30), row("a", 40)},
		[]types.Row{row("b", 5), row("d", 15)},
	)
	source := &exec.Stage{Name: "src", Source: src,
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			a := &exec.WatermarkAssigner{Expr: tsWatermark(1), Next: out}
			return &exec.Chain{Head: a, Assigner: a}, nil
		}}
	workers := make([]*recorder, 2)
	keyed := &exec.Stage{Name: "keyed", Inputs: []*exec.Stage{source}, Parallelism: 2, KeyBy: []int{0},
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			workers[task] = &recorder{}
			return &exec.Chain{Head: &exec.Calc{Next: &tee{a: workers[task], b: out}}}, nil
		}}
	final := &recorder{}
	sink := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{keyed}, Parallelism: 1,
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			return &exec.Chain{Head: final}, nil
		}}
	g := &exec.Graph{Stages: []*exec.Stage{source, keyed, sink}}
	if err := g.Run(context.Background(), exec.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(final.rows) != 6 || !final.finished {
		t.Fatalf("sink got %d rows, finished=%v", len(final.rows), final.finished)
	}
	// Every key is seen by exactly one worker.
	owner := map[string]int{}
	for w, rec := range workers {
		for _, r := range rec.rows {
			k := r.Vals[0].Str()
			if o, ok := owner[k]; ok && o != w {
				t.Errorf("key %q seen by workers %d and %d", k, o, w)
			}
			owner[k] = w
		}
	}
	// Watermarks never decrease and end at MaxWatermark.
	wms := final.watermarks
	for i := 1; i < len(wms); i++ {
		if wms[i] < wms[i-1] {
			t.Errorf("watermark went back: %v", wms)
		}
	}
	if len(wms) == 0 || wms[len(wms)-1] != exec.MaxWatermark {
		t.Errorf("watermarks %v do not end at MaxWatermark", wms)
	}
	// Origins survive the exchange.
	for _, r := range final.rows {
		if r.Origin.Part < 0 || r.Origin.Offset < 1 {
			t.Errorf("row %v lost its origin", r)
		}
	}
}

// tee forwards to two operators (a recorder and the stage output).
type tee struct {
	a *recorder
	b exec.Output
}

func (t *tee) Open(ctx *exec.Context) error { t.a.Open(ctx); return t.b.Open(ctx) }
func (t *tee) Process(b *types.Batch) error {
	t.a.Process(b)
	return t.b.Process(b)
}
func (t *tee) Watermark(wm int64) error { t.a.Watermark(wm); return t.b.Watermark(wm) }
func (t *tee) Finish() error            { return t.b.Finish() }
func (t *tee) Close() error             { return t.b.Close() }

// The combined watermark is the minimum over partitions; an idle partition
// stops holding it back once the idle timeout passes.
func TestGraphIdlePartition(t *testing.T) {
	for _, idle := range []time.Duration{0, 20 * time.Millisecond} {
		src := memory.NewUnbounded(2)
		source := &exec.Stage{Name: "src", Source: src, IdleTimeout: idle,
			Build: func(task int, out exec.Output) (*exec.Chain, error) {
				a := &exec.WatermarkAssigner{Expr: tsWatermark(0), Next: out}
				return &exec.Chain{Head: a, Assigner: a}, nil
			}}
		rec := &recorder{}
		sink := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{source}, Parallelism: 1,
			Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: rec}, nil }}
		g := &exec.Graph{Stages: []*exec.Stage{source, sink}}
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- g.Run(context.Background(), exec.RunOptions{Stop: stop}) }()
		src.Push(0, row("a", 1000))
		deadline := time.Now().Add(5 * time.Second)
		if idle > 0 {
			for rec.lastWatermark() != 1000 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := rec.lastWatermark(); got != 1000 {
				t.Errorf("idle timeout %v: watermark %d, want 1000", idle, got)
			}
		} else {
			// Without an idle timeout the empty partition holds the watermark.
			time.Sleep(100 * time.Millisecond)
			if got := rec.lastWatermark(); got != exec.MinWatermark {
				t.Errorf("no idle timeout: watermark advanced to %d", got)
			}
		}
		close(stop)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !rec.finished {
			t.Error("stop did not finish the chain")
		}
	}
}

// When every sender goes idle, the inbox advances to the largest watermark
// any of them reached, as Flink's watermark valve does: a sender that went
// idle first must not hold back the one that went idle after it.
func TestInboxAllIdleAdvancesToMax(t *testing.T) {
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		in := exec.NewInbox(2, 8)
		rec := &recorder{}
		s0, s1 := in.Sender(0), in.Sender(1)
		ctx := &exec.Context{Ctx: context.Background()}
		s0.Open(ctx)
		s1.Open(ctx)
		done := make(chan error, 1)
		go func() { done <- in.Run(context.Background(), rec, nil) }()
		if err := s0.Watermark(1000); err != nil {
			t.Fatal(err)
		}
		senders := []exec.Output{s0, s1}
		for _, i := range order {
			if err := senders[i].SetIdle(true); err != nil {
				t.Fatal(err)
			}
		}
		s0.Finish()
		s1.Finish()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(rec.watermarks) == 0 || rec.watermarks[0] != 1000 {
			t.Errorf("idle order %v: watermarks %v, want 1000 first", order, rec.watermarks)
		}
	}
}

// panicky is an operator with a bug.
type panicky struct{ recorder }

func (p *panicky) Process(*types.Batch) error { panic("boom") }

// A panicking operator fails its job with an error naming the stage; the
// process goes on.
func TestGraphRecoversFromOperatorPanic(t *testing.T) {
	src := memory.NewBounded([]types.Row{row("a", 1)})
	source := &exec.Stage{Name: "src", Source: src,
		Build: func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }}
	sink := &exec.Stage{Name: "buggy", Inputs: []*exec.Stage{source}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: &panicky{}}, nil }}
	err := (&exec.Graph{Stages: []*exec.Stage{source, sink}}).Run(context.Background(), exec.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "internal error in stage buggy task 0: boom") {
		t.Fatalf("err = %v", err)
	}
}
