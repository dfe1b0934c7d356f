package kshuffle

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// Writer is the exec.Output of an upstream task whose next stage reads the
// shuffle topic. It routes rows to partitions by the hash of their key
// columns, merges the rows of each partition into one compressed record,
// and sends watermarks, idleness and its end of input as control records
// to every partition.
//
// Rows are sent when a partition's payload reaches BatchBytes and at most
// Linger after they were buffered. A watermark waits until WatermarkInterval
// has passed since the previous one was sent (a later watermark replaces
// one still waiting), so that control records stay few however often the
// task reports progress. The end of input, MaxWatermark and idleness
// changes are sent at once, after every buffered row and watermark. The writer's task drives it from one goroutine; a timer
// sends what lingered, under the writer's mutex.
type Writer struct {
	opts  Options
	codec *rowcodec.Codec

	ctx      context.Context
	cl       *kgo.Client
	ownsCl   bool
	comp     *compressor
	promises []func(*kgo.Record, error)
	free     chan []byte

	mu       sync.Mutex // guards the fields below
	encs     []*rowcodec.Encoder
	buffered int // rows in encs
	key      []byte
	wm       int64 // highest watermark received
	sentWM   int64 // highest watermark sent
	sentAt   time.Time
	idle     bool
	timer    *time.Timer
	armed    bool
	finished bool
	// Transactional: after is the last barrier whose checkpoint has not
	// completed (0: none); records produced meanwhile wait in held.
	after int64
	held  []heldRecord

	// Records produced and not yet acknowledged; drained is closed when
	// their number drops to zero.
	inflightMu sync.Mutex
	inflight   int
	drained    chan struct{}

	errMu sync.Mutex
	err   error
	stats writerCounters
}

// heldRecord is a record produced after barrier epoch, held until its
// checkpoint completes.
type heldRecord struct {
	epoch int64
	rec   *kgo.Record
	part  int
}

// WriterStats are a writer's counters.
type WriterStats struct {
	Rows           int64 // rows written
	DataRecords    int64 // data records produced
	ControlRecords int64 // control records produced
	PayloadBytes   int64 // payload bytes before compression
	RecordBytes    int64 // data record values, after compression
}

type writerCounters struct {
	rows, data, control, payload, record atomic.Int64
}

// NewWriter returns a writer; Open connects it.
func NewWriter(opts Options) (*Writer, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	codec, err := rowcodec.New(opts.Schema)
	if err != nil {
		return nil, fmt.Errorf("cannot create shuffle writer: %w", err)
	}
	return &Writer{opts: opts, codec: codec, wm: exec.MinWatermark, sentWM: exec.MinWatermark}, nil
}

