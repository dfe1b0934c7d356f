package join

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// WindowConfig configures a window join: two inputs windowed alike, whose
// rows join when they are in the same window (equal window_start and
// window_end) and have equal keys.
type WindowConfig struct {
	Config
	// LeftStart, LeftEnd, RightStart and RightEnd are the window_start and
	// window_end columns of each side.
	LeftStart, LeftEnd, RightStart, RightEnd int
	// Zone, if set, is the session time zone whose wall-clock times the
	// window bounds are (windows over a TIMESTAMP_LTZ time attribute): a
	// window fires when the watermark reaches the instant of its last
	// millisecond there (window.Zone). Nil: the bounds are instants.
	Zone *time.Location
}

// Window is a running window join.
//
// Invariants:
//   - A row is buffered in its window (its side's window_start and
//     window_end) until the watermark passes the window's last instant
//     (window_end - 1 ms); then the window's two sides are joined, the
//     result emitted and the window's rows freed. Windows fire in order
//     of end, then start.
//   - Output is append-only: joined rows, an outer side's unmatched rows
//     padded with NULLs, and for SEMI and ANTI joins the left rows that
//     have (or have not) a match; nothing is retracted.
//   - A row of a window that has fired is late: dropped and counted in
//     Metrics.LateRows. The watermark is kept in the checkpoint, so a
//     restored operator fires no window twice.
//   - A key with a NULL column matches nothing, unless the keys are
//     NULL-safe; a null-aware join's last key pair matches when equal or
//     when either is NULL (its rows are hashed by the other keys).
//   - Checkpoints are incremental: the rows buffered since the last one, a
//     record per window and side; a fired window's records are deleted.
type Window struct {
	pairs
	sides   [2]wside
	windows map[wkey]*wwin
	wm      int64
	ended   bool
	stopped func() bool
	zone    *window.Zone

	seed  maphash.Seed
	head  map[uint64]int32 // scratch: the build side's rows by key hash
	next  []int32          // scratch: the chain of rows with the same hash
	match []bool           // scratch: which build rows matched
	fires []*wwin          // scratch
	gone  []gone
	// free holds the buffers of fired windows for the next ones: windows
	// are alike in size, so after the first few no buffer grows.
	free []*wwin
}

type wside struct {
	keys       []int
	na         int // the null-aware key column, or -1
	start, end int
	width      int
	codec      *rowcodec.Codec
}

type wkey struct{ start, end int64 }

// wwin is a window's buffered rows.
type wwin struct {
	key   wkey
	sides [2]wrows
}

// wrows is one side's rows of a window, in arrival order: their values
// back to back, their key encodings back to back (row i's is
// keys[span[i][0]:span[i][1]]; span[i][0] is -1 for a NULL key).
type wrows struct {
	vals []types.Value
	keys []byte
	span [][2]int32
	// stored rows are in the store already, in chunks records.
	stored, chunks int
}

func (w *wrows) n() int { return len(w.span) }

// key returns row i's key encoding; ok is false when the key is NULL.
func (w *wrows) key(i int) (k []byte, ok bool) {
	sp := w.span[i]
	if sp[0] < 0 {
		return nil, false
	}
	return w.keys[sp[0]:sp[1]], true
}

// gone is a fired window whose records the next checkpoint deletes.
type gone struct {
	key    wkey
	chunks [2]int
}

// NewWindow returns a window join operator.
func NewWindow(cfg WindowConfig) (*Window, error) {
	if len(cfg.LeftKeys) != len(cfg.RightKeys) {
		return nil, errors.New("window join: as many keys on each side")
	}
	if cfg.Kind > Anti {
		return nil, fmt.Errorf("window join: unknown kind %d", cfg.Kind)
	}
	if cfg.NullAware && (cfg.Kind != Anti || cfg.NullSafe || len(cfg.LeftKeys) == 0) {
		return nil, errors.New("window join: only an ANTI join with keys, not NULL-safe, can be null-aware")
	}
	o := &Window{pairs: newPairs(cfg.Config), windows: map[wkey]*wwin{}, wm: exec.MinWatermark,
		seed: maphash.MakeSeed(), head: map[uint64]int32{}, zone: window.NewZone(cfg.Zone)}
	for i, typs := range [][]types.Type{cfg.Left, cfg.Right} {
		c, err := rowcodec.New(typs)
		if err != nil {
			return nil, fmt.Errorf("window join: %w", err)
		}
		s := wside{width: len(typs), codec: c, na: -1}
		if i == 0 {
			s.keys, s.start, s.end = cfg.LeftKeys, cfg.LeftStart, cfg.LeftEnd
		} else {
			s.keys, s.start, s.end = cfg.RightKeys, cfg.RightStart, cfg.RightEnd
		}
		if cfg.NullAware {
			n := len(s.keys)
			s.keys, s.na = s.keys[:n-1], s.keys[n-1]
		}
		if s.start < 0 || s.start >= s.width || s.end < 0 || s.end >= s.width {
			return nil, fmt.Errorf("window join: side %d has no window columns %d, %d", i, s.start, s.end)
		}
		o.sides[i] = s
	}
	return o, nil
}

