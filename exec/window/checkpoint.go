package window

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// The store layout is described in doc.go. Every record's value starts
// with stateVersion.

// Store key prefixes.
const (
	metaKey    = 'm' // the meta record
	sliceKey   = 's' // a slice's entry: 's' + time(slice end) + encoded key
	windowKey  = 'w' // an attached window's entry: 'w' + time(end) + time(start) + encoded key
	cumKey     = 'c' // a CUMULATE window's running entry: 'c' + time(start) + encoded key
	sessionKey = 'x' // a session of a session aggregate: 'x' + uint64(id)
	rowKey     = 'r' // a row buffered by the SESSION assigner: 'r' + uint64(seq)
)

const stateVersion = 1

var errCorrupt = errors.New("corrupt window state")

var (
	_ exec.Checkpointer = (*slicingAggregate)(nil)
	_ exec.Checkpointer = (*attachedAggregate)(nil)
	_ exec.Checkpointer = (*sessionAggregate)(nil)
	_ exec.Checkpointer = (*sessionAssign)(nil)
)

// dirtyLimit bounds the list of units (entries, sessions, rows) changed
// since the last checkpoint, given the number of live ones. A longer list
// is mostly units that are gone already, so writing every live unit costs
// no more than walking it: the operator stops listing and its next
// checkpoint writes everything live. This also bounds the list of a job
// that restored state but takes no more checkpoints.
func dirtyLimit(live int) int { return 2*live + 4096 }

// metaState is what the meta record holds besides the fingerprint.
type metaState struct {
	valid bool // written or restored
	// wm is the watermark, or once the operator ended the last instant
	// of the last window it emitted: every window up to it has fired.
	wm      int64
	counter uint64 // the next session ID (session aggregate), the last seq (assigner)
}

// checkpointWM is the watermark a checkpoint records: once the input ended
// (MaxWatermark), the last instant of the last window that fired.
func checkpointWM(wm int64, ended bool, endMark int64) int64 {
	if ended {
		return endMark
	}
	return wm
}

// aggFingerprint describes what the state of a window aggregate depends
// on, so that state written for another window or other calls is refused.
func aggFingerprint(cfg AggregateConfig) []byte {
	fp := append([]byte("agg"), specFingerprint(cfg.Spec, cfg.Zone)...)
	fp = binary.AppendUvarint(fp, uint64(len(cfg.Keys)))
	fp = binary.AppendUvarint(fp, uint64(len(cfg.PartitionKeys)))
	if cfg.Attached {
		fp = append(fp, "attached"...)
	}
	for _, c := range cfg.Calls {
		fp = binary.AppendUvarint(fp, uint64(len(c.Func.Name())))
		fp = append(fp, c.Func.Name()...)
	}
	return fp
}

func assignFingerprint(cfg AssignConfig) []byte {
	fp := append([]byte("assign"), specFingerprint(cfg.Spec, cfg.Zone)...)
	return binary.AppendUvarint(fp, uint64(len(cfg.PartitionKeys)))
}

// specFingerprint identifies the windows of s. Windows aligned in a time
// zone other than UTC are another job's in another zone: their state
// holds wall-clock times of that zone.
func specFingerprint(s Spec, loc *time.Location) []byte {
	fp := binary.AppendUvarint(nil, uint64(s.Kind))
	for _, d := range []int64{s.Size, s.Slide, s.Step, s.Gap, s.Offset} {
		fp = binary.AppendVarint(fp, d)
	}
	if z := specZone(s, loc); z != nil {
		fp = append(fp, "zone "+z.loc.String()...)
	}
	return fp
}

// writeMeta writes the meta record m if it differs from last, the one in
// the store.
func writeMeta(st state.Store, fp []byte, last *metaState, m metaState, buf []byte) ([]byte, error) {
	m.valid = true
	if *last == m {
		return buf, nil
	}
	buf = append(buf[:0], stateVersion)
	buf = binary.AppendUvarint(buf, uint64(len(fp)))
	buf = append(buf, fp...)
	buf = binary.AppendVarint(buf, m.wm)
	buf = binary.AppendUvarint(buf, m.counter)
	if err := st.Put([]byte{metaKey}, buf); err != nil {
		return buf, err
	}
	*last = m
	return buf, nil
}

