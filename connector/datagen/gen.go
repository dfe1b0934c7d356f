package datagen

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// generator produces the values of one column (or nested element).
type generator interface {
	// gen returns the value for the row of global index idx; now is
	// processing time in microseconds.
	gen(r *rand.Rand, idx int64, now int64) types.Value
	// size returns the most bytes a value may take, roughly: the Value
	// and what it points to.
	size() int64
}

// Sizes for the estimates of generator.size: a types.Value, and a row
// (types.Row) besides its values.
const (
	valueBytes  = 48
	rowOverhead = 48
)

// satAdd and satMul add and multiply non-negative sizes, saturating at
// math.MaxInt64 (nested lengths multiply).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// builder turns a table's options into generators, collecting the option
// keys it understands and the length of the shortest sequence.
type builder struct {
	opts   connector.Options
	known  []string
	seqLen int64 // -1: no sequence
}

func (b *builder) key(prefix, k string) string {
	key := prefix + k
	b.known = append(b.known, key)
	return key
}

func (b *builder) build(prefix string, t types.Type) (generator, error) {
	kindKey := b.key(prefix, "kind")
	nullKey := b.key(prefix, "null-rate")
	nullRate, err := b.opts.Float(nullKey, 0)
	if err != nil {
		return nil, err
	}
	if nullRate < 0 || nullRate > 1 || math.IsNaN(nullRate) {
		return nil, fmt.Errorf("option '%s' must be between 0 and 1, got %v", nullKey, nullRate)
	}
	if t.NotNull {
		nullRate = 0
	}
	kind := strings.ToLower(b.opts.String(kindKey, "random"))
	var g generator
	switch kind {
	case "random":
		g, err = b.random(prefix, t)
	case "sequence":
		g, err = b.sequence(prefix, t)
	default:
		return nil, fmt.Errorf("option '%s': unknown kind '%s' (expected 'random' or 'sequence')", kindKey, kind)
	}
	if err != nil {
		return nil, err
	}
	if nullRate > 0 {
		g = &nullable{g: g, rate: nullRate}
	}
	return g, nil
}

func (b *builder) sequence(prefix string, t types.Type) (generator, error) {
	startKey, endKey := b.key(prefix, "start"), b.key(prefix, "end")
	switch {
	case t.Kind.IsInteger(), t.Kind == types.KindDecimal, t.Kind == types.KindFloat, t.Kind == types.KindDouble,
		t.Kind.IsString():
	default:
		return nil, fmt.Errorf("option '%s': a sequence cannot generate %s values", prefix+"kind", t)
	}
	if _, ok := b.opts[startKey]; !ok {
		return nil, fmt.Errorf("option '%s' is required for a sequence", startKey)
	}
	if _, ok := b.opts[endKey]; !ok {
		return nil, fmt.Errorf("option '%s' is required for a sequence", endKey)
	}
	start, err := b.opts.Int(startKey, 0)
	if err != nil {
		return nil, err
	}
	end, err := b.opts.Int(endKey, 0)
	if err != nil {
		return nil, err
	}
	if end < start {
		return nil, fmt.Errorf("options '%s' and '%s': end %d is before start %d", startKey, endKey, end, start)
	}
	if t.Kind.IsInteger() {
		lo, hi := intRange(t.Kind)
		if start < lo || end > hi {
			return nil, fmt.Errorf("options '%s' and '%s': range [%d, %d] does not fit in %s", startKey, endKey, start, end, t)
		}
	}
	n := uint64(end - start)
	if n >= math.MaxInt64 {
		n = math.MaxInt64 - 1
	}
	if b.seqLen < 0 || int64(n)+1 < b.seqLen {
		b.seqLen = int64(n) + 1
	}
	return &sequenceGen{t: t, start: start}, nil
}

type sequenceGen struct {
	t     types.Type
	start int64
}

func (g *sequenceGen) size() int64 { return valueBytes + 48 } // a string of digits, or a big decimal