// Open implements exec.Operator: it builds the client (unless one was
// given) and makes sure the topic exists with the right partitions.
func (w *Writer) Open(ctx *exec.Context) error {
	w.ctx = ctx.Ctx
	if w.ctx == nil {
		w.ctx = context.Background()
	}
	o := w.opts
	w.cl = o.Client
	if w.cl == nil {
		copts := []kgo.Opt{
			kgo.SeedBrokers(o.Brokers...),
			kgo.MaxBufferedBytes(max(16<<20, 8*o.BatchBytes)), // back-pressure, not unbounded memory
		}
		copts = append(copts, o.ClientOpts...)
		copts = append(copts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		// The client compresses batches with snappy unless told otherwise:
		// payloads are compressed already (or were asked not to be).
		batchCodec := NoCompression
		if o.CompressBatches {
			batchCodec = o.Compression
		}
		copts = append(copts, kgo.ProducerBatchCompression(batchCodec.kgoCodec()))
		cl, err := kgo.NewClient(copts...)
		if err != nil {
			return fmt.Errorf("cannot create shuffle writer client: %w", err)
		}
		w.cl, w.ownsCl = cl, true
	}
	if err := EnsureTopic(w.ctx, w.cl, o.Topic, o.Partitions, o.Replication); err != nil {
		return fmt.Errorf("cannot open shuffle writer %d: %w", o.WriterID, err)
	}
	codec := o.Compression
	if o.CompressBatches {
		codec = NoCompression
	}
	comp, err := newCompressor(codec)
	if err != nil {
		return fmt.Errorf("cannot open shuffle writer %d: %w", o.WriterID, err)
	}
	w.comp = comp
	w.free = make(chan []byte, 2*o.Partitions)
	w.encs = make([]*rowcodec.Encoder, o.Partitions)
	w.promises = make([]func(*kgo.Record, error), o.Partitions)
	for p := range w.encs {
		w.encs[p] = w.codec.NewEncoder()
		w.promises[p] = w.promise(int32(p))
	}
	return nil
}

// promise returns the completion callback of records to partition p.
func (w *Writer) promise(p int32) func(*kgo.Record, error) {
	return func(r *kgo.Record, err error) {
		defer w.acked()
		if err == nil && r.Partition != p {
			err = fmt.Errorf("the client sent it to partition %d: it must use kgo.ManualPartitioner", r.Partition)
		}
		if err != nil {
			w.fail(fmt.Errorf("cannot write to shuffle topic %s partition %d: %w", w.opts.Topic, p, err))
		}
		if r.Value != nil {
			select {
			case w.free <- r.Value[:0]:
			default:
			}
		}
	}
}

func (w *Writer) fail(err error) {
	w.errMu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.errMu.Unlock()
}

func (w *Writer) failure() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// Process implements exec.Operator.
func (w *Writer) Process(b *types.Batch) error {
	if len(b.Rows) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.failure(); err != nil {
		return err
	}
	n := uint64(len(w.encs))
	for i := range b.Rows {
		r := &b.Rows[i]
		var p uint64
		if n > 1 {
			w.key = w.key[:0]
			for _, k := range w.opts.Keys {
				w.key = types.AppendKey(w.key, r.Vals[k])
			}
			p = exec.KeyHash(w.key) % n
		}
		e := w.encs[p]
		if err := e.Append(*r); err != nil {
			return fmt.Errorf("cannot write a row to shuffle topic %s: %w", w.opts.Topic, err)
		}
		w.buffered++
		if e.Len() >= w.opts.BatchBytes {
			w.flushPart(int(p))
		}
	}
	w.stats.rows.Add(int64(len(b.Rows)))
	if w.opts.Linger < 0 {
		w.flushAll()
	} else if w.buffered > 0 {
		w.arm()
	}
	return w.failure()
}

// Watermark implements exec.Operator.
func (w *Writer) Watermark(wm int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.failure(); err != nil {
		return err
	}
	w.wm = max(w.wm, wm)
	if w.wm <= w.sentWM {
		return nil
	}
	switch {
	case w.opts.Linger < 0 || w.wm == exec.MaxWatermark:
		w.flushAll()
	case w.opts.WatermarkInterval < 0 && w.buffered == 0:
		w.sendWatermark()
	default:
		w.arm()
	}
	return w.failure()
}

// SetIdle implements exec.Output.
func (w *Writer) SetIdle(idle bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.failure(); err != nil {
		return err
	}
	if idle == w.idle {
		return nil
	}
	w.idle = idle
	w.flushAll()
	kind := ctlActive
	if idle {
		kind = ctlIdle
	}
	w.sendControl(control{kind: kind})
	return w.failure()
}

// Finish implements exec.Operator: it sends every buffered row and
// watermark and the end-of-input marker, and waits until the broker has
// acknowledged all of them.
func (w *Writer) Finish() error {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	if err := w.failure(); err != nil {
		w.mu.Unlock()
		return err
	}
	w.finished = true
	w.flushAll()
	if !w.opts.Transactional || w.wm == exec.MaxWatermark {
		w.sendControl(control{kind: ctlEnd})
	}
	w.mu.Unlock()
	return w.wait()
}

// Barrier implements exec.BarrierOutput: the rows buffered so far are
// produced into the transaction the checkpoint commits; with Transactional,
// later ones are held until it completed.
func (w *Writer) Barrier(id int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.failure(); err != nil {
		return err
	}
	// Checkpoints run one at a time: the one whose completion would have
	// released the held records is complete, even if its notice has not
	// come yet. They belong to this checkpoint's transaction.
	for _, h := range w.held {
		w.send(h.rec, h.part)
	}
	w.held = w.held[:0]
	w.after = 0
	w.flushData()
	if w.opts.Transactional {
		w.after = id
	}
	return w.failure()
}

// CheckpointComplete implements exec.CheckpointListener: the records held
// since barriers up to id are produced.
func (w *Writer) CheckpointComplete(id int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id < 0 || w.after <= id {
		w.after = 0
	}
	n := 0
	for _, h := range w.held {
		if id >= 0 && h.epoch > id {
			break
		}
		w.send(h.rec, h.part)
		n++
	}
	w.held = append(w.held[:0], w.held[n:]...)
	return w.failure()
}

// Release implements exec.Releaser: at the end of a job, every held
// record is produced, before the final commit.
func (w *Writer) Release() error {
	if err := w.CheckpointComplete(-1); err != nil {
		return err
	}
	return w.wait()
}

// Flush sends every buffered row and watermark and waits until the broker
// has acknowledged all records written so far.
func (w *Writer) Flush() error {
	w.mu.Lock()
	if err := w.failure(); err != nil {
		w.mu.Unlock()
		return err
	}
	w.flushAll()
	w.mu.Unlock()
	return w.wait()
}

// produce sends r, or holds it back while a checkpoint completes. Called
// with mu held.
func (w *Writer) produce(r *kgo.Record, p int) {
	if w.after > 0 {
		w.held = append(w.held, heldRecord{epoch: w.after, rec: r, part: p})
		return
	}
	w.send(r, p)
}

// send produces r; its promise calls acked.
func (w *Writer) send(r *kgo.Record, p int) {
	w.inflightMu.Lock()
	if w.inflight == 0 {
		w.drained = make(chan struct{})
	}
	w.inflight++
	w.inflightMu.Unlock()
	if g := w.opts.Gate; g != nil {
		g.RLock()
		defer g.RUnlock()
	}
	w.cl.Produce(w.ctx, r, w.promises[p])
}

func (w *Writer) acked() {
	w.inflightMu.Lock()
	w.inflight--
	if w.inflight == 0 {
		close(w.drained)
	}
	w.inflightMu.Unlock()
}

// wait waits until no record is in flight.
func (w *Writer) wait() error {
	w.inflightMu.Lock()
	n, drained := w.inflight, w.drained
	w.inflightMu.Unlock()
	if n > 0 {
		select {
		case <-drained:
		case <-w.ctx.Done():
			return context.Cause(w.ctx)
		}
	}
	return w.failure()
}

// Close implements exec.Operator. It does not wait for records in flight;
// Finish does.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.finished = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	if w.ownsCl && w.cl != nil {
		w.cl.Close()
	}
	if w.comp != nil {
		w.comp.close()
	}
	return nil
}

