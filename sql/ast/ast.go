package ast

import (
	"strings"

	"github.com/sluicesql/sluice/sql/token"
)

// Node is implemented by every node of the tree.
type Node interface {
	Pos() token.Pos // position of the first character of the node
	End() token.Pos // position of the character just after the node
}

// Statement is a top-level SQL statement.
type Statement interface {
	Node
	stmtNode()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

// TableExpr is an item of a FROM clause: a table, a subquery, a join, a
// table function or UNNEST.
type TableExpr interface {
	Node
	tableNode()
}

// QueryBody is the body of a query: *Select, *SetOp, *Values, or *Query for
// a parenthesised query with its own WITH, ORDER BY or LIMIT.
type QueryBody interface {
	Node
	bodyNode()
}

// Span holds the start and end positions of a node whose extent is not
// implied by its children. It provides Pos and End to the nodes that embed
// it.
type Span struct {
	Start token.Pos // position of the first character
	Stop  token.Pos // position just after the last character
}

// Pos returns the start position.
func (s Span) Pos() token.Pos { return s.Start }

// End returns the end position.
func (s Span) End() token.Pos { return s.Stop }

// ---------------------------------------------------------------------------
// Names and types

// Ident is an identifier, plain or `quoted`.
type Ident struct {
	NamePos token.Pos
	Name    string // the name, without quotes; `a``b` gives a`b
	Quoted  bool   // written in backquotes
}

// Pos implements Node.
func (x *Ident) Pos() token.Pos { return x.NamePos }

// End implements Node.
func (x *Ident) End() token.Pos {
	if !x.NamePos.IsValid() {
		return token.NoPos
	}
	if x.Quoted {
		return x.NamePos + token.Pos(len(x.Name)+2+strings.Count(x.Name, "`"))
	}
	return x.NamePos + token.Pos(len(x.Name))
}

// String returns the name, quoted if it was quoted or must be.
func (x *Ident) String() string { return formatIdent(x) }

// ObjectName is a possibly qualified object name: table, catalog.db.table.
type ObjectName struct {
	Parts []*Ident // at least one
}

// Pos implements Node.
func (x *ObjectName) Pos() token.Pos { return x.Parts[0].Pos() }

// End implements Node.
func (x *ObjectName) End() token.Pos { return x.Parts[len(x.Parts)-1].End() }

// Last returns the last part: the unqualified name.
func (x *ObjectName) Last() *Ident { return x.Parts[len(x.Parts)-1] }

// String returns the dotted name, with quotes where needed.
func (x *ObjectName) String() string {
	var b strings.Builder
	for i, p := range x.Parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(formatIdent(p))
	}
	return b.String()
}

// TypeExpr is a SQL data type as written.
type TypeExpr struct {
	TypePos token.Pos
	EndPos  token.Pos
	// Name is the canonical upper-case name: BOOLEAN, TINYINT, SMALLINT,
	// INT, BIGINT, FLOAT, DOUBLE, DECIMAL, CHAR, VARCHAR, STRING, BINARY,
	// VARBINARY, BYTES, DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ, INTERVAL,
	// ARRAY, MAP, MULTISET, ROW, RAW, or a user-defined type name.
	Name string
	// Params are the precision, scale or length in parentheses; nil when
	// absent. For INTERVAL it is nil or [leading precision, fractional
	// precision] with -1 for an absent one.
	Params  []int
	Elem    *TypeExpr   // element of ARRAY and MULTISET, key of MAP
	Value   *TypeExpr   // value of MAP
	Fields  []*RowField // fields of ROW
	NotNull bool
	// IntervalFrom and IntervalTo are the units of an INTERVAL type
	// (INTERVAL DAY TO SECOND: "DAY", "SECOND"; INTERVAL MONTH: "MONTH", "").
	IntervalFrom, IntervalTo string
}

// Pos implements Node.
func (x *TypeExpr) Pos() token.Pos { return x.TypePos }

