// Package join runs regular joins: two inputs, each row kept in state
// under its join key and matched with the rows of the other side that
// arrive before or after it.
//
// Output, as Flink's dynamic tables: an accumulating input row (+I, +U)
// emits +I rows, a retracting one (-D, -U) emits -D rows, one per matching
// row of the other side (times the multiplicity of equal rows). An outer
// side's row with no match emits itself padded with NULLs; when its first
// match arrives, the padded row is retracted (-D) before the joined one is
// emitted (+I), and when its last match goes, the padded row comes back.
// A SEMI join emits a left row (alone) when it gains its first match and
// retracts it when it loses its last; an ANTI join the opposite.
//
// The package also runs interval joins (interval.go) and window joins
// (window.go), whose state the watermark cleans and whose output is
// append-only.
//
// Invariants:
//   - A key with a NULL column matches nothing (SQL equality); such rows
//     are not kept, but an outer side's still emits (and retracts) its
//     padded row. Two exceptions: with NullSafe, NULL keys match NULL
//     keys (IS NOT DISTINCT FROM: INTERSECT and EXCEPT); with NullAware,
//     the last key pair is that of x NOT IN (SELECT y ...), and a NULL on
//     either side matches every row of the other with the same other keys.
//   - Each kept row counts its matches (rows of the other side with the
//     same key that pass the residual condition), which decides padding.
//   - Replays (rows whose origin offset the state already holds) are
//     dropped, as in every stateful operator.
//   - Checkpoint writes the keys changed since the last one: one record
//     per side and key, holding every row kept there.
package join

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// Kind is the kind of join.
type Kind uint8

// Join kinds.
const (
	Inner Kind = iota
	Left
	Right
	Full
	// Semi emits the left rows that have a match, once each; Anti those
	// that have none. Their output is the left row alone.
	Semi
	Anti
)

// Config configures a join.
type Config struct {
	// ID is the operator's stable identity (its state's).
	ID   string
	Kind Kind
	// LeftKeys and RightKeys are the key columns of each side, pairwise
	// equal.
	LeftKeys, RightKeys []int
	// Left and Right are the column types of each side.
	Left, Right []types.Type
	// Residual, if set, is the rest of the join condition, over the
	// output row (left columns, then right ones).
	Residual func(row []types.Value) (bool, error)
	// NullSafe makes NULL keys equal to NULL keys (IS NOT DISTINCT FROM),
	// as INTERSECT and EXCEPT compare rows.
	NullSafe bool
	// NullAware makes the last key pair that of x NOT IN (SELECT y ...)
	// in an ANTI join: two rows match when x = y or either is NULL (the
	// NOT IN is then false or unknown), Flink's null-aware anti join.
	// The other keys, if any, compare as usual. A regular join keeps the
	// rows of each side by all their keys, and lists the buckets under
	// the other keys (groups) for the rows with a NULL last key.
	NullAware bool
	// TTL, if positive, drops a kept row once it has not been written
	// (inserted, counted again, matched or unmatched) for this long, in
	// processing time: Flink's table.exec.state.ttl. Nothing is emitted
	// for an expired row; a later row of the other side just does not
	// find it. Interval joins ignore it (the watermark cleans them).
	TTL  time.Duration
	Next exec.Operator
}

// entry is a kept row: its values, how many equal rows it stands for, and
// how many rows of the other side it matches.
type entry struct {
	vals  []types.Value
	enc   string // identity: the row's key encoding
	count int
	match int
	// written is when the row was last written (processing time, µs), for
	// the TTL; queued says the TTL's queue holds it at that time.
	written int64
	queued  bool
}

// expiry is a row written at a time, in the order rows were written: the
// TTL's queue. An item whose row was written again since is stale.
type expiry struct {
	e    *entry
	key  string
	side int
	at   int64
}

// bucket is the rows of one side under one key.
type bucket struct {
	rows []*entry
	// index finds a row by its identity once the bucket holds many (a hot
	// key), so that an insert or a retraction does not scan them all.
	index map[string]int
	dirty bool
	// prefix is the length of the key's encoding of all keys but the
	// last (null-aware joins).
	prefix int
}

// indexFrom is the number of rows from which a bucket keeps an index.
const indexFrom = 64

