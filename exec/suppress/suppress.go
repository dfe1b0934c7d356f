// Package suppress lets through, of a ruleset's alerts, at most one per
// key set per interval, and counts the others (CREATE RULESET ...
// SUPPRESS BY, plan.Suppress).
//
// Per key set it keeps when its interval began and how many alerts it
// has suppressed since the last one it let through. An alert of a key
// set without an interval, or at or after the end of its interval, is
// let through carrying that count and opens a new interval; an alert
// within it is dropped and counted.
//
// Invariants:
//   - Time is the alert's event-time attribute, or processing time
//     (Config.TimeCol < 0). An alert whose event time is NULL is let
//     through with a count of 0 and changes nothing.
//   - A key set whose interval is over and that has suppressed nothing
//     since is forgotten (its next alert would be let through with a
//     count of 0 either way), once the watermark (or the clock) passes
//     the interval's end; a key set with a count is kept until its next
//     alert, or until Config.TTL has passed since its last alert.
//   - Replays are dropped by origin offset, as in every stateful
//     operator; Checkpoint writes the key sets changed since the last
//     one and deletes those forgotten.
package suppress

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Config configures a Suppress operator.
type Config struct {
	// ID names its state (see exec.OpenState).
	ID string
	// Keys are the columns of the key set.
	Keys []int
	// Interval is in microseconds, above 0.
	Interval int64
	// TimeCol is the event-time column that times the alerts, or -1:
	// processing time.
	TimeCol int
	// CountCol is the column the count of suppressed alerts goes to.
	CountCol int
	// TTL, if positive, forgets a key set whose last alert is that old
	// (in the time of the alerts), with its count.
	TTL  time.Duration
	Next exec.Operator
}

// entry is the state of a key set.
type entry struct {
	start int64 // when its interval began
	count int64 // alerts suppressed since the last one let through
	last  int64 // when its last alert came
	dirty bool  // changed since the last checkpoint
}

// Operator is a running Suppress.
type Operator struct {
	cfg  Config
	keys map[string]*entry
	// dirty lists the key sets changed since the last checkpoint, gone
	// those forgotten.
	dirty, gone []string

	now     func() int64
	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics
	gauge   *exec.StateGauge
	bytes   int64

	// wm is the last watermark (event time); swept when the key sets
	// were last looked over for those to forget.
	wm, swept int64
	out       types.Batch
	keyBuf    []byte
}

// New returns a Suppress operator.
func New(cfg Config) (*Operator, error) {
	if cfg.Interval <= 0 {
		return nil, errors.New("suppress: the interval must be positive")
	}
	if len(cfg.Keys) == 0 {
		return nil, errors.New("suppress: no key columns")
	}
	return &Operator{cfg: cfg, keys: map[string]*entry{}, wm: exec.MinWatermark}, nil
}

// Open implements exec.Operator: it restores the last checkpoint.
func (o *Operator) Open(ctx *exec.Context) error {
	o.now = func() int64 { return time.Now().UnixMicro() }
	if ctx != nil {
		o.metrics = ctx.Metrics
		if ctx.Now != nil {
			o.now = ctx.Now
		}
	}
	o.gauge = ctx.StateGauge("Suppress")
	if err := exec.OpenState(ctx, o.cfg.ID, "Suppress "+o.cfg.ID, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	o.report()
	if o.cfg.TimeCol < 0 {
		o.swept = o.now()
	}
	return o.cfg.Next.Open(ctx)
}

// entryBytes estimates the memory of a key set beside its key.
const entryBytes = 80

func (o *Operator) report() { o.gauge.Set(int64(len(o.keys)), o.bytes) }

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	o.out.Truncate()
	var now int64
	if o.cfg.TimeCol < 0 {
		now = o.now()
	}
	suppressed := int64(0)
	for i := range b.Rows {
		r := &b.Rows[i]
		if !o.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
			o.metrics.Replayed()
			continue
		}
		t := now
		if o.cfg.TimeCol >= 0 {
			v := r.Vals[o.cfg.TimeCol]
			if v.IsNull() {
				o.emit(r, 0)
				continue
			}
			t = v.Int()
		}
		o.keyBuf = o.keyBuf[:0]
		for _, c := range o.cfg.Keys {
			o.keyBuf = types.AppendKey(o.keyBuf, r.Vals[c])
		}
		e := o.keys[string(o.keyBuf)]
		if e == nil {
			key := string(o.keyBuf)
			e = &entry{}
			o.keys[key] = e
			o.bytes += int64(len(key)) + entryBytes
			o.touch(e, key)
			e.start, e.last = t, t
			o.emit(r, 0)
			continue
		}
		o.touch(e, "")
		e.last = max(e.last, t)
		if t < e.start+o.cfg.Interval {
			e.count++
			suppressed++
			continue
		}
		o.emit(r, e.count)
		e.start, e.count = t, 0
	}
	if suppressed > 0 && o.metrics != nil {
		o.metrics.SuppressedAlerts.Add(suppressed)
	}
	o.report()
	if len(o.out.Rows) == 0 {
		return nil
	}
	return o.cfg.Next.Process(&o.out)
}

