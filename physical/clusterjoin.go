package physical

import (
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// clusterJoin starts, in cluster mode, the stage of a two-input operator
// (a join): both inputs, each a stage over a source (Kafka partitions, or
// the shuffle topic of an earlier re-keying) or a union of such, go through one
// shuffle topic whose rows are (side INT, the left columns, the right
// columns), the other side's columns NULL. Each writer routes by its own
// side's key columns, so that the rows of one key meet in one partition;
// the left side's writers are numbered first, then the right's. The
// stage's chain starts with a splitter that hands each run of one side's
// rows to the operator's ProcessInput, in the order they were written.
func (b *builder) clusterJoin(name string, par int, leftKeys, rightKeys []int, lt, rt []types.Type, left, right *pipe) (*pipe, error) {
	lins, err := b.shuffleInputs(name, left)
	if err != nil {
		return nil, err
	}
	rins, err := b.shuffleInputs(name, right)
	if err != nil {
		return nil, err
	}
	union := make([]types.Type, 0, 1+len(lt)+len(rt))
	union = append(append(append(union, types.Int), lt...), rt...)
	id := b.id("shuffle", "shuffle "+name, fmt.Sprintf("%s by %v and %v of %v and %v", name, leftKeys, rightKeys, lt, rt))
	bounded := left.bounded && right.bounded
	src, parts, writer, err := b.env.Cluster.Shuffle(id, union, par, writers(lins)+writers(rins), bounded)
	if err != nil {
		return nil, err
	}
	shift := func(keys []int, by int) []int {
		out := make([]int, len(keys))
		for i, k := range keys {
			out[i] = k + by
		}
		return out
	}
	base := 0
	for side, ins := range [][]*pipe{lins, rins} {
		keys, at := shift(leftKeys, 1), 1
		if side == 1 {
			keys, at = shift(rightKeys, 1+len(lt)), 1+len(lt)
		}
		for _, in := range ins {
			tag := side
			in.ops = append(in.ops, func(_ int, next exec.Operator) (exec.Operator, error) {
				return newTagger(tag, at, len(union), next), nil
			})
			first := base
			in.stage.Output = func(part int) (exec.Output, error) { return writer(first+part, keys) }
			base += in.stage.Source.Partitions()
			b.close(in)
		}
	}
	st := &exec.Stage{Name: name, ID: id, Source: src, Parts: parts}
	p := &pipe{stage: st, assigner: -1, bounded: bounded}
	nl, nr := len(lt), len(rt)
	p.ops = append(p.ops, func(_ int, next exec.Operator) (exec.Operator, error) {
		mi, ok := next.(multiInputOperator)
		if !ok {
			return nil, fmt.Errorf("%s: %T takes one input", name, next)
		}
		return &splitter{next: mi, widths: [2]int{nl, nr}}, nil
	})
	return p, nil
}

// tagger widens the rows of one side of a cluster join to the shuffle's
// rows: the side, then its columns at their place.
type tagger struct {
	next  exec.Operator // the shuffle's writer
	side  int
	at    int
	width int
	out   *types.Batch
}

func newTagger(side, at, width int, next exec.Operator) *tagger {
	return &tagger{next: next, side: side, at: at, width: width, out: types.NewBatch(256, width)}
}

// Open implements exec.Operator.
func (t *tagger) Open(ctx *exec.Context) error { return t.next.Open(ctx) }

// Process implements exec.Operator.
func (t *tagger) Process(b *types.Batch) error {
	t.out.Reset()
	side := types.Int32Value(int32(t.side))
	for i := range b.Rows {
		r := &b.Rows[i]
		vals := t.out.AddRow(r.Kind, r.Origin, t.width) // the other side's columns stay NULL
		vals[0] = side
		copy(vals[t.at:], r.Vals)
	}
	return t.next.Process(t.out)
}

// Watermark implements exec.Operator.
func (t *tagger) Watermark(wm int64) error { return t.next.Watermark(wm) }

// Finish implements exec.Operator.
func (t *tagger) Finish() error { return t.next.Finish() }

// Close implements exec.Operator.
func (t *tagger) Close() error { return t.next.Close() }

// multiInputOperator is an operator of several inputs.
type multiInputOperator interface {
	exec.Operator
	exec.MultiInput
}

// splitter turns the shuffle's rows of a cluster join back into the rows
// of each side, and hands every run of rows of one side to the operator's
// ProcessInput.
type splitter struct {
	next   multiInputOperator
	widths [2]int
	bufs   [2]*types.Batch
}

// Open implements exec.Operator.
func (s *splitter) Open(ctx *exec.Context) error {
	for i, w := range s.widths {
		s.bufs[i] = types.NewBatch(256, w)
	}
	return s.next.Open(ctx)
}

// Process implements exec.Operator.
func (s *splitter) Process(b *types.Batch) error {
	cur := -1
	for i := range b.Rows {
		r := &b.Rows[i]
		side := int(r.Vals[0].Int())
		if side != 0 && side != 1 {
			return fmt.Errorf("join: a shuffled row of side %d", side)
		}
		if side != cur {
			if err := s.flush(cur); err != nil {
				return err
			}
			cur = side
		}
		at := 1
		if side == 1 {
			at += s.widths[0]
		}
		copy(s.bufs[side].AddRow(r.Kind, r.Origin, s.widths[side]), r.Vals[at:at+s.widths[side]])
	}
	return s.flush(cur)
}

// flush hands the rows gathered for side to the operator.
func (s *splitter) flush(side int) error {
	if side < 0 || len(s.bufs[side].Rows) == 0 {
		return nil
	}
	err := s.next.ProcessInput(side, s.bufs[side])
	s.bufs[side].Reset()
	return err
}

// Watermark implements exec.Operator.
func (s *splitter) Watermark(wm int64) error { return s.next.Watermark(wm) }

// Finish implements exec.Operator.
func (s *splitter) Finish() error { return s.next.Finish() }

// Close implements exec.Operator.
func (s *splitter) Close() error { return s.next.Close() }
