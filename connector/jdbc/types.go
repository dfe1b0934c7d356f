package jdbc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/types"
)

// class groups the database types that read alike.
type class int

const (
	classUnknown class = iota
	classInt
	classFloat
	classDecimal
	classString
	classBool
	classBytes
	classDate
	classTime
	classTimestamp
)

var classNames = [...]string{"unknown", "integer", "floating-point", "decimal", "string", "boolean", "binary", "date", "time", "timestamp"}

// classOf returns the class of a database type name as the Go drivers
// report it (lib/pq: INT4, TEXT, TIMESTAMPTZ, ...; go-sql-driver/mysql: INT,
// UNSIGNED BIGINT, VARCHAR, DATETIME, ...).
func classOf(dbType string) class {
	switch strings.TrimPrefix(strings.ToUpper(dbType), "UNSIGNED ") {
	case "INT2", "INT4", "INT8", "SMALLINT", "INTEGER", "INT", "BIGINT", "TINYINT", "MEDIUMINT", "YEAR", "OID":
		return classInt
	case "FLOAT4", "FLOAT8", "FLOAT", "DOUBLE", "REAL":
		return classFloat
	case "NUMERIC", "DECIMAL":
		return classDecimal
	case "TEXT", "VARCHAR", "BPCHAR", "CHAR", "NAME", "UUID", "JSON", "JSONB", "ENUM", "SET",
		"TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "CITEXT", "XML", "INET", "CIDR":
		return classString
	case "BOOL", "BOOLEAN", "BIT":
		return classBool
	case "BYTEA", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY":
		return classBytes
	case "DATE":
		return classDate
	case "TIME":
		return classTime
	case "TIMESTAMP", "TIMESTAMPTZ", "DATETIME":
		return classTimestamp
	}
	return classUnknown
}

// readable reports whether a value of class c can be read as a column of
// kind k.
func readable(c class, k types.Kind) bool {
	switch c {
	case classInt:
		return k.IsInteger() || k == types.KindDecimal || k == types.KindFloat || k == types.KindDouble || k == types.KindBoolean
	case classFloat:
		return k == types.KindFloat || k == types.KindDouble
	case classDecimal:
		return k.IsInteger() || k == types.KindDecimal || k == types.KindFloat || k == types.KindDouble
	case classString:
		return k.IsString()
	case classBool:
		return k == types.KindBoolean
	case classBytes:
		return k.IsBinary() || k.IsString()
	case classDate:
		return k == types.KindDate
	case classTime:
		return k == types.KindTime
	case classTimestamp:
		return k.IsTimestamp()
	}
	return false
}

// suggestions name the Sluice types to declare for a class.
var suggestions = [...]string{
	classInt:       "TINYINT, SMALLINT, INT, BIGINT, DECIMAL, DOUBLE or BOOLEAN",
	classFloat:     "FLOAT or DOUBLE",
	classDecimal:   "DECIMAL(p, s), DOUBLE or an integer type",
	classString:    "STRING, VARCHAR(n) or CHAR(n)",
	classBool:      "BOOLEAN",
	classBytes:     "BYTES, VARBINARY(n), BINARY(n) or STRING",
	classDate:      "DATE",
	classTime:      "TIME",
	classTimestamp: "TIMESTAMP(p) or TIMESTAMP_LTZ(p)",
}

// checkColumn returns an error when a column of database type dbType
// cannot be read as the declared type t.
func checkColumn(name, dbType string, t types.Type) error {
	c := classOf(dbType)
	if c == classUnknown {
		return fmt.Errorf("column '%s' has database type %s, which the jdbc connector cannot read", name, dbType)
	}
	if !readable(c, t.Kind) {
		return fmt.Errorf("column '%s' is %s (%s) in the database and cannot be read as %s; declare it as %s",
			name, dbType, classNames[c], t, suggestions[c])
	}
	return nil
}

// convert turns a value scanned from the database (database/sql's
// driver values: nil, int64, float64, bool, []byte, string, time.Time;
// uint64 and float32 too) into a value of type t.
func convert(src any, t types.Type) (types.Value, error) {
	if src == nil {
		return types.NullValue, nil
	}
	v, err := convertNonNull(src, t)
	if err != nil {
		return types.NullValue, fmt.Errorf("cannot read %s as %s: %w", describe(src), t, err)
	}
	return v, nil
}

