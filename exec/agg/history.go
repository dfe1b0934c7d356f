package agg

import (
	"encoding/binary"
	"slices"

	"github.com/sluicesql/sluice/types"
)

// history is the arrival-ordered list of values that order-sensitive
// functions (FIRST_VALUE, LAST_VALUE, LISTAGG, COLLECT) keep to support
// retraction. A retraction removes the earliest equal value (as Flink's
// retracting variants do); a retraction of a value not present is kept
// pending and cancels the next equal arrival.
type history struct {
	vals    []types.Value
	pending []types.Value
}

func (h *history) add(v types.Value) {
	if i := indexEqual(h.pending, v); i >= 0 {
		h.pending = slices.Delete(h.pending, i, i+1)
		return
	}
	h.vals = append(h.vals, v)
}

func (h *history) retract(v types.Value) {
	if i := indexEqual(h.vals, v); i >= 0 {
		h.vals = slices.Delete(h.vals, i, i+1)
		return
	}
	h.pending = append(h.pending, v)
}

// merge appends o's values after h's, as if they arrived later.
func (h *history) merge(o *history) {
	for _, v := range o.vals {
		h.add(v)
	}
	for _, v := range o.pending {
		h.retract(v)
	}
}

func indexEqual(vals []types.Value, v types.Value) int {
	for i := range vals {
		if types.Equal(vals[i], v) && vals[i].Kind() == v.Kind() {
			return i
		}
	}
	return -1
}

func (h *history) clone() history {
	return history{vals: slices.Clone(h.vals), pending: slices.Clone(h.pending)}
}

func (h *history) reset() {
	clear(h.vals)
	clear(h.pending)
	h.vals, h.pending = h.vals[:0], h.pending[:0]
}

func (h *history) appendState(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(h.vals)))
	for _, v := range h.vals {
		dst = AppendStateValue(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(h.pending)))
	for _, v := range h.pending {
		dst = AppendStateValue(dst, v)
	}
	return dst
}

func (h *history) load(r *stateReader) {
	h.reset()
	for range min(r.uvarint(), uint64(len(r.src))) {
		h.vals = append(h.vals, r.value())
	}
	for range min(r.uvarint(), uint64(len(r.src))) {
		h.pending = append(h.pending, r.value())
	}
}