// readMeta reads the meta record; ok is false when there is none (no
// checkpoint was taken).
func readMeta(st state.Store, fp []byte) (m metaState, ok bool, err error) {
	v, ok, err := st.Get([]byte{metaKey})
	if err != nil || !ok {
		return m, false, err
	}
	if len(v) == 0 || v[0] != stateVersion {
		return m, false, fmt.Errorf("cannot read the meta record: %w", errCorrupt)
	}
	v = v[1:]
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k) {
		return m, false, fmt.Errorf("cannot read the meta record: %w", errCorrupt)
	}
	if !bytes.Equal(v[k:k+int(n)], fp) {
		return m, false, errors.New("the stored state was written for another window or other aggregate calls")
	}
	v = v[k+int(n):]
	if m.wm, k = binary.Varint(v); k <= 0 {
		return m, false, fmt.Errorf("cannot read the meta record: %w", errCorrupt)
	}
	v = v[k:]
	if m.counter, k = binary.Uvarint(v); k <= 0 || len(v) != k {
		return m, false, fmt.Errorf("cannot read the meta record: %w", errCorrupt)
	}
	m.valid = true
	return m, true, nil
}

// appendTime appends t so that keys sort by time, negative times first.
func appendTime(dst []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
}

func readTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// scanAll calls fn for every record under prefix and returns the first
// error of either.
func scanAll(st state.Store, prefix byte, fn func(key, val []byte) error) error {
	var failed error
	err := st.Scan([]byte{prefix}, func(key, val []byte) bool {
		failed = fn(key, val)
		return failed == nil
	})
	if err != nil {
		return err
	}
	return failed
}

// appendEntry appends the key values and accumulator states of e.
func (b *aggBase) appendEntry(dst []byte, e *entry) []byte {
	for _, v := range e.vals {
		dst = agg.AppendStateValue(dst, v)
	}
	for _, a := range e.group {
		b.accEnc = a.AppendState(b.accEnc[:0])
		dst = binary.AppendUvarint(dst, uint64(len(b.accEnc)))
		dst = append(dst, b.accEnc...)
	}
	return dst
}

// decodeEntry reads an entry written by appendEntry from the front of src.
func (b *aggBase) decodeEntry(key string, src []byte) (*entry, []byte, error) {
	e := b.emptyEntry()
	e.key = key
	var err error
	for i := range e.vals {
		if e.vals[i], src, err = agg.DecodeStateValue(src); err != nil {
			b.release(e)
			return nil, nil, err
		}
	}
	for _, a := range e.group {
		l, n := binary.Uvarint(src)
		if n <= 0 || l > uint64(len(src)-n) {
			b.release(e)
			return nil, nil, errCorrupt
		}
		if err := a.LoadState(src[n : n+int(l)]); err != nil {
			b.release(e)
			return nil, nil, err
		}
		src = src[n+int(l):]
	}
	return e, src, nil
}

// entryKey returns the store key of the entry key at h, in a scratch
// buffer.
func (b *aggBase) entryKey(h home, key string) []byte {
	k := append(b.keyEnc[:0], h.prefix)
	k = appendTime(k, h.at)
	k = append(k, key...)
	b.keyEnc = k
	return k
}

// deleteRemoved deletes the stored entries released since the last
// checkpoint.
func (b *aggBase) deleteRemoved() error {
	for _, r := range b.removed {
		if err := b.store.Delete(b.entryKey(r.home, r.key)); err != nil {
			return err
		}
	}
	clear(b.removed)
	b.removed = b.removed[:0]
	return nil
}

// endCheckpoint writes the meta record if it changed and completes the
// store's part of the checkpoint.
func (b *aggBase) endCheckpoint(counter uint64) error {
	var err error
	m := metaState{wm: checkpointWM(b.wm, b.ended, b.endMark), counter: counter}
	b.enc, err = writeMeta(b.store, b.fp, &b.meta, m, b.enc)
	if err != nil {
		return err
	}
	return b.store.Checkpoint()
}

// restoreMeta reads the meta record into the operator; ok is false when
// the store holds no checkpoint.
func (b *aggBase) restoreMeta() (ok bool, err error) {
	if b.store == nil {
		return false, nil
	}
	m, ok, err := readMeta(b.store, b.fp)
	if err != nil || !ok {
		return false, err
	}
	b.meta = m
	b.wm = m.wm
	return true, nil
}

// touch lists e as changed since the last checkpoint.
func (op *aggBase) touch(e *entry) {
	if len(op.dirty) >= dirtyLimit(op.live) {
		clear(op.dirty)
		op.dirty, op.track = op.dirty[:0], false
		return
	}
	e.dirty = true
	op.dirty = append(op.dirty, e)
}

// rehome moves e to another container: its old record, if stored, is
// deleted at the next checkpoint and it is written under h.
func (op *slicingAggregate) rehome(e *entry, h home) {
	if e.stored {
		op.removed = append(op.removed, storedEntry{e.home, e.key})
		e.stored = false
	}
	e.home = h
	if op.track && !e.dirty {
		op.touch(e)
	}
}

