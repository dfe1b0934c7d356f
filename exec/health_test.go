package exec_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// evenRows keeps the rows whose key is "a" or "c".
func evenRows(next exec.Operator) exec.Operator {
	return &exec.Calc{Next: next, Filter: func(r []types.Value) (bool, error) {
		k := r[0].Str()
		return k == "a" || k == "c", nil
	}}
}

// A graph whose chains have meters between their operators, as physical
// builds them: the operators' rows in and out, their watermarks, tasks
// and table, summed over the tasks; a second run of the graph with the
// same metrics (cluster mode runs it again at every assignment) adds to
// the rows and starts the rest afresh.
func TestHealthMeters(t *testing.T) {
	scan := &exec.OperatorInfo{Index: 1, Kind: "TableSourceScan", Table: "src", Source: true}
	filter := &exec.OperatorInfo{Index: 2, Kind: "Calc"}
	sink := &exec.OperatorInfo{Index: 3, Kind: "Sink", Table: "out", Sink: true}
	in := func(next exec.Operator, ops ...*exec.OperatorInfo) exec.Operator {
		return &exec.Meter{Next: next, In: ops}
	}
	graph := func(final *recorder) *exec.Graph {
		src := memory.NewBounded(
			[]types.Row{row("a", 10), row("b", 20), row("c", 30), row("a", 40)},
			[]types.Row{row("b", 5), row("c", 15)},
		)
		source := &exec.Stage{Name: "src", Source: src,
			Build: func(task int, out exec.Output) (*exec.Chain, error) {
				// scan (the assigner) | filter | edge
				tail := &exec.Meter{Next: out, Out: []*exec.OperatorInfo{filter}}
				f := evenRows(tail)
				a := &exec.WatermarkAssigner{Expr: tsWatermark(1), Next: &exec.Meter{Next: f, Out: []*exec.OperatorInfo{scan}, In: []*exec.OperatorInfo{filter}}}
				return &exec.Chain{Head: in(a, scan), Ops: []exec.Operator{a, f}, Assigner: a}, nil
			}}
		out := &exec.Stage{Name: "sink", Inputs: []*exec.Stage{source}, Parallelism: 1,
			Build: func(task int, out exec.Output) (*exec.Chain, error) {
				return &exec.Chain{Head: in(final, sink)}, nil
			}}
		return &exec.Graph{Stages: []*exec.Stage{source, out}}
	}
	m := &exec.Metrics{}
	final := &recorder{}
	if err := graph(final).Run(context.Background(), exec.RunOptions{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	h := m.Health(time.Now())
	if len(h.Operators) != 3 {
		t.Fatalf("operators: %+v", h.Operators)
	}
	want := []struct {
		name, table  string
		tasks        int
		in, out      int64
		hasWatermark bool
	}{
		{"TableSourceScan[1]", "src", 2, 6, 6, false}, // ended: MaxWatermark
		{"Calc[2]", "", 2, 6, 4, false},
		{"Sink[3]", "out", 1, 4, 4, false},
	}
	for i, w := range want {
		o := h.Operators[i]
		if o.Name != w.name || o.Table != w.table || o.Tasks != w.tasks || o.RowsIn != w.in || o.RowsOut != w.out || o.HasWatermark != w.hasWatermark {
			t.Errorf("operator %d: %+v, want %+v", i, o, w)
		}
	}
	if len(final.rows) != 4 || h.RowsIn != 6 {
		t.Fatalf("%d rows written, %d read", len(final.rows), h.RowsIn)
	}

	// The same graph again: the rows add up, the tasks are the new run's.
	final = &recorder{}
	if err := graph(final).Run(context.Background(), exec.RunOptions{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	h = m.Health(time.Now())
	if o := h.Operators[1]; o.RowsIn != 12 || o.RowsOut != 8 || o.Tasks != 2 {
		t.Errorf("after a second run: %+v", o)
	}
}

// A meter in front of an operator with several inputs passes each
// batch on with its input's number.
func TestMeterPassesInputs(t *testing.T) {
	j := &twoInputs{}
	m := &exec.Meter{Next: j}
	if err := m.Open(&exec.Context{Ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
	b := &types.Batch{Rows: []types.Row{row("a", 1)}}
	if err := m.ProcessInput(1, b); err != nil {
		t.Fatal(err)
	}
	if err := m.ProcessInput(0, b); err != nil {
		t.Fatal(err)
	}
	if len(j.inputs) != 2 || j.inputs[0] != 1 || j.inputs[1] != 0 {
		t.Fatalf("inputs: %v", j.inputs)
	}
}

type twoInputs struct {
	recorder
	inputs []int
}

func (j *twoInputs) ProcessInput(input int, b *types.Batch) error {
	j.inputs = append(j.inputs, input)
	return nil
}

// BenchmarkMeter measures what a meter adds to a batch of 1,024 rows
// passed on: one atomic add (ns/op is per batch).
func BenchmarkMeter(b *testing.B) {
	batch := &types.Batch{}
	for i := range 1024 {
		batch.Rows = append(batch.Rows, row("k", int64(i)))
	}
	info := &exec.OperatorInfo{Index: 1, Kind: "Calc"}
	for _, metered := range []bool{false, true} {
		name := "bare"
		var op exec.Operator = exec.Discard{}
		if metered {
			name = "metered"
			op = &exec.Meter{Next: op, In: []*exec.OperatorInfo{info}}
		}
		b.Run(name, func(b *testing.B) {
			if err := op.Open(&exec.Context{Ctx: context.Background(), Metrics: &exec.Metrics{}}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for range b.N {
				if err := op.Process(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
