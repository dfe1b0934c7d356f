package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"math"

	"github.com/sluicesql/sluice/types"
)

// addBuiltins registers the built-in operators and functions. Each registry
// gets its own table; the definitions themselves hold no state.
func addBuiltins(r *Registry) {
	type bindFn = func(b *Builder, name string, args []Node) ([]Node, types.Type, error)
	type compileFn = func(c *compiler, call *Call, args []Eval) (Eval, error)
	fn := func(bind bindFn, compile compileFn, names ...string) {
		r.def(&builtin{bind: bind, compile: compile}, false, names...)
	}
	nondet := func(syn syntax, bind bindFn, compile compileFn, names ...string) {
		r.def(&builtin{syntax: syn, bind: bind, compile: compile}, true, names...)
	}
	op := func(b *builtin, names ...string) {
		b.operator = true
		r.def(b, false, names...)
	}

	// Operators.
	op(&builtin{syntax: synInfix, bind: bindArith, compile: compileArith}, "+", "-", "*", "/", "%")
	op(&builtin{syntax: synPrefix, bind: bindNeg, compile: compileNeg}, "NEG")
	op(&builtin{syntax: synInfix, bind: bindCompare, tri: compileCompare}, "=", "<>", "<", "<=", ">", ">=")
	op(&builtin{syntax: synInfix, bind: bindCompare, tri: compileDistinct}, "IS DISTINCT FROM", "IS NOT DISTINCT FROM")
	op(&builtin{syntax: synInfix, bind: bindLogic, tri: compileLogic}, "AND", "OR")
	op(&builtin{syntax: synPrefix, bind: bindLogic, tri: compileLogic}, "NOT")
	op(&builtin{syntax: synPostfix, bind: bindIs, tri: compileIs}, "IS NULL", "IS NOT NULL", "IS TRUE",
		"IS FALSE", "IS NOT TRUE", "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN")
	op(&builtin{syntax: synLike, bind: bindLike, tri: compileLike}, "LIKE", "NOT LIKE", "SIMILAR TO", "NOT SIMILAR TO")
	op(&builtin{syntax: synIn, bind: bindIn, tri: compileIn}, "IN", "NOT IN")
	op(&builtin{syntax: synBetween, bind: bindBetween, tri: compileBetween}, "BETWEEN", "NOT BETWEEN")
	op(&builtin{syntax: synInfix, bind: typed(strictly(types.String), sig(cString, cString)), compile: compileConcat}, "||")
	op(&builtin{bind: bindItem, compile: compileItem}, "ITEM")
	op(&builtin{bind: bindField, compile: compileField}, "FIELD")
	fn(bindRow, compileRow, "ROW")
	fn(bindArray, compileArray, "ARRAY")
	fn(bindMap, compileArray, "MAP")
	fn(typed(strictly(types.Int), sig(cCollection)), compileCardinality, "CARDINALITY")

	// Conditional functions.
	fn(bindCoalesce, compileCoalesce, "COALESCE", "IFNULL")
	fn(bindNullIf, compileNullIf, "NULLIF")
	fn(bindIf, compileIf, "IF")
	fn(bindGreatest, compileGreatest, "GREATEST", "LEAST")

	// String functions.
	s1 := sig(cString)
	fn(typed(strictly(types.Int), s1), compileCharLength, "CHAR_LENGTH", "CHARACTER_LENGTH")
	fn(typed(strictly(types.String), s1), compileUpper, "UPPER", "LOWER")
	fn(bindTrim, compileTrim, "TRIM")
	fn(typed(strictly(types.String), s1, sig(cString, cString)), compileLRTrim, "LTRIM", "RTRIM")
	fn(typed(always(types.String), sig(cString, cInteger), sig(cString, cInteger, cInteger)), compileSubstring,
		"SUBSTRING", "SUBSTR")
	fn(typed(strictly(types.String), vsig(cString, cString)), compileConcat, "CONCAT")
	fn(typed(func(args []Node) (types.Type, error) { return nullableIf(types.String, args[:1]), nil },
		vsig(cString, cString, cString)), compileConcatWS, "CONCAT_WS")
	fn(typed(strictly(types.String), sig(cString, cString, cString)), compileReplace, "REPLACE")
	fn(typed(strictly(types.Int), sig(cString, cString)), compilePosition, "POSITION")
	fn(typed(strictly(types.Int), sig(cString, cString), sig(cString, cString, cInteger)), compilePosition, "LOCATE")
	fn(typed(strictly(types.Int), sig(cString, cString), sig(cString, cString, cInteger),
		sig(cString, cString, cInteger, cInteger)), compileInstr, "INSTR")
	fn(typed(always(types.String), sig(cString, cInteger, cString)), compilePad, "LPAD", "RPAD")
	fn(typed(always(types.String), sig(cString, cString, cInteger), sig(cString, cInteger, cInteger)),
		compileSplitIndex, "SPLIT_INDEX")
	fn(typed(strictly(types.Boolean), sig(cString, cString)), compileRegexp, "REGEXP")
	fn(typed(always(types.String), sig(cString, cString), sig(cString, cString, cInteger)), compileRegexpExtract,
		"REGEXP_EXTRACT")
	fn(typed(always(types.String), sig(cString, cString, cString)), compileRegexpReplace, "REGEXP_REPLACE")
	fn(typed(strictly(types.String), s1), compileStrFunc(initcap), "INITCAP")
	fn(typed(strictly(types.String), s1), compileStrFunc(reverse), "REVERSE")
	fn(typed(strictly(types.String), sig(cString, cInteger)), compileRepeat, "REPEAT")
	fn(typed(strictly(types.String), sig(cString, cInteger)), compileLeftRight, "LEFT", "RIGHT")
	fn(typed(strictly(types.String), s1), compileHash(md5.New), "MD5")
	fn(typed(strictly(types.String), s1), compileHash(sha1.New), "SHA1")
	fn(typed(strictly(types.String), s1), compileHash(sha256.New224), "SHA224")
	fn(typed(strictly(types.String), s1), compileHash(sha256.New), "SHA256")
	fn(typed(strictly(types.String), s1), compileHash(sha512.New384), "SHA384")
	fn(typed(strictly(types.String), s1), compileHash(sha512.New), "SHA512")
	fn(typed(always(types.String), sig(cString, cInteger)), compileSHA2, "SHA2")
	fn(typed(strictly(types.String), s1), compileToBase64, "TO_BASE64")
	fn(typed(strictly(types.String), s1), compileFromBase64, "FROM_BASE64")
	fn(typed(strictly(types.Int), s1), compileASCII, "ASCII")
	fn(typed(strictly(types.String), sig(cInteger)), compileChr, "CHR")
	fn(typed(strictly(types.String), sig(cString, cString, cInteger), sig(cString, cString, cInteger, cInteger)),
		compileOverlay, "OVERLAY")
	nondet(synFunc, typed(func([]Node) (types.Type, error) { return types.String.WithNullable(false), nil }, sig()),
		compileUUID, "UUID")
	fn(bindJSONValue, compileJSONValue, "JSON_VALUE")

	// Numeric functions.
	n1 := sig(cNumeric)
	fn(typed(sameAs(0), n1), compileAbs, "ABS")
	fn(bindArith, compileArith, "MOD")
	d1 := typed(strictly(types.Double), n1)
	d2 := typed(strictly(types.Double), sig(cNumeric, cNumeric))
	fn(d2, compileDouble2(math.Pow), "POWER", "POW")
	fn(d1, compileDouble1(math.Sqrt), "SQRT")
	fn(d1, compileDouble1(math.Log), "LN")
	fn(d1, compileDouble1(math.Log10), "LOG10")
	fn(d1, compileDouble1(func(x float64) float64 { return math.Log(x) / math.Log(2) }), "LOG2")
	fn(typed(strictly(types.Double), n1, sig(cNumeric, cNumeric)), compileLog, "LOG")
	fn(d1, compileDouble1(math.Exp), "EXP")
	fn(bindRound, compileRound, "ROUND", "TRUNCATE")
	fn(bindFloorCeil, compileFloorCeil, "FLOOR", "CEIL", "CEILING")
	fn(typed(sameAs(0), n1), compileSign, "SIGN")
	nondet(synFunc, typed(func([]Node) (types.Type, error) { return types.Double.WithNullable(false), nil },
		sig(), sig(cInteger)), compileRand, "RAND")
	nondet(synFunc, typed(always(types.Int), sig(cInteger), sig(cInteger, cInteger)), compileRandInteger, "RAND_INTEGER")
	constant := typed(func([]Node) (types.Type, error) { return types.Double.WithNullable(false), nil }, sig())
	fn(constant, compileConstDouble(math.Pi), "PI")
	fn(constant, compileConstDouble(math.E), "E")
	fn(d1, compileDouble1(func(x float64) float64 { return x * 180 / math.Pi }), "DEGREES")
	fn(d1, compileDouble1(func(x float64) float64 { return x * math.Pi / 180 }), "RADIANS")
	fn(d1, compileDouble1(math.Sin), "SIN")
	fn(d1, compileDouble1(math.Cos), "COS")
	fn(d1, compileDouble1(math.Tan), "TAN")
	fn(d1, compileDouble1(func(x float64) float64 { return 1 / math.Tan(x) }), "COT")
	fn(d1, compileDouble1(math.Asin), "ASIN")
	fn(d1, compileDouble1(math.Acos), "ACOS")
	fn(d1, compileDouble1(math.Atan), "ATAN")
	fn(d2, compileDouble2(math.Atan2), "ATAN2")
	fn(d1, compileDouble1(math.Sinh), "SINH")
	fn(d1, compileDouble1(math.Cosh), "COSH")
	fn(d1, compileDouble1(math.Tanh), "TANH")

	// Time functions.
	nowType := func(t types.Type) bindFn {
		return typed(func([]Node) (types.Type, error) { return t.WithNullable(false), nil }, sig())
	}
	nondet(synNiladic, nowType(types.TimestampLTZ(3)), compileNow, "CURRENT_TIMESTAMP", "CURRENT_ROW_TIMESTAMP")
	nondet(synFunc, nowType(types.TimestampLTZ(3)), compileNow, "NOW")
	nondet(synNiladic, nowType(types.Timestamp(3)), compileNow, "LOCALTIMESTAMP")
	nondet(synNiladic, nowType(types.Date), compileNow, "CURRENT_DATE")
	nondet(synNiladic, nowType(types.Time(0)), compileNow, "CURRENT_TIME", "LOCALTIME")
	proc := types.TimestampLTZ(3)
	proc.TimeAttr = types.ProcTime
	nondet(synFunc, nowType(proc), compileNow, "PROCTIME")
	fn(typed(strictly(types.String), sig(cTemporal, cString), sig(cString, cString)), compileDateFormat, "DATE_FORMAT")
	fn(typed(always(types.Timestamp(3)), sig(cString), sig(cString, cString)), compileToTimestamp, "TO_TIMESTAMP")
	fn(typed(always(types.TimestampLTZ(3)), sig(cNumeric), sig(cNumeric, cInteger), sig(cString), sig(cString, cString)),
		compileToTimestampLTZ, "TO_TIMESTAMP_LTZ")
	fn(typed(always(types.Date), sig(cString), sig(cString, cString)), compileToTimestamp, "TO_DATE")
	nondet(synFunc, typed(func(args []Node) (types.Type, error) {
		if len(args) == 0 {
			return types.BigInt.WithNullable(false), nil
		}
		return types.BigInt.WithNullable(true), nil
	}, sig(), sig(cString), sig(cString, cString)), compileUnixTimestamp, "UNIX_TIMESTAMP")
	fn(typed(always(types.String), sig(cNumeric), sig(cNumeric, cString)), compileFromUnixtime, "FROM_UNIXTIME")
	fn(bindExtract, compileExtract, "EXTRACT")
	for name, unit := range datePartUnits {
		fn(typed(strictly(types.BigInt), sig(cTemporal)), compileDatePart(unit), name)
	}
	fn(bindTimestampAdd, compileTimestampAdd, "TIMESTAMPADD")
	fn(bindTimestampDiff, compileTimestampDiff, "TIMESTAMPDIFF")
}
