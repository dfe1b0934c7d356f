package expr

import (
	"fmt"
	"math"

	"github.com/sluicesql/sluice/types"
)

// Arithmetic follows Flink's typing:
//
//   - integers: the wider integer type; overflow wraps as in Java; '/' is
//     integer division truncating toward zero; '%' takes the type of the
//     divisor; division by zero is an error.
//   - any DOUBLE gives DOUBLE; FLOAT with integers gives FLOAT; FLOAT with
//     DECIMAL gives DOUBLE. Division by zero gives Infinity or NaN.
//   - DECIMAL with DECIMAL or integers is exact, typed by
//     types.DecimalAddType, DecimalMulType, DecimalDivType and
//     DecimalModType; a result that does not fit its type is NULL.
//   - TIMESTAMP, TIMESTAMP_LTZ, DATE and TIME ± INTERVAL keep their type;
//     INTERVAL ± INTERVAL, INTERVAL * number and INTERVAL / number give
//     an INTERVAL. TIMESTAMP - TIMESTAMP is not allowed: use
//     TIMESTAMPDIFF.

var arithSigs = []signature{sig(cNumeric, cNumeric), sig(cTemporal, cInterval), sig(cInterval, cInterval)}

func isNullType(t types.Type) bool { return t.Kind == types.KindNull }

func bindArith(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if name == "MOD" {
		if len(args) != 2 || !cNumeric.match(args[0]) || !cNumeric.match(args[1]) {
			return nil, types.Type{}, argError(name, args, []signature{sig(cExact, cExact), sig(cNumeric, cNumeric)})
		}
		name = "%"
	}
	if len(args) != 2 {
		return nil, types.Type{}, argError(name, args, arithSigs)
	}
	a, c := args[0].Type(), args[1].Type()
	ak, ck := a.Kind, c.Kind
	num := func(k types.Kind) bool { return k.IsNumeric() || k == types.KindNull }
	temporal := func(k types.Kind) bool {
		return k == types.KindDate || k == types.KindTime || k.IsTimestamp()
	}
	interval := func(k types.Kind) bool {
		return k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth
	}
	switch {
	case num(ak) && num(ck):
		if isNullType(a) && isNullType(c) {
			return args, types.Null, nil
		}
		t, err := arithType(name, a, c)
		if err != nil {
			return nil, types.Type{}, fmt.Errorf("cannot apply '%s' to %s: %w", name, typeList(argTypes(args)), err)
		}
		if t.Kind == types.KindDouble || t.Kind == types.KindFloat {
			// Approximate arithmetic reads both operands as t.
			args = []Node{b.coerce(args[0], t), b.coerce(args[1], t)}
		}
		return args, nullableIf(t, args), nil
	case (name == "+" || name == "-") && temporal(ak) && interval(ck):
		if ak == types.KindTime && ck == types.KindIntervalYearMonth {
			break
		}
		return args, nullableIf(a.WithoutTimeAttr(), args), nil
	case name == "+" && interval(ak) && temporal(ck):
		if ck == types.KindTime && ak == types.KindIntervalYearMonth {
			break
		}
		return args, nullableIf(c.WithoutTimeAttr(), args), nil
	case (name == "+" || name == "-") && interval(ak) && ak == ck:
		return args, nullableIf(a, args), nil
	case name == "*" && interval(ak) && num(ck), name == "/" && interval(ak) && num(ck):
		return args, nullableIf(a, args), nil
	case name == "*" && num(ak) && interval(ck):
		return args, nullableIf(c, args), nil
	case name == "-" && temporal(ak) && temporal(ck):
		return nil, types.Type{}, fmt.Errorf("cannot apply '-' to %s: subtracting date/time values is not supported, use TIMESTAMPDIFF(unit, a, b)", typeList(argTypes(args)))
	}
	return nil, types.Type{}, argError(name, args, arithSigs)
}

// arithType returns the result type of a numeric operator.
func arithType(op string, a, b types.Type) (types.Type, error) {
	if isNullType(a) {
		a = b
	}
	if isNullType(b) {
		b = a
	}
	ak, bk := a.Kind, b.Kind
	switch {
	case ak == types.KindDouble || bk == types.KindDouble:
		return types.Double, nil
	case ak == types.KindFloat || bk == types.KindFloat:
		if ak == types.KindDecimal || bk == types.KindDecimal {
			return types.Double, nil
		}
		return types.Float, nil
	case ak == types.KindDecimal || bk == types.KindDecimal:
		da, _ := types.DecimalTypeOf(a)
		db, _ := types.DecimalTypeOf(b)
		switch op {
		case "+", "-":
			return types.DecimalAddType(da, db), nil
		case "*":
			return types.DecimalMulType(da, db), nil
		case "/":
			return types.DecimalDivType(da, db), nil
		default:
			return types.DecimalModType(da, db), nil
		}
	}
	if op == "%" {
		return types.Type{Kind: bk}, nil
	}
	if ak >= bk {
		return types.Type{Kind: ak}, nil
	}
	return types.Type{Kind: bk}, nil
}