// Open implements exec.Operator: it restores the last checkpoint's rows
// and watermark.
func (o *Window) Open(ctx *exec.Context) error {
	o.stopped = ctx.Stopped
	return o.open(ctx, "window join", o.restore)
}

// ProcessInput implements exec.MultiInput: input 0 is the left side.
func (o *Window) ProcessInput(input int, b *types.Batch) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("window join: no input %d", input)
	}
	s := &o.sides[input]
	for i := range b.Rows {
		r := &b.Rows[i]
		if !o.admit(r) {
			continue
		}
		if r.Kind != types.Insert && r.Kind != types.UpdateAfter {
			return fmt.Errorf("window join: input %d sent a retraction (%s); window joins take append-only inputs", input, r.Kind)
		}
		sv, ev := r.Vals[s.start], r.Vals[s.end]
		if sv.IsNull() || ev.IsNull() || o.zone.Fired(ev.Int(), o.wm) || o.ended {
			if o.metrics != nil {
				o.metrics.LateRows.Add(1)
			}
			continue
		}
		o.add(input, wkey{sv.Int(), ev.Int()}, r.Vals)
	}
	return nil
}

// add buffers a row of side input in window k.
func (o *Window) add(input int, k wkey, vals []types.Value) {
	w := o.windows[k]
	if w == nil {
		if n := len(o.free); n > 0 {
			w, o.free = o.free[n-1], o.free[:n-1]
			w.key = k
		} else {
			w = &wwin{key: k}
		}
		o.windows[k] = w
	}
	rows := &w.sides[input]
	rows.vals = append(rows.vals, vals...)
	from := len(rows.keys)
	sp := [2]int32{int32(from), 0}
	for _, kc := range o.sides[input].keys {
		v := vals[kc]
		if v.IsNull() && !o.cfg.NullSafe {
			rows.keys = rows.keys[:from]
			sp[0] = -1
			break
		}
		rows.keys = types.AppendKey(rows.keys, v)
	}
	sp[1] = int32(len(rows.keys))
	rows.span = append(rows.span, sp)
}

// Watermark implements exec.Operator: it joins and frees every window
// whose last instant the watermark passed, then forwards it.
func (o *Window) Watermark(wm int64) error {
	if wm > o.wm && !o.ended {
		o.wm = wm
		if err := o.fire(wm); err != nil {
			return err
		}
		if wm == exec.MaxWatermark {
			o.ended = true
		}
	}
	return o.cfg.Next.Watermark(wm)
}

// Finish implements exec.Operator: an input that ends fires every open
// window; a stop keeps them for the run that takes over.
func (o *Window) Finish() error {
	if !o.ended && (o.stopped == nil || !o.stopped()) {
		if err := o.fire(exec.MaxWatermark); err != nil {
			return err
		}
		o.ended = true
	}
	return o.pairs.Finish()
}

func (o *Window) fire(wm int64) error {
	fires := o.fires[:0]
	for k, w := range o.windows {
		// The last instant of the window, end - 1 ms (TIMESTAMP(3), in
		// µs, as in exec/window), at or before wm.
		if o.zone.Fired(k.end, wm) {
			fires = append(fires, w)
		}
	}
	slices.SortFunc(fires, func(a, b *wwin) int {
		if c := cmp.Compare(a.key.end, b.key.end); c != 0 {
			return c
		}
		return cmp.Compare(a.key.start, b.key.start)
	})
	for i, w := range fires {
		if err := o.join(w); err != nil {
			return err
		}
		delete(o.windows, w.key)
		if w.sides[0].chunks > 0 || w.sides[1].chunks > 0 {
			o.gone = append(o.gone, gone{w.key, [2]int{w.sides[0].chunks, w.sides[1].chunks}})
		}
		fires[i] = nil
		if len(o.free) < 4 {
			for si := range w.sides {
				r := &w.sides[si]
				clear(r.vals) // let go of strings
				*r = wrows{vals: r.vals[:0], keys: r.keys[:0], span: r.span[:0]}
			}
			o.free = append(o.free, w)
		}
	}
	o.fires = fires[:0]
	return o.flush()
}