// End implements Node.
func (x *TypeExpr) End() token.Pos { return x.EndPos }

// RowField is a field of a ROW type.
type RowField struct {
	Span
	Name    *Ident
	Type    *TypeExpr
	Comment string
}

// ---------------------------------------------------------------------------
// Statements

// CreateTable is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (...) WITH (...).
type CreateTable struct {
	Span
	Temporary   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*ColumnDef
	Watermark   *WatermarkDef
	// PrimaryKey lists the key columns, from a table constraint or from a
	// column marked PRIMARY KEY (then ColumnDef.PrimaryKey is set too).
	PrimaryKey     []*Ident
	PrimaryKeyName *Ident // CONSTRAINT name, if given
	Comment        string
	PartitionedBy  []*Ident
	Options        []*Option
	Like           *ObjectName
	// LikeOptions are the upper-case options of LIKE, such as
	// "INCLUDING ALL" or "EXCLUDING OPTIONS".
	LikeOptions []string
}

// ColumnDef is a column of CREATE TABLE: physical (name type), computed
// (name AS expr) or metadata (name type METADATA [FROM 'key'] [VIRTUAL]).
type ColumnDef struct {
	Span
	Name        *Ident
	Type        *TypeExpr // nil for a computed column
	Computed    Expr      // the expression of a computed column, else nil
	Metadata    bool
	MetadataKey string // FROM 'key'; empty when the key is the column name
	Virtual     bool
	PrimaryKey  bool // declared with an inline PRIMARY KEY NOT ENFORCED
	Comment     string
}

// WatermarkDef is WATERMARK FOR column AS expr.
type WatermarkDef struct {
	Span
	Column *Ident
	Expr   Expr
}

// Option is one 'key' = 'value' pair of a WITH clause.
type Option struct {
	KeyPos   token.Pos
	EndPos   token.Pos
	Key      string
	Value    string
	ValuePos token.Pos
}

// Pos implements Node.
func (x *Option) Pos() token.Pos { return x.KeyPos }

// End implements Node.
func (x *Option) End() token.Pos { return x.EndPos }

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] AS query.
type CreateView struct {
	Span
	Temporary   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*Ident
	Comment     string
	Query       *Query
}

// CreateRuleset is CREATE RULESET [IF NOT EXISTS] name ON source
// [MATCH ALL | ANY | FIRST | AT LEAST n [PERCENT]] (RULE ..., ...): named
// rules over the rows of a table or view, and the policy that says which
// rows they raise an alert for.
type CreateRuleset struct {
	Span
	IfNotExists bool
	Name        *ObjectName
	Source      *ObjectName
	Match       RulesetMatch
	// Except, if set (EXCEPT WHEN condition), holds for the rows that
	// raise no alert whatever rules they match: the known false
	// positives of every rule.
	Except Expr
	// Suppress, if set, lets at most one alert of a key set through per
	// interval.
	Suppress *RulesetSuppress
	Rules    []*RuleDef
	Comment  string
}

// RulesetSuppress is SUPPRESS BY (col, ...) FOR interval: at most one
// alert per key set (the values of the columns) per interval, the
// others counted.
type RulesetSuppress struct {
	Span
	Keys     []*Ident
	Interval *IntervalLit
}

// RulesetMatch is a ruleset's match policy: Kind is "ANY" (the default),
// "ALL", "FIRST", "AT LEAST" (N rules) or "AT LEAST PERCENT" (N percent
// of the enabled rules).
type RulesetMatch struct {
	Kind string
	N    int64
	At   token.Pos // where the policy is written (NoPos: the default)
}

// RuleDef is RULE name WHEN condition [SEVERITY 'level'] [PRIORITY n]
// [TAGS ('tag', ...)] [DISABLED].
type RuleDef struct {
	Span
	Name        *Ident
	When        Expr
	Severity    string
	SeverityPos token.Pos
	Priority    int64
	Tags        []string
	Disabled    bool
}

