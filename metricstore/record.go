package metricstore

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// A record is the state of one key, immutable once made:
//
//	record  = header:uvarint payload
//	header  = layout id << 1 | mixed
//	payload = a rowcodec payload of one row
//
// The row's columns are the layout's key columns, its metrics, and then
// either (mixed = 0: every metric with a value has the same event time,
// the usual case, and there are at most 63 metrics) a BIGINT event time
// and a BIGINT mask of the metrics without a value; or (mixed = 1) a
// BIGINT base time and a BIGINT time offset per metric, NULL for a
// metric without a value, the base being the event time of the first
// metric with one. A metric without a value reads NOT_FOUND; one whose
// value is NULL reads NULL_VALUE.

// layout is one shape of a group's records: its key columns and metrics
// at some definition. A group keeps every layout it had, for the records
// still written in them.
type layout struct {
	id      int
	keys    []types.Column
	metrics []Metric
	// mixed is the codec of the rows with a time per metric; uniform of
	// those with one time (nil beyond 63 metrics).
	mixed, uniform *rowcodec.Codec
}

// maxUniform is the most metrics a record with one event time has (its
// mask of metrics without a value is a BIGINT).
const maxUniform = 63

func newLayout(id int, keys []types.Column, metrics []Metric) (*layout, error) {
	cols := make([]types.Type, 0, len(keys)+2*len(metrics)+1)
	for _, k := range keys {
		cols = append(cols, k.Type)
	}
	for _, m := range metrics {
		cols = append(cols, m.Type)
	}
	l := &layout{id: id, keys: keys, metrics: metrics}
	var err error
	if len(metrics) <= maxUniform {
		if l.uniform, err = rowcodec.New(append(cols[:len(cols):len(cols)], types.BigInt, types.BigInt)); err != nil {
			return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
		}
	}
	for range len(metrics) + 1 {
		cols = append(cols, types.BigInt)
	}
	if l.mixed, err = rowcodec.New(cols); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return l, nil
}

// width is the most columns of the layout's rows.
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

// newDefinition returns definition g in layout l, one of layouts, after
// prev (nil for a new group). A metric keeps the values of the records of
// a layout only if it was in every definition since (same name, same type
// but for nullability): one dropped and added again starts without
// values.
func newDefinition(g Group, l *layout, layouts []*layout, prev *definition) *definition {
	d := &definition{g: g, layout: l, layouts: layouts, index: make(map[string]int, len(g.Metrics))}
	for i, m := range g.Metrics {
		d.index[m.Name] = i
	}
	d.from = make([][]int, len(layouts))
	// kept gives, for each metric, its index in prev (-1: new).
	kept := make([]int, len(g.Metrics))
	for i, cur := range g.Metrics {
		kept[i] = -1
		if prev == nil {
			continue
		}
		if j, ok := prev.index[cur.Name]; ok && prev.g.Metrics[j].Type.SameKind(cur.Type) {
			kept[i] = j
		}
	}
	for id := range layouts {
		m := make([]int, len(g.Metrics))
		for i := range m {
			m[i] = -1
			switch {
			case layouts[id] == l && l.metricsAre(g.Metrics):
				// This definition's own layout.
				m[i] = i
			case prev != nil && id < len(prev.from) && kept[i] >= 0:
				m[i] = prev.from[id][kept[i]]
			}
		}
		d.from[id] = m
	}
	return d
}

// metricsAre reports whether the layout's metrics are ms (by name and
// type but for nullability).
func (l *layout) metricsAre(ms []Metric) bool {
	return slices.EqualFunc(l.metrics, ms, func(a, b Metric) bool { return a.Name == b.Name && a.Type.SameKind(b.Type) })
}

// metricNames returns the names of the metrics.
func (d *definition) metricNames() []string {
	out := make([]string, len(d.g.Metrics))
	for i, m := range d.g.Metrics {
		out[i] = m.Name
	}
	return out
}

// encoder makes records in one layout; it is used by one writer at a
// time (under the group's commit mutex).
type encoder struct {
	l       *layout
	mixed   *rowcodec.Encoder
	uniform *rowcodec.Encoder
	row     []types.Value
}

func newEncoder(l *layout) *encoder {
	e := &encoder{l: l, mixed: l.mixed.NewEncoder(), row: make([]types.Value, l.width())}
	if l.uniform != nil {
		e.uniform = l.uniform.NewEncoder()
	}
	return e
}