// wrapInt narrows n to integer kind k as Java's integer arithmetic does.
func wrapInt(k types.Kind, n int64) int64 {
	switch k {
	case types.KindTinyInt:
		return int64(int8(n))
	case types.KindSmallInt:
		return int64(int16(n))
	case types.KindInt:
		return int64(int32(n))
	}
	return n
}

func numOf(v types.Value) float64 {
	if v.Kind() == types.KindDouble || v.Kind() == types.KindFloat {
		return v.Float()
	}
	return types.ToFloat(v)
}

func compileArith(c *compiler, call *Call, args []Eval) (Eval, error) {
	at, bt := call.Args[0].Type(), call.Args[1].Type()
	t := call.T
	x, y := args[0], args[1]
	op := call.Name
	if op == "MOD" {
		op = "%"
	}
	if t.Kind == types.KindNull {
		return func([]types.Value) (types.Value, error) { return types.NullValue, nil }, nil
	}
	switch {
	case t.Kind.IsInteger():
		return compileIntArith(call, op, t.Kind, x, y), nil
	case t.Kind == types.KindDouble || t.Kind == types.KindFloat:
		return compileFloatArith(call, op, t.Kind, x, y), nil
	case t.Kind == types.KindDecimal:
		return compileDecimalArith(call, op, t, x, y), nil
	}
	ak, bk := at.Kind, bt.Kind
	interval := func(k types.Kind) bool {
		return k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth
	}
	switch {
	case interval(ak) && interval(bk):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return strict2(x, y, func(p, q types.Value) (types.Value, error) {
			var r int64
			ok := true
			if sign > 0 {
				r, ok = addChecked(p.Int(), q.Int())
			} else if q.Int() == math.MinInt64 {
				ok = false
			} else {
				r, ok = addChecked(p.Int(), -q.Int())
			}
			if !ok {
				return types.NullValue, evalErr(call, errIntervalRange)
			}
			return intervalValue(t.Kind, r), nil
		}), nil
	case interval(ak) && (op == "*" || op == "/"):
		return strict2(x, y, func(p, q types.Value) (types.Value, error) {
			return scaleInterval(call, p, q, op == "/")
		}), nil
	case interval(bk) && op == "*":
		return strict2(x, y, func(p, q types.Value) (types.Value, error) {
			return scaleInterval(call, q, p, false)
		}), nil
	case interval(ak):
		// interval + datetime
		return compileShift(c, call, t, ak, y, x, 1), nil
	default:
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return compileShift(c, call, t, bk, x, y, sign), nil
	}
}

func intervalValue(k types.Kind, n int64) types.Value {
	if k == types.KindIntervalYearMonth {
		return types.IntervalYearMonthValue(n)
	}
	return types.IntervalDayTimeValue(n)
}

func scaleInterval(call *Call, iv, n types.Value, divide bool) (types.Value, error) {
	k := iv.Kind()
	if n.Kind().IsInteger() {
		if divide {
			if n.Int() == 0 {
				return types.NullValue, evalErr(call, types.ErrDivisionByZero)
			}
			if n.Int() == -1 && iv.Int() == math.MinInt64 {
				return types.NullValue, evalErr(call, errIntervalRange)
			}
			return intervalValue(k, iv.Int()/n.Int()), nil
		}
		r, ok := mulChecked(iv.Int(), n.Int())
		if !ok {
			return types.NullValue, evalErr(call, errIntervalRange)
		}
		return intervalValue(k, r), nil
	}
	f := numOf(n)
	r := float64(iv.Int())
	if divide {
		if f == 0 {
			return types.NullValue, evalErr(call, types.ErrDivisionByZero)
		}
		r /= f
	} else {
		r *= f
	}
	if math.IsNaN(r) || math.IsInf(r, 0) || r >= math.MaxInt64 || r < math.MinInt64 {
		return types.NullValue, evalErr(call, errIntervalRange)
	}
	return intervalValue(k, int64(r)), nil
}