// AlterRuleset is ALTER RULESET name followed by one change, Action:
//
//	ADD RULE ...                    "ADD" (Rule)
//	ALTER RULE name WHEN ...        "ALTER" (Rule: its new definition)
//	DROP | ENABLE | DISABLE RULE r  "DROP", "ENABLE", "DISABLE" (Target)
//	ROLLBACK TO VERSION n           "ROLLBACK" (Version)
//	SET MATCH ...                   "SET MATCH" (Match)
//	SET EXCEPT WHEN condition       "SET EXCEPT" (Except)
//	DROP EXCEPT                     "DROP EXCEPT"
//	SET SUPPRESS BY (...) FOR ...   "SET SUPPRESS" (Suppress)
//	DROP SUPPRESS                   "DROP SUPPRESS"
//	SHADOW [MATCH ...] [EXCEPT WHEN ...] [SUPPRESS BY ...] (RULE ..., ...) INTO table
//	                                "SHADOW" (Match, Except, Suppress, Rules, Into)
//	SHADOW VERSION n INTO table     "SHADOW" (Version, Into; Rules nil)
//	PROMOTE SHADOW                  "PROMOTE SHADOW"
//	DROP SHADOW                     "DROP SHADOW"
//
// Each change of the live rules or policy makes a new version (a
// rollback's holds the definition of version n); the shadow's changes
// leave the live version as it is, but PROMOTE SHADOW, which makes the
// shadow's rules the live ones.
type AlterRuleset struct {
	Span
	Name   *ObjectName
	Action string
	// ActionPos is where the change is written (its first word).
	ActionPos token.Pos
	Rule      *RuleDef // ADD, ALTER
	Target    *Ident   // DROP, ENABLE, DISABLE
	// Version is ROLLBACK's, or SHADOW VERSION's; VersionPos is where it
	// is written.
	Version    int64
	VersionPos token.Pos
	// Match (Kind "" when not written), Except and Suppress are SET's,
	// or those a SHADOW gives its rules (the live ones' when not
	// written).
	Match    RulesetMatch
	Except   Expr
	Suppress *RulesetSuppress
	// Rules are a SHADOW's rules (nil for SHADOW VERSION n); Into the
	// table its alerts go to.
	Rules []*RuleDef
	Into  *ObjectName
}

// Drop is DROP [TEMPORARY [SYSTEM]] TABLE|VIEW|FUNCTION|RULESET [IF EXISTS] name.
type Drop struct {
	Span
	What      string // "TABLE", "VIEW", "FUNCTION" or "RULESET"
	IfExists  bool
	Temporary bool
	System    bool // TEMPORARY SYSTEM FUNCTION
	Name      *ObjectName
}

// CreateFunction is CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name
// [signature] AS 'class' [LANGUAGE lang] [USING JAR 'uri' [, JAR 'uri']*].
type CreateFunction struct {
	Span
	Temporary   bool
	System      bool
	IfNotExists bool
	Name        *ObjectName
	// Signature is the declared signature; nil when the statement has none
	// (Flink's form, where the class declares it).
	Signature *FunctionSignature
	Class     string
	ClassPos  token.Pos
	Language  string // upper case: JAVA, SCALA, PYTHON, GO, WASM...; empty if absent
	// Using are the resources of USING JAR 'uri', ...
	Using []*FunctionResource
}

// FunctionSignature is a function's declared signature:
// (param TYPE, ...) RETURNS TYPE | RETURNS TABLE (col TYPE, ...),
// then optionally RETURNS NULL ON NULL INPUT | CALLED ON NULL INPUT.
type FunctionSignature struct {
	Span
	Params []*ColumnDef
	// Returns is the result type of a scalar or aggregate function; nil
	// for a table function.
	Returns *TypeExpr
	// ReturnsTable are the columns of a table function's rows.
	ReturnsTable []*ColumnDef
	// CalledOnNull is CALLED ON NULL INPUT: the function sees NULL
	// arguments. The default, RETURNS NULL ON NULL INPUT, is a NULL
	// result without a call.
	CalledOnNull bool
}

