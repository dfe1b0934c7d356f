package exec

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// pendingSource is a one-partition source whose reader, before each of
// its reads returns, has a checkpoint barrier and a checkpoint's
// completion both delivered to the task, and records, at each read,
// what the task had left unhandled.
type pendingSource struct {
	reads    int
	barriers chan int64
	complete chan int64
	left     []string
}

func (s *pendingSource) Partitions() int { return 1 }
func (s *pendingSource) Bounded() bool   { return true }
func (s *pendingSource) Open(context.Context, int) (connector.Reader, error) {
	return &pendingReader{s: s}, nil
}

type pendingReader struct{ s *pendingSource }

func (r *pendingReader) Read(_ context.Context, b *types.Batch, _ int) error {
	s := r.s
	if n := len(s.barriers) + len(s.complete); n > 0 {
		s.left = append(s.left, fmt.Sprintf("read %d: %d events left", s.reads, n))
	}
	s.reads++
	if s.reads > 5 {
		return io.EOF
	}
	id := int64(s.reads)
	for _, ch := range []chan int64{s.barriers, s.complete} {
		select {
		case ch <- id:
		default:
			s.left = append(s.left, fmt.Sprintf("read %d: a channel still full", s.reads))
		}
	}
	v := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: id}, 1)
	v[0] = types.IntValue(types.KindInt, id)
	return nil
}

func (r *pendingReader) Close() error { return nil }

// A source task handles every barrier and completion that arrived during
// a read before it reads again: one at a time, completions fell behind
// the barriers (a read of an idle source waits), and a sink in the task
// (a rule of a statement set) committed its output late, by up to tens
// of seconds.
func TestSourceTaskHandlesAllPendingEvents(t *testing.T) {
	src := &pendingSource{barriers: make(chan int64, 1), complete: make(chan int64, 16)}
	out := &trace{}
	task := &SourceTask{Table: "t", Source: src, Head: out, Out: out, Chain: &Chain{Head: out},
		Barriers: src.barriers, Complete: src.complete,
		Position: func(int64) {}, Final: func(int64) {}}
	if err := task.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(src.left) > 0 {
		t.Fatalf("the task read again with events unhandled: %v", src.left)
	}
}