// compileShift adds sign*interval to a DATE, TIME, TIMESTAMP or
// TIMESTAMP_LTZ value of type t. A DATE, TIMESTAMP or TIMESTAMP_LTZ
// result outside the supported range is an error (see timerange.go); a
// TIME wraps around midnight, as in Flink.
func compileShift(c *compiler, call *Call, t types.Type, ik types.Kind, dt, iv Eval, sign int64) Eval {
	loc := c.loc
	if ik == types.KindIntervalYearMonth {
		return strict2(dt, iv, func(d, m types.Value) (types.Value, error) {
			months, ok := mulChecked(sign, m.Int())
			switch t.Kind {
			case types.KindDate:
				days, ok2 := addMonths(d.Int(), months)
				return dateResult(call, days, ok && ok2)
			case types.KindTimestamp:
				r, ok2 := addMonthsMicros(d.Int(), months)
				return timestampResult(call, t.Kind, r, ok && ok2)
			default: // TIMESTAMP_LTZ: in the session time zone
				local, ok2 := addMonthsMicros(types.InstantToLocal(d.Int(), loc), months)
				if !ok || !ok2 {
					return timestampResult(call, t.Kind, 0, false)
				}
				return timestampResult(call, t.Kind, types.LocalToInstant(local, loc), true)
			}
		})
	}
	if t.Kind == types.KindTimestamp || t.Kind == types.KindTimestampLTZ {
		// A timestamp column shifted by a constant (a WATERMARK
		// expression, a window bound): read the column directly.
		dn, in := call.Args[0], call.Args[1]
		if dn.Type().Kind == types.KindIntervalDayTime {
			dn, in = in, dn
		}
		col, ok1 := dn.(*Column)
		lit, ok2 := in.(*Literal)
		if ok1 && ok2 && !lit.V.IsNull() {
			idx, k := col.Index, t.Kind
			micros, okm := mulChecked(sign, lit.V.Int())
			return func(row []types.Value) (types.Value, error) {
				v := row[idx]
				if v.IsNull() {
					return types.NullValue, nil
				}
				r, ok := addChecked(v.Int(), micros)
				return timestampResult(call, k, r, ok && okm)
			}
		}
	}
	return strict2(dt, iv, func(d, m types.Value) (types.Value, error) {
		micros, ok := mulChecked(sign, m.Int())
		switch t.Kind {
		case types.KindDate:
			return dateResult(call, d.Int()+micros/types.MicrosPerDay, ok)
		case types.KindTime:
			return types.TimeValue(types.FloorMod(d.Int()+micros%types.MicrosPerDay, types.MicrosPerDay)), nil
		}
		r, ok2 := addChecked(d.Int(), micros)
		return timestampResult(call, t.Kind, r, ok && ok2)
	})
}

// addMonths adds months to a DATE, clipping the day to the end of the
// month (2020-01-31 + 1 month = 2020-02-29). It reports false for a shift
// so large that no date stays in range.
func addMonths(days, months int64) (int64, bool) {
	if months > maxMonthShift || months < -maxMonthShift || !types.DateInRange(days) {
		return 0, false
	}
	y, m, d := types.CivilFromDate(days)
	total := int64(y)*12 + int64(m-1) + months
	ny := int(types.FloorDiv(total, 12))
	nm := int(types.FloorMod(total, 12)) + 1
	if last := types.DaysInMonth(ny, nm); d > last {
		d = last
	}
	return types.DateFromCivil(ny, nm, d), true
}

// addMonthsMicros adds months to a TIMESTAMP; see addMonths.
func addMonthsMicros(micros, months int64) (int64, bool) {
	days := types.FloorDiv(micros, types.MicrosPerDay)
	tod := micros - days*types.MicrosPerDay
	nd, ok := addMonths(days, months)
	return nd*types.MicrosPerDay + tod, ok
}

func compileIntArith(call *Call, op string, k types.Kind, x, y Eval) Eval {
	divZero := func() (types.Value, error) {
		return types.NullValue, evalErr(call, types.ErrDivisionByZero)
	}
	switch op {
	case "+":
		return func(row []types.Value) (types.Value, error) {
			a, err := x(row)
			if err != nil || a.IsNull() {
				return types.NullValue, err
			}
			b, err := y(row)
			if err != nil || b.IsNull() {
				return types.NullValue, err
			}
			return types.IntValue(k, wrapInt(k, a.Int()+b.Int())), nil
		}
	case "-":
		return func(row []types.Value) (types.Value, error) {
			a, err := x(row)
			if err != nil || a.IsNull() {
				return types.NullValue, err
			}
			b, err := y(row)
			if err != nil || b.IsNull() {
				return types.NullValue, err
			}
			return types.IntValue(k, wrapInt(k, a.Int()-b.Int())), nil
		}
	case "*":
		return func(row []types.Value) (types.Value, error) {
			a, err := x(row)
			if err != nil || a.IsNull() {
				return types.NullValue, err
			}
			b, err := y(row)
			if err != nil || b.IsNull() {
				return types.NullValue, err
			}
			return types.IntValue(k, wrapInt(k, a.Int()*b.Int())), nil
		}
	case "/":
		return func(row []types.Value) (types.Value, error) {
			a, err := x(row)
			if err != nil || a.IsNull() {
				return types.NullValue, err
			}
			b, err := y(row)
			if err != nil || b.IsNull() {
				return types.NullValue, err
			}
			if b.Int() == 0 {
				return divZero()
			}
			return types.IntValue(k, wrapInt(k, a.Int()/b.Int())), nil
		}
	default: // %
		return func(row []types.Value) (types.Value, error) {
			a, err := x(row)
			if err != nil || a.IsNull() {
				return types.NullValue, err
			}
			b, err := y(row)
			if err != nil || b.IsNull() {
				return types.NullValue, err
			}
			if b.Int() == 0 {
				return divZero()
			}
			return types.IntValue(k, wrapInt(k, a.Int()%b.Int())), nil
		}
	}
}