// Stats returns the writer's counters; safe to call at any time.
func (w *Writer) Stats() WriterStats {
	return WriterStats{
		Rows:           w.stats.rows.Load(),
		DataRecords:    w.stats.data.Load(),
		ControlRecords: w.stats.control.Load(),
		PayloadBytes:   w.stats.payload.Load(),
		RecordBytes:    w.stats.record.Load(),
	}
}

// arm starts the linger timer unless it runs. Called with mu held.
func (w *Writer) arm() {
	if w.armed || w.finished {
		return
	}
	w.armed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(w.opts.Linger, w.onLinger)
	} else {
		w.timer.Reset(w.opts.Linger)
	}
}

// onLinger sends the rows that lingered, and the watermark if its interval
// has passed; a watermark still waiting keeps the timer going.
func (w *Writer) onLinger() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.finished || w.failure() != nil {
		return
	}
	w.flushData()
	if w.wm > w.sentWM {
		if time.Since(w.sentAt) >= w.opts.WatermarkInterval {
			w.sendWatermark()
		} else {
			w.arm()
		}
	}
}

// flushAll sends every partition's rows, then the watermark if it
// advanced. Called with mu held.
func (w *Writer) flushAll() {
	w.flushData()
	w.sendWatermark()
}

// flushData sends every partition's rows. Called with mu held.
func (w *Writer) flushData() {
	if w.buffered > 0 {
		for p := range w.encs {
			w.flushPart(p)
		}
	}
}

// sendWatermark sends the watermark if it advanced. Called with mu held,
// after flushData.
func (w *Writer) sendWatermark() {
	if w.wm > w.sentWM {
		w.sentWM, w.sentAt = w.wm, time.Now()
		w.sendControl(control{kind: ctlWatermark, wm: w.wm})
	}
}

// flushPart sends partition p's rows as one record. Called with mu held.
func (w *Writer) flushPart(p int) {
	e := w.encs[p]
	if e.Rows() == 0 {
		return
	}
	var buf []byte
	select {
	case buf = <-w.free:
	default:
	}
	payload := e.Bytes()
	buf = w.comp.appendRecord(buf, payload)
	w.buffered -= e.Rows()
	w.stats.data.Add(1)
	w.stats.payload.Add(int64(len(payload)))
	w.stats.record.Add(int64(len(buf)))
	e.Reset()
	w.produce(&kgo.Record{Topic: w.opts.Topic, Partition: int32(p), Value: buf}, p)
}

// sendControl writes a control record to every partition. Called with mu
// held, after flushAll, so that it follows this writer's rows.
func (w *Writer) sendControl(c control) {
	c.writer, c.writers = w.opts.WriterID, w.opts.Writers
	v := appendControl(nil, c)
	for p := range w.encs {
		w.stats.control.Add(1)
		w.produce(&kgo.Record{
			Topic:     w.opts.Topic,
			Partition: int32(p),
			Headers:   []kgo.RecordHeader{{Key: ControlHeader, Value: v}},
		}, p)
	}
}

var (
	_ exec.Output             = (*Writer)(nil)
	_ exec.BarrierOutput      = (*Writer)(nil)
	_ exec.CheckpointListener = (*Writer)(nil)
	_ exec.Releaser           = (*Writer)(nil)
)
