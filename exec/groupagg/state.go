package groupagg

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// Checkpointer is implemented by the operator New returns. The runtime calls
// Checkpoint between batches (from the goroutine that drives the operator).
type Checkpointer interface {
	// Checkpoint writes the groups changed since the last Checkpoint to
	// the operator's store, deletes the forgotten ones, and makes them
	// durable together with the input offsets (state.Store.Checkpoint).
	// Without a state backend it does nothing.
	Checkpoint() error
}

// groupPrefix starts the store key of every group, leaving room for other
// kinds of entries.
const groupPrefix = 'g'

// stateVersion is the first byte of a group's stored value.
const stateVersion = 1

// Checkpoint implements Checkpointer.
func (o *operator) Checkpoint() error {
	defer o.reportState()
	// A pending mini-batch goes out before the barrier: the state written
	// below holds its results as emitted.
	if err := o.emit(); err != nil {
		return err
	}
	if o.store == nil {
		o.forgetDirty()
		return nil
	}
	var key, val []byte
	for _, k := range o.removed {
		key = append(append(key[:0], groupPrefix), k...)
		if err := o.store.Delete(key); err != nil {
			return fmt.Errorf("cannot checkpoint group aggregate %s: %w", o.cfg.ID, err)
		}
	}
	for _, g := range o.dirty {
		if g.removed {
			continue
		}
		key = append(append(key[:0], groupPrefix), g.key...)
		val = o.appendGroup(val[:0], g)
		if err := o.store.Put(key, val); err != nil {
			return fmt.Errorf("cannot checkpoint group aggregate %s: %w", o.cfg.ID, err)
		}
	}
	if err := o.store.Checkpoint(); err != nil {
		return fmt.Errorf("cannot checkpoint group aggregate %s: %w", o.cfg.ID, err)
	}
	o.forgetDirty()
	return nil
}

func (o *operator) forgetDirty() {
	for i, g := range o.dirty {
		g.dirty = false
		o.dirty[i] = nil
	}
	o.dirty = o.dirty[:0]
	clear(o.removed)
	o.removed = o.removed[:0]
}

// appendGroup encodes a group: version, key values, row count, the last
// emitted result (if any) and each accumulator's state.
func (o *operator) appendGroup(dst []byte, g *group) []byte {
	dst = append(dst, stateVersion)
	for _, v := range g.keyVals {
		dst = agg.AppendStateValue(dst, v)
	}
	dst = binary.AppendVarint(dst, g.rows)
	if g.last == nil {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		for _, v := range g.last {
			dst = agg.AppendStateValue(dst, v)
		}
	}
	for _, a := range g.accs {
		n := len(dst)
		dst = binary.AppendUvarint(dst, 0) // placeholder length, fixed below
		start := len(dst)
		dst = a.AppendState(dst)
		dst = fixLength(dst, n, start)
	}
	return dst
}

// fixLength replaces the one-byte placeholder at dst[n] with the uvarint
// length of dst[start:].
func fixLength(dst []byte, n, start int) []byte {
	body := len(dst) - start
	var lb [binary.MaxVarintLen64]byte
	l := binary.PutUvarint(lb[:], uint64(body))
	if l == 1 {
		dst[n] = lb[0]
		return dst
	}
	dst = append(dst, lb[:l-1]...) // grow by l-1 and shift the body right
	copy(dst[start+l-1:], dst[start:start+body])
	copy(dst[n:], lb[:l])
	return dst
}

var errCorrupt = errors.New("corrupt group state")

// restore loads the groups stored by Checkpoint.
func (o *operator) restore() error {
	var failed error
	err := o.store.Scan([]byte{groupPrefix}, func(key, val []byte) bool {
		if err := o.loadGroup(string(key[1:]), val); err != nil {
			failed = err
			return false
		}
		return true
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("cannot restore groups: %w", err)
	}
	return nil
}

func (o *operator) loadGroup(key string, src []byte) error {
	if len(src) == 0 || src[0] != stateVersion {
		return errCorrupt
	}
	src = src[1:]
	g := o.allocGroup(key)
	var err error
	for i := range g.keyVals {
		if g.keyVals[i], src, err = agg.DecodeStateValue(src); err != nil {
			return err
		}
	}
	rows, n := binary.Varint(src)
	if n <= 0 || len(src) == n {
		return errCorrupt
	}
	g.rows = rows
	hasLast := src[n]
	src = src[n+1:]
	if hasLast == 1 {
		g.last = make([]types.Value, len(o.cfg.Calls))
		for i := range g.last {
			if g.last[i], src, err = agg.DecodeStateValue(src); err != nil {
				return err
			}
		}
	}
	for _, a := range g.accs {
		l, n := binary.Uvarint(src)
		if n <= 0 || l > uint64(len(src)-n) {
			return errCorrupt
		}
		if err := a.LoadState(src[n : n+int(l)]); err != nil {
			return err
		}
		src = src[n+int(l):]
	}
	if len(src) != 0 {
		return errCorrupt
	}
	o.groups[key] = g
	o.stateBytes += o.groupBytes(g)
	o.written(g, o.now())
	return nil
}