// compileFloatArith compiles approximate arithmetic; the binder has
// converted both operands to the result type, so they read as Float().
func compileFloatArith(call *Call, op string, k types.Kind, x, y Eval) Eval {
	if l, ok := call.Args[1].(*Literal); ok && !l.V.IsNull() && k == types.KindDouble {
		kv := l.V.Float()
		if col, ok := call.Args[0].(*Column); ok {
			idx := col.Index
			switch op {
			case "+":
				return func(row []types.Value) (types.Value, error) {
					if a := row[idx]; !a.IsNull() {
						return types.DoubleValue(a.Float() + kv), nil
					}
					return types.NullValue, nil
				}
			case "-":
				return func(row []types.Value) (types.Value, error) {
					if a := row[idx]; !a.IsNull() {
						return types.DoubleValue(a.Float() - kv), nil
					}
					return types.NullValue, nil
				}
			case "*":
				return func(row []types.Value) (types.Value, error) {
					if a := row[idx]; !a.IsNull() {
						return types.DoubleValue(a.Float() * kv), nil
					}
					return types.NullValue, nil
				}
			case "/":
				return func(row []types.Value) (types.Value, error) {
					if a := row[idx]; !a.IsNull() {
						return types.DoubleValue(a.Float() / kv), nil
					}
					return types.NullValue, nil
				}
			}
		}
	}
	isFloat := k == types.KindFloat
	var opc byte
	switch op {
	case "+", "-", "*", "/":
		opc = op[0]
	default:
		opc = '%'
	}
	return func(row []types.Value) (types.Value, error) {
		a, err := x(row)
		if err != nil || a.IsNull() {
			return types.NullValue, err
		}
		b, err := y(row)
		if err != nil || b.IsNull() {
			return types.NullValue, err
		}
		p, q := a.Float(), b.Float()
		var r float64
		switch opc {
		case '+':
			r = p + q
		case '-':
			r = p - q
		case '*':
			r = p * q
		case '/':
			r = p / q
		default:
			r = math.Mod(p, q)
		}
		if isFloat {
			return types.FloatValue(float32(r)), nil
		}
		return types.DoubleValue(r), nil
	}
}

func compileDecimalArith(call *Call, op string, t types.Type, x, y Eval) Eval {
	p, s := t.Precision, t.Scale
	var f func(a, b types.Value, p, s int) (types.Value, error)
	switch op {
	case "+":
		f = types.DecimalAdd
	case "-":
		f = types.DecimalSub
	case "*":
		f = types.DecimalMul
	case "/":
		f = types.DecimalDiv
	default:
		f = types.DecimalMod
	}
	return func(row []types.Value) (types.Value, error) {
		a, err := x(row)
		if err != nil || a.IsNull() {
			return types.NullValue, err
		}
		b, err := y(row)
		if err != nil || b.IsNull() {
			return types.NullValue, err
		}
		r, err := f(a, b, p, s)
		if err != nil {
			return types.NullValue, evalErr(call, err)
		}
		return r, nil
	}
}

func bindNeg(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cNumeric), sig(cInterval)}
	if len(args) != 1 || !(cNumeric.match(args[0]) || cInterval.match(args[0])) {
		return nil, types.Type{}, argError("-", args, sigs)
	}
	return args, args[0].Type().WithoutTimeAttr(), nil
}

func compileNeg(c *compiler, call *Call, args []Eval) (Eval, error) {
	k := call.T.Kind
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		switch {
		case k.IsInteger():
			return types.IntValue(k, wrapInt(k, -v.Int())), nil
		case k == types.KindDouble:
			return types.DoubleValue(-v.Float()), nil
		case k == types.KindFloat:
			return types.FloatValue(float32(-v.Float())), nil
		case k == types.KindDecimal:
			return types.DecimalNeg(v), nil
		default:
			if v.Int() == math.MinInt64 {
				return types.NullValue, evalErr(call, errIntervalRange)
			}
			return intervalValue(k, -v.Int()), nil
		}
	}), nil
}
