package exec

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// sleepySource is a one-partition source whose reader, after its first
// row, waits for records that never come until it is woken (a read of
// an idle source may wait; this one would wait forever).
type sleepySource struct{ wakes atomic.Int64 }

func (s *sleepySource) Partitions() int { return 1 }
func (s *sleepySource) Bounded() bool   { return false }
func (s *sleepySource) Open(context.Context, int) (connector.Reader, error) {
	return &sleepyReader{s: s, wake: make(chan struct{}, 1)}, nil
}

type sleepyReader struct {
	s    *sleepySource
	wake chan struct{}
	sent bool
}

func (r *sleepyReader) Read(ctx context.Context, b *types.Batch, _ int) error {
	if !r.sent {
		r.sent = true
		v := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: 1}, 1)
		v[0] = types.IntValue(types.KindInt, 1)
		return nil
	}
	select {
	case <-r.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *sleepyReader) Wake() {
	r.s.wakes.Add(1)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *sleepyReader) Close() error { return nil }

// completions is a sink operator that counts the checkpoints it heard
// completed.
type completions struct {
	Discard
	n atomic.Int64
}

func (c *completions) CheckpointComplete(int64) error { c.n.Add(1); return nil }

// A task whose source waits in a read is woken for the checkpoints: to
// send a barrier, and, once the checkpoint completed, to tell the sink
// that runs in it, which commits then. Without, an idle source's sink
// would commit only as its reads return, and this one's never.
func TestSourceTaskWokenForCheckpoints(t *testing.T) {
	src := &sleepySource{}
	sink := &completions{}
	g := &Graph{Stages: []*Stage{{Name: "src", ID: "job/src", Source: src,
		Build: func(int, Output) (*Chain, error) { return &Chain{Head: sink, Ops: []Operator{sink}}, nil }}}}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- g.Run(context.Background(), RunOptions{State: state.NewMemory(), CheckpointInterval: 5 * time.Millisecond, Stop: stop})
	}()
	for deadline := time.Now().Add(20 * time.Second); sink.n.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sink heard of %d completed checkpoints (the reader was woken %d times)", sink.n.Load(), src.wakes.Load())
		}
	}
	// The stop is seen when the read returns: at the next barrier's wake.
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A running graph whose one task is a source with its sink takes one
// goroutine, the caller's of Run: the coordinator's checkpoints run on
// a timer and on the task, and nothing waits for the stop.
func TestGraphRunsOnTheCallersGoroutine(t *testing.T) {
	src := &sleepySource{}
	sink := &completions{}
	g := &Graph{Stages: []*Stage{{Name: "src", ID: "job/src", Source: src,
		Build: func(int, Output) (*Chain, error) { return &Chain{Head: sink, Ops: []Operator{sink}}, nil }}}}
	stop := make(chan struct{})
	done := make(chan error, 1)
	before := runtime.NumGoroutine()
	go func() {
		done <- g.Run(context.Background(), RunOptions{State: state.NewMemory(), CheckpointInterval: 5 * time.Millisecond, Stop: stop})
	}()
	for deadline := time.Now().Add(20 * time.Second); sink.n.Load() < 3 || runtime.NumGoroutine() > before+1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines while the job runs (%d checkpoints), want at most %d:\n%s",
				runtime.NumGoroutine(), sink.n.Load(), before+1, buf[:runtime.Stack(buf, true)])
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