// FunctionResource is one resource of CREATE FUNCTION ... USING: JAR 'uri'.
type FunctionResource struct {
	Span
	Kind string // "JAR"
	URI  string
}

// Set is SET 'key' = 'value', or a bare SET (Key empty) listing the settings.
type Set struct {
	Span
	Key, Value string
}

// Reset is RESET ['key']; Key is empty to reset every setting.
type Reset struct {
	Span
	Key string
}

// Insert is INSERT INTO|OVERWRITE table [/*+ hints */] [(cols)] query.
type Insert struct {
	Span
	Overwrite bool
	Table     *ObjectName
	// TableHints are the hints written after the table's name.
	TableHints []*Hint
	Columns    []*Ident
	Query      *Query
}

// StatementSet is EXECUTE STATEMENT SET BEGIN insert; ... END, or the older
// BEGIN STATEMENT SET; insert; ... END.
type StatementSet struct {
	Span
	Inserts []*Insert
	Legacy  bool // written as BEGIN STATEMENT SET; ... END
}

// Explain is EXPLAIN [PLAN FOR] statement.
type Explain struct {
	Span
	Stmt Statement
}

// Show is SHOW TABLES|VIEWS|FUNCTIONS|...
type Show struct {
	Span
	What string // upper case: "TABLES", "VIEWS", "FUNCTIONS", ...
}

// Describe is DESCRIBE|DESC name.
type Describe struct {
	Span
	Name *ObjectName
}

// QueryStmt is a query used as a statement.
type QueryStmt struct {
	Query *Query
}

// Pos implements Node.
func (x *QueryStmt) Pos() token.Pos { return x.Query.Pos() }

// End implements Node.
func (x *QueryStmt) End() token.Pos { return x.Query.End() }

// ---------------------------------------------------------------------------
// Queries

// Query is [WITH ...] body [ORDER BY ...] [LIMIT n] [OFFSET n]. A query
// written in parentheses as an operand of a set operation is a *Query body.
type Query struct {
	Span
	With    []*CTE
	Body    QueryBody
	OrderBy []*OrderItem
	Limit   Expr // LIMIT n or FETCH FIRST n ROWS ONLY; nil if absent
	Offset  Expr
}

// CTE is one name [(cols)] AS (query) of a WITH clause.
type CTE struct {
	Span
	Name    *Ident
	Columns []*Ident
	Query   *Query
}

// Select is SELECT [DISTINCT] items [FROM ...] [WHERE ...] [GROUP BY ...]
// [HAVING ...] [WINDOW ...].
type Select struct {
	Span
	// Hints are the query hints written after SELECT.
	Hints    []*Hint
	Distinct bool
	Items    []*SelectItem
	From     TableExpr // nil if absent
	Where    Expr
	GroupBy  []Expr // may hold *GroupingSet
	Having   Expr
	Windows  []*NamedWindow
	// DistinctPos and GroupByPos are the positions of the DISTINCT and
	// GROUP keywords, when present, for messages.
	DistinctPos, GroupByPos token.Pos
}

// SelectItem is expr [[AS] alias], * or t.*.
type SelectItem struct {
	Span
	Expr      Expr // nil for * and t.*
	Alias     *Ident
	Star      bool
	Qualifier *ObjectName // t in t.*
}

// SetOp is left UNION|INTERSECT|EXCEPT [ALL] right.
type SetOp struct {
	Op          string    // "UNION", "INTERSECT" or "EXCEPT"
	OpPos       token.Pos // the operator keyword, for messages
	All         bool
	Left, Right QueryBody
}

// Pos implements Node.
func (x *SetOp) Pos() token.Pos { return x.Left.Pos() }

// End implements Node.
func (x *SetOp) End() token.Pos { return x.Right.End() }

