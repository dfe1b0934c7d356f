package exec_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// probe is a pass-through operator that takes part in checkpoints and
// remembers whether it was snapshotted after it finished.
type probe struct {
	exec.Passthrough
	finished    atomic.Bool
	snapped     atomic.Int64 // snapshots taken
	snappedDone atomic.Bool  // a snapshot after Finish
	ticks       atomic.Int64
	every       time.Duration
}

func (p *probe) Finish() error {
	p.finished.Store(true)
	return p.Next.Finish()
}

func (p *probe) Checkpoint() error {
	p.snapped.Add(1)
	if p.finished.Load() {
		p.snappedDone.Store(true)
	}
	return nil
}

func (p *probe) TickEvery() time.Duration { return p.every }
func (p *probe) Tick() error              { p.ticks.Add(1); return nil }

// endCheck is a sink that, when its input ends, records whether the
// probes upstream of it had been snapshotted after they finished: the
// final snapshot of a task must precede the end of input downstream.
type endCheck struct {
	recorder
	probes  []*probe
	snapped []bool
}

func (e *endCheck) Finish() error {
	for _, p := range e.probes {
		e.snapped = append(e.snapped, p.snappedDone.Load())
	}
	return e.recorder.Finish()
}

// branchGraph is a source with a watermark assigner (the trunk) and two
// branches: a keeps the rows of key "a", b keeps all; each has a probe and
// its own sink.
type branchGraph struct {
	g            *exec.Graph
	trunk        *exec.Stage
	trunkProbes  []*probe
	probes       [2][]*probe
	sinks        [2]*endCheck
	sinkA, sinkB *exec.Stage
}

func newBranchGraph(src *memory.Source) *branchGraph {
	bg := &branchGraph{}
	var mu sync.Mutex
	bg.trunk = &exec.Stage{Name: "src", ID: "job/src", Source: src,
		Build: func(task int, out exec.Output) (*exec.Chain, error) {
			p := &probe{Passthrough: exec.Passthrough{Next: out}}
			mu.Lock()
			bg.trunkProbes = append(bg.trunkProbes, p)
			mu.Unlock()
			a := &exec.WatermarkAssigner{Expr: tsWatermark(0), Next: p}
			return &exec.Chain{Head: a, Ops: []exec.Operator{a, p}, Assigner: a}, nil
		}}
	branch := func(k int, filter exec.RowPredicate) *exec.Stage {
		return &exec.Stage{Name: "branch", ID: "job/src/branch", Trunk: bg.trunk,
			Build: func(task int, out exec.Output) (*exec.Chain, error) {
				p := &probe{Passthrough: exec.Passthrough{Next: out}, every: time.Millisecond}
				mu.Lock()
				bg.probes[k] = append(bg.probes[k], p)
				mu.Unlock()
				c := &exec.Calc{Filter: filter, Next: p}
				return &exec.Chain{Head: c, Ops: []exec.Operator{c, p}}, nil
			}}
	}
	a := branch(0, func(r []types.Value) (bool, error) { return r[0].Str() == "a", nil })
	b := branch(1, nil)
	for k, br := range []*exec.Stage{a, b} {
		bg.sinks[k] = &endCheck{}
		sink := bg.sinks[k]
		st := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{br}, Parallelism: 1,
			Build: func(int, exec.Output) (*exec.Chain, error) {
				mu.Lock()
				// The probes upstream of this sink: the trunk's and this
				// branch's, of every task.
				sink.probes = append(append([]*probe(nil), bg.trunkProbes...), bg.probes[k]...)
				mu.Unlock()
				return &exec.Chain{Head: sink}, nil
			}}
		if k == 0 {
			bg.sinkA = st
		} else {
			bg.sinkB = st
		}
	}
	bg.g = &exec.Graph{Stages: []*exec.Stage{bg.trunk, a, b, bg.sinkA, bg.sinkB}}
	return bg
}

