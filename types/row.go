package types

import "strconv"

// RowKind is the changelog kind of a row, as in Flink.
type RowKind uint8

// Row kinds.
const (
	Insert       RowKind = iota // +I
	UpdateBefore                // -U
	UpdateAfter                 // +U
	Delete                      // -D
)

// String returns the short form: +I, -U, +U or -D.
func (k RowKind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return "RowKind(" + strconv.Itoa(int(k)) + ")"
}

// IsAccumulate reports whether the kind adds a row (+I, +U).
func (k RowKind) IsAccumulate() bool { return k == Insert || k == UpdateAfter }

// Origin names the source record a row came from: the source partition and
// the offset within it. Stateful operators keep, per partition, the highest
// offset they have folded in and drop rows whose offset is not higher.
// Part < 0 means the row has no origin (e.g. it was produced by an operator
// that merges many inputs) and is never dropped as a replay.
type Origin struct {
	Part   int32
	Offset int64
}

// NoOrigin is the origin of rows that do not come from one source record.
var NoOrigin = Origin{Part: -1}

// Row is one row of a batch: its changelog kind, its origin and its values.
type Row struct {
	Kind   RowKind
	Origin Origin
	Vals   []Value
}

// Batch is a group of rows passed between operators. A batch owns an arena
// from which row values are allocated, so that a reused batch allocates
// nothing in the steady state. A receiver must not keep references to a
// batch's rows or values after returning: copy what it keeps (CopyRow).
type Batch struct {
	Rows  []Row
	arena []Value
}

// NewBatch returns an empty batch with room for n rows of width w.
func NewBatch(n, w int) *Batch {
	return &Batch{Rows: make([]Row, 0, n), arena: make([]Value, 0, n*w)}
}

// Len returns the number of rows.
func (b *Batch) Len() int { return len(b.Rows) }

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	clear(b.arena) // drop references so the GC can free strings
	b.Rows = b.Rows[:0]
	b.arena = b.arena[:0]
}

// Truncate empties the batch without clearing its values: they stay
// referenced until overwritten, at most one batch of them, and AddRow
// then returns values that are not NULL but stale, which the caller must
// set all. Cheaper than Reset for an operator's output batch whose every
// column it computes (Calc).
func (b *Batch) Truncate() {
	b.Rows = b.Rows[:0]
	b.arena = b.arena[:0]
}

// AddRow appends a row of width w with the given kind and origin and returns
// its values, zeroed (NULL), to be filled in by the caller.
func (b *Batch) AddRow(kind RowKind, origin Origin, w int) []Value {
	if cap(b.arena)-len(b.arena) < w {
		// Grow into a fresh arena: rows already added keep pointing at the
		// old one, which stays alive while they do.
		n := 2 * cap(b.arena)
		if n < 16*w {
			n = 16 * w
		}
		b.arena = make([]Value, 0, n)
	}
	start := len(b.arena)
	b.arena = b.arena[:start+w]
	vals := b.arena[start : start+w : start+w]
	b.Rows = append(b.Rows, Row{Kind: kind, Origin: origin, Vals: vals})
	return vals
}

// Append appends a copy of row r (its values are copied into the arena).
func (b *Batch) Append(r Row) {
	vals := b.AddRow(r.Kind, r.Origin, len(r.Vals))
	copy(vals, r.Vals)
}

// CopyRow returns a copy of r whose values do not alias any batch.
func CopyRow(r Row) Row {
	r.Vals = append([]Value(nil), r.Vals...)
	return r
}