// Values is VALUES (row), (row), ...
type Values struct {
	Span
	Rows [][]Expr
}

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST].
type OrderItem struct {
	Span
	Expr       Expr
	Desc       bool
	NullsFirst *bool // nil when NULLS FIRST/LAST is absent
}

// NamedWindow is name AS (spec) of a WINDOW clause.
type NamedWindow struct {
	Span
	Name *Ident
	Spec *WindowSpec
}

// WindowSpec is the window of OVER (...) or of a WINDOW clause.
type WindowSpec struct {
	Span
	Name        *Ident // a named window this one refines, or nil
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame
}

// Frame is ROWS|RANGE bound or ROWS|RANGE BETWEEN bound AND bound. It is
// not a Node (its End field is the upper bound); Walk visits its bounds as
// children of the WindowSpec.
type Frame struct {
	FramePos token.Pos // position of ROWS or RANGE
	Rows     bool      // ROWS, else RANGE
	Start    *FrameBound
	End      *FrameBound // nil without BETWEEN
}

// FrameBound is a frame boundary.
type FrameBound struct {
	Span
	// Kind is "UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW",
	// "FOLLOWING" or "UNBOUNDED FOLLOWING".
	Kind   string
	Offset Expr // for PRECEDING and FOLLOWING
}

// ---------------------------------------------------------------------------
// Table expressions

// Hint is one hint of a /*+ ... */ block: a name with, in parentheses, a
// list of options (identifiers, numbers or strings: BROADCAST(t1, t2)) or
// of key-value options (OPTIONS('k' = 'v')), as in Flink. The span runs
// from the name to the closing parenthesis.
type Hint struct {
	Span
	Name *Ident
	// List are the plain options; KeyValues the 'k' = 'v' ones. A hint
	// has one kind or none.
	List      []*Ident
	KeyValues []*Option
}

// TableName is a table or view reference, optionally FOR SYSTEM_TIME AS OF
// a time attribute (a temporal or lookup join).
type TableName struct {
	Span
	Name *ObjectName
	// Hints are the table hints written after the name:
	// t /*+ OPTIONS('k' = 'v') */.
	Hints         []*Hint
	SystemTime    Expr
	Alias         *Ident
	ColumnAliases []*Ident
}

// SubqueryTable is [LATERAL] (query) [AS] alias [(cols)].
type SubqueryTable struct {
	Span
	Query         *Query
	Alias         *Ident
	ColumnAliases []*Ident
	Lateral       bool
}

// Join joins two table expressions.
type Join struct {
	// Kind is "INNER", "LEFT", "RIGHT", "FULL", "CROSS" or "COMMA".
	Kind        string
	Natural     bool
	Left, Right TableExpr
	On          Expr
	Using       []*Ident
	EndPos      token.Pos
	// JoinPos is the position of the join's first keyword (NATURAL,
	// LEFT, JOIN, ...; the comma of a comma join), for messages.
	JoinPos token.Pos
}

// Pos implements Node.
func (x *Join) Pos() token.Pos { return x.Left.Pos() }

// End implements Node.
func (x *Join) End() token.Pos { return x.EndPos }

// TableFunc is a call of a table-valued function: TABLE(TUMBLE(...)) for the
// window functions and LATERAL TABLE(f(...)) for user table functions.
type TableFunc struct {
	Span
	Name          *ObjectName
	Args          []*FuncArg
	Alias         *Ident
	ColumnAliases []*Ident
	Lateral       bool
}

// Unnest is UNNEST(expr, ...) [WITH ORDINALITY] [AS] alias [(cols)].
type Unnest struct {
	Span
	Exprs          []Expr
	WithOrdinality bool
	Alias          *Ident
	ColumnAliases  []*Ident
}

// FuncArg is an argument of a table function, positional or named
// (name => value).
type FuncArg struct {
	Name  *Ident // nil for a positional argument
	Value Expr
}

