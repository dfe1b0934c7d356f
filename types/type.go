package types

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the logical kind of a SQL type. KindNull is both the type of the
// untyped NULL literal and the kind of a NULL Value.
type Kind uint8

// The kinds of SQL types.
const (
	KindNull Kind = iota
	KindBoolean
	KindTinyInt
	KindSmallInt
	KindInt
	KindBigInt
	KindFloat
	KindDouble
	KindDecimal
	KindChar
	KindVarChar
	KindBinary
	KindVarBinary
	KindDate
	KindTime
	KindTimestamp
	KindTimestampLTZ
	KindIntervalDayTime   // value: microseconds
	KindIntervalYearMonth // value: months
	KindArray
	KindMap
	KindRow
	KindMultiset
	kindCount
)

var kindNames = [...]string{
	KindNull:              "NULL",
	KindBoolean:           "BOOLEAN",
	KindTinyInt:           "TINYINT",
	KindSmallInt:          "SMALLINT",
	KindInt:               "INT",
	KindBigInt:            "BIGINT",
	KindFloat:             "FLOAT",
	KindDouble:            "DOUBLE",
	KindDecimal:           "DECIMAL",
	KindChar:              "CHAR",
	KindVarChar:           "VARCHAR",
	KindBinary:            "BINARY",
	KindVarBinary:         "VARBINARY",
	KindDate:              "DATE",
	KindTime:              "TIME",
	KindTimestamp:         "TIMESTAMP",
	KindTimestampLTZ:      "TIMESTAMP_LTZ",
	KindIntervalDayTime:   "INTERVAL DAY TO SECOND",
	KindIntervalYearMonth: "INTERVAL YEAR TO MONTH",
	KindArray:             "ARRAY",
	KindMap:               "MAP",
	KindRow:               "ROW",
	KindMultiset:          "MULTISET",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// IsInteger reports whether k is an exact integer kind.
func (k Kind) IsInteger() bool { return k >= KindTinyInt && k <= KindBigInt }

// IsNumeric reports whether k is an integer, approximate or decimal kind.
func (k Kind) IsNumeric() bool { return k >= KindTinyInt && k <= KindDecimal }

// IsString reports whether k is CHAR or VARCHAR.
func (k Kind) IsString() bool { return k == KindChar || k == KindVarChar }

// IsBinary reports whether k is BINARY or VARBINARY.
func (k Kind) IsBinary() bool { return k == KindBinary || k == KindVarBinary }

// IsTimestamp reports whether k is TIMESTAMP or TIMESTAMP_LTZ.
func (k Kind) IsTimestamp() bool { return k == KindTimestamp || k == KindTimestampLTZ }

// TimeAttr marks a column as a time attribute, as Flink does.
type TimeAttr uint8

// Time attributes.
const (
	NoTimeAttr TimeAttr = iota
	RowTime             // event time: the column has a watermark
	ProcTime            // processing time
)

// MaxLength is the length of STRING and BYTES (VARCHAR/VARBINARY without a bound).
const MaxLength = 2147483647

// Field is a named field of a ROW type or a column of a Schema.
type Field struct {
	Name string
	Type Type
}

// Type is a logical SQL type. It is a small value type: copy it freely.
type Type struct {
	Kind     Kind
	NotNull  bool
	TimeAttr TimeAttr
	// Precision is the precision of DECIMAL, TIME, TIMESTAMP and
	// TIMESTAMP_LTZ, and the length of CHAR, VARCHAR, BINARY and VARBINARY.
	Precision int
	// Scale is the scale of DECIMAL.
	Scale int
	// Elem is the element type of ARRAY and MULTISET and the key type of MAP.
	Elem *Type
	// Value is the value type of MAP.
	Value *Type
	// Fields are the fields of ROW.
	Fields []Field
}

// Constructors for common types (all nullable).
var (
	Null       = Type{Kind: KindNull}
	Boolean    = Type{Kind: KindBoolean}
	TinyInt    = Type{Kind: KindTinyInt}
	SmallInt   = Type{Kind: KindSmallInt}
	Int        = Type{Kind: KindInt}
	BigInt     = Type{Kind: KindBigInt}
	Float      = Type{Kind: KindFloat}
	Double     = Type{Kind: KindDouble}
	String     = Type{Kind: KindVarChar, Precision: MaxLength}
	Bytes      = Type{Kind: KindVarBinary, Precision: MaxLength}
	Date       = Type{Kind: KindDate}
	IntervalDT = Type{Kind: KindIntervalDayTime}
	IntervalYM = Type{Kind: KindIntervalYearMonth}
)

// Decimal returns DECIMAL(p, s).
func Decimal(p, s int) Type { return Type{Kind: KindDecimal, Precision: p, Scale: s} }

// VarChar returns VARCHAR(n).
func VarChar(n int) Type { return Type{Kind: KindVarChar, Precision: n} }

// Char returns CHAR(n).
func Char(n int) Type { return Type{Kind: KindChar, Precision: n} }

// Timestamp returns TIMESTAMP(p).
func Timestamp(p int) Type { return Type{Kind: KindTimestamp, Precision: p} }

// TimestampLTZ returns TIMESTAMP_LTZ(p).
func TimestampLTZ(p int) Type { return Type{Kind: KindTimestampLTZ, Precision: p} }

// Time returns TIME(p).
func Time(p int) Type { return Type{Kind: KindTime, Precision: p} }

// ArrayOf returns ARRAY<elem>.
func ArrayOf(elem Type) Type { return Type{Kind: KindArray, Elem: &elem} }

// MapOf returns MAP<k, v>.
func MapOf(k, v Type) Type { return Type{Kind: KindMap, Elem: &k, Value: &v} }

// RowOf returns ROW<fields...>.
func RowOf(fields ...Field) Type { return Type{Kind: KindRow, Fields: fields} }

// WithNullable returns t with NOT NULL cleared (nullable) or set.
func (t Type) WithNullable(nullable bool) Type { t.NotNull = !nullable; return t }

// Nullable reports whether the type admits NULL.
func (t Type) Nullable() bool { return !t.NotNull }

// WithoutTimeAttr returns t as a plain type, as Flink does when a time
// attribute passes through an operator that cannot keep it.
func (t Type) WithoutTimeAttr() Type { t.TimeAttr = NoTimeAttr; return t }

// Equal reports whether two types are identical, nullability and time
// attributes included.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind || t.NotNull != u.NotNull || t.TimeAttr != u.TimeAttr ||
		t.Precision != u.Precision || t.Scale != u.Scale || len(t.Fields) != len(u.Fields) {
		return false
	}
	if (t.Elem == nil) != (u.Elem == nil) || (t.Value == nil) != (u.Value == nil) {
		return false
	}
	if t.Elem != nil && !t.Elem.Equal(*u.Elem) {
		return false
	}
	if t.Value != nil && !t.Value.Equal(*u.Value) {
		return false
	}
	for i := range t.Fields {
		if t.Fields[i].Name != u.Fields[i].Name || !t.Fields[i].Type.Equal(u.Fields[i].Type) {
			return false
		}
	}
	return true
}

