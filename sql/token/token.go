package token

import (
	"strconv"
	"strings"
)

// Token is the kind of a lexical token.
type Token int

// The token kinds. Keywords lie between keywordBeg and keywordEnd.
const (
	ILLEGAL Token = iota // an illegal character or malformed token
	EOF                  // end of input
	COMMENT              // -- line comment or /* block comment */

	literalBeg
	IDENT   // name
	QIDENT  // `quoted name` (the literal is the unquoted name)
	INT     // 123
	DECIMAL // 1.5, .5, 1.
	FLOAT   // 1.5E0, 1e-3
	STRING  // 'text' (the literal is the unquoted text)
	HEX     // X'0aff' (the literal is the hex digits)
	literalEnd

	operatorBeg
	EQ        // =
	NEQ       // <> or !=
	LT        // <
	LEQ       // <=
	GT        // >
	GEQ       // >=
	ADD       // +
	SUB       // -
	MUL       // *
	QUO       // /
	REM       // %
	CONCAT    // ||
	PERIOD    // .
	COMMA     // ,
	SEMICOLON // ;
	LPAREN    // (
	RPAREN    // )
	LBRACK    // [
	RBRACK    // ]
	ARROW     // =>
	DCOLON    // ::
	HINTBEG   // /*+ (a hint opens)
	HINTEND   // */ (closing a hint)
	operatorEnd

	keywordBeg
	reservedBeg
	ALL
	AND
	ARRAY
	AS
	ASC
	ASYMMETRIC
	BETWEEN
	BY
	CASE
	CAST
	CREATE
	CROSS
	CURRENT
	CURRENT_DATE
	CURRENT_TIME
	CURRENT_TIMESTAMP
	DESC
	DISTINCT
	ELSE
	END
	ESCAPE
	EXCEPT
	EXISTS
	FALSE
	FETCH
	FILTER
	FOR
	FROM
	FULL
	GROUP
	HAVING
	IN
	INNER
	INSERT
	INTERSECT
	INTERVAL
	INTO
	IS
	JOIN
	LATERAL
	LEFT
	LIKE
	LIMIT
	LOCALTIME
	LOCALTIMESTAMP
	MAP
	MINUS
	MULTISET
	NATURAL
	NOT
	NULL
	OFFSET
	ON
	OR
	ORDER
	OUTER
	OVER
	PARTITION
	RIGHT
	ROW
	ROWS
	SELECT
	SIMILAR
	SYMMETRIC
	TABLE
	THEN
	TO
	TRUE
	TRY_CAST
	UNION
	UNKNOWN
	UNNEST
	USING
	VALUES
	WHEN
	WHERE
	WINDOW
	WITH
	reservedEnd

	BEGIN
	COMMENT_KW // COMMENT (the keyword; COMMENT is the comment token)
	CONSTRAINT
	CUBE
	DATE
	DEFAULT
	DESCRIBE
	DESCRIPTOR
	DROP
	EMPTY
	ENFORCED
	ERROR
	EXECUTE
	EXPLAIN
	FIRST
	FOLLOWING
	FUNCTION
	FUNCTIONS
	GROUPING
	IF
	KEY
	LANGUAGE
	LAST
	LOCAL
	METADATA
	NEXT
	NULLS
	ONLY
	ORDINALITY
	OVERWRITE
	PARTITIONED
	PLAN
	PRECEDING
	PRECISION
	PRIMARY
	RANGE
	RESET
	RETURNING
	ROLLUP
	SET
	SETS
	SHOW
	STATEMENT
	SYSTEM
	SYSTEM_TIME
	TABLES
	TEMPORARY
	TIME
	TIMESTAMP
	TIMESTAMP_LTZ
	UNBOUNDED
	VIEW
	VIEWS
	VIRTUAL
	WATERMARK
	WITHOUT
	ZONE
	keywordEnd
)