// Pos implements Node.
func (x *FuncArg) Pos() token.Pos {
	if x.Name != nil {
		return x.Name.Pos()
	}
	return x.Value.Pos()
}

// End implements Node.
func (x *FuncArg) End() token.Pos { return x.Value.End() }

// ---------------------------------------------------------------------------
// Expressions

// LiteralKind is the kind of a Literal.
type LiteralKind int

// The kinds of literals.
const (
	Number  LiteralKind = iota // 1, 1.5, 1.5E0: Value is the text
	String                     // 'text': Value is the unquoted text
	Bool                       // TRUE, FALSE: Value is "TRUE" or "FALSE"
	Null                       // NULL
	Hex                        // X'0aff': Value is the hex digits
	Unknown                    // UNKNOWN, the boolean NULL
)

var literalKinds = [...]string{Number: "Number", String: "String", Bool: "Bool", Null: "Null", Hex: "Hex", Unknown: "Unknown"}

// String returns the kind's name.
func (k LiteralKind) String() string {
	if k >= 0 && int(k) < len(literalKinds) {
		return literalKinds[k]
	}
	return "LiteralKind(?)"
}

// Literal is a number, string, boolean, NULL, UNKNOWN or hex literal.
// Adjacent string literals ('a' 'b') are concatenated into one.
type Literal struct {
	ValuePos token.Pos
	EndPos   token.Pos
	Kind     LiteralKind
	Value    string
}

// Pos implements Node.
func (x *Literal) Pos() token.Pos { return x.ValuePos }

// End implements Node.
func (x *Literal) End() token.Pos { return x.EndPos }

// TypedLiteral is DATE '...', TIME '...', TIMESTAMP '...' or
// TIMESTAMP_LTZ '...'.
type TypedLiteral struct {
	Span
	Type  string // "DATE", "TIME", "TIMESTAMP" or "TIMESTAMP_LTZ"
	Value string
}

// IntervalLit is INTERVAL 'value' unit [TO unit].
type IntervalLit struct {
	Span
	Value string // the quoted text, sign included: '-5' gives "-5"
	From  string // "YEAR", "MONTH", "DAY", "HOUR", "MINUTE" or "SECOND"
	To    string // empty unless From TO To
	// Precision is nil or [leading precision, fractional precision] with -1
	// for an absent one: SECOND(3) gives [3, -1], DAY TO SECOND(3) [-1, 3].
	Precision []int
}

// ColumnRef is a possibly qualified name in an expression: a, t.a, t.a.b.
// The binder decides which parts name a table and which name fields.
type ColumnRef struct {
	Parts []*Ident
}

// Pos implements Node.
func (x *ColumnRef) Pos() token.Pos { return x.Parts[0].Pos() }

// End implements Node.
func (x *ColumnRef) End() token.Pos { return x.Parts[len(x.Parts)-1].End() }

// Unary is -x, +x or NOT x.
type Unary struct {
	OpPos token.Pos
	Op    string // "-", "+" or "NOT"
	X     Expr
}

// Pos implements Node.
func (x *Unary) Pos() token.Pos { return x.OpPos }

// End implements Node.
func (x *Unary) End() token.Pos { return x.X.End() }

// Binary is x op y.
type Binary struct {
	X     Expr
	OpPos token.Pos
	// Op is upper case: "+", "-", "*", "/", "%", "||", "=", "<>", "<", "<=",
	// ">", ">=", "AND", "OR", "IS DISTINCT FROM", "IS NOT DISTINCT FROM".
	// != is normalised to "<>".
	Op string
	Y  Expr
}

// Pos implements Node.
func (x *Binary) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *Binary) End() token.Pos { return x.Y.End() }

// IsExpr is x IS [NOT] NULL|TRUE|FALSE|UNKNOWN.
type IsExpr struct {
	X      Expr
	Not    bool
	What   string // "NULL", "TRUE", "FALSE" or "UNKNOWN"
	EndPos token.Pos
}