// SameKind reports whether two types are equal ignoring nullability and time
// attributes.
func (t Type) SameKind(u Type) bool {
	t.NotNull, u.NotNull = false, false
	t.TimeAttr, u.TimeAttr = NoTimeAttr, NoTimeAttr
	return t.Equal(u)
}

// String prints the type as Flink does, e.g. "DECIMAL(10, 2) NOT NULL",
// "STRING", "TIMESTAMP(3) *ROWTIME*".
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.Kind {
	case KindVarChar:
		if t.Precision == MaxLength {
			b.WriteString("STRING")
		} else {
			fmt.Fprintf(b, "VARCHAR(%d)", t.Precision)
		}
	case KindVarBinary:
		if t.Precision == MaxLength {
			b.WriteString("BYTES")
		} else {
			fmt.Fprintf(b, "VARBINARY(%d)", t.Precision)
		}
	case KindChar, KindBinary:
		fmt.Fprintf(b, "%s(%d)", t.Kind, t.Precision)
	case KindDecimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case KindTime:
		fmt.Fprintf(b, "TIME(%d)", t.Precision)
	case KindTimestamp:
		fmt.Fprintf(b, "TIMESTAMP(%d)", t.Precision)
	case KindTimestampLTZ:
		fmt.Fprintf(b, "TIMESTAMP_LTZ(%d)", t.Precision)
	case KindArray, KindMultiset:
		b.WriteString(t.Kind.String())
		b.WriteByte('<')
		t.Elem.write(b)
		b.WriteByte('>')
	case KindMap:
		b.WriteString("MAP<")
		t.Elem.write(b)
		b.WriteString(", ")
		t.Value.write(b)
		b.WriteByte('>')
	case KindRow:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteIdent(f.Name))
			b.WriteByte(' ')
			f.Type.write(b)
		}
		b.WriteByte('>')
	default:
		b.WriteString(t.Kind.String())
	}
	if t.NotNull {
		b.WriteString(" NOT NULL")
	}
	switch t.TimeAttr {
	case RowTime:
		b.WriteString(" *ROWTIME*")
	case ProcTime:
		b.WriteString(" *PROCTIME*")
	}
}

// QuoteIdent quotes a name with backquotes as Flink prints identifiers.
func QuoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Column is a column of a Schema.
type Column = Field

// Schema is an ordered list of named, typed columns.
type Schema struct {
	Columns []Column
}

// NewSchema returns a schema of the given columns.
func NewSchema(cols ...Column) Schema { return Schema{Columns: cols} }

// Len returns the number of columns.
func (s Schema) Len() int { return len(s.Columns) }

// Index returns the index of the column named name (case-insensitive, as
// Sluice resolves identifiers), or -1.
func (s Schema) Index(name string) int {
	for i, c := range s.Columns {
		if c.Name == name {
			return i
		}
	}
	for i, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// Names returns the column names.
func (s Schema) Names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

// Types returns the column types.
func (s Schema) Types() []Type {
	out := make([]Type, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Type
	}
	return out
}

// String prints the schema as ROW<...>.
func (s Schema) String() string { return RowOf(s.Columns...).String() }
