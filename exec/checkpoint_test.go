package exec_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/exec/groupagg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// latest keeps the last +I/+U value per key that reached the sink.
type latest struct {
	mu   sync.Mutex
	vals map[string]int64
}

func (l *latest) Open(*exec.Context) error { return nil }
func (l *latest) Process(b *types.Batch) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range b.Rows {
		if r.Kind == types.Insert || r.Kind == types.UpdateAfter {
			l.vals[r.Vals[0].Str()] = r.Vals[1].Int()
		}
	}
	return nil
}
func (l *latest) Watermark(int64) error { return nil }
func (l *latest) Finish() error         { return nil }
func (l *latest) Close() error          { return nil }

// countGraph is source → GROUP BY k COUNT(*) (2 tasks) → sink.
func countGraph(t *testing.T, src *memory.Source, sink *latest) *exec.Graph {
	count, err := agg.NewRegistry().Lookup("COUNT")
	if err != nil {
		t.Fatal(err)
	}
	calls := []agg.Call{{Func: count, Filter: -1, Result: types.BigInt.WithNullable(false)}}
	source := &exec.Stage{Name: "src", ID: "job/source-1", Source: src,
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			return &exec.Chain{Head: out}, nil
		}}
	groups := &exec.Stage{Name: "agg", ID: "job/agg", Inputs: []*exec.Stage{source}, Parallelism: 2, KeyBy: []int{0},
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			op, err := groupagg.New(groupagg.Config{ID: fmt.Sprintf("job/agg/%d", task), Keys: []int{0}, Calls: calls,
				AppendOnlyInput: true, Next: out})
			return &exec.Chain{Head: op, Ops: []exec.Operator{op}}, err
		}}
	sinkStage := &exec.Stage{Name: "sink", ID: "job/sink", Inputs: []*exec.Stage{groups}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: sink}, nil }}
	return &exec.Graph{Stages: []*exec.Stage{source, groups, sinkStage}}
}

func keyRow(i int) types.Row {
	return types.Row{Vals: []types.Value{types.StringValue(fmt.Sprintf("k%d", i%7))}}
}

// A job that stops after a checkpoint and restarts from the backend's
// positions counts every row exactly once: the restored state holds the
// rows up to the checkpoint, and the source skips them on replay.
func TestCheckpointRestart(t *testing.T) {
	const total = 3000
	backend := state.NewMemory()
	opts := exec.RunOptions{State: backend, CheckpointInterval: 10 * time.Millisecond}

	// First run: push the first half, wait for a checkpoint covering it
	// all, then stop.
	src1 := memory.NewUnbounded(2)
	sink1 := &latest{vals: map[string]int64{}}
	stop := make(chan struct{})
	opts.Stop = stop
	done := make(chan error, 1)
	go func() { done <- countGraph(t, src1, sink1).Run(context.Background(), opts) }()
	for i := 0; i < total/2; i++ {
		src1.Push(i%2, keyRow(i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pos, _ := backend.Positions("")
		if pos["job/source-1/0"] == total/4 && pos["job/source-1/1"] == total/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint covered the first half: %v", pos)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Second run: the source replays everything from the start, as a
	// queue would from its committed offsets or earlier.
	src2 := memory.NewUnbounded(2)
	sink2 := &latest{vals: map[string]int64{}}
	for i := 0; i < total; i++ {
		src2.Push(i%2, keyRow(i))
	}
	src2.ClosePartition(0)
	src2.ClosePartition(1)
	opts.Stop = nil
	if err := countGraph(t, src2, sink2).Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for i := 0; i < total; i++ {
		want[fmt.Sprintf("k%d", i%7)]++
	}
	for k, n := range want {
		if got := sink2.vals[k]; got != n {
			t.Errorf("count(%s) = %d after restart, want %d", k, got, n)
		}
	}
}

// In a job with two pipelines, checkpoints go on after one of them ended.
func TestCheckpointsAfterOnePipelineEnds(t *testing.T) {
	backend := state.NewMemory()
	bounded := memory.NewBounded([]types.Row{keyRow(1)})
	unbounded := memory.NewUnbounded(1)
	pass := func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }
	srcA := &exec.Stage{Name: "a", ID: "job/a", Source: bounded, Build: pass}
	srcB := &exec.Stage{Name: "b", ID: "job/b", Source: unbounded, Build: pass}
	sinkA := &exec.Stage{Name: "sink-a", Inputs: []*exec.Stage{srcA}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: &recorder{}}, nil }}
	sinkB := &exec.Stage{Name: "sink-b", Inputs: []*exec.Stage{srcB}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: &recorder{}}, nil }}
	g := &exec.Graph{Stages: []*exec.Stage{srcA, srcB, sinkA, sinkB}}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- g.Run(context.Background(), exec.RunOptions{State: backend, CheckpointInterval: 5 * time.Millisecond, Stop: stop})
	}()
	for i := 0; i < 50; i++ {
		unbounded.Push(0, keyRow(i))
		time.Sleep(2 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pos, _ := backend.Positions("")
		if pos["job/b/0"] == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints stopped after pipeline a ended: positions %v", pos)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