// Pos implements Node.
func (x *IsExpr) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *IsExpr) End() token.Pos { return x.EndPos }

// Between is x [NOT] BETWEEN [ASYMMETRIC|SYMMETRIC] lo AND hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
	Symmetric bool
}

// Pos implements Node.
func (x *Between) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *Between) End() token.Pos { return x.Hi.End() }

// In is x [NOT] IN (list) or x [NOT] IN (query).
type In struct {
	X      Expr
	List   []Expr
	Query  *Query
	Not    bool
	EndPos token.Pos
}

// Pos implements Node.
func (x *In) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *In) End() token.Pos { return x.EndPos }

// Like is x [NOT] LIKE pattern [ESCAPE e] or x [NOT] SIMILAR TO pattern
// [ESCAPE e].
type Like struct {
	X, Pattern Expr
	Escape     Expr // nil if absent
	Not        bool
	Similar    bool
}

// Pos implements Node.
func (x *Like) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *Like) End() token.Pos {
	if x.Escape != nil {
		return x.Escape.End()
	}
	return x.Pattern.End()
}

// Exists is EXISTS (query).
type Exists struct {
	Span
	Query *Query
}

// SubqueryExpr is a scalar subquery: (query).
type SubqueryExpr struct {
	Span
	Query *Query
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Span
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr
}

// When is one WHEN cond THEN result of a CASE.
type When struct {
	Span
	Cond, Result Expr
}

// Cast is CAST(x AS type), TRY_CAST(x AS type) or x::type.
type Cast struct {
	Span
	X    Expr
	Type *TypeExpr
	Try  bool
}

// Call is a function call, also for aggregates, window functions and the
// special forms: EXTRACT(unit FROM x) is Call{EXTRACT, [TimeUnit, x]},
// FLOOR(x TO unit) and CEIL(x TO unit) are Call{FLOOR, [x, TimeUnit]},
// TIMESTAMPADD(unit, n, t) and TIMESTAMPDIFF(unit, a, b) take a TimeUnit
// first, POSITION(a IN b) is Call{POSITION, [a, b]},
// SUBSTRING(s FROM a FOR b) is Call{SUBSTRING, [s, a, b]},
// OVERLAY(s PLACING r FROM a FOR b) is Call{OVERLAY, [s, r, a, b]},
// TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) is
// Call{TRIM, ['BOTH'|'LEADING'|'TRAILING', chars (default ' '), s]}, and
// CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIMESTAMP and LOCALTIME
// written without parentheses are calls without arguments (Rparen NoPos).
type Call struct {
	Name      *ObjectName // upper case for the special forms above
	Lparen    token.Pos
	Args      []Expr
	Distinct  bool
	Star      bool // COUNT(*)
	Rparen    token.Pos
	Returning *TypeExpr     // JSON_VALUE(... RETURNING type)
	OnEmpty   *JSONBehavior // JSON_VALUE(... ON EMPTY)
	OnError   *JSONBehavior // JSON_VALUE(... ON ERROR)
	Filter    Expr          // agg(...) FILTER (WHERE cond)
	Over      *WindowSpec   // f(...) OVER (...)
	OverName  *Ident        // f(...) OVER w
	EndPos    token.Pos
}

// Pos implements Node.
func (x *Call) Pos() token.Pos { return x.Name.Pos() }

// End implements Node.
func (x *Call) End() token.Pos { return x.EndPos }

// JSONBehavior is NULL, ERROR or DEFAULT expr of a JSON_VALUE ON EMPTY or
// ON ERROR clause.
type JSONBehavior struct {
	Span
	Kind    string // "NULL", "ERROR" or "DEFAULT"
	Default Expr
}

// TimeUnit is a time unit used as an argument of EXTRACT, FLOOR/CEIL ... TO,
// TIMESTAMPADD and TIMESTAMPDIFF.
type TimeUnit struct {
	Span
	Unit string // canonical singular upper case: "YEAR", "HOUR", "DOW", ...
}

