package metricstore

import (
	"encoding/binary"
	"fmt"

	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// A record is the state of one key, immutable once made:
//
//	record = layout:uvarint payload
//	payload = a rowcodec payload of one row, whose columns are the
//	          layout's key columns, its metrics, a BIGINT base time, and a
//	          BIGINT time offset per metric
//
// A metric whose offset is NULL has no value (NOT_FOUND); otherwise its
// event time is base + offset, and its value may be NULL (NULL_VALUE).
// The base is the event time of the first metric with a value, so that
// the offsets of metrics changed together take one byte each.

// layout is one shape of a group's records: its key columns and metrics
// at some definition. A group keeps every layout it had, for the records
// still written in them.
type layout struct {
	id      int
	keys    []types.Column
	metrics []Metric
	codec   *rowcodec.Codec
}

func newLayout(id int, keys []types.Column, metrics []Metric) (*layout, error) {
	cols := make([]types.Type, 0, len(keys)+2*len(metrics)+1)
	for _, k := range keys {
		cols = append(cols, k.Type)
	}
	for _, m := range metrics {
		cols = append(cols, m.Type)
	}
	for range len(metrics) + 1 {
		cols = append(cols, types.BigInt)
	}
	c, err := rowcodec.New(cols)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return &layout{id: id, keys: keys, metrics: metrics, codec: c}, nil
}

// width is the number of columns of the layout's rows.
func (l *layout) width() int { return len(l.keys) + 2*len(l.metrics) + 1 }

// definition is a group's definition as of one Define: immutable, so that
// what was read with it can be decoded without the group's lock.
type definition struct {
	g      Group
	layout *layout
	// layouts are the group's layouts up to this definition's, by id.
	layouts []*layout
	// from gives, for each layout id, the index in that layout of each
	// metric of this definition (-1: the layout has no such metric).
	from [][]int
	// index gives the position of each metric by name.
	index map[string]int
}

func newDefinition(g Group, l *layout, layouts []*layout) *definition {
	d := &definition{g: g, layout: l, layouts: layouts, index: make(map[string]int, len(g.Metrics))}
	for i, m := range g.Metrics {
		d.index[m.Name] = i
	}
	d.from = make([][]int, len(layouts))
	for id, old := range layouts {
		m := make([]int, len(g.Metrics))
		for i, cur := range g.Metrics {
			m[i] = -1
			for j, o := range old.metrics {
				if o.Name == cur.Name && o.Type.SameKind(cur.Type) {
					m[i] = j
					break
				}
			}
		}
		d.from[id] = m
	}
	return d
}

// metricNames returns the names of the metrics.
func (d *definition) metricNames() []string {
	out := make([]string, len(d.g.Metrics))
	for i, m := range d.g.Metrics {
		out[i] = m.Name
	}
	return out
}

// encoder makes records in one layout; it is used under the group's
// write lock.
type encoder struct {
	l   *layout
	enc *rowcodec.Encoder
	row []types.Value
}

func newEncoder(l *layout) *encoder {
	return &encoder{l: l, enc: l.codec.NewEncoder(), row: make([]types.Value, l.width())}
}

// encode returns the record of key with the values vals, those with
// set[i] having event time times[i], the others none.
func (e *encoder) encode(key, vals []types.Value, set []bool, times []int64) ([]byte, error) {
	nk, nm := len(e.l.keys), len(e.l.metrics)
	row := e.row
	copy(row, key)
	base, hasBase := int64(0), false
	for i := range nm {
		row[nk+i] = types.Value{}
		row[nk+nm+1+i] = types.Value{}
		if !set[i] {
			continue
		}
		row[nk+i] = vals[i]
		if !hasBase {
			base, hasBase = times[i], true
		}
		row[nk+nm+1+i] = types.BigIntValue(times[i] - base)
	}
	row[nk+nm] = types.Value{}
	if hasBase {
		row[nk+nm] = types.BigIntValue(base)
	}
	e.enc.Reset()
	err := e.enc.Append(types.Row{Kind: types.Insert, Vals: row})
	clear(row) // no references kept to the caller's strings
	if err != nil {
		return nil, fmt.Errorf("cannot encode the values: %w", err)
	}
	p := e.enc.Bytes()
	rec := make([]byte, 0, binary.MaxVarintLen32+len(p))
	rec = binary.AppendUvarint(rec, uint64(e.l.id))
	return append(rec, p...), nil
}

// decode appends the row of rec to b and returns it with its layout,
// one of layouts.
func decode(layouts []*layout, rec []byte, b *types.Batch) (*layout, []types.Value, error) {
	id, n := binary.Uvarint(rec)
	if n <= 0 || id >= uint64(len(layouts)) {
		return nil, nil, fmt.Errorf("metricstore: corrupt record (layout %d of %d)", id, len(layouts))
	}
	l := layouts[id]
	if _, err := l.codec.Decode(b, rec[n:]); err != nil {
		return nil, nil, fmt.Errorf("metricstore: corrupt record: %w", err)
	}
	return l, b.Rows[len(b.Rows)-1].Vals, nil
}

// values are a key's values in one layout, being changed.
type values struct {
	vals  []types.Value
	set   []bool
	times []int64
}

func newValues(n int) *values {
	return &values{vals: make([]types.Value, n), set: make([]bool, n), times: make([]int64, n)}
}

// load sets st from a decoded row of layout l, read as of definition d.
func (st *values) load(d *definition, l *layout, row []types.Value) {
	nk, nm := len(l.keys), len(l.metrics)
	base := row[nk+nm].Int()
	for i, j := range d.from[l.id] {
		st.vals[i], st.set[i], st.times[i] = types.Value{}, false, 0
		if j < 0 {
			continue
		}
		if off := row[nk+nm+1+j]; !off.IsNull() {
			st.vals[i], st.set[i], st.times[i] = row[nk+j], true, base+off.Int()
		}
	}
}

// Status is the status of a value read.
type Status uint8

// Statuses, as Feast's online serving names them.
const (
	// NotFound: the key has no value for the metric (the key is not in
	// the group, or the metric was added since its last change).
	NotFound Status = iota
	// Present: the metric has a value.
	Present
	// NullValue: the metric's value is NULL.
	NullValue
)

func (s Status) String() string {
	switch s {
	case Present:
		return "PRESENT"
	case NullValue:
		return "NULL_VALUE"
	}
	return "NOT_FOUND"
}

// metricOf returns metric j (an index into l's metrics, or -1) of a
// decoded row of layout l.
func metricOf(l *layout, row []types.Value, j int) (types.Value, Status, int64) {
	if j < 0 {
		return types.Value{}, NotFound, 0
	}
	nk, nm := len(l.keys), len(l.metrics)
	off := row[nk+nm+1+j]
	if off.IsNull() {
		return types.Value{}, NotFound, 0
	}
	t := row[nk+nm].Int() + off.Int()
	v := row[nk+j]
	if v.IsNull() {
		return v, NullValue, t
	}
	return v, Present, t
}