var tokens = [...]string{
	ILLEGAL: "ILLEGAL",
	EOF:     "EOF",
	COMMENT: "COMMENT",

	IDENT:   "IDENT",
	QIDENT:  "QIDENT",
	INT:     "INT",
	DECIMAL: "DECIMAL",
	FLOAT:   "FLOAT",
	STRING:  "STRING",
	HEX:     "HEX",

	EQ:        "=",
	NEQ:       "<>",
	LT:        "<",
	LEQ:       "<=",
	GT:        ">",
	GEQ:       ">=",
	ADD:       "+",
	SUB:       "-",
	MUL:       "*",
	QUO:       "/",
	REM:       "%",
	CONCAT:    "||",
	PERIOD:    ".",
	COMMA:     ",",
	SEMICOLON: ";",
	LPAREN:    "(",
	RPAREN:    ")",
	LBRACK:    "[",
	RBRACK:    "]",
	ARROW:     "=>",
	DCOLON:    "::",
	HINTBEG:   "/*+",
	HINTEND:   "*/",

	ALL:               "ALL",
	AND:               "AND",
	ARRAY:             "ARRAY",
	AS:                "AS",
	ASC:               "ASC",
	ASYMMETRIC:        "ASYMMETRIC",
	BETWEEN:           "BETWEEN",
	BY:                "BY",
	CASE:              "CASE",
	CAST:              "CAST",
	CREATE:            "CREATE",
	CROSS:             "CROSS",
	CURRENT:           "CURRENT",
	CURRENT_DATE:      "CURRENT_DATE",
	CURRENT_TIME:      "CURRENT_TIME",
	CURRENT_TIMESTAMP: "CURRENT_TIMESTAMP",
	DESC:              "DESC",
	DISTINCT:          "DISTINCT",
	ELSE:              "ELSE",
	END:               "END",
	ESCAPE:            "ESCAPE",
	EXCEPT:            "EXCEPT",
	EXISTS:            "EXISTS",
	FALSE:             "FALSE",
	FETCH:             "FETCH",
	FILTER:            "FILTER",
	FOR:               "FOR",
	FROM:              "FROM",
	FULL:              "FULL",
	GROUP:             "GROUP",
	HAVING:            "HAVING",
	IN:                "IN",
	INNER:             "INNER",
	INSERT:            "INSERT",
	INTERSECT:         "INTERSECT",
	INTERVAL:          "INTERVAL",
	INTO:              "INTO",
	IS:                "IS",
	JOIN:              "JOIN",
	LATERAL:           "LATERAL",
	LEFT:              "LEFT",
	LIKE:              "LIKE",
	LIMIT:             "LIMIT",
	LOCALTIME:         "LOCALTIME",
	LOCALTIMESTAMP:    "LOCALTIMESTAMP",
	MAP:               "MAP",
	MINUS:             "MINUS",
	MULTISET:          "MULTISET",
	NATURAL:           "NATURAL",
	NOT:               "NOT",
	NULL:              "NULL",
	OFFSET:            "OFFSET",
	ON:                "ON",
	OR:                "OR",
	ORDER:             "ORDER",
	OUTER:             "OUTER",
	OVER:              "OVER",
	PARTITION:         "PARTITION",
	RIGHT:             "RIGHT",
	ROW:               "ROW",
	ROWS:              "ROWS",
	SELECT:            "SELECT",
	SIMILAR:           "SIMILAR",
	SYMMETRIC:         "SYMMETRIC",
	TABLE:             "TABLE",
	THEN:              "THEN",
	TO:                "TO",
	TRUE:              "TRUE",
	TRY_CAST:          "TRY_CAST",
	UNION:             "UNION",
	UNKNOWN:           "UNKNOWN",
	UNNEST:            "UNNEST",
	USING:             "USING",
	VALUES:            "VALUES",
	WHEN:              "WHEN",
	WHERE:             "WHERE",
	WINDOW:            "WINDOW",
	WITH:              "WITH",

	BEGIN:         "BEGIN",
	COMMENT_KW:    "COMMENT",
	CONSTRAINT:    "CONSTRAINT",
	CUBE:          "CUBE",
	DATE:          "DATE",
	DEFAULT:       "DEFAULT",
	DESCRIBE:      "DESCRIBE",
	DESCRIPTOR:    "DESCRIPTOR",
	DROP:          "DROP",
	EMPTY:         "EMPTY",
	ENFORCED:      "ENFORCED",
	ERROR:         "ERROR",
	EXECUTE:       "EXECUTE",
	EXPLAIN:       "EXPLAIN",
	FIRST:         "FIRST",
	FOLLOWING:     "FOLLOWING",
	FUNCTION:      "FUNCTION",
	FUNCTIONS:     "FUNCTIONS",
	GROUPING:      "GROUPING",
	IF:            "IF",
	KEY:           "KEY",
	LANGUAGE:      "LANGUAGE",
	LAST:          "LAST",
	LOCAL:         "LOCAL",
	METADATA:      "METADATA",
	NEXT:          "NEXT",
	NULLS:         "NULLS",
	ONLY:          "ONLY",
	ORDINALITY:    "ORDINALITY",
	OVERWRITE:     "OVERWRITE",
	PARTITIONED:   "PARTITIONED",
	PLAN:          "PLAN",
	PRECEDING:     "PRECEDING",
	PRECISION:     "PRECISION",
	PRIMARY:       "PRIMARY",
	RANGE:         "RANGE",
	RESET:         "RESET",
	RETURNING:     "RETURNING",
	ROLLUP:        "ROLLUP",
	SET:           "SET",
	SETS:          "SETS",
	SHOW:          "SHOW",
	STATEMENT:     "STATEMENT",
	SYSTEM:        "SYSTEM",
	SYSTEM_TIME:   "SYSTEM_TIME",
	TABLES:        "TABLES",
	TEMPORARY:     "TEMPORARY",
	TIME:          "TIME",
	TIMESTAMP:     "TIMESTAMP",
	TIMESTAMP_LTZ: "TIMESTAMP_LTZ",
	UNBOUNDED:     "UNBOUNDED",
	VIEW:          "VIEW",
	VIEWS:         "VIEWS",
	VIRTUAL:       "VIRTUAL",
	WATERMARK:     "WATERMARK",
	WITHOUT:       "WITHOUT",
	ZONE:          "ZONE",
}