// find returns the position of the row whose identity is enc, or -1.
func (b *bucket) find(enc []byte) int {
	if b.index != nil {
		if i, ok := b.index[string(enc)]; ok {
			return i
		}
		return -1
	}
	for i, e := range b.rows {
		if e.enc == string(enc) {
			return i
		}
	}
	return -1
}

func (b *bucket) add(e *entry) {
	b.rows = append(b.rows, e)
	switch {
	case b.index != nil:
		b.index[e.enc] = len(b.rows) - 1
	case len(b.rows) >= indexFrom:
		b.index = make(map[string]int, 2*len(b.rows))
		for i, x := range b.rows {
			b.index[x.enc] = i
		}
	}
}

// remove removes the row at position i (the last row takes its place).
func (b *bucket) remove(i int) {
	last := len(b.rows) - 1
	gone := b.rows[i]
	b.rows[i] = b.rows[last]
	b.rows[last] = nil
	b.rows = b.rows[:last]
	if b.index != nil {
		delete(b.index, gone.enc)
		if i != last {
			b.index[b.rows[i].enc] = i
		}
	}
}

type side struct {
	keys    []int
	width   int
	codec   *rowcodec.Codec
	buckets map[string]*bucket
	outer   bool // rows without a match are emitted padded
	dirty   []string
	bytes   int64 // estimated memory of the buckets and their rows
	// groups lists, for a null-aware join, the keys of the buckets under
	// each encoding of the other keys (all but the last).
	groups map[string]*group
}

// Estimates of the memory of a side's state: a bucket with its map slot,
// and a row besides its values and identity (with its slot in the bucket).
const (
	bucketOverhead = int64(unsafe.Sizeof(bucket{})) + 48
	entryOverhead  = int64(unsafe.Sizeof(entry{})) + 8
)

func bucketBytes(key string) int64 { return bucketOverhead + int64(len(key)) }

func entryBytes(e *entry) int64 {
	return entryOverhead + types.ValuesSize(e.vals) + int64(len(e.enc))
}

// group is the bucket keys of one side that share their other keys, in
// the order the buckets were made, and how many rows they hold, with a
// NULL last key and in all (null-aware joins; the counts serve the
// counting joins, which have no TTL: no row leaves without a retraction).
type group struct {
	keys        []string
	pos         map[string]int
	rows, nulls int
}

// counted adds d to the rows of the group of key (and to its NULLs when
// the last key is NULL).
func (s *side) counted(key string, prefix, d int, nullKey string) {
	g := s.groups[key[:prefix]]
	if g == nil {
		return
	}
	g.rows += d
	if key[prefix:] == nullKey {
		g.nulls += d
	}
}

// groupCounts returns the rows of the group gk, and those with a NULL last
// key.
func (s *side) groupCounts(gk string) (rows, nulls int) {
	if g := s.groups[gk]; g != nil {
		return g.rows, g.nulls
	}
	return 0, 0
}

func (s *side) addToGroup(key string, prefix int) {
	g := s.groups[key[:prefix]]
	if g == nil {
		g = &group{pos: map[string]int{}}
		s.groups[key[:prefix]] = g
	}
	if _, ok := g.pos[key]; !ok {
		g.pos[key] = len(g.keys)
		g.keys = append(g.keys, key)
	}
}

func (s *side) removeFromGroup(key string, prefix int) {
	g := s.groups[key[:prefix]]
	if g == nil {
		return
	}
	i, ok := g.pos[key]
	if !ok {
		return
	}
	last := len(g.keys) - 1
	g.keys[i] = g.keys[last]
	g.pos[g.keys[i]] = i
	g.keys = g.keys[:last]
	delete(g.pos, key)
	if len(g.keys) == 0 {
		delete(s.groups, key[:prefix])
	}
}

// candidate is a bucket of the other side that a row may match.
type candidate struct {
	key string
	b   *bucket
}

