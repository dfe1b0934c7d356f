package kshuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// WatermarkReader is a connector.Reader that also carries its partition's
// watermark and idleness, which the connector.Reader contract has no place
// for. The task reading the partition polls Watermark after every Read:
// when ok, it forwards wm downstream if it advanced, and marks its output
// idle or active as idle says. A Read stops early at a change, so that
// rows and watermarks keep the order in which they were written.
type WatermarkReader interface {
	connector.Reader
	// Watermark returns the partition's watermark: the minimum over the
	// writers that are neither idle nor finished (MaxWatermark once all
	// have finished), and whether every unfinished writer is idle (then
	// wm is held). ok is false when neither changed since the last call.
	Watermark() (wm int64, idle bool, ok bool)
}

// pollWait is the longest a Read waits for records, as connector.Reader
// asks of unbounded readers.
const pollWait = 100 * time.Millisecond

// Source reads a shuffle topic: one partition per task of the next stage.
type Source struct {
	opts  SourceOptions
	codec *rowcodec.Codec
}

// NewSource returns a source over the shuffle topic of opts.
func NewSource(opts SourceOptions) (*Source, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	codec, err := rowcodec.New(opts.Schema)
	if err != nil {
		return nil, fmt.Errorf("cannot create shuffle source: %w", err)
	}
	return &Source{opts: opts, codec: codec}, nil
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.opts.Partitions }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.opts.Bounded }

// Open implements connector.Source; the reader it returns is a *Reader.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.OpenReader(ctx, p)
}

// OpenAt implements exec.PositionSource: pos is a Reader's Position.
func (s *Source) OpenAt(ctx context.Context, p int, pos []byte) (connector.Reader, error) {
	var c Checkpoint
	if err := c.UnmarshalBinary(pos); err != nil {
		return nil, fmt.Errorf("cannot resume shuffle topic %s partition %d: %w", s.opts.Topic, p, err)
	}
	return s.openReader(ctx, p, c)
}

// OpenReader opens partition p.
func (s *Source) OpenReader(ctx context.Context, p int) (*Reader, error) {
	var start Checkpoint
	if s.opts.Start != nil {
		start = s.opts.Start(p)
	}
	return s.openReader(ctx, p, start)
}

func (s *Source) openReader(ctx context.Context, p int, start Checkpoint) (*Reader, error) {
	o := s.opts
	if p < 0 || p >= o.Partitions {
		return nil, fmt.Errorf("shuffle topic %s has no partition %d", o.Topic, p)
	}
	if start.Writers != nil && len(start.Writers) != o.Writers {
		return nil, fmt.Errorf("cannot open shuffle topic %s partition %d: checkpoint has %d writers, want %d",
			o.Topic, p, len(start.Writers), o.Writers)
	}
	copts := []kgo.Opt{kgo.SeedBrokers(o.Brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted())}
	copts = append(copts, o.ClientOpts...)
	copts = append(copts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		o.Topic: {int32(p): kgo.NewOffset().At(start.Offset)},
	}))
	cl, err := kgo.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("cannot create shuffle reader client: %w", err)
	}
	if err := EnsureTopic(ctx, cl, o.Topic, o.Partitions, o.Replication); err != nil {
		cl.Close()
		return nil, fmt.Errorf("cannot open shuffle topic partition %d: %w", p, err)
	}
	r := &Reader{
		s:      s,
		part:   int32(p),
		cl:     cl,
		dec:    s.codec.NewDecoder(),
		decomp: newDecompressor(o.MaxPayload),
		pos:    start.Offset,
		cur:    -1,
		ws:     make([]WriterState, o.Writers),
		wm:     exec.MinWatermark,
	}
	for i := range r.ws {
		r.ws[i].Watermark = exec.MinWatermark
	}
	copy(r.ws, start.Writers)
	for _, w := range r.ws {
		if w.Done {
			r.done++
		}
	}
	r.combine()
	return r, nil
}

// Reader reads one partition of a shuffle topic. It implements
// WatermarkReader.
type Reader struct {
	s      *Source
	part   int32
	cl     *kgo.Client
	dec    *rowcodec.Decoder
	decomp *decompressor

	recs []*kgo.Record // fetched, from next on not yet read
	next int
	cur  int64 // offset of the data record being decoded; -1 if none
	pos  int64 // offset of the first record not fully read

	ws    []WriterState
	done  int   // writers whose end of input was read
	wm    int64 // the partition's watermark
	idle  bool
	dirty bool // wm or idle changed since the last Watermark call
}