func (g *sequenceGen) gen(_ *rand.Rand, idx int64, _ int64) types.Value {
	v := g.start + idx
	switch {
	case g.t.Kind.IsInteger():
		return types.IntValue(g.t.Kind, v)
	case g.t.Kind == types.KindDecimal:
		if p := pow10(g.t.Scale); p > 0 && v < math.MaxInt64/p && v > math.MinInt64/p {
			return types.DecimalValue(v*p, g.t.Scale)
		}
		u := big.NewInt(v)
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(g.t.Scale)), nil))
		return types.BigDecimalValue(u, g.t.Scale)
	case g.t.Kind == types.KindFloat:
		return types.FloatValue(float32(v))
	case g.t.Kind == types.KindDouble:
		return types.DoubleValue(float64(v))
	default:
		return types.StringValue(strconv.FormatInt(v, 10)).WithKind(g.t.Kind)
	}
}

// pow10 returns 10^n, or 0 when it does not fit in an int64.
func pow10(n int) int64 {
	p := int64(1)
	for range n {
		if p > math.MaxInt64/10 {
			return 0
		}
		p *= 10
	}
	return p
}

type nullable struct {
	g    generator
	rate float64
}

func (g *nullable) size() int64 { return g.g.size() }

func (g *nullable) gen(r *rand.Rand, idx int64, now int64) types.Value {
	if r.Float64() < g.rate {
		return types.NullValue
	}
	return g.g.gen(r, idx, now)
}