// Operator is a running join.
type Operator struct {
	pairs
	sides [2]side

	// semi is Semi or Anti for those joins, else 0.
	semi Kind

	now     func() int64
	ttl     int64 // µs; 0: none
	expiry  []expiry
	expHead int

	rowBuf []byte
	cands  []candidate // scratch
	// nullKey is the encoding of a NULL last key (null-aware joins).
	nullKey string
	// counting: a null-aware join without a residual condition or a TTL
	// matches by counts (nullAwareRow); with either, pair by pair.
	counting bool
	// modeSaved says the store holds how this null-aware join counts
	// matches (modeKey).
	modeSaved bool

	gauge *exec.StateGauge // the keys (buckets) of both sides and their bytes
}

// modeKey is the store key of a null-aware join's way of counting a left
// row's matches: modeCounting (by the right rows with its very key; the
// groups' counts give the rest) or modePairs (every matching pair). A
// run that counts the other way (a TTL set or unset since) recounts them
// when it restores.
var modeKey = []byte{2}

const (
	modePairs    byte = 0
	modeCounting byte = 1
)

// New returns a join operator.
func New(cfg Config) (*Operator, error) {
	if len(cfg.LeftKeys) == 0 || len(cfg.LeftKeys) != len(cfg.RightKeys) {
		return nil, errors.New("join: keys of both sides, as many on each")
	}
	if cfg.Kind > Anti {
		return nil, fmt.Errorf("join: unknown kind %d", cfg.Kind)
	}
	if cfg.NullAware && (cfg.Kind != Anti || cfg.NullSafe) {
		return nil, errors.New("join: only an ANTI join without NULL-safe keys can be null-aware")
	}
	o := &Operator{pairs: newPairs(cfg)}
	for i, typs := range [][]types.Type{cfg.Left, cfg.Right} {
		c, err := rowcodec.New(typs)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		keys := cfg.LeftKeys
		if i == 1 {
			keys = cfg.RightKeys
		}
		o.sides[i] = side{keys: keys, width: len(typs), codec: c, buckets: map[string]*bucket{}}
		if cfg.NullAware {
			o.sides[i].groups = map[string]*group{}
		}
	}
	o.nullKey = string(types.AppendKey(nil, types.NullValue))
	o.counting = cfg.NullAware && cfg.Residual == nil && cfg.TTL <= 0
	if cfg.Kind == Semi || cfg.Kind == Anti {
		o.semi = cfg.Kind
	}
	o.sides[0].outer = cfg.Kind == Left || cfg.Kind == Full
	o.sides[1].outer = cfg.Kind == Right || cfg.Kind == Full
	o.ttl = cfg.TTL.Microseconds()
	return o, nil
}

// Open implements exec.Operator: it restores the state of the last
// checkpoint.
func (o *Operator) Open(ctx *exec.Context) error {
	o.now = func() int64 { return time.Now().UnixMicro() }
	if ctx != nil && ctx.Now != nil {
		o.now = ctx.Now
	}
	if ctx != nil {
		o.gauge = ctx.StateGauge("join")
	}
	defer o.reportState()
	return o.open(ctx, "join", o.restore)
}

// reportState sets the operator's gauge.
func (o *Operator) reportState() {
	l, r := &o.sides[0], &o.sides[1]
	o.gauge.Set(int64(len(l.buckets)+len(r.buckets)), l.bytes+r.bytes)
}

// ProcessInput implements exec.MultiInput: input 0 is the left side.
func (o *Operator) ProcessInput(input int, b *types.Batch) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("join: no input %d", input)
	}
	defer o.reportState()
	o.expire()
	for i := range b.Rows {
		r := &b.Rows[i]
		if !o.admit(r) {
			continue
		}
		if err := o.row(input, r); err != nil {
			return err
		}
		if err := o.flushIfFull(); err != nil {
			return err
		}
	}
	return o.flush()
}