func describe(src any) string {
	switch s := src.(type) {
	case []byte:
		return strconv.Quote(string(s))
	case string:
		return strconv.Quote(s)
	case time.Time:
		return s.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(src)
}

var errRange = fmt.Errorf("out of range")

func convertNonNull(src any, t types.Type) (types.Value, error) {
	if b, ok := src.([]byte); ok {
		if t.Kind.IsBinary() {
			return types.BytesValue(b), nil
		}
		if t.Kind == types.KindBoolean && len(b) == 1 && b[0] <= 1 { // MySQL BIT(1)
			return types.BoolValue(b[0] == 1), nil
		}
		src = string(b)
	}
	switch k := t.Kind; {
	case k.IsInteger():
		var n int64
		switch s := src.(type) {
		case int64:
			n = s
		case uint64:
			if s > math.MaxInt64 {
				return types.NullValue, errRange
			}
			n = int64(s)
		case float64:
			if s != math.Trunc(s) || math.Abs(s) >= 1<<63 {
				return types.NullValue, fmt.Errorf("not an integer")
			}
			n = int64(s)
		case string:
			var err error
			if n, err = strconv.ParseInt(s, 10, 64); err != nil {
				d, derr := types.ParseDecimal(s)
				if derr != nil {
					return types.NullValue, fmt.Errorf("not an integer")
				}
				i, ok := types.FitDecimal(d, 19, 0)
				if !ok || types.CompareDecimal(i, d) != 0 || i.IsBigDecimal() {
					return types.NullValue, fmt.Errorf("not an integer in range")
				}
				n = i.Unscaled()
			}
		default:
			return types.NullValue, fmt.Errorf("unexpected %T", src)
		}
		if lo, hi := types.IntegerRange(k); n < lo || n > hi {
			return types.NullValue, errRange
		}
		return types.IntValue(k, n), nil
	case k == types.KindBoolean:
		switch s := src.(type) {
		case bool:
			return types.BoolValue(s), nil
		case int64:
			if s == 0 || s == 1 {
				return types.BoolValue(s == 1), nil
			}
		case string:
			switch strings.ToLower(s) {
			case "t", "true", "1":
				return types.BoolValue(true), nil
			case "f", "false", "0":
				return types.BoolValue(false), nil
			}
		}
		return types.NullValue, fmt.Errorf("not a boolean")
	case k == types.KindFloat || k == types.KindDouble:
		var f float64
		switch s := src.(type) {
		case float64:
			f = s
		case float32:
			f = float64(s)
		case int64:
			f = float64(s)
		case uint64:
			f = float64(s)
		case string:
			var err error
			if f, err = strconv.ParseFloat(s, 64); err != nil {
				return types.NullValue, fmt.Errorf("not a number")
			}
		default:
			return types.NullValue, fmt.Errorf("unexpected %T", src)
		}
		if k == types.KindFloat {
			return types.FloatValue(float32(f)), nil
		}
		return types.DoubleValue(f), nil
	case k == types.KindDecimal:
		var d types.Value
		switch s := src.(type) {
		case int64:
			d = types.DecimalValue(s, 0)
		case uint64:
			d, _ = types.ParseDecimal(strconv.FormatUint(s, 10))
		case string:
			var err error
			if d, err = types.ParseDecimal(s); err != nil {
				return types.NullValue, fmt.Errorf("not a decimal")
			}
		default:
			return types.NullValue, fmt.Errorf("unexpected %T", src)
		}
		fit, ok := types.FitDecimal(d, t.Precision, t.Scale)
		if !ok || types.CompareDecimal(fit, d) != 0 {
			return types.NullValue, fmt.Errorf("does not fit DECIMAL(%d, %d)", t.Precision, t.Scale)
		}
		return fit, nil
	case k.IsString():
		s, ok := src.(string)
		if !ok {
			return types.NullValue, fmt.Errorf("unexpected %T", src)
		}
		if k == types.KindChar {
			return types.CharValue(s), nil
		}
		return types.StringValue(s), nil
	case k.IsBinary():
		s, ok := src.(string)
		if !ok {
			return types.NullValue, fmt.Errorf("unexpected %T", src)
		}
		return types.BytesValue([]byte(s)), nil
	case k == types.KindDate:
		switch s := src.(type) {
		case time.Time:
			y, m, d := s.Date()
			return types.DateValue(types.DateFromCivil(y, int(m), d)), nil
		case string:
			d, err := types.ParseDate(s)
			if err != nil {
				return types.NullValue, err
			}
			return types.DateValue(d), nil
		}
		return types.NullValue, fmt.Errorf("unexpected %T", src)
	case k == types.KindTime:
		switch s := src.(type) {
		case time.Time:
			h, m, sec := s.Clock()
			us := (int64(h)*3600+int64(m)*60+int64(sec))*1e6 + int64(s.Nanosecond()/1000)
			return types.TimeValue(types.TruncatePrecision(us, t.Precision)), nil
		case string:
			us, err := types.ParseTime(s)
			if err != nil {
				return types.NullValue, err
			}
			return types.TimeValue(types.TruncatePrecision(us, t.Precision)), nil
		}
		return types.NullValue, fmt.Errorf("unexpected %T", src)
	case k.IsTimestamp():
		var us int64
		switch s := src.(type) {
		case time.Time:
			us = s.UnixMicro()
		case string:
			var err error
			if us, err = types.ParseTimestamp(s); err != nil {
				return types.NullValue, err
			}
		default:
			return types.NullValue, fmt.Errorf("unexpected %T", src)
		}
		us = types.TruncatePrecision(us, t.Precision)
		if k == types.KindTimestampLTZ {
			return types.TimestampLTZValue(us), nil
		}
		return types.TimestampValue(us), nil
	}
	return types.NullValue, fmt.Errorf("the jdbc connector cannot read columns of type %s", t)
}

// param turns a lookup key value into a statement parameter.
func param(v types.Value) (any, error) {
	switch k := v.Kind(); {
	case k.IsInteger():
		return v.Int(), nil
	case k == types.KindBoolean:
		return v.Bool(), nil
	case k == types.KindFloat || k == types.KindDouble:
		return v.Float(), nil
	case k == types.KindDecimal:
		return types.DecimalString(v), nil
	case k.IsString():
		return v.Str(), nil
	case k.IsBinary():
		return []byte(v.Str()), nil
	case k == types.KindDate:
		y, m, d := types.CivilFromDate(v.Int())
		return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), nil
	case k == types.KindTime:
		return types.FormatTime(v.Int(), 6), nil
	case k.IsTimestamp():
		return time.UnixMicro(v.Int()).UTC(), nil
	}
	return nil, fmt.Errorf("cannot look up by a value of type %s", v.Kind())
}

