package exec

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// lastBatchSource is a one-partition source of n rows, read in one batch,
// whose last Read calls onEnd before it returns io.EOF.
type lastBatchSource struct {
	n     int
	onEnd func()
}

func (s *lastBatchSource) Partitions() int { return 1 }
func (s *lastBatchSource) Bounded() bool   { return true }
func (s *lastBatchSource) Open(context.Context, int) (connector.Reader, error) {
	return &lastBatchReader{s: s}, nil
}

type lastBatchReader struct {
	s    *lastBatchSource
	done bool
}

func (r *lastBatchReader) Read(_ context.Context, b *types.Batch, _ int) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	for i := range r.s.n {
		v := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: int64(i)}, 1)
		v[0] = types.IntValue(types.KindInt, int64(i))
	}
	r.s.onEnd() // a checkpoint is requested as the input ends
	return io.EOF
}

func (r *lastBatchReader) Close() error { return nil }

// trace is an Output that records what reaches it.
type trace struct {
	Discard
	events []string
}

func (o *trace) Process(b *types.Batch) error {
	o.events = append(o.events, fmt.Sprintf("rows(%d)", len(b.Rows)))
	return nil
}
func (o *trace) Watermark(wm int64) error {
	if wm == MaxWatermark {
		o.events = append(o.events, "end-watermark")
	}
	return nil
}
func (o *trace) Barrier(id int64) error {
	o.events = append(o.events, fmt.Sprintf("barrier(%d)", id))
	return nil
}
func (o *trace) Finish() error {
	o.events = append(o.events, "finish")
	return nil
}

// TestBarrierRequestedAsInputEnds: a checkpoint requested while a
// partition reads its last rows must cover them, with their position,
// before the partition's end goes downstream; otherwise its consumers
// count the ended partition as aligned and fold the rows into that
// checkpoint, which would not claim their position: a restart from it
// would read them again.
func TestBarrierRequestedAsInputEnds(t *testing.T) {
	barriers := make(chan int64, 1)
	src := &lastBatchSource{n: 3, onEnd: func() { barriers <- 7 }}
	out := &trace{}
	var positions, finals []int64
	task := &SourceTask{Table: "t", Source: src, Head: out, Out: out, Chain: &Chain{Head: out},
		Barriers: barriers,
		Position: func(off int64) { positions = append(positions, off) },
		Final:    func(off int64) { finals = append(finals, off) }}
	if err := task.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(out.events, " "), "rows(3) barrier(7) end-watermark finish"; got != want {
		t.Fatalf("downstream saw %s, want %s", got, want)
	}
	if fmt.Sprint(positions) != "[2]" || fmt.Sprint(finals) != "[2]" {
		t.Fatalf("positions %v and finals %v, want the last row's offset (2) for both", positions, finals)
	}
}
