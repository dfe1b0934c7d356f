package exec

import (
	"context"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// twoStep is a two-step sink that records its calls.
type twoStep struct{ calls []string }

func (s *twoStep) Write(context.Context, *types.Batch) error { return nil }
func (s *twoStep) Flush(context.Context) error               { return nil }
func (s *twoStep) Close() error                              { return nil }
func (s *twoStep) Prepare(context.Context) error             { s.calls = append(s.calls, "prepare"); return nil }
func (s *twoStep) Commit(context.Context) error              { s.calls = append(s.calls, "commit"); return nil }

// TestSinkLateNotice: the notice that checkpoint 1 completed comes after
// barrier 2 (the task read its barrier first). Committing then would make
// visible what barrier 2 prepared before checkpoint 2 completes; the sink
// operator ignores it and commits at the notice of checkpoint 2.
func TestSinkLateNotice(t *testing.T) {
	sink := &twoStep{}
	op := &SinkOperator{Table: "t", Sink: sink}
	if err := op.Open(&Context{Ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
	c := &Chain{Head: op, Ops: []Operator{op}}
	steps := []func() error{
		func() error { return c.snapshot(1) },
		func() error { return c.snapshot(2) },
		func() error { return c.notify(1) },
		func() error { return c.notify(2) },
		func() error { return op.Finish() },
		func() error { return c.notify(-1) },
	}
	for _, f := range steps {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"prepare", "prepare", "commit", "prepare", "commit"}
	if len(sink.calls) != len(want) {
		t.Fatalf("calls %v, want %v", sink.calls, want)
	}
	for i := range want {
		if sink.calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", sink.calls, want)
		}
	}
}
