package over

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/types"
)

// Store layout:
//
//	"m"          the watermark (varint): rows at or before it are late
//	"p" + key    one partition: varint last time, then uvarint emitted
//	             flag, then per accumulator (MIN and MAX over a bounded
//	             frame have none) a uvarint length and its state, then uvarint frame rows, their
//	             times (varints), uvarint length and the rows (rowcodec,
//	             the columns the calls read), then uvarint pending rows
//	             and the rows (rowcodec, whole input rows)
//
// A pending row's time is its time column; timers follow from the rows.

var metaKey = []byte("m")

// Checkpoint implements exec.Checkpointer.
func (o *Operator) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	var kbuf, vbuf []byte
	for _, key := range o.dirty {
		kbuf = append(append(kbuf[:0], 'p'), key...)
		p := o.parts[key]
		if p == nil {
			if err := o.store.Delete(kbuf); err != nil {
				return err
			}
			continue
		}
		p.dirty = false
		var err error
		if vbuf, err = o.appendPartition(vbuf[:0], p); err != nil {
			return fmt.Errorf("over: cannot encode a partition: %w", err)
		}
		if err := o.store.Put(kbuf, vbuf); err != nil {
			return err
		}
	}
	o.dirty = o.dirty[:0]
	mark := o.wm
	if o.ended {
		mark = o.mark
	}
	if err := o.store.Put(metaKey, binary.AppendVarint(vbuf[:0], mark)); err != nil {
		return err
	}
	return o.store.Checkpoint()
}

func (o *Operator) appendPartition(dst []byte, p *partition) ([]byte, error) {
	dst = binary.AppendVarint(dst, p.last)
	flag := uint64(0)
	if p.emitted {
		flag = 1
	}
	dst = binary.AppendUvarint(dst, flag)
	for _, a := range p.acc {
		n := len(dst)
		dst = a.AppendState(dst)
		// The length goes before the state: move it up.
		st := append([]byte(nil), dst[n:]...)
		dst = binary.AppendUvarint(dst[:n], uint64(len(st)))
		dst = append(dst, st...)
	}
	f := &p.frame
	dst = binary.AppendUvarint(dst, uint64(f.len()))
	for i := range f.len() {
		dst = binary.AppendVarint(dst, f.time(i))
	}
	enc := o.frCodec.NewEncoder()
	for i := range f.len() {
		if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.NoOrigin, Vals: f.row(i, o.nargs)}); err != nil {
			return nil, err
		}
	}
	dst = binary.AppendUvarint(dst, uint64(enc.Len()))
	dst = append(dst, enc.Bytes()...)
	q := &p.pending
	dst = binary.AppendUvarint(dst, uint64(q.len()))
	enc = o.inCodec.NewEncoder()
	for i := range q.len() {
		if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.NoOrigin, Vals: q.row(i, o.width)}); err != nil {
			return nil, err
		}
	}
	return append(dst, enc.Bytes()...), nil
}

func (o *Operator) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		switch {
		case string(k) == string(metaKey):
			wm, n := binary.Varint(v)
			if n <= 0 {
				ferr = errors.New("corrupt watermark record")
				return false
			}
			o.wm, o.mark = wm, wm
		case len(k) > 0 && k[0] == 'p':
			p := o.newPartition(string(k[1:]))
			if err := o.loadPartition(p, v); err != nil {
				ferr = fmt.Errorf("partition %q: %w", k[1:], err)
				return false
			}
		default:
			ferr = fmt.Errorf("corrupt key %q", k)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	for _, p := range o.parts {
		if p.pending.len() > 0 {
			o.schedule(p, p.pending.ts[p.pending.head])
		}
		o.watchExpiry(p)
	}
	return nil
}

var errCorrupt = errors.New("corrupt record")

func (o *Operator) loadPartition(p *partition, v []byte) error {
	last, n := binary.Varint(v)
	if n <= 0 {
		return errCorrupt
	}
	v = v[n:]
	flag, n := binary.Uvarint(v)
	if n <= 0 {
		return errCorrupt
	}
	v = v[n:]
	p.last, p.emitted = last, flag == 1
	for _, a := range p.acc {
		l, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < l {
			return errCorrupt
		}
		if err := a.LoadState(v[n : n+int(l)]); err != nil {
			return err
		}
		v = v[n+int(l):]
	}
	rows, n := binary.Uvarint(v)
	if n <= 0 || uint64(len(v)-n) < rows {
		return errCorrupt
	}
	v = v[n:]
	ts := make([]int64, rows)
	for i := range ts {
		t, n := binary.Varint(v)
		if n <= 0 {
			return errCorrupt
		}
		ts[i], v = t, v[n:]
	}
	l, n := binary.Uvarint(v)
	if n <= 0 || uint64(len(v)-n) < l {
		return errCorrupt
	}
	if rows > 0 {
		b := types.NewBatch(int(rows), o.nargs)
		got, err := o.frCodec.Decode(b, v[n:n+int(l)])
		if err != nil || got != int(rows) {
			return fmt.Errorf("corrupt frame rows: %v", err)
		}
		for i, r := range b.Rows {
			fr := p.frame.push(ts[i], o.nargs)
			copy(fr, r.Vals)
			o.addExtremes(p, int64(i), fr)
		}
	}
	v = v[n+int(l):]
	rows, n = binary.Uvarint(v)
	if n <= 0 {
		return errCorrupt
	}
	if rows > 0 {
		b := types.NewBatch(int(rows), o.width)
		got, err := o.inCodec.Decode(b, v[n:])
		if err != nil || got != int(rows) {
			return fmt.Errorf("corrupt pending rows: %v", err)
		}
		for _, r := range b.Rows {
			copy(p.pending.push(r.Vals[o.cfg.TimeCol].Int(), o.width), r.Vals)
		}
	}
	return nil
}