// row folds one input row in and emits what it changes.
func (o *Operator) row(input int, r *types.Row) error {
	me, other := &o.sides[input], &o.sides[1-input]
	acc := r.Kind == types.Insert || r.Kind == types.UpdateAfter
	if o.counting {
		return o.nullAwareRow(input, r, acc)
	}
	outKind := types.Insert
	if !acc {
		outKind = types.Delete
	}
	key, prefix, null := o.rowKey(me.keys, r.Vals)
	var mine *bucket
	if !null {
		mine = me.buckets[key]
	}

	// Matches of the row among the other side's rows.
	matches := 0
	for _, c := range o.candidates(other, key, prefix, null) {
		theirs := c.b
		for _, e := range theirs.rows {
			ok, err := o.residual(input, r.Vals, e.vals)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			matches += e.count
			o.written(e, 1-input, c.key)
			if o.semi != 0 {
				if input == 1 {
					o.semiMatch(e, acc, c.key)
				}
				continue
			}
			// The other side's row gains or loses a match: an outer one
			// whose padded row must go or come back.
			if other.outer {
				if acc && e.match == 0 {
					o.emitPadded(1-input, e.vals, types.Delete, e.count)
				}
				if !acc && e.match == 1 {
					defer o.emitPadded(1-input, e.vals, types.Insert, e.count)
				}
			}
			o.emitJoined(input, r.Vals, e.vals, outKind, e.count)
			if acc {
				e.match++
			} else if e.match > 0 {
				e.match--
			}
			if !theirs.dirty {
				theirs.dirty = true
				other.dirty = append(other.dirty, c.key)
			}
		}
	}
	if me.outer && matches == 0 {
		o.emitPadded(input, r.Vals, outKind, 1)
	}
	if input == 0 && (o.semi == Semi && matches > 0 || o.semi == Anti && matches == 0) {
		o.emitLeft(r.Vals, outKind, 1)
	}
	if null {
		return nil
	}
	o.keep(input, key, prefix, mine, r, acc, matches)
	return nil
}

// keep keeps (acc) or forgets a row of side input under key, whose bucket
// is mine (nil when there is none yet), with its matches if it is new. It
// reports whether the side's rows changed: a retraction of a row that is
// not kept changes nothing.
func (o *Operator) keep(input int, key string, prefix int, mine *bucket, r *types.Row, acc bool, matches int) bool {
	me := &o.sides[input]
	o.rowBuf = o.rowBuf[:0]
	for _, v := range r.Vals {
		o.rowBuf = types.AppendKey(o.rowBuf, v)
	}
	if mine == nil {
		if !acc {
			return false // retracting a row never seen: nothing kept
		}
		mine = &bucket{prefix: prefix}
		me.buckets[key] = mine
		me.bytes += bucketBytes(key)
		if me.groups != nil {
			me.addToGroup(key, prefix)
		}
	}
	if !mine.dirty {
		mine.dirty = true
		me.dirty = append(me.dirty, key)
	}
	i := mine.find(o.rowBuf)
	switch {
	case i >= 0 && acc:
		e := mine.rows[i]
		e.count++
		o.written(e, input, key)
	case i >= 0:
		e := mine.rows[i]
		if e.count--; e.count == 0 {
			me.bytes -= entryBytes(e)
			mine.remove(i)
		} else {
			o.written(e, input, key)
		}
	case acc:
		e := &entry{vals: append([]types.Value(nil), r.Vals...), enc: string(o.rowBuf), count: 1, match: matches}
		mine.add(e)
		me.bytes += entryBytes(e)
		o.written(e, input, key)
	default:
		return false
	}
	if me.groups != nil {
		d := 1
		if !acc {
			d = -1
		}
		me.counted(key, prefix, d, o.nullKey)
	}
	return true
}