// join emits the result of a window: the right rows are indexed by key
// hash, the left rows probe them; pairs come out in the left rows' order,
// then the right rows' within it.
func (o *Window) join(w *wwin) error {
	l, r := &w.sides[0], &w.sides[1]
	lw, rw := o.sides[0].width, o.sides[1].width
	kind := o.cfg.Kind
	clear(o.head)
	nr := r.n()
	o.next = slices.Grow(o.next[:0], nr)[:nr]
	o.match = slices.Grow(o.match[:0], nr)[:nr]
	clear(o.match)
	// Chains run in arrival order: built from the last row back.
	for i := nr - 1; i >= 0; i-- {
		k, ok := r.key(i)
		if !ok {
			continue
		}
		h := maphash.Bytes(o.seed, k)
		if prev, ok := o.head[h]; ok {
			o.next[i] = prev
		} else {
			o.next[i] = -1
		}
		o.head[h] = int32(i)
	}
	for i := range l.n() {
		lv := l.vals[i*lw : (i+1)*lw]
		matched := false
		if lk, ok := l.key(i); ok {
			j, ok := o.head[maphash.Bytes(o.seed, lk)]
			for ; ok && j >= 0; j = o.next[j] {
				if rk, _ := r.key(int(j)); string(rk) != string(lk) {
					continue
				}
				rv := r.vals[int(j)*rw : (int(j)+1)*rw]
				if la := o.sides[0].na; la >= 0 {
					x, y := lv[la], rv[o.sides[1].na]
					if !x.IsNull() && !y.IsNull() && !types.Equal(x, y) {
						continue
					}
				}
				pass, err := o.residual(0, lv, rv)
				if err != nil {
					return err
				}
				if !pass {
					continue
				}
				matched = true
				if kind == Semi || kind == Anti {
					break
				}
				o.match[j] = true
				o.emitJoined(0, lv, rv, types.Insert, 1)
				if err := o.flushIfFull(); err != nil {
					return err
				}
			}
		}
		switch {
		case kind == Semi && matched, kind == Anti && !matched:
			o.emitLeft(lv, types.Insert, 1)
		case (kind == Left || kind == Full) && !matched:
			o.emitPadded(0, lv, types.Insert, 1)
		}
		if err := o.flushIfFull(); err != nil {
			return err
		}
	}
	if kind == Right || kind == Full {
		for j := range nr {
			if !o.match[j] {
				o.emitPadded(1, r.vals[j*rw:(j+1)*rw], types.Insert, 1)
				if err := o.flushIfFull(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Close implements exec.Operator.
func (o *Window) Close() error {
	o.windows = nil
	return o.cfg.Next.Close()
}

// Store layout: the watermark under "w"; the rows of a window's side in
// chunks, each the rows buffered between two checkpoints: key = 'r', side
// byte, window start and end (8 bytes each, big-endian, offset by 2^63),
// chunk number (4 bytes, big-endian); value = the rows (rowcodec).

func chunkKey(buf []byte, side int, k wkey, chunk int) []byte {
	buf = append(buf[:0], 'r', byte(side))
	buf = binary.BigEndian.AppendUint64(buf, uint64(k.start)^(1<<63))
	buf = binary.BigEndian.AppendUint64(buf, uint64(k.end)^(1<<63))
	return binary.BigEndian.AppendUint32(buf, uint32(chunk))
}

// Checkpoint implements exec.Checkpointer.
func (o *Window) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	var kbuf []byte
	for _, g := range o.gone {
		for si, n := range g.chunks {
			for c := range n {
				if err := o.store.Delete(chunkKey(kbuf, si, g.key, c)); err != nil {
					return err
				}
			}
		}
	}
	o.gone = o.gone[:0]
	for k, w := range o.windows {
		for si := range w.sides {
			rows := &w.sides[si]
			if rows.stored == rows.n() {
				continue
			}
			s := &o.sides[si]
			enc := s.codec.NewEncoder()
			for i := rows.stored; i < rows.n(); i++ {
				if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: -1}, Vals: rows.vals[i*s.width : (i+1)*s.width]}); err != nil {
					return err
				}
			}
			kbuf = chunkKey(kbuf, si, k, rows.chunks)
			if err := o.store.Put(kbuf, enc.Bytes()); err != nil {
				return err
			}
			rows.stored, rows.chunks = rows.n(), rows.chunks+1
		}
	}
	if err := o.store.Put([]byte("w"), binary.BigEndian.AppendUint64(nil, uint64(o.wm))); err != nil {
		return err
	}
	return o.store.Checkpoint()
}

func (o *Window) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		switch {
		case len(k) == 1 && k[0] == 'w' && len(v) == 8:
			o.wm = int64(binary.BigEndian.Uint64(v))
		case len(k) == 22 && k[0] == 'r' && k[1] <= 1:
			si := int(k[1])
			wk := wkey{int64(binary.BigEndian.Uint64(k[2:10]) ^ (1 << 63)), int64(binary.BigEndian.Uint64(k[10:18]) ^ (1 << 63))}
			s := &o.sides[si]
			batch := types.NewBatch(16, s.width)
			if _, err := s.codec.Decode(batch, v); err != nil {
				ferr = fmt.Errorf("corrupt rows: %w", err)
				return false
			}
			if len(batch.Rows) == 0 {
				return true
			}
			for _, r := range batch.Rows {
				o.add(si, wk, r.Vals)
			}
			rows := &o.windows[wk].sides[si]
			rows.stored, rows.chunks = rows.n(), int(binary.BigEndian.Uint32(k[18:22]))+1
		default:
			ferr = fmt.Errorf("corrupt key %q", k)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}