// Checkpoint implements exec.Checkpointer: it writes the entries changed
// since the last checkpoint, deletes those of fired windows, writes the
// watermark, and completes the store's checkpoint. Without a state backend
// it does nothing.
func (op *slicingAggregate) Checkpoint() error {
	if op.store == nil {
		return nil
	}
	if err := op.checkpoint(); err != nil {
		return fmt.Errorf("cannot checkpoint %s: %w", op.name, err)
	}
	return nil
}

func (op *slicingAggregate) checkpoint() error {
	if err := op.deleteRemoved(); err != nil {
		return err
	}
	if op.track {
		for i, e := range op.dirty {
			if e.dirty {
				if err := op.putEntry(e); err != nil {
					return err
				}
			}
			op.dirty[i] = nil
		}
	} else {
		for _, s := range op.slices {
			for _, e := range s.m {
				if err := op.putEntry(e); err != nil {
					return err
				}
			}
		}
		for _, c := range op.cums {
			for _, e := range c.running {
				if err := op.putEntry(e); err != nil {
					return err
				}
			}
		}
	}
	op.dirty = op.dirty[:0]
	op.track = true
	return op.endCheckpoint(0)
}

func (op *aggBase) putEntry(e *entry) error {
	op.enc = op.appendEntry(append(op.enc[:0], stateVersion), e)
	if err := op.store.Put(op.entryKey(e.home, e.key), op.enc); err != nil {
		return err
	}
	e.dirty, e.stored = false, true
	return nil
}