// encode returns the record of key with the values vals, those with
// set[i] having event time times[i], the others none.
func (e *encoder) encode(key, vals []types.Value, set []bool, times []int64) ([]byte, error) {
	nk, nm := len(e.l.keys), len(e.l.metrics)
	row := e.row
	copy(row, key)
	base, hasBase, same := int64(0), false, true
	absent := int64(0)
	for i := range nm {
		row[nk+i] = types.Value{}
		if !set[i] {
			absent |= 1 << i
			continue
		}
		row[nk+i] = vals[i]
		if !hasBase {
			base, hasBase = times[i], true
		}
		same = same && times[i] == base
	}
	enc, mixed := e.uniform, 0
	if same && enc != nil {
		row[nk+nm] = types.BigIntValue(base)
		row[nk+nm+1] = types.BigIntValue(absent)
		row = row[:nk+nm+2]
	} else {
		enc, mixed = e.mixed, 1
		row[nk+nm] = types.Value{}
		if hasBase {
			row[nk+nm] = types.BigIntValue(base)
		}
		for i := range nm {
			row[nk+nm+1+i] = types.Value{}
			if set[i] {
				row[nk+nm+1+i] = types.BigIntValue(times[i] - base)
			}
		}
	}
	enc.Reset()
	err := enc.Append(types.Row{Kind: types.Insert, Vals: row})
	clear(e.row) // no references kept to the caller's strings
	if err != nil {
		return nil, fmt.Errorf("cannot encode the values: %w", err)
	}
	p := enc.Bytes()
	rec := make([]byte, 0, binary.MaxVarintLen32+len(p))
	rec = binary.AppendUvarint(rec, uint64(e.l.id)<<1|uint64(mixed))
	return append(rec, p...), nil
}

// decoded is a record decoded.
type decoded struct {
	l     *layout
	row   []types.Value
	mixed bool
}

// decode appends the row of rec to b and returns it, of one of layouts.
func decode(layouts []*layout, rec []byte, b *types.Batch) (decoded, error) {
	h, n := binary.Uvarint(rec)
	id := h >> 1
	if n <= 0 || id >= uint64(len(layouts)) {
		return decoded{}, fmt.Errorf("metricstore: corrupt record (layout %d of %d)", id, len(layouts))
	}
	d := decoded{l: layouts[id], mixed: h&1 == 1}
	c := d.l.mixed
	if !d.mixed {
		c = d.l.uniform
	}
	if c == nil {
		return decoded{}, fmt.Errorf("metricstore: corrupt record (one time for %d metrics)", len(d.l.metrics))
	}
	if _, err := c.Decode(b, rec[n:]); err != nil {
		return decoded{}, fmt.Errorf("metricstore: corrupt record: %w", err)
	}
	d.row = b.Rows[len(b.Rows)-1].Vals
	return d, nil
}

// key returns the key's values (in the batch decoded into).
func (d decoded) key() []types.Value { return d.row[:len(d.l.keys):len(d.l.keys)] }

// metric returns metric j (an index into the layout's metrics, or -1).
func (d decoded) metric(j int) (types.Value, Status, int64) {
	if j < 0 {
		return types.Value{}, NotFound, 0
	}
	nk, nm := len(d.l.keys), len(d.l.metrics)
	var t int64
	if d.mixed {
		off := d.row[nk+nm+1+j]
		if off.IsNull() {
			return types.Value{}, NotFound, 0
		}
		t = d.row[nk+nm].Int() + off.Int()
	} else {
		if d.row[nk+nm+1].Int()&(1<<j) != 0 {
			return types.Value{}, NotFound, 0
		}
		t = d.row[nk+nm].Int()
	}
	v := d.row[nk+j]
	if v.IsNull() {
		return v, NullValue, t
	}
	return v, Present, t
}

// values are a key's values in the order of a definition's metrics,
// being changed.
type values struct {
	vals  []types.Value
	set   []bool
	times []int64
}

func newValues(n int) *values {
	return &values{vals: make([]types.Value, n), set: make([]bool, n), times: make([]int64, n)}
}

// load sets st from a decoded record, read as of definition d.
func (st *values) load(d *definition, r decoded) {
	for i, j := range d.from[r.l.id] {
		v, s, t := r.metric(j)
		st.vals[i], st.set[i], st.times[i] = v, s != NotFound, t
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