// nullAwareRow folds a row into a null-aware ANTI join without a residual
// condition or a TTL, by counts rather than by pairs: a left row with
// last key x has a match when the right rows of its group have x or a
// NULL, and one with a NULL x when the group has any right row. A left
// row's match count is that of the right rows with its very key; the
// group's counts give the rest. So a row costs what a plain join's does,
// and only a change of whether the group's right side has any row (any
// NULL) passes over the group's left rows with a NULL (without a match).
func (o *Operator) nullAwareRow(input int, r *types.Row, acc bool) error {
	me, left := &o.sides[input], &o.sides[0]
	kind := types.Insert
	if !acc {
		kind = types.Delete
	}
	key, prefix, null := o.rowKey(me.keys, r.Vals)
	if null { // a NULL other key: no match
		if input == 0 {
			o.emitLeft(r.Vals, kind, 1)
		}
		return nil
	}
	gk, isNull := key[:prefix], key[prefix:] == o.nullKey
	if input == 0 {
		right := &o.sides[1]
		rows, nulls := right.groupCounts(gk)
		matches := 0
		if isNull {
			matches = rows
		} else if b := right.buckets[key]; b != nil {
			for _, e := range b.rows {
				matches += e.count
				o.written(e, 1, key)
			}
		}
		if matches == 0 && nulls == 0 {
			o.emitLeft(r.Vals, kind, 1)
		}
		if isNull {
			matches = 0 // the group's count stands for it
		}
		o.keep(0, key, prefix, left.buckets[key], r, acc, matches)
		return nil
	}

	// A right row: it changes the matches of the left rows with its key,
	// and maybe whether its group has any row, or any NULL.
	rowsBefore, nullsBefore := me.groupCounts(gk)
	if !o.keep(1, key, prefix, me.buckets[key], r, acc, 0) {
		return nil
	}
	rows, nulls := me.groupCounts(gk)
	// kindFor is what a left row without another match does when it
	// gains (leaves the output) or loses (enters it) its only match.
	kindFor := func(gained bool) types.RowKind {
		if gained {
			return types.Delete
		}
		return types.Insert
	}
	mark := func(b *bucket, k string) {
		if !b.dirty {
			b.dirty = true
			left.dirty = append(left.dirty, k)
		}
	}
	if !isNull {
		if b := left.buckets[key]; b != nil {
			mark(b, key)
			for _, e := range b.rows {
				before := e.match
				if acc {
					e.match++
				} else if e.match > 0 {
					e.match--
				}
				o.written(e, 0, key)
				if nulls == 0 && (before == 0) != (e.match == 0) {
					o.emitLeft(e.vals, kindFor(e.match > 0), e.count)
				}
			}
		}
	} else if (nullsBefore == 0) != (nulls == 0) {
		// The group's first NULL arrived, or its last left: every left
		// row of the group with no match of its own leaves or enters.
		if g := left.groups[gk]; g != nil {
			for _, k := range g.keys {
				b := left.buckets[k]
				if b == nil || k == gk+o.nullKey {
					continue
				}
				for _, e := range b.rows {
					if e.match == 0 {
						o.emitLeft(e.vals, kindFor(nulls > 0), e.count)
					}
				}
				if err := o.flushIfFull(); err != nil {
					return err
				}
			}
		}
	}
	if (rowsBefore == 0) != (rows == 0) {
		// The group's first row arrived, or its last left: the left rows
		// with a NULL leave or enter.
		if b := left.buckets[gk+o.nullKey]; b != nil {
			for _, e := range b.rows {
				o.emitLeft(e.vals, kindFor(rows > 0), e.count)
			}
		}
	}
	return nil
}

// rowKey returns the key under which a row of a side with key columns
// keys is kept, the length of its prefix that encodes all keys but the
// last (the group of a null-aware join), and whether the row matches
// nothing (a NULL key, unless NULLs match).
func (o *Operator) rowKey(keys []int, vals []types.Value) (key string, prefix int, null bool) {
	if !o.cfg.NullAware {
		key, null = o.key(keys, vals)
		return key, len(key), null
	}
	g, null := o.key(keys[:len(keys)-1], vals)
	if null {
		return "", 0, true
	}
	o.keyBuf = types.AppendKey(o.keyBuf, vals[keys[len(keys)-1]])
	return string(o.keyBuf), len(g), false
}

// candidates returns the buckets of side s whose rows a row kept under
// key matches by its keys: the bucket of the same key; for a null-aware
// join also the bucket of a NULL last key in the same group, or every
// bucket of the group when the row's last key is NULL.
func (o *Operator) candidates(s *side, key string, prefix int, null bool) []candidate {
	cands := o.cands[:0]
	switch {
	case null:
	case s.groups == nil:
		if b := s.buckets[key]; b != nil {
			cands = append(cands, candidate{key, b})
		}
	case key[prefix:] == o.nullKey:
		if g := s.groups[key[:prefix]]; g != nil {
			for _, k := range g.keys {
				if b := s.buckets[k]; b != nil {
					cands = append(cands, candidate{k, b})
				}
			}
		}
	default:
		if b := s.buckets[key]; b != nil {
			cands = append(cands, candidate{key, b})
		}
		nk := key[:prefix] + o.nullKey
		if b := s.buckets[nk]; b != nil {
			cands = append(cands, candidate{nk, b})
		}
	}
	o.cands = cands
	return cands
}

