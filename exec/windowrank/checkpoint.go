package windowrank

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// The store layout is described in doc.go.

const (
	metaKey      = 'm'
	partKey      = 'p'
	stateVersion = 1
)

var errCorrupt = errors.New("corrupt window Top-N state")

var _ exec.Checkpointer = (*Operator)(nil)

type meta struct {
	valid bool
	wm    int64
}

// fingerprint describes what the state depends on, so that state written
// for another ranking (a changed job) is refused.
func fingerprint(cfg Config) []byte {
	fp := append([]byte("wrank"), byte(cfg.Type))
	fp = binary.AppendUvarint(fp, uint64(cfg.Limit))
	fp = binary.AppendUvarint(fp, uint64(len(cfg.Types)))
	fp = binary.AppendUvarint(fp, uint64(len(cfg.Partition)))
	for _, k := range cfg.Order {
		fp = binary.AppendUvarint(fp, uint64(k.Col))
		fp = append(fp, map[bool]byte{false: 0, true: 1}[k.Desc], map[bool]byte{false: 0, true: 1}[k.NullsFirst])
	}
	return fp
}

// dirtyLimit bounds the list of partitions changed since the last
// checkpoint, given the number of live ones (see exec/window): past it,
// the next checkpoint writes every live partition instead.
func dirtyLimit(live int) int { return 2*live + 4096 }

func (o *Operator) touch(p *part) {
	if len(o.dirty) >= dirtyLimit(o.live) {
		clear(o.dirty)
		o.dirty, o.track = o.dirty[:0], false
		return
	}
	p.dirty = true
	o.dirty = append(o.dirty, p)
}

func appendTime(dst []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
}

func readTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// partKey appends the store key of p to dst.
func (o *Operator) partKey(dst []byte, p *part) []byte {
	dst = append(dst, partKey)
	dst = appendTime(dst, p.win.end)
	dst = appendTime(dst, p.win.start)
	return append(dst, p.key...)
}

// Checkpoint implements exec.Checkpointer: it writes the partitions
// changed since the last checkpoint, deletes those of fired windows,
// writes the watermark, and completes the store's checkpoint. Without a
// state backend it does nothing.
func (o *Operator) Checkpoint() error {
	if o.store == nil || o.wins == nil {
		return nil
	}
	if err := o.checkpoint(); err != nil {
		return fmt.Errorf("cannot checkpoint %s: %w", o.name, err)
	}
	return nil
}

func (o *Operator) checkpoint() error {
	for i, k := range o.removed {
		if err := o.store.Delete(k); err != nil {
			return err
		}
		o.removed[i] = nil
	}
	o.removed = o.removed[:0]
	if o.track {
		for i, p := range o.dirty {
			if p.dirty {
				if err := o.put(p); err != nil {
					return err
				}
			}
			o.dirty[i] = nil
		}
	} else {
		for _, w := range o.wins {
			for _, p := range w.parts {
				if err := o.put(p); err != nil {
					return err
				}
			}
		}
	}
	o.dirty = o.dirty[:0]
	o.track = true
	m := meta{valid: true, wm: o.wm}
	if o.ended {
		m.wm = o.endMark
	}
	if m != o.meta {
		b := append(o.enc[:0], stateVersion)
		b = binary.AppendUvarint(b, uint64(len(o.fp)))
		b = append(b, o.fp...)
		b = binary.AppendVarint(b, m.wm)
		o.enc = b
		if err := o.store.Put([]byte{metaKey}, b); err != nil {
			return err
		}
		o.meta = m
	}
	return o.store.Checkpoint()
}

// put writes p: its number of rows, then the rows.
func (o *Operator) put(p *part) error {
	o.encoder.Reset()
	for i := range p.n {
		if err := o.encoder.Append(types.Row{Kind: types.Insert, Origin: types.NoOrigin, Vals: o.row(p, i)}); err != nil {
			return err
		}
	}
	b := append(o.enc[:0], stateVersion)
	b = binary.AppendUvarint(b, uint64(p.n))
	b = append(b, o.encoder.Bytes()...)
	o.enc = b
	o.keyEnc = o.partKey(o.keyEnc[:0], p)
	if err := o.store.Put(o.keyEnc, b); err != nil {
		return err
	}
	p.dirty, p.stored = false, true
	return nil
}

// restore loads the last checkpoint: the watermark and every partition of
// the open windows.
func (o *Operator) restore() error {
	v, ok, err := o.store.Get([]byte{metaKey})
	if err != nil || !ok {
		return err
	}
	if len(v) == 0 || v[0] != stateVersion {
		return errCorrupt
	}
	v = v[1:]
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k) {
		return errCorrupt
	}
	if !bytes.Equal(v[k:k+int(n)], o.fp) {
		return errors.New("the stored state was written for another window Top-N")
	}
	v = v[k+int(n):]
	wm, k := binary.Varint(v)
	if k <= 0 || k != len(v) {
		return errCorrupt
	}
	o.wm, o.meta = wm, meta{valid: true, wm: wm}
	var failed error
	err = o.store.Scan([]byte{partKey}, func(key, val []byte) bool {
		failed = o.load(key, val)
		return failed == nil
	})
	if err != nil {
		return err
	}
	if failed != nil {
		return failed
	}
	o.track = true
	return nil
}

func (o *Operator) load(key, val []byte) error {
	if len(key) < 17 || len(val) == 0 || val[0] != stateVersion {
		return errCorrupt
	}
	wk := winKey{end: readTime(key[1:9]), start: readTime(key[9:17])}
	n, m := binary.Uvarint(val[1:])
	if m <= 0 || n > uint64(len(val)) {
		return errCorrupt
	}
	b := types.NewBatch(int(n), o.width)
	got, err := o.codec.Decode(b, val[1+m:])
	if err != nil {
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if got != int(n) {
		return errCorrupt
	}
	w := o.wins[wk]
	if w == nil {
		w = &win{key: wk, parts: map[string]*part{}}
		o.wins[wk] = w
	}
	p := o.newPart(string(key[17:]), wk)
	p.vals = make([]types.Value, 0, (int(n)+1)*o.width)
	for _, r := range b.Rows {
		p.vals = append(p.vals, r.Vals...)
	}
	p.n, p.stored = int(n), true
	p.groups = o.groups(p, p.n)
	w.parts[p.key] = p
	return nil
}