// String returns the token's text for operators and keywords (in upper
// case) and the kind's name for the other tokens.
func (t Token) String() string {
	if t >= 0 && int(t) < len(tokens) && tokens[t] != "" {
		return tokens[t]
	}
	return "token(" + strconv.Itoa(int(t)) + ")"
}

// IsLiteral reports whether t is an identifier or a literal.
func (t Token) IsLiteral() bool { return literalBeg < t && t < literalEnd }

// IsOperator reports whether t is an operator or a delimiter.
func (t Token) IsOperator() bool { return operatorBeg < t && t < operatorEnd }

// IsKeyword reports whether t is a keyword, reserved or not.
func (t Token) IsKeyword() bool {
	return keywordBeg < t && t < keywordEnd && t != reservedBeg && t != reservedEnd
}

// IsReserved reports whether t is a reserved keyword, one that can never be
// used as a bare identifier.
func (t Token) IsReserved() bool { return reservedBeg < t && t < reservedEnd }

// keywords maps upper-case words to their keyword tokens.
var keywords = func() map[string]Token {
	m := make(map[string]Token, keywordEnd-keywordBeg)
	for t := keywordBeg + 1; t < keywordEnd; t++ {
		if t.IsKeyword() {
			m[tokens[t]] = t
		}
	}
	return m
}()

// Keywords returns every keyword, reserved or not, in upper case, in
// token order.
func Keywords() []string {
	out := make([]string, 0, keywordEnd-keywordBeg)
	for t := keywordBeg + 1; t < keywordEnd; t++ {
		if t.IsKeyword() {
			out = append(out, tokens[t])
		}
	}
	return out
}

// Lookup maps a word to its keyword token, ignoring case, or to IDENT.
func Lookup(word string) Token {
	if len(word) > maxKeywordLen {
		return IDENT
	}
	var buf [maxKeywordLen]byte
	for i := 0; i < len(word); i++ {
		c := word[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	if t, ok := keywords[string(buf[:len(word)])]; ok {
		return t
	}
	return IDENT
}

const maxKeywordLen = 24

// IsReservedWord reports whether word (in any case) is a reserved keyword
// and so must be quoted to be used as an identifier.
func IsReservedWord(word string) bool { return Lookup(word).IsReserved() }

// timeUnits maps the time unit words accepted in INTERVAL literals, EXTRACT,
// FLOOR/CEIL ... TO, TIMESTAMPADD and TIMESTAMPDIFF to their canonical
// (singular) spelling. Flink accepts the plural of the interval units.
var timeUnits = map[string]string{
	"YEAR": "YEAR", "YEARS": "YEAR",
	"MONTH": "MONTH", "MONTHS": "MONTH",
	"DAY": "DAY", "DAYS": "DAY",
	"HOUR": "HOUR", "HOURS": "HOUR",
	"MINUTE": "MINUTE", "MINUTES": "MINUTE",
	"SECOND": "SECOND", "SECONDS": "SECOND",
	"WEEK": "WEEK", "WEEKS": "WEEK",
	"QUARTER": "QUARTER", "QUARTERS": "QUARTER",
	"MILLISECOND": "MILLISECOND", "MILLISECONDS": "MILLISECOND",
	"MICROSECOND": "MICROSECOND", "MICROSECONDS": "MICROSECOND",
	"NANOSECOND": "NANOSECOND", "NANOSECONDS": "NANOSECOND",
	"EPOCH":      "EPOCH",
	"DOW":        "DOW",
	"DOY":        "DOY",
	"ISODOW":     "ISODOW",
	"ISOYEAR":    "ISOYEAR",
	"DECADE":     "DECADE",
	"CENTURY":    "CENTURY",
	"MILLENNIUM": "MILLENNIUM",
}

// TimeUnit returns the canonical singular spelling of a time unit word (any
// case, singular or plural) and whether word is a time unit at all. Time
// units are not keywords: they are recognised only where the grammar expects
// one, so they remain usable as identifiers.
func TimeUnit(word string) (string, bool) {
	u, ok := timeUnits[strings.ToUpper(word)]
	return u, ok
}

// IsIntervalUnit reports whether the canonical unit u may qualify an
// INTERVAL literal (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND; WEEK and QUARTER
// are accepted by Flink's EXTRACT but not in intervals).
func IsIntervalUnit(u string) bool {
	switch u {
	case "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND":
		return true
	}
	return false
}