func intRange(k types.Kind) (int64, int64) {
	switch k {
	case types.KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case types.KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case types.KindInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func (b *builder) random(prefix string, t types.Type) (generator, error) {
	switch k := t.Kind; {
	case k == types.KindBoolean:
		return boolGen{}, nil
	case k.IsInteger(), k == types.KindIntervalDayTime, k == types.KindIntervalYearMonth:
		lo, hi := intRange(k)
		if !k.IsInteger() {
			lo, hi = 0, 1000 // intervals: a small default span
		}
		minKey, maxKey := b.key(prefix, "min"), b.key(prefix, "max")
		mn, err := b.opts.Int(minKey, lo)
		if err != nil {
			return nil, err
		}
		mx, err := b.opts.Int(maxKey, hi)
		if err != nil {
			return nil, err
		}
		if mn < lo || mx > hi {
			return nil, fmt.Errorf("options '%s' and '%s': range [%d, %d] does not fit in %s", minKey, maxKey, mn, mx, t)
		}
		if mx < mn {
			return nil, fmt.Errorf("options '%s' and '%s': max %d is below min %d", minKey, maxKey, mx, mn)
		}
		return &intGen{kind: k, min: mn, span: uint64(mx - mn)}, nil
	case k == types.KindFloat || k == types.KindDouble:
		// Flink's defaults: the smallest positive to the largest value.
		lo, hi := math.SmallestNonzeroFloat64, math.MaxFloat64
		if k == types.KindFloat {
			lo, hi = math.SmallestNonzeroFloat32, math.MaxFloat32
		}
		minKey, maxKey := b.key(prefix, "min"), b.key(prefix, "max")
		mn, err := b.opts.Float(minKey, lo)
		if err != nil {
			return nil, err
		}
		mx, err := b.opts.Float(maxKey, hi)
		if err != nil {
			return nil, err
		}
		if !(mx >= mn) || math.IsInf(mn, 0) || math.IsInf(mx, 0) {
			return nil, fmt.Errorf("options '%s' and '%s': invalid range [%v, %v]", minKey, maxKey, mn, mx)
		}
		return &floatGen{kind: k, min: mn, max: mx}, nil
	case k == types.KindDecimal:
		return b.randomDecimal(prefix, t)
	case k.IsString() || k.IsBinary():
		lenKey, varKey := b.key(prefix, "length"), b.key(prefix, "var-len")
		def := int64(100)
		if t.Kind == types.KindChar || t.Kind == types.KindBinary || int64(t.Precision) < def {
			def = int64(t.Precision)
		}
		n, err := b.opts.Int(lenKey, def)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 1<<24 {
			return nil, fmt.Errorf("option '%s': length %d out of range", lenKey, n)
		}
		vl, err := b.opts.Bool(varKey, false)
		if err != nil {
			return nil, err
		}
		return &stringGen{kind: k, n: int(n), varLen: vl, binary: k.IsBinary()}, nil
	case k.IsTimestamp() || k == types.KindDate || k == types.KindTime:
		pastKey := b.key(prefix, "max-past")
		past, err := b.opts.Duration(pastKey, 0)
		if err != nil {
			return nil, err
		}
		if past < 0 {
			return nil, fmt.Errorf("option '%s' must not be negative", pastKey)
		}
		return &timeGen{kind: k, past: past.Microseconds(), unit: precisionUnit(t)}, nil
	case k == types.KindArray || k == types.KindMultiset:
		n, err := b.length(prefix)
		if err != nil {
			return nil, err
		}
		eg, err := b.build(prefix+"element.", *t.Elem)
		if err != nil {
			return nil, err
		}
		return &arrayGen{kind: k, n: n, elem: eg}, nil
	case k == types.KindMap:
		n, err := b.length(prefix)
		if err != nil {
			return nil, err
		}
		kg, err := b.build(prefix+"key.", *t.Elem)
		if err != nil {
			return nil, err
		}
		vg, err := b.build(prefix+"value.", *t.Value)
		if err != nil {
			return nil, err
		}
		return &mapGen{n: n, key: kg, val: vg}, nil
	case k == types.KindRow:
		fg := make([]generator, len(t.Fields))
		for i, f := range t.Fields {
			g, err := b.build(prefix+f.Name+".", f.Type)
			if err != nil {
				return nil, err
			}
			fg[i] = g
		}
		return &rowGen{fields: fg}, nil
	}
	return nil, fmt.Errorf("datagen cannot generate %s values", t)
}

func (b *builder) length(prefix string) (int, error) {
	key := b.key(prefix, "length")
	n, err := b.opts.Int(key, 3)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("option '%s': length %d out of range", key, n)
	}
	return int(n), nil
}

func (b *builder) randomDecimal(prefix string, t types.Type) (generator, error) {
	p, s := t.Precision, t.Scale
	if p <= 0 || p > 38 || s < 0 || s > p {
		return nil, fmt.Errorf("datagen cannot generate %s values", t)
	}
	digits := min(p, 18)
	lim := int64(1)
	for range digits {
		lim *= 10
	}
	lim-- // largest unscaled value with 'digits' digits
	lo, hi := -lim, lim
	minKey, maxKey := b.key(prefix, "min"), b.key(prefix, "max")
	scale := math.Pow10(s)
	for _, kv := range []struct {
		key string
		dst *int64
	}{{minKey, &lo}, {maxKey, &hi}} {
		if _, ok := b.opts[kv.key]; !ok {
			continue
		}
		f, err := b.opts.Float(kv.key, 0)
		if err != nil {
			return nil, err
		}
		u := math.Round(f * scale)
		if math.IsNaN(u) || u < float64(-lim) || u > float64(lim) {
			return nil, fmt.Errorf("option '%s': %v does not fit in %s", kv.key, f, t)
		}
		*kv.dst = int64(u)
	}
	if hi < lo {
		return nil, fmt.Errorf("options '%s' and '%s': max is below min", minKey, maxKey)
	}
	return &decimalGen{scale: s, min: lo, span: uint64(hi - lo)}, nil
}

// precisionUnit returns the microseconds of one unit of a time type's
// precision (1 for 6 and more, 1000 for 3, 1e6 for 0).
func precisionUnit(t types.Type) int64 {
	u := int64(1)
	for p := t.Precision; p < 6; p++ {
		u *= 10
	}
	return u
}

type boolGen struct{}

func (boolGen) size() int64 { return valueBytes }

func (boolGen) gen(r *rand.Rand, _ int64, _ int64) types.Value {
	return types.BoolValue(r.Uint64()&1 == 1)
}

type intGen struct {
	kind types.Kind
	min  int64
	span uint64 // max - min
}

func (g *intGen) size() int64 { return valueBytes }

func (g *intGen) gen(r *rand.Rand, _ int64, _ int64) types.Value {
	var off uint64
	if g.span == math.MaxUint64 {
		off = r.Uint64()
	} else {
		off = r.Uint64N(g.span + 1)
	}
	return types.IntValue(g.kind, g.min+int64(off))
}

type floatGen struct {
	kind     types.Kind
	min, max float64
}

func (g *floatGen) size() int64 { return valueBytes }

func (g *floatGen) gen(r *rand.Rand, _ int64, _ int64) types.Value {
	u := r.Float64()
	f := g.min*(1-u) + g.max*u // no overflow for wide ranges
	if g.kind == types.KindFloat {
		return types.FloatValue(float32(f))
	}
	return types.DoubleValue(f)
}

type decimalGen struct {
	scale int
	min   int64
	span  uint64
}

func (g *decimalGen) size() int64 { return valueBytes }

func (g *decimalGen) gen(r *rand.Rand, _ int64, _ int64) types.Value {
	return types.DecimalValue(g.min+int64(r.Uint64N(g.span+1)), g.scale)
}

type stringGen struct {
	kind   types.Kind
	n      int
	varLen bool
	binary bool
}

func (g *stringGen) size() int64 { return valueBytes + int64(g.n) }

const hexDigits = "0123456789abcdef"

func (g *stringGen) gen(r *rand.Rand, _ int64, _ int64) types.Value {
	n := g.n
	if g.varLen {
		n = r.IntN(n + 1)
	}
	buf := make([]byte, n)
	var bits uint64
	for i := range buf {
		if i%8 == 0 {
			bits = r.Uint64()
		}
		if g.binary {
			buf[i] = byte(bits)
		} else {
			buf[i] = hexDigits[bits&15]
		}
		bits >>= 8
	}
	return types.BytesValue(buf).WithKind(g.kind)
}

type timeGen struct {
	kind types.Kind
	past int64 // microseconds
	unit int64 // truncation unit, microseconds
}

func (g *timeGen) size() int64 { return valueBytes }

const microsPerDay = int64(24 * time.Hour / time.Microsecond)

func (g *timeGen) gen(r *rand.Rand, _ int64, now int64) types.Value {
	ts := now
	if g.past > 0 {
		ts -= r.Int64N(g.past + 1)
	}
	switch g.kind {
	case types.KindDate:
		return types.DateValue(floorDiv(ts, microsPerDay))
	case types.KindTime:
		t := ts - floorDiv(ts, microsPerDay)*microsPerDay
		return types.TimeValue(t - t%g.unit)
	case types.KindTimestampLTZ:
		return types.TimestampLTZValue(ts - mod(ts, g.unit))
	}
	return types.TimestampValue(ts - mod(ts, g.unit))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func mod(a, b int64) int64 { return a - floorDiv(a, b)*b }

type arrayGen struct {
	kind types.Kind
	n    int
	elem generator
}

func (g *arrayGen) size() int64 { return satAdd(valueBytes, satMul(int64(g.n), g.elem.size())) }

func (g *arrayGen) gen(r *rand.Rand, idx int64, now int64) types.Value {
	e := make([]types.Value, g.n)
	for i := range e {
		e[i] = g.elem.gen(r, idx, now)
	}
	if g.kind == types.KindMultiset {
		return types.MultisetValue(e)
	}
	return types.ArrayValue(e)
}

type mapGen struct {
	n        int
	key, val generator
}

// size counts the keys twice: the map keeps them, and their encodings
// are kept while it is built.
func (g *mapGen) size() int64 {
	return satAdd(2*valueBytes, satMul(int64(g.n), satAdd(satMul(2, g.key.size()), g.val.size())))
}

func (g *mapGen) gen(r *rand.Rand, idx int64, now int64) types.Value {
	m := &types.MapValue{Keys: make([]types.Value, 0, g.n), Values: make([]types.Value, 0, g.n)}
	seen := make(map[string]bool, g.n)
	var kb []byte
	for range g.n {
		k := g.key.gen(r, idx, now)
		kb = types.AppendKey(kb[:0], k)
		if seen[string(kb)] {
			continue // map keys are unique
		}
		seen[string(kb)] = true
		m.Keys = append(m.Keys, k)
		m.Values = append(m.Values, g.val.gen(r, idx, now))
	}
	return types.NewMapValue(m)
}

type rowGen struct {
	fields []generator
}

func (g *rowGen) size() int64 {
	n := int64(valueBytes)
	for _, f := range g.fields {
		n = satAdd(n, f.size())
	}
	return n
}

func (g *rowGen) gen(r *rand.Rand, idx int64, now int64) types.Value {
	f := make([]types.Value, len(g.fields))
	for i, fg := range g.fields {
		f[i] = fg.gen(r, idx, now)
	}
	return types.RowValue(f)
}