// semiMatch counts a right row's arrival (acc) or retraction in e, a
// left row of a SEMI or ANTI join it matches, and emits what changes: a
// left row that gains its first match enters a SEMI join's output and
// leaves an ANTI join's; one that loses its last does the opposite.
func (o *Operator) semiMatch(e *entry, acc bool, key string) {
	before := e.match
	if acc {
		e.match++
	} else if e.match > 0 {
		e.match--
	}
	if b := o.sides[0].buckets[key]; b != nil && !b.dirty {
		b.dirty = true
		o.sides[0].dirty = append(o.sides[0].dirty, key)
	}
	gained, lost := before == 0 && e.match > 0, before > 0 && e.match == 0
	if !gained && !lost {
		return
	}
	kind := types.Delete
	if gained == (o.semi == Semi) {
		kind = types.Insert
	}
	o.emitLeft(e.vals, kind, e.count)
}

// written notes that e, a row of side under key, was written now.
func (o *Operator) written(e *entry, side int, key string) {
	if o.ttl <= 0 {
		return
	}
	now := o.now()
	if e.queued && e.written == now {
		return
	}
	e.written, e.queued = now, true
	o.expiry = append(o.expiry, expiry{e: e, key: key, side: side, at: now})
}

// expire drops the rows not written for the TTL. They are forgotten
// without output, as in Flink.
func (o *Operator) expire() {
	if o.ttl <= 0 {
		return
	}
	limit := o.now() - o.ttl
	for o.expHead < len(o.expiry) && o.expiry[o.expHead].at < limit {
		x := o.expiry[o.expHead]
		o.expiry[o.expHead] = expiry{}
		o.expHead++
		if x.e.written != x.at {
			continue // written again since
		}
		s := &o.sides[x.side]
		b := s.buckets[x.key]
		if b == nil {
			continue
		}
		if i := b.find([]byte(x.e.enc)); i >= 0 && b.rows[i] == x.e {
			s.bytes -= entryBytes(x.e)
			b.remove(i)
			if !b.dirty {
				b.dirty = true
				s.dirty = append(s.dirty, x.key)
			}
		}
	}
	// Compact the queue once its dead head is most of it.
	if o.expHead > 1024 && o.expHead > len(o.expiry)/2 {
		o.expiry = append(o.expiry[:0], o.expiry[o.expHead:]...)
		o.expHead = 0
	}
}

// TickEvery implements exec.Timed: with a TTL, rows expire as processing
// time passes, input or not.
func (o *Operator) TickEvery() time.Duration {
	if o.ttl <= 0 {
		return 0
	}
	return min(max(time.Duration(o.ttl)*time.Microsecond/10, 10*time.Millisecond), time.Second)
}

// Tick implements exec.Timed.
func (o *Operator) Tick() error {
	o.expire()
	o.reportState()
	return nil
}

// Watermark implements exec.Operator: a regular join keeps no time (but
// its rows may expire meanwhile).
func (o *Operator) Watermark(wm int64) error {
	o.expire()
	o.reportState()
	return o.cfg.Next.Watermark(wm)
}

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.sides[0].buckets, o.sides[1].buckets = nil, nil
	return o.cfg.Next.Close()
}

// Store layout: one record per side and key, key = side byte + join key;
// value = uvarint rows, then per row uvarint count and uvarint matches,
// then the rows (rowcodec).

// Checkpoint implements exec.Checkpointer.
func (o *Operator) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	defer o.reportState()
	var kbuf, vbuf []byte
	for si := range o.sides {
		s := &o.sides[si]
		for _, key := range s.dirty {
			b := s.buckets[key]
			kbuf = append(append(kbuf[:0], byte(si)), key...)
			if b == nil || len(b.rows) == 0 {
				delete(s.buckets, key)
				if b != nil {
					s.bytes -= bucketBytes(key)
				}
				if s.groups != nil && b != nil {
					s.removeFromGroup(key, b.prefix)
				}
				if err := o.store.Delete(kbuf); err != nil {
					return err
				}
				continue
			}
			b.dirty = false
			vbuf = binary.AppendUvarint(vbuf[:0], uint64(len(b.rows)))
			for _, e := range b.rows {
				vbuf = binary.AppendUvarint(vbuf, uint64(e.count))
				vbuf = binary.AppendUvarint(vbuf, uint64(e.match))
			}
			enc := s.codec.NewEncoder()
			for _, e := range b.rows {
				if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: -1}, Vals: e.vals}); err != nil {
					return err
				}
			}
			vbuf = append(vbuf, enc.Bytes()...)
			if err := o.store.Put(kbuf, vbuf); err != nil {
				return err
			}
		}
		s.dirty = s.dirty[:0]
	}
	if o.cfg.NullAware && !o.modeSaved {
		mode := modePairs
		if o.counting {
			mode = modeCounting
		}
		if err := o.store.Put(modeKey, []byte{mode}); err != nil {
			return err
		}
		o.modeSaved = true
	}
	return o.store.Checkpoint()
}