// restore loads the state of the last checkpoint: the watermark, the
// slices and (CUMULATE) the running accumulators. Which CUMULATE windows
// are open, and the next window each fires, follow from them and the
// watermark: every window the watermark passed has fired.
func (op *slicingAggregate) restore() error {
	ok, err := op.restoreMeta()
	if err != nil || !ok {
		return err
	}
	load := func(key, val []byte) (*entry, int64, error) {
		if len(key) < 9 || len(val) == 0 || val[0] != stateVersion {
			return nil, 0, errCorrupt
		}
		e, rest, err := op.decodeEntry(string(key[9:]), val[1:])
		if err != nil {
			return nil, 0, err
		}
		if len(rest) != 0 {
			op.release(e)
			return nil, 0, errCorrupt
		}
		at := readTime(key[1:9])
		e.home, e.stored = home{key[0], at}, true
		return e, at, nil
	}
	err = scanAll(op.store, sliceKey, func(key, val []byte) error {
		e, end, err := load(key, val)
		if err != nil {
			return err
		}
		s := op.slices[end]
		if s == nil {
			s = op.newSlice(end)
		}
		s.m[e.key] = e
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot restore slices: %w", err)
	}
	if op.cumulate {
		err = scanAll(op.store, cumKey, func(key, val []byte) error {
			e, start, err := load(key, val)
			if err != nil {
				return err
			}
			op.cumWindow(start).running[e.key] = e
			return nil
		})
		if err != nil {
			return fmt.Errorf("cannot restore cumulating windows: %w", err)
		}
		for end := range op.slices {
			op.cumWindow(alignedStart(end-op.sliceSize, op.offset, op.size))
		}
		for _, c := range op.cums {
			for op.isFired(c.start+c.nextK*op.sliceSize, op.wm) {
				c.nextK++
			}
			if c.nextK > op.nSlices {
				return fmt.Errorf("cannot restore cumulating window at %d: it has fired: %w", c.start, errCorrupt)
			}
		}
	}
	op.updatePending()
	op.track = true
	return nil
}

// cumWindow returns the CUMULATE window starting at start, adding it if
// needed.
func (op *slicingAggregate) cumWindow(start int64) *cumWindow {
	c := op.cums[start]
	if c == nil {
		c = &cumWindow{start: start, nextK: 1, running: op.newMap()}
		op.cums[start] = c
	}
	return c
}

// Checkpoint implements exec.Checkpointer: it writes the sessions changed
// since the last checkpoint, deletes those that merged away or fired,
// writes the watermark, and completes the store's checkpoint. Without a
// state backend it does nothing.
func (op *sessionAggregate) Checkpoint() error {
	if op.store == nil || op.set == nil {
		return nil
	}
	if err := op.checkpoint(); err != nil {
		return fmt.Errorf("cannot checkpoint %s: %w", op.name, err)
	}
	return nil
}

func (op *sessionAggregate) checkpoint() error {
	ss := op.set
	for _, id := range ss.removed {
		if err := op.store.Delete(op.sessionKey(id)); err != nil {
			return err
		}
	}
	ss.removed = ss.removed[:0]
	if ss.track {
		for i, s := range ss.dirty {
			if s.dirty && !s.dead {
				if err := op.putSession(s); err != nil {
					return err
				}
			}
			ss.dirty[i] = nil
		}
	} else if err := ss.each(op.putSession); err != nil {
		return err
	}
	ss.dirty = ss.dirty[:0]
	ss.track = true
	return op.endCheckpoint(ss.nextID)
}

func (op *sessionAggregate) sessionKey(id uint64) []byte {
	op.keyEnc = binary.BigEndian.AppendUint64(append(op.keyEnc[:0], sessionKey), id)
	return op.keyEnc
}

// putSession writes a session: its bounds, its partition key and its
// entries (single mode: the one entry; otherwise a count, then each
// entry's encoded key and the entry).
func (op *sessionAggregate) putSession(s *session[sessionAcc]) error {
	b := append(op.enc[:0], stateVersion)
	b = binary.AppendVarint(b, s.start)
	b = binary.AppendVarint(b, s.end)
	b = binary.AppendUvarint(b, uint64(len(s.part.key)))
	b = append(b, s.part.key...)
	if op.single {
		if e := s.data.one; e != nil {
			b = op.appendEntry(append(b, 1), e)
		} else {
			b = append(b, 0)
		}
	} else {
		b = binary.AppendUvarint(b, uint64(len(s.data.m)))
		for k, e := range s.data.m {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = op.appendEntry(b, e)
		}
	}
	op.enc = b
	if err := op.store.Put(op.sessionKey(s.id), b); err != nil {
		return err
	}
	s.dirty, s.stored = false, true
	return nil
}

// restore loads the sessions of the last checkpoint and the watermark.
func (op *sessionAggregate) restore() error {
	ok, err := op.restoreMeta()
	if err != nil || !ok {
		return err
	}
	err = scanAll(op.store, sessionKey, func(key, val []byte) error {
		if len(key) != 9 || len(val) == 0 || val[0] != stateVersion {
			return errCorrupt
		}
		return op.loadSession(binary.BigEndian.Uint64(key[1:]), val[1:])
	})
	if err != nil {
		return fmt.Errorf("cannot restore sessions: %w", err)
	}
	op.set.sorted()
	op.set.nextID = max(op.set.nextID, op.meta.counter)
	op.set.track = true
	return nil
}

func (op *sessionAggregate) loadSession(id uint64, src []byte) error {
	start, n := binary.Varint(src)
	if n <= 0 {
		return errCorrupt
	}
	src = src[n:]
	end, n := binary.Varint(src)
	if n <= 0 {
		return errCorrupt
	}
	src = src[n:]
	pkey, src, err := readBytes(src)
	if err != nil {
		return err
	}
	var acc sessionAcc
	if op.single {
		if len(src) == 0 {
			return errCorrupt
		}
		has := src[0]
		src = src[1:]
		if has == 1 {
			if acc.one, src, err = op.decodeEntry("", src); err != nil {
				return err
			}
		}
	} else {
		count, n := binary.Uvarint(src)
		if n <= 0 || count > uint64(len(src)) {
			return errCorrupt
		}
		src = src[n:]
		acc.m = make(map[string]*entry, count)
		for range count {
			var k []byte
			if k, src, err = readBytes(src); err != nil {
				return err
			}
			var e *entry
			if e, src, err = op.decodeEntry(string(k), src); err != nil {
				return err
			}
			acc.m[e.key] = e
		}
	}
	if len(src) != 0 {
		return errCorrupt
	}
	s := op.set.restore(id, string(pkey), start, end, acc)
	if s.data.one != nil {
		// The entry's key is its partition's: share the string.
		s.data.one.key = s.part.key
	}
	return nil
}

func readBytes(src []byte) (b, rest []byte, err error) {
	n, k := binary.Uvarint(src)
	if k <= 0 || n > uint64(len(src)-k) {
		return nil, nil, errCorrupt
	}
	return src[k : k+int(n)], src[k+int(n):], nil
}

// keep lists a row buffered since the last checkpoint.
func (a *sessionAssign) keep(r bufferedRow) {
	if len(a.fresh) >= dirtyLimit(a.buffered) {
		clear(a.fresh)
		a.fresh, a.gone, a.track = a.fresh[:0], a.gone[:0], false
		return
	}
	a.fresh = append(a.fresh, r)
	a.gone = append(a.gone, false)
}

// forget notes that the row seq left the buffer.
func (a *sessionAssign) forget(seq int64) {
	switch {
	case seq <= a.storedSeq:
		a.removed = append(a.removed, seq)
	case a.track:
		a.gone[seq-a.storedSeq-1] = true
	}
}

// Checkpoint implements exec.Checkpointer: it writes the rows buffered
// since the last checkpoint that are still buffered, deletes the stored
// rows that were emitted, writes the watermark, and completes the store's
// checkpoint. Without a state backend or an ID it does nothing.
func (a *sessionAssign) Checkpoint() error {
	if a.store == nil || a.set == nil {
		return nil
	}
	if err := a.checkpoint(); err != nil {
		return fmt.Errorf("cannot checkpoint %s: %w", a.name, err)
	}
	return nil
}

func (a *sessionAssign) checkpoint() error {
	for _, seq := range a.removed {
		if err := a.store.Delete(a.rowKey(seq)); err != nil {
			return err
		}
	}
	a.removed = a.removed[:0]
	if a.track {
		for i := range a.fresh {
			if !a.gone[i] {
				if err := a.putRow(&a.fresh[i]); err != nil {
					return err
				}
			}
		}
	} else {
		err := a.set.each(func(s *session[[]bufferedRow]) error {
			for i := range s.data {
				if s.data[i].seq > a.storedSeq {
					if err := a.putRow(&s.data[i]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	clear(a.fresh)
	a.fresh, a.gone = a.fresh[:0], a.gone[:0]
	a.storedSeq, a.track = a.seq, true
	var err error
	m := metaState{wm: checkpointWM(a.wm, a.ended, a.endMark), counter: uint64(a.seq)}
	a.enc, err = writeMeta(a.store, a.fp, &a.meta, m, a.enc)
	if err != nil {
		return err
	}
	return a.store.Checkpoint()
}

func (a *sessionAssign) rowKey(seq int64) []byte {
	a.keyEnc = binary.BigEndian.AppendUint64(append(a.keyEnc[:0], rowKey), uint64(seq))
	return a.keyEnc
}

// putRow writes a buffered row: its kind and its values.
func (a *sessionAssign) putRow(r *bufferedRow) error {
	b := append(a.enc[:0], stateVersion, byte(r.kind))
	b = binary.AppendUvarint(b, uint64(len(r.vals)))
	for _, v := range r.vals {
		b = agg.AppendStateValue(b, v)
	}
	a.enc = b
	return a.store.Put(a.rowKey(r.seq), b)
}

// restore loads the buffered rows of the last checkpoint and the
// watermark. Sessions are not stored: the sessions of a partition key are
// the unions of the overlapping windows [t, t+gap] of its rows, whatever
// order the rows come in, so adding the rows again rebuilds them.
func (a *sessionAssign) restore() error {
	if a.store == nil {
		return nil
	}
	m, ok, err := readMeta(a.store, a.fp)
	if err != nil || !ok {
		return err
	}
	a.meta = m
	a.wm, a.seq = m.wm, int64(m.counter)
	err = scanAll(a.store, rowKey, func(key, val []byte) error {
		if len(key) != 9 || len(val) < 2 || val[0] != stateVersion {
			return errCorrupt
		}
		return a.loadRow(int64(binary.BigEndian.Uint64(key[1:])), types.RowKind(val[1]), val[2:])
	})
	if err != nil {
		return fmt.Errorf("cannot restore buffered rows: %w", err)
	}
	a.storedSeq, a.track = a.seq, true
	return nil
}

func (a *sessionAssign) loadRow(seq int64, kind types.RowKind, src []byte) error {
	n, k := binary.Uvarint(src)
	if k <= 0 || n > uint64(len(src)) || seq > a.seq {
		return errCorrupt
	}
	src = src[k:]
	vals := make([]types.Value, n)
	var err error
	for i := range vals {
		if vals[i], src, err = agg.DecodeStateValue(src); err != nil {
			return err
		}
	}
	if len(src) != 0 {
		return errCorrupt
	}
	r := types.Row{Kind: kind, Vals: vals}
	t, err := a.time(&r)
	if err != nil {
		return err
	}
	buf := a.keyBuf[:0]
	for _, c := range a.cfg.PartitionKeys {
		buf = types.AppendKey(buf, vals[c])
	}
	a.keyBuf = buf
	// Stored rows belong to live sessions: none is late.
	s, err := a.set.add(buf, t, exec.MinWatermark, newRows)
	if err != nil {
		return err
	}
	s.data = append(s.data, bufferedRow{seq: seq, kind: kind, vals: vals})
	a.buffered++
	return nil
}