// Read implements connector.Reader. Rows keep the origins they had
// upstream. It returns early, possibly with no rows, when a control record
// changed the watermark or idleness (see WatermarkReader), and io.EOF once
// every writer's end of input was read.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if max <= 0 {
		max = 1
	}
	added := 0
	for {
		if r.dec.More() {
			n, err := r.dec.Decode(b, max-added)
			if err != nil {
				return fmt.Errorf("cannot read shuffle topic %s partition %d offset %d: %w",
					r.s.opts.Topic, r.part, r.cur, err)
			}
			added += n
			if !r.dec.More() {
				r.pos, r.cur = r.cur+1, -1
			}
			if added >= max {
				return nil
			}
			continue
		}
		if r.next < len(r.recs) {
			rec := r.recs[r.next]
			r.recs[r.next] = nil
			r.next++
			if h := rec.Headers; len(h) > 0 && h[0].Key == ControlHeader {
				changed, err := r.applyControl(h[0].Value)
				if err != nil {
					return fmt.Errorf("cannot read shuffle topic %s partition %d offset %d: %w",
						r.s.opts.Topic, r.part, rec.Offset, err)
				}
				r.pos = rec.Offset + 1
				if changed {
					return nil
				}
				continue
			}
			payload, err := r.decomp.payload(rec.Value)
			if err == nil {
				err = r.dec.Reset(payload)
			}
			if err != nil {
				return fmt.Errorf("cannot read shuffle topic %s partition %d offset %d: %w",
					r.s.opts.Topic, r.part, rec.Offset, err)
			}
			r.cur = rec.Offset
			if !r.dec.More() {
				r.pos, r.cur = rec.Offset+1, -1
			}
			continue
		}
		if r.done == len(r.ws) {
			if added > 0 {
				return nil
			}
			return io.EOF
		}
		if added > 0 {
			return nil
		}
		if err := r.poll(ctx); err != nil {
			return err
		}
		if r.next >= len(r.recs) {
			return nil // nothing arrived in time
		}
	}
}

// poll fetches the next records, waiting at most pollWait.
func (r *Reader) poll(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, pollWait)
	fs := r.cl.PollFetches(pctx)
	cancel()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ferr error
	fs.EachError(func(topic string, p int32, err error) {
		if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			ferr = fmt.Errorf("cannot fetch shuffle topic %s partition %d: %w", topic, p, err)
		}
	})
	if ferr != nil {
		return ferr
	}
	r.recs, r.next = r.recs[:0], 0
	fs.EachRecord(func(rec *kgo.Record) {
		if rec.Partition == r.part {
			r.recs = append(r.recs, rec)
		}
	})
	return nil
}

// applyControl folds a control record into the writers' states and
// reports whether the partition's watermark or idleness changed.
func (r *Reader) applyControl(v []byte) (bool, error) {
	c, err := parseControl(v)
	if err != nil {
		return false, err
	}
	if c.writers != len(r.ws) {
		return false, fmt.Errorf("written by %d writers, but the reader expects %d", c.writers, len(r.ws))
	}
	if c.writer >= len(r.ws) {
		return false, fmt.Errorf("control record of writer %d of %d: %w", c.writer, len(r.ws), errCorrupt)
	}
	w := &r.ws[c.writer]
	switch c.kind {
	case ctlWatermark:
		w.Watermark = max(w.Watermark, c.wm)
		w.Idle = false
	case ctlIdle:
		w.Idle = true
	case ctlActive:
		w.Idle = false
	case ctlEnd:
		if !w.Done {
			w.Done = true
			r.done++
		}
	}
	return r.combine(), nil
}

// combine recomputes the partition's watermark and idleness, as
// exec.Inbox does: the minimum over active writers, held while every
// unfinished writer is idle.
func (r *Reader) combine() bool {
	wm, active := exec.MaxWatermark, 0
	for _, w := range r.ws {
		if w.Done || w.Idle {
			continue
		}
		active++
		wm = min(wm, w.Watermark)
	}
	idle := active == 0 && r.done < len(r.ws)
	changed := false
	if !idle && wm > r.wm {
		r.wm, changed = wm, true
	}
	if idle != r.idle {
		r.idle, changed = idle, true
	}
	if changed {
		r.dirty = true
	}
	return changed
}

// Watermark implements WatermarkReader.
func (r *Reader) Watermark() (wm int64, idle bool, ok bool) {
	ok, r.dirty = r.dirty, false
	return r.wm, r.idle, ok
}

// Checkpoint returns the reader's position: the offset of the first record
// not fully read and the writers' states before it. Reading again from it
// (SourceOptions.Start) yields the rows after the last fully read record
// again (a partly read one from its start) and the same watermarks.
func (r *Reader) Checkpoint() Checkpoint {
	off := r.pos
	if r.cur >= 0 {
		off = r.cur
	}
	return Checkpoint{Offset: off, Writers: append([]WriterState(nil), r.ws...)}
}

// Offset returns the offset of the first record not fully read.
func (r *Reader) Offset() int64 {
	if r.cur >= 0 {
		return r.cur
	}
	return r.pos
}

// Position implements exec.PositionReader: the encoded Checkpoint.
func (r *Reader) Position() ([]byte, error) { return r.Checkpoint().MarshalBinary() }

// Close implements connector.Reader.
func (r *Reader) Close() error {
	r.cl.Close()
	r.decomp.close()
	return nil
}

var (
	_ WatermarkReader      = (*Reader)(nil)
	_ exec.WatermarkReader = (*Reader)(nil)
	_ exec.PositionReader  = (*Reader)(nil)
	_ exec.PositionSource  = (*Source)(nil)
)