// touch marks e, whose key is key or in keyBuf, as changed.
func (o *Operator) touch(e *entry, key string) {
	if e.dirty || o.store == nil {
		return
	}
	e.dirty = true
	if key == "" {
		key = string(o.keyBuf)
	}
	o.dirty = append(o.dirty, key)
}

// emit passes on alert r with count in its count column.
func (o *Operator) emit(r *types.Row, count int64) {
	vals := o.out.AddRow(r.Kind, r.Origin, len(r.Vals))
	copy(vals, r.Vals)
	vals[o.cfg.CountCol] = types.IntValue(types.KindBigInt, count)
}

// Watermark implements exec.Operator: under event time, the key sets
// whose intervals the watermark has passed are forgotten (not at the end
// of input, after which a job that resumes may still read alerts within
// them).
func (o *Operator) Watermark(wm int64) error {
	if o.cfg.TimeCol >= 0 && wm != exec.MaxWatermark && wm > o.wm {
		o.wm = wm
		if o.swept == 0 || wm-o.swept >= o.cfg.Interval {
			o.sweep(wm)
		}
	}
	return o.cfg.Next.Watermark(wm)
}

// TickEvery implements exec.Timed: under processing time, key sets are
// forgotten as the clock passes their intervals.
func (o *Operator) TickEvery() time.Duration {
	if o.cfg.TimeCol >= 0 {
		return 0
	}
	return min(max(time.Duration(o.cfg.Interval)*time.Microsecond/2, 10*time.Millisecond), time.Second)
}

// Tick implements exec.Timed.
func (o *Operator) Tick() error {
	if now := o.now(); now-o.swept >= o.cfg.Interval {
		o.sweep(now)
	}
	return nil
}

// sweep forgets the key sets that have nothing to carry past now: those
// whose interval is over with no alert suppressed, and those whose last
// alert is older than the TTL.
func (o *Operator) sweep(now int64) {
	o.swept = now
	ttl := o.cfg.TTL.Microseconds()
	for key, e := range o.keys {
		if e.count == 0 && now >= e.start+o.cfg.Interval || ttl > 0 && now-e.last >= ttl {
			if e.count > 0 && o.metrics != nil {
				o.metrics.ExpiredKeys.Add(1)
			}
			delete(o.keys, key)
			o.bytes -= int64(len(key)) + entryBytes
			if o.store != nil {
				o.gone = append(o.gone, key)
			}
		}
	}
	o.report()
}

// Finish implements exec.Operator.
func (o *Operator) Finish() error { return o.cfg.Next.Finish() }

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.keys = nil
	return o.cfg.Next.Close()
}

// Store layout: one record per key set, key = the key set's encoding
// (types.AppendKey of its columns), value = varint start, uvarint count,
// varint last.

// Checkpoint implements exec.Checkpointer.
func (o *Operator) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	for _, key := range o.gone {
		if err := o.store.Delete([]byte(key)); err != nil {
			return err
		}
	}
	o.gone = o.gone[:0]
	var buf []byte
	for _, key := range o.dirty {
		e := o.keys[key]
		if e == nil || !e.dirty {
			continue // forgotten since, or written already
		}
		e.dirty = false
		buf = binary.AppendVarint(buf[:0], e.start)
		buf = binary.AppendUvarint(buf, uint64(e.count))
		buf = binary.AppendVarint(buf, e.last)
		if err := o.store.Put([]byte(key), buf); err != nil {
			return err
		}
	}
	o.dirty = o.dirty[:0]
	return o.store.Checkpoint()
}

func (o *Operator) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		start, n1 := binary.Varint(v)
		count, n2 := uint64(0), 0
		if n1 > 0 {
			count, n2 = binary.Uvarint(v[n1:])
		}
		last, n3 := int64(0), 0
		if n1 > 0 && n2 > 0 {
			last, n3 = binary.Varint(v[n1+n2:])
		}
		if n1 <= 0 || n2 <= 0 || n3 <= 0 {
			ferr = errors.New("corrupt record of a key set")
			return false
		}
		o.keys[string(k)] = &entry{start: start, count: int64(count), last: last}
		o.bytes += int64(len(k)) + entryBytes
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}