// writable reports whether values of kind k can be written into a
// database column of class c, through the drivers' parameters as
// writeParam makes them: without loss, or with the database's own checks
// (an integer out of a narrower column's range is refused by the
// database).
func writable(d dialect, c class, k types.Kind) bool {
	switch c {
	case classInt:
		// MySQL's BOOLEAN is TINYINT(1).
		return k.IsInteger() || k == types.KindBoolean && d == mySQL
	case classFloat, classDecimal:
		return k.IsInteger() || k == types.KindFloat || k == types.KindDouble || k == types.KindDecimal
	case classString:
		return k.IsString()
	case classBool:
		return k == types.KindBoolean
	case classBytes:
		// A PostgreSQL bytea parameter given as text would be read as
		// bytea's escape form; MySQL's BLOBs take strings as they are.
		return k.IsBinary() || k.IsString() && d == mySQL
	case classDate:
		return k == types.KindDate
	case classTime:
		return k == types.KindTime
	case classTimestamp:
		return k.IsTimestamp()
	}
	return false
}

// writeSuggestions name the Sluice types whose values a column of each
// class takes.
var writeSuggestions = [...]string{
	classInt:       "TINYINT, SMALLINT, INT or BIGINT",
	classFloat:     "FLOAT, DOUBLE, DECIMAL(p, s) or an integer type",
	classDecimal:   "DECIMAL(p, s), an integer type, FLOAT or DOUBLE",
	classString:    "STRING, VARCHAR(n) or CHAR(n)",
	classBool:      "BOOLEAN",
	classBytes:     "BYTES, VARBINARY(n) or BINARY(n)",
	classDate:      "DATE",
	classTime:      "TIME",
	classTimestamp: "TIMESTAMP(p) or TIMESTAMP_LTZ(p)",
}

// checkWritable returns an error when a column of database type dbType
// cannot take values of the declared type t.
func checkWritable(d dialect, name, dbType string, t types.Type) error {
	c := classOf(dbType)
	if c == classUnknown {
		return fmt.Errorf("column '%s' has database type %s, which the jdbc connector cannot write", name, dbType)
	}
	if !writable(d, c, t.Kind) {
		return fmt.Errorf("column '%s' is %s (%s) in the database and cannot take %s values; declare it as %s",
			name, dbType, classNames[c], t, writeSuggestions[c])
	}
	return nil
}

// writeParam turns a value to write into a statement parameter: NULL as
// nil, DECIMAL as its exact text, DATE as midnight UTC, TIME as text with
// microseconds, TIMESTAMP as its wall-clock time in UTC and TIMESTAMP_LTZ
// as its instant (also in UTC: MySQL sessions are set to time_zone
// '+00:00').
func writeParam(v types.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	return param(v)
}