// A source read once for two users: each branch gets every row the
// source read (and filters its own), the watermarks and the end of input;
// the rows are counted as read once.
func TestBranchesShareOneRead(t *testing.T) {
	src := memory.NewBounded(
		[]types.Row{row("a", 10), row("b", 20), row("a", 30)},
		[]types.Row{row("c", 5), row("a", 15)},
	)
	bg := newBranchGraph(src)
	m := &exec.Metrics{}
	if err := bg.g.Run(context.Background(), exec.RunOptions{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	if got := m.RowsIn.Load(); got != 5 {
		t.Errorf("rows read = %d, want 5 (once for both branches)", got)
	}
	a, b := bg.sinks[0], bg.sinks[1]
	if len(a.rows) != 3 || len(b.rows) != 5 {
		t.Fatalf("branch a got %d rows (want 3), b %d (want 5)", len(a.rows), len(b.rows))
	}
	for _, r := range a.rows {
		if r.Vals[0].Str() != "a" {
			t.Errorf("branch a got row %v", r)
		}
	}
	for k, s := range bg.sinks {
		if !s.finished {
			t.Errorf("branch %d: its sink did not finish", k)
		}
		wms := s.watermarks
		if len(wms) < 2 || wms[len(wms)-1] != exec.MaxWatermark {
			t.Errorf("branch %d: watermarks %v, want event-time ones then MaxWatermark", k, wms)
		}
	}
	for k, s := range bg.sinks {
		for i := 1; i < len(s.watermarks); i++ {
			if s.watermarks[i] < s.watermarks[i-1] {
				t.Errorf("branch %d: watermark went back: %v", k, s.watermarks)
			}
		}
	}
	// Every origin arrives intact on both sides.
	seen := map[types.Origin]int{}
	for _, r := range b.rows {
		seen[r.Origin]++
	}
	if len(seen) != 5 {
		t.Errorf("branch b got origins %v, want 5 distinct", seen)
	}
}

// Checkpoint barriers reach both branches' consumers (a checkpoint
// completes only once every terminal task acknowledged it), the
// operators of both branches are snapshotted and ticked, and at the end
// of input each branch is snapshotted after it finished and before its
// consumer hears of the end.
func TestBranchesCheckpoint(t *testing.T) {
	backend := state.NewMemory()
	src := memory.NewUnbounded(2)
	bg := newBranchGraph(src)
	done := make(chan error, 1)
	go func() {
		done <- bg.g.Run(context.Background(), exec.RunOptions{State: backend, CheckpointInterval: 5 * time.Millisecond})
	}()
	const n = 40
	for i := range n {
		key := "b"
		if i%3 == 0 {
			key = "a"
		}
		src.Push(i%2, row(key, int64(i)))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pos, _ := backend.Positions("")
		if pos["job/src/0"] == n/2 && pos["job/src/1"] == n/2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint covered the rows: positions %v", pos)
		}
		time.Sleep(5 * time.Millisecond)
	}
	src.ClosePartition(0)
	src.ClosePartition(1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for k, ps := range bg.probes {
		if len(ps) != 2 {
			t.Fatalf("branch %d: %d tasks, want 2 (one per partition)", k, len(ps))
		}
		for _, p := range ps {
			if p.snapped.Load() < 2 {
				t.Errorf("branch %d: snapshotted %d times, want a checkpoint and the final snapshot", k, p.snapped.Load())
			}
			if p.ticks.Load() == 0 {
				t.Errorf("branch %d: its timed operator was never ticked", k)
			}
		}
	}
	for k, s := range bg.sinks {
		if len(s.snapped) != 4 { // the trunk's two probes, then the branch's two
			t.Fatalf("branch %d: its sink saw %d probes", k, len(s.snapped))
		}
		for j, ok := range s.snapped {
			if !ok {
				t.Errorf("branch %d: probe %d was not snapshotted after it finished before the end reached the sink", k, j)
			}
		}
	}
	if len(bg.sinks[0].rows) != 14 || len(bg.sinks[1].rows) != n {
		t.Errorf("sinks got %d and %d rows, want 14 and %d", len(bg.sinks[0].rows), len(bg.sinks[1].rows), n)
	}
}

// One stage may consume two branches of one trunk (a self-join): it gets
// each row once from each.
func TestBranchesIntoOneStage(t *testing.T) {
	src := memory.NewBounded([]types.Row{row("a", 1), row("b", 2)}, []types.Row{row("c", 3)})
	pass := func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }
	trunk := &exec.Stage{Name: "src", ID: "job/src", Source: src, Build: pass}
	a := &exec.Stage{Name: "a", Trunk: trunk, Build: pass}
	b := &exec.Stage{Name: "b", Trunk: trunk, Build: pass}
	rec := &recorder{}
	both := &exec.Stage{Name: "both", Inputs: []*exec.Stage{a, b}, Parallelism: 2, InputKeys: [][]int{{0}, {0}},
		Build: func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }}
	sink := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{both}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: rec}, nil }}
	g := &exec.Graph{Stages: []*exec.Stage{trunk, a, b, both, sink}}
	if err := g.Run(context.Background(), exec.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	origins := map[types.Origin]bool{}
	for _, r := range rec.rows {
		count[r.Vals[0].Str()]++
		origins[r.Origin] = true
	}
	for _, k := range []string{"a", "b", "c"} {
		if count[k] != 2 {
			t.Errorf("key %s arrived %d times, want 2 (once per branch): %v", k, count[k], count)
		}
	}
	// The branches' rows have origins of their own: a stateful operator
	// that drops replays by origin must not take one for the other's.
	if len(origins) != 6 {
		t.Errorf("%d distinct origins among 6 rows: %v", len(origins), origins)
	}
}

// A branch nothing consumes is terminal: its chain ends in its sink,
// which runs in the trunk's task (a rule's INSERT over a source read by
// one task), beside a branch that feeds a stage of its own.
func TestTerminalBranch(t *testing.T) {
	src := memory.NewBounded([]types.Row{row("a", 1), row("b", 2)})
	pass := func(task int, out exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: out}, nil }
	inBranch, inStage := &recorder{}, &recorder{}
	trunk := &exec.Stage{Name: "src", Source: src, Build: pass}
	a := &exec.Stage{Name: "a", Trunk: trunk, Build: func(int, exec.Output) (*exec.Chain, error) {
		return &exec.Chain{Head: inBranch, Ops: []exec.Operator{inBranch}}, nil
	}}
	b := &exec.Stage{Name: "b", Trunk: trunk, Build: pass}
	sink := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{b}, Parallelism: 1,
		Build: func(int, exec.Output) (*exec.Chain, error) { return &exec.Chain{Head: inStage}, nil }}
	if err := (&exec.Graph{Stages: []*exec.Stage{trunk, a, b, sink}}).Run(context.Background(), exec.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*recorder{"terminal branch": inBranch, "branch's consumer": inStage} {
		if len(r.rows) != 2 || !r.finished {
			t.Errorf("%s: %d rows, finished %v; want 2 rows and the end", name, len(r.rows), r.finished)
		}
	}
}