func (o *Operator) restore() error {
	var ferr error
	stored := -1 // how the stored matches were counted, if null-aware
	err := o.store.Scan(nil, func(k, v []byte) bool {
		if string(k) == string(modeKey) && len(v) == 1 {
			stored = int(v[0])
			return true
		}
		if len(k) < 1 || k[0] > 1 {
			ferr = fmt.Errorf("corrupt key %q", k)
			return false
		}
		s := &o.sides[k[0]]
		n, m := binary.Uvarint(v)
		if m <= 0 {
			ferr = errors.New("corrupt record")
			return false
		}
		v = v[m:]
		b := &bucket{}
		entries := make([]*entry, n)
		for i := range entries {
			c, m1 := binary.Uvarint(v)
			if m1 <= 0 {
				ferr = errors.New("corrupt record")
				return false
			}
			mt, m2 := binary.Uvarint(v[m1:])
			if m2 <= 0 {
				ferr = errors.New("corrupt record")
				return false
			}
			v = v[m1+m2:]
			entries[i] = &entry{count: int(c), match: int(mt)}
		}
		batch := types.NewBatch(int(n), s.width)
		got, err := s.codec.Decode(batch, v)
		if err != nil || got != int(n) {
			ferr = fmt.Errorf("corrupt rows: %v", err)
			return false
		}
		for i, e := range entries {
			e.vals = batch.Rows[i].Vals
			var enc []byte
			for _, x := range e.vals {
				enc = types.AppendKey(enc, x)
			}
			e.enc = string(enc)
			b.add(e)
			s.bytes += entryBytes(e)
			o.written(e, int(k[0]), string(k[1:]))
		}
		key := string(k[1:])
		s.buckets[key] = b
		s.bytes += bucketBytes(key)
		if s.groups != nil && len(b.rows) > 0 {
			_, b.prefix, _ = o.rowKey(s.keys, b.rows[0].vals)
			s.addToGroup(key, b.prefix)
			for _, e := range b.rows {
				s.counted(key, b.prefix, e.count, o.nullKey)
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	if o.cfg.NullAware && stored >= 0 {
		o.modeSaved = true
		if now := o.counting; now != (stored == int(modeCounting)) {
			o.recount()
			o.modeSaved = false
		}
	}
	return nil
}

// recount sets the match count of every left row of a null-aware join
// without a residual condition the way this run counts them, from the
// right rows restored: by the rows with its very key (counting), or by
// every row it matches (pairs).
func (o *Operator) recount() {
	left, right := &o.sides[0], &o.sides[1]
	for key, b := range left.buckets {
		if len(b.rows) == 0 {
			continue
		}
		gk, isNull := key[:b.prefix], key[b.prefix:] == o.nullKey
		rows, nulls := right.groupCounts(gk)
		n := 0
		switch {
		case o.counting && isNull:
		case o.counting:
			n = bucketRows(right.buckets[key])
		case isNull:
			n = rows
		default:
			n = bucketRows(right.buckets[key]) + nulls
		}
		for _, e := range b.rows {
			e.match = n
		}
		if !b.dirty {
			b.dirty = true
			left.dirty = append(left.dirty, key)
		}
	}
}

// bucketRows returns the rows a bucket (maybe nil) holds.
func bucketRows(b *bucket) int {
	n := 0
	if b != nil {
		for _, e := range b.rows {
			n += e.count
		}
	}
	return n
}