// Index is x[index]: an array element or a map value.
type Index struct {
	X      Expr
	Index  Expr
	EndPos token.Pos
}

// Pos implements Node.
func (x *Index) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *Index) End() token.Pos { return x.EndPos }

// FieldAccess is x.name where x is not a plain name (plain dotted names are
// ColumnRefs): f(a).name, (r).name, a[1].name.
type FieldAccess struct {
	X    Expr
	Name *Ident
}

// Pos implements Node.
func (x *FieldAccess) Pos() token.Pos { return x.X.Pos() }

// End implements Node.
func (x *FieldAccess) End() token.Pos { return x.Name.End() }

// RowCtor is ROW(a, b, ...) or (a, b, ...).
type RowCtor struct {
	Span
	Args []Expr
}

// ArrayCtor is ARRAY[a, b, ...].
type ArrayCtor struct {
	Span
	Elems []Expr
}

// MapCtor is MAP[k1, v1, k2, v2, ...].
type MapCtor struct {
	Span
	Elems []Expr // keys and values, alternating
}

// TableArg is a table argument of a table function: TABLE name
// [PARTITION BY exprs].
type TableArg struct {
	Span
	Name        *ObjectName
	PartitionBy []Expr
	Query       *Query // reserved for a subquery argument; the parser leaves it nil
}

// Descriptor is DESCRIPTOR(col, ...), naming columns for a table function.
type Descriptor struct {
	Span
	Columns []*Ident
}

// GroupingSet is GROUPING SETS (...), ROLLUP (...) or CUBE (...) in GROUP
// BY. Each item is an expression, a RowCtor for (a, b), or an empty RowCtor
// for ().
type GroupingSet struct {
	Span
	Kind  string // "GROUPING SETS", "ROLLUP" or "CUBE"
	Items []Expr
}

// ---------------------------------------------------------------------------
// Marker methods

func (*CreateTable) stmtNode()    {}
func (*CreateView) stmtNode()     {}
func (*CreateRuleset) stmtNode()  {}
func (*AlterRuleset) stmtNode()   {}
func (*Drop) stmtNode()           {}
func (*CreateFunction) stmtNode() {}
func (*Set) stmtNode()            {}
func (*Reset) stmtNode()          {}
func (*Insert) stmtNode()         {}
func (*StatementSet) stmtNode()   {}
func (*Explain) stmtNode()        {}
func (*Show) stmtNode()           {}
func (*Describe) stmtNode()       {}
func (*QueryStmt) stmtNode()      {}

func (*Select) bodyNode() {}
func (*SetOp) bodyNode()  {}
func (*Values) bodyNode() {}
func (*Query) bodyNode()  {}

func (*TableName) tableNode()     {}
func (*SubqueryTable) tableNode() {}
func (*Join) tableNode()          {}
func (*TableFunc) tableNode()     {}
func (*Unnest) tableNode()        {}

func (*Literal) exprNode()      {}
func (*TypedLiteral) exprNode() {}
func (*IntervalLit) exprNode()  {}
func (*ColumnRef) exprNode()    {}
func (*Unary) exprNode()        {}
func (*Binary) exprNode()       {}
func (*IsExpr) exprNode()       {}
func (*Between) exprNode()      {}
func (*In) exprNode()           {}
func (*Like) exprNode()         {}
func (*Exists) exprNode()       {}
func (*SubqueryExpr) exprNode() {}
func (*Case) exprNode()         {}
func (*Cast) exprNode()         {}
func (*Call) exprNode()         {}
func (*TimeUnit) exprNode()     {}
func (*Index) exprNode()        {}
func (*FieldAccess) exprNode()  {}
func (*RowCtor) exprNode()      {}
func (*ArrayCtor) exprNode()    {}
func (*MapCtor) exprNode()      {}
func (*TableArg) exprNode()     {}
func (*Descriptor) exprNode()   {}
func (*GroupingSet) exprNode()  {}
