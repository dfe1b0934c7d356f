package ast

import (
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/sql/token"
)

// Format returns n as canonical SQL text on one line: keywords in upper
// case, identifiers quoted only where needed, string literals re-quoted,
// parentheses only where precedence needs them. Parsing the text gives a
// tree equal to n, positions aside.
func Format(n Node) string {
	var p printer
	p.node(n)
	return p.b.String()
}

type printer struct {
	b strings.Builder
}

func (p *printer) str(s string) { p.b.WriteString(s) }

func (p *printer) ident(x *Ident) { p.str(formatIdent(x)) }

func (p *printer) idents(list []*Ident) {
	for i, x := range list {
		if i > 0 {
			p.str(", ")
		}
		p.ident(x)
	}
}

func (p *printer) identList(list []*Ident) {
	p.str("(")
	p.idents(list)
	p.str(")")
}

func (p *printer) name(x *ObjectName) { p.str(x.String()) }

// quote returns s as a SQL string literal.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func (p *printer) node(n Node) {
	switch n := n.(type) {
	case Statement:
		p.stmt(n)
	case *Query:
		p.query(n)
	case QueryBody:
		p.body(n)
	case TableExpr:
		p.table(n)
	case Expr:
		p.expr(n, precLowest)
	case *TypeExpr:
		p.typ(n)
	case *Ident:
		p.ident(n)
	case *ObjectName:
		p.name(n)
	case *SelectItem:
		p.selectItem(n)
	case *OrderItem:
		p.orderItem(n)
	case *WindowSpec:
		p.windowSpec(n)
	case *ColumnDef:
		p.column(n, nil)
	case *FuncArg:
		p.funcArg(n)
	case *CTE:
		p.cte(n)
	case nil:
	default:
		p.str("/* unprintable node */")
	}
}

// ---------------------------------------------------------------------------
// Statements

func (p *printer) stmt(s Statement) {
	switch s := s.(type) {
	case *CreateTable:
		p.createTable(s)
	case *CreateView:
		p.str("CREATE ")
		if s.Temporary {
			p.str("TEMPORARY ")
		}
		p.str("VIEW ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.name(s.Name)
		if s.Columns != nil {
			p.str(" ")
			p.identList(s.Columns)
		}
		if s.Comment != "" {
			p.str(" COMMENT " + quote(s.Comment))
		}
		p.str(" AS ")
		p.query(s.Query)
	case *CreateRuleset:
		p.str("CREATE RULESET ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.name(s.Name)
		p.str(" ON ")
		p.name(s.Source)
		p.rulesetMatch(s.Match)
		if s.Except != nil {
			p.str(" EXCEPT WHEN ")
			p.expr(s.Except, 0)
		}
		p.suppress(s.Suppress)
		if s.Comment != "" {
			p.str(" COMMENT " + quote(s.Comment))
		}
		p.ruleList(s.Rules)
	case *AlterRuleset:
		p.str("ALTER RULESET ")
		p.name(s.Name)
		switch s.Action {
		case "ROLLBACK":
			p.str(" ROLLBACK TO VERSION " + strconv.FormatInt(s.Version, 10))
		case "ADD":
			p.str(" ADD ")
			p.ruleDef(s.Rule)
		case "ALTER":
			p.str(" ALTER ")
			p.ruleDef(s.Rule)
		case "DROP", "ENABLE", "DISABLE":
			p.str(" " + s.Action + " RULE ")
			p.ident(s.Target)
		case "SET MATCH":
			p.str(" SET")
			p.rulesetMatch(s.Match)
			if s.Match.Kind == "ANY" {
				p.str(" MATCH ANY")
			}
		case "SET EXCEPT":
			p.str(" SET EXCEPT WHEN ")
			p.expr(s.Except, 0)
		case "SET SUPPRESS":
			p.str(" SET")
			p.suppress(s.Suppress)
		case "SHADOW":
			p.str(" SHADOW")
			if s.Rules == nil {
				p.str(" VERSION " + strconv.FormatInt(s.Version, 10))
			} else {
				p.rulesetMatch(s.Match)
				if s.Match.Kind == "ANY" {
					p.str(" MATCH ANY")
				}
				if s.Except != nil {
					p.str(" EXCEPT WHEN ")
					p.expr(s.Except, 0)
				}
				p.suppress(s.Suppress)
				p.ruleList(s.Rules)
			}
			p.str(" INTO ")
			p.name(s.Into)
		default: // DROP EXCEPT, DROP SUPPRESS, DROP SHADOW, PROMOTE SHADOW
			p.str(" " + s.Action)
		}
	case *CreateMetricGroup:
		p.str("CREATE METRIC GROUP ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.name(s.Name)
		p.str(" ON ")
		p.name(s.Source)
		p.str(" KEY BY ")
		p.identList(s.Keys)
		if s.Comment != "" {
			p.str(" COMMENT " + quote(s.Comment))
		}
		p.str(" (")
		for i, m := range s.Metrics {
			if i > 0 {
				p.str(", ")
			}
			p.metricDef(m)
		}
		p.str(")")
	case *AlterMetricGroup:
		p.str("ALTER METRIC GROUP ")
		p.name(s.Name)
		p.str(" " + s.Action + " ")
		switch {
		case s.Action == "ROLLBACK":
			p.str("TO VERSION " + strconv.FormatInt(s.Version, 10))
		case s.Metric != nil:
			p.metricDef(s.Metric)
		default:
			p.str("METRIC ")
			p.ident(s.Target)
		}
	case *Drop:
		p.str("DROP ")
		if s.Temporary {
			p.str("TEMPORARY ")
			if s.System {
				p.str("SYSTEM ")
			}
		}
		p.str(s.What + " ")
		if s.IfExists {
			p.str("IF EXISTS ")
		}
		p.name(s.Name)
	case *CreateFunction:
		p.str("CREATE ")
		if s.Temporary {
			p.str("TEMPORARY ")
			if s.System {
				p.str("SYSTEM ")
			}
		}
		p.str("FUNCTION ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.name(s.Name)
		if sig := s.Signature; sig != nil {
			p.str("(")
			for i, c := range sig.Params {
				if i > 0 {
					p.str(", ")
				}
				p.column(c, nil)
			}
			p.str(") RETURNS ")
			if sig.Returns != nil {
				p.typ(sig.Returns)
			} else {
				p.str("TABLE (")
				for i, c := range sig.ReturnsTable {
					if i > 0 {
						p.str(", ")
					}
					p.column(c, nil)
				}
				p.str(")")
			}
			if sig.CalledOnNull {
				p.str(" CALLED ON NULL INPUT")
			}
		}
		p.str(" AS " + quote(s.Class))
		if s.Language != "" {
			p.str(" LANGUAGE " + s.Language)
		}
		for i, r := range s.Using {
			if i == 0 {
				p.str(" USING ")
			} else {
				p.str(", ")
			}
			p.str(r.Kind + " " + quote(r.URI))
		}
	case *Set:
		p.str("SET")
		if s.Key != "" {
			p.str(" " + quote(s.Key) + " = " + quote(s.Value))
		}
	case *Reset:
		p.str("RESET")
		if s.Key != "" {
			p.str(" " + quote(s.Key))
		}
	case *Insert:
		p.insert(s)
	case *StatementSet:
		if s.Legacy {
			p.str("BEGIN STATEMENT SET; ")
		} else {
			p.str("EXECUTE STATEMENT SET BEGIN ")
		}
		for _, ins := range s.Inserts {
			p.insert(ins)
			p.str("; ")
		}
		p.str("END")
	case *Explain:
		p.str("EXPLAIN ")
		p.stmt(s.Stmt)
	case *Show:
		p.str("SHOW " + s.What)
	case *Describe:
		p.str("DESCRIBE ")
		p.name(s.Name)
	case *QueryStmt:
		p.query(s.Query)
	case nil:
	}
}

// rulesetMatch prints " MATCH ..." of a policy other than the default.
func (p *printer) rulesetMatch(m RulesetMatch) {
	switch m.Kind {
	case "", "ANY":
	case "AT LEAST":
		p.str(" MATCH AT LEAST " + strconv.FormatInt(m.N, 10))
	case "AT LEAST PERCENT":
		p.str(" MATCH AT LEAST " + strconv.FormatInt(m.N, 10) + " PERCENT")
	default:
		p.str(" MATCH " + m.Kind)
	}
}

// suppress prints " SUPPRESS BY (...) FOR INTERVAL ...", if s is set.
func (p *printer) suppress(s *RulesetSuppress) {
	if s == nil {
		return
	}
	p.str(" SUPPRESS BY ")
	p.identList(s.Keys)
	p.str(" FOR ")
	p.expr(s.Interval, 0)
}

// ruleList prints " (RULE ..., ...)".
func (p *printer) ruleList(rules []*RuleDef) {
	p.str(" (")
	for i, r := range rules {
		if i > 0 {
			p.str(", ")
		}
		p.ruleDef(r)
	}
	p.str(")")
}

func (p *printer) metricDef(m *MetricDef) {
	p.str("METRIC ")
	p.ident(m.Name)
	p.str(" AS ")
	p.expr(m.Agg, 0)
	if m.Window.Kind != "" {
		p.str(" WINDOW " + m.Window.Kind + "(")
		if m.Window.Slide != nil {
			p.expr(m.Window.Slide, 0)
			p.str(", ")
		}
		p.expr(m.Window.Size, 0)
		p.str(")")
	}
}

func (p *printer) ruleDef(r *RuleDef) {
	p.str("RULE ")
	p.ident(r.Name)
	p.str(" WHEN ")
	p.expr(r.When, 0)
	if r.Severity != "" {
		p.str(" SEVERITY " + quote(r.Severity))
	}
	if r.Priority != 0 {
		p.str(" PRIORITY " + strconv.FormatInt(r.Priority, 10))
	}
	if r.Tags != nil {
		p.str(" TAGS (")
		for i, t := range r.Tags {
			if i > 0 {
				p.str(", ")
			}
			p.str(quote(t))
		}
		p.str(")")
	}
	if r.Disabled {
		p.str(" DISABLED")
	}
}

func (p *printer) insert(s *Insert) {
	if s.Overwrite {
		p.str("INSERT OVERWRITE ")
	} else {
		p.str("INSERT INTO ")
	}
	p.name(s.Table)
	p.hints(s.TableHints)
	if s.Columns != nil {
		p.str(" ")
		p.identList(s.Columns)
	}
	p.str(" ")
	p.query(s.Query)
}

func (p *printer) createTable(s *CreateTable) {
	p.str("CREATE ")
	if s.Temporary {
		p.str("TEMPORARY ")
	}
	p.str("TABLE ")
	if s.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	p.name(s.Name)
	inlineKey := false
	for _, c := range s.Columns {
		if c.PrimaryKey {
			inlineKey = true
		}
	}
	if len(s.Columns) > 0 || s.Watermark != nil || s.PrimaryKey != nil {
		p.str(" (")
		sep := ""
		for _, c := range s.Columns {
			p.str(sep)
			sep = ", "
			p.column(c, s.PrimaryKeyName)
		}
		if s.Watermark != nil {
			p.str(sep)
			sep = ", "
			p.str("WATERMARK FOR ")
			p.ident(s.Watermark.Column)
			p.str(" AS ")
			p.expr(s.Watermark.Expr, precLowest)
		}
		if s.PrimaryKey != nil && !inlineKey {
			p.str(sep)
			if s.PrimaryKeyName != nil {
				p.str("CONSTRAINT ")
				p.ident(s.PrimaryKeyName)
				p.str(" ")
			}
			p.str("PRIMARY KEY ")
			p.identList(s.PrimaryKey)
			p.str(" NOT ENFORCED")
		}
		p.str(")")
	}
	if s.Comment != "" {
		p.str(" COMMENT " + quote(s.Comment))
	}
	if s.PartitionedBy != nil {
		p.str(" PARTITIONED BY ")
		p.identList(s.PartitionedBy)
	}
	if s.Options != nil {
		p.str(" WITH (")
		for i, o := range s.Options {
			if i > 0 {
				p.str(", ")
			}
			p.str(quote(o.Key) + " = " + quote(o.Value))
		}
		p.str(")")
	}
	if s.Like != nil {
		p.str(" LIKE ")
		p.name(s.Like)
		if s.LikeOptions != nil {
			p.str(" (" + strings.Join(s.LikeOptions, " ") + ")")
		}
	}
}

func (p *printer) column(c *ColumnDef, keyName *Ident) {
	p.ident(c.Name)
	if c.Computed != nil {
		p.str(" AS ")
		p.expr(c.Computed, precLowest)
	} else if c.Type != nil {
		p.str(" ")
		p.typ(c.Type)
		if c.Metadata {
			p.str(" METADATA")
			if c.MetadataKey != "" {
				p.str(" FROM " + quote(c.MetadataKey))
			}
			if c.Virtual {
				p.str(" VIRTUAL")
			}
		}
		if c.PrimaryKey {
			if keyName != nil {
				p.str(" CONSTRAINT ")
				p.ident(keyName)
			}
			p.str(" PRIMARY KEY NOT ENFORCED")
		}
	}
	if c.Comment != "" {
		p.str(" COMMENT " + quote(c.Comment))
	}
}

// ---------------------------------------------------------------------------
// Types

func (p *printer) params(ps []int) {
	if ps == nil {
		return
	}
	p.str("(")
	for i, n := range ps {
		if i > 0 {
			p.str(", ")
		}
		p.str(strconv.Itoa(n))
	}
	p.str(")")
}

func (p *printer) typ(t *TypeExpr) {
	switch t.Name {
	case "ARRAY", "MULTISET":
		p.str(t.Name + "<")
		if t.Elem != nil {
			p.typ(t.Elem)
		}
		p.str(">")
	case "MAP":
		p.str("MAP<")
		if t.Elem != nil {
			p.typ(t.Elem)
		}
		p.str(", ")
		if t.Value != nil {
			p.typ(t.Value)
		}
		p.str(">")
	case "ROW":
		p.str("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				p.str(", ")
			}
			p.ident(f.Name)
			p.str(" ")
			p.typ(f.Type)
			if f.Comment != "" {
				p.str(" COMMENT " + quote(f.Comment))
			}
		}
		p.str(">")
	case "INTERVAL":
		lead, frac := -1, -1
		if len(t.Params) == 2 {
			lead, frac = t.Params[0], t.Params[1]
		}
		p.str("INTERVAL ")
		p.intervalQualifier(t.IntervalFrom, t.IntervalTo, lead, frac)
	default:
		p.str(t.Name)
		p.params(t.Params)
	}
	if t.NotNull {
		p.str(" NOT NULL")
	}
}

func (p *printer) intervalQualifier(from, to string, lead, frac int) {
	p.str(from)
	switch {
	case lead >= 0 && frac >= 0 && to == "":
		p.str("(" + strconv.Itoa(lead) + ", " + strconv.Itoa(frac) + ")")
	case lead >= 0:
		p.str("(" + strconv.Itoa(lead) + ")")
	}
	if to != "" {
		p.str(" TO " + to)
		if frac >= 0 {
			p.str("(" + strconv.Itoa(frac) + ")")
		}
	}
}

// ---------------------------------------------------------------------------
// Queries

func (p *printer) query(q *Query) {
	if q == nil {
		return
	}
	if q.With != nil {
		p.str("WITH ")
		for i, c := range q.With {
			if i > 0 {
				p.str(", ")
			}
			p.cte(c)
		}
		p.str(" ")
	}
	p.body(q.Body)
	if q.OrderBy != nil {
		p.str(" ORDER BY ")
		p.orderItems(q.OrderBy)
	}
	if q.Limit != nil {
		p.str(" LIMIT ")
		p.expr(q.Limit, precLowest)
	}
	if q.Offset != nil {
		p.str(" OFFSET ")
		p.expr(q.Offset, precLowest)
	}
}

func (p *printer) cte(c *CTE) {
	p.ident(c.Name)
	if c.Columns != nil {
		p.str(" ")
		p.identList(c.Columns)
	}
	p.str(" AS (")
	p.query(c.Query)
	p.str(")")
}

// setPrec is the binding strength of a set operation.
func setPrec(b QueryBody) int {
	if s, ok := b.(*SetOp); ok {
		if s.Op == "INTERSECT" {
			return 2
		}
		return 1
	}
	return 3
}

func (p *printer) body(b QueryBody) {
	switch b := b.(type) {
	case *Select:
		p.selectBody(b)
	case *Values:
		p.str("VALUES ")
		for i, row := range b.Rows {
			if i > 0 {
				p.str(", ")
			}
			p.str("(")
			p.exprs(row)
			p.str(")")
		}
	case *SetOp:
		prec := setPrec(b)
		p.bodyParen(b.Left, setPrec(b.Left) < prec)
		p.str(" " + b.Op + " ")
		if b.All {
			p.str("ALL ")
		}
		p.bodyParen(b.Right, setPrec(b.Right) <= prec)
	case *Query:
		p.str("(")
		p.query(b)
		p.str(")")
	}
}

func (p *printer) bodyParen(b QueryBody, paren bool) {
	if paren {
		p.str("(")
	}
	p.body(b)
	if paren {
		p.str(")")
	}
}

func (p *printer) selectBody(s *Select) {
	p.str("SELECT")
	p.hints(s.Hints)
	p.str(" ")
	if s.Distinct {
		p.str("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			p.str(", ")
		}
		p.selectItem(it)
	}
	if s.From != nil {
		p.str(" FROM ")
		p.table(s.From)
	}
	if s.Where != nil {
		p.str(" WHERE ")
		p.expr(s.Where, precLowest)
	}
	if s.GroupBy != nil {
		p.str(" GROUP BY ")
		p.groupingItems(s.GroupBy)
	}
	if s.Having != nil {
		p.str(" HAVING ")
		p.expr(s.Having, precLowest)
	}
	if s.Windows != nil {
		p.str(" WINDOW ")
		for i, w := range s.Windows {
			if i > 0 {
				p.str(", ")
			}
			p.ident(w.Name)
			p.str(" AS ")
			p.windowSpec(w.Spec)
		}
	}
}

func (p *printer) selectItem(it *SelectItem) {
	if it.Star {
		if it.Qualifier != nil {
			p.name(it.Qualifier)
			p.str(".")
		}
		p.str("*")
		return
	}
	p.expr(it.Expr, precLowest)
	if it.Alias != nil {
		p.str(" AS ")
		p.ident(it.Alias)
	}
}

func (p *printer) orderItems(items []*OrderItem) {
	for i, it := range items {
		if i > 0 {
			p.str(", ")
		}
		p.orderItem(it)
	}
}

func (p *printer) orderItem(it *OrderItem) {
	p.expr(it.Expr, precLowest)
	if it.Desc {
		p.str(" DESC")
	}
	if it.NullsFirst != nil {
		if *it.NullsFirst {
			p.str(" NULLS FIRST")
		} else {
			p.str(" NULLS LAST")
		}
	}
}

func (p *printer) windowSpec(w *WindowSpec) {
	p.str("(")
	sep := ""
	if w.Name != nil {
		p.ident(w.Name)
		sep = " "
	}
	if w.PartitionBy != nil {
		p.str(sep + "PARTITION BY ")
		p.exprs(w.PartitionBy)
		sep = " "
	}
	if w.OrderBy != nil {
		p.str(sep + "ORDER BY ")
		p.orderItems(w.OrderBy)
		sep = " "
	}
	if f := w.Frame; f != nil {
		p.str(sep)
		if f.Rows {
			p.str("ROWS ")
		} else {
			p.str("RANGE ")
		}
		if f.End != nil {
			p.str("BETWEEN ")
			p.frameBound(f.Start)
			p.str(" AND ")
			p.frameBound(f.End)
		} else {
			p.frameBound(f.Start)
		}
	}
	p.str(")")
}

func (p *printer) frameBound(b *FrameBound) {
	if b == nil {
		return
	}
	if b.Offset != nil {
		p.expr(b.Offset, precConcat)
		p.str(" ")
	}
	p.str(b.Kind)
}

// ---------------------------------------------------------------------------
// Table expressions

func (p *printer) alias(alias *Ident, cols []*Ident) {
	if alias == nil {
		return
	}
	p.str(" AS ")
	p.ident(alias)
	if cols != nil {
		p.str(" ")
		p.identList(cols)
	}
}

func (p *printer) table(t TableExpr) {
	switch t := t.(type) {
	case *TableName:
		p.name(t.Name)
		p.hints(t.Hints)
		if t.SystemTime != nil {
			p.str(" FOR SYSTEM_TIME AS OF ")
			p.expr(t.SystemTime, precConcat)
		}
		p.alias(t.Alias, t.ColumnAliases)
	case *SubqueryTable:
		if t.Lateral {
			p.str("LATERAL ")
		}
		p.str("(")
		p.query(t.Query)
		p.str(")")
		p.alias(t.Alias, t.ColumnAliases)
	case *Join:
		_, leftJoin := t.Left.(*Join)
		leftComma := leftJoin && t.Left.(*Join).Kind == "COMMA"
		p.tableParen(t.Left, leftComma && t.Kind != "COMMA")
		if t.Kind == "COMMA" {
			p.str(", ")
		} else {
			p.str(" ")
			if t.Natural {
				p.str("NATURAL ")
			}
			if t.Kind != "INNER" {
				p.str(t.Kind + " ")
			}
			p.str("JOIN ")
		}
		_, rightJoin := t.Right.(*Join)
		p.tableParen(t.Right, rightJoin)
		if t.On != nil {
			p.str(" ON ")
			p.expr(t.On, precLowest)
		}
		if t.Using != nil {
			p.str(" USING ")
			p.identList(t.Using)
		}
	case *TableFunc:
		if t.Lateral {
			p.str("LATERAL ")
		}
		p.str("TABLE(")
		p.name(t.Name)
		p.str("(")
		for i, a := range t.Args {
			if i > 0 {
				p.str(", ")
			}
			p.funcArg(a)
		}
		p.str("))")
		p.alias(t.Alias, t.ColumnAliases)
	case *Unnest:
		p.str("UNNEST(")
		p.exprs(t.Exprs)
		p.str(")")
		if t.WithOrdinality {
			p.str(" WITH ORDINALITY")
		}
		p.alias(t.Alias, t.ColumnAliases)
	}
}

func (p *printer) tableParen(t TableExpr, paren bool) {
	if paren {
		p.str("(")
	}
	p.table(t)
	if paren {
		p.str(")")
	}
}

func (p *printer) funcArg(a *FuncArg) {
	if a.Name != nil {
		// Any word may name an argument, reserved or not (OFFSET => ...).
		if a.Name.Quoted || !isWord(a.Name.Name) {
			p.ident(&Ident{Name: a.Name.Name, Quoted: true})
		} else {
			p.str(a.Name.Name)
		}
		p.str(" => ")
	}
	p.expr(a.Value, precLowest)
}

// isWord reports whether s scans as one word: an identifier or a keyword.
func isWord(s string) bool {
	return isBareIdent(s) || token.Lookup(s).IsKeyword()
}

// ---------------------------------------------------------------------------
// Expressions

// Precedence levels, loosest first.
const (
	precLowest = iota
	precOr
	precAnd
	precNot
	precCmp
	precConcat
	precAdd
	precMul
	precUnary
	precPrimary
)

func binaryPrec(op string) int {
	switch op {
	case "OR":
		return precOr
	case "AND":
		return precAnd
	case "||":
		return precConcat
	case "+", "-":
		return precAdd
	case "*", "/", "%":
		return precMul
	}
	return precCmp
}

func exprPrec(x Expr) int {
	switch x := x.(type) {
	case *Binary:
		return binaryPrec(x.Op)
	case *Unary:
		if x.Op == "NOT" {
			return precNot
		}
		return precUnary
	case *IsExpr, *Between, *In, *Like:
		return precCmp
	}
	return precPrimary
}

func (p *printer) exprs(list []Expr) {
	for i, x := range list {
		if i > 0 {
			p.str(", ")
		}
		p.expr(x, precLowest)
	}
}

// expr prints x, in parentheses if it binds more loosely than min.
func (p *printer) expr(x Expr, min int) {
	if x == nil {
		return
	}
	if exprPrec(x) < min {
		p.str("(")
		p.expr(x, precLowest)
		p.str(")")
		return
	}
	switch x := x.(type) {
	case *Literal:
		p.literal(x)
	case *TypedLiteral:
		p.str(x.Type + " " + quote(x.Value))
	case *IntervalLit:
		p.str("INTERVAL " + quote(x.Value) + " ")
		lead, frac := -1, -1
		if len(x.Precision) == 2 {
			lead, frac = x.Precision[0], x.Precision[1]
		}
		p.intervalQualifier(x.From, x.To, lead, frac)
	case *ColumnRef:
		p.idents0(x.Parts)
	case *Unary:
		p.str(x.Op)
		if x.Op == "NOT" {
			p.str(" ")
			p.expr(x.X, precNot)
			return
		}
		// Keep "- -x" apart: "--" would start a comment.
		var sub printer
		sub.expr(x.X, precUnary)
		s := sub.b.String()
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			p.str(" ")
		}
		p.str(s)
	case *Binary:
		prec := binaryPrec(x.Op)
		p.expr(x.X, prec)
		p.str(" " + x.Op + " ")
		p.expr(x.Y, prec+1)
	case *IsExpr:
		p.expr(x.X, precCmp)
		p.str(" IS ")
		if x.Not {
			p.str("NOT ")
		}
		p.str(x.What)
	case *Between:
		p.expr(x.X, precCmp)
		if x.Not {
			p.str(" NOT")
		}
		p.str(" BETWEEN ")
		if x.Symmetric {
			p.str("SYMMETRIC ")
		}
		p.expr(x.Lo, precConcat)
		p.str(" AND ")
		p.expr(x.Hi, precConcat)
	case *In:
		p.expr(x.X, precCmp)
		if x.Not {
			p.str(" NOT")
		}
		p.str(" IN (")
		if x.Query != nil {
			p.query(x.Query)
		} else {
			p.exprs(x.List)
		}
		p.str(")")
	case *Like:
		p.expr(x.X, precCmp)
		if x.Not {
			p.str(" NOT")
		}
		if x.Similar {
			p.str(" SIMILAR TO ")
		} else {
			p.str(" LIKE ")
		}
		p.expr(x.Pattern, precConcat)
		if x.Escape != nil {
			p.str(" ESCAPE ")
			p.expr(x.Escape, precConcat)
		}
	case *Exists:
		p.str("EXISTS (")
		p.query(x.Query)
		p.str(")")
	case *SubqueryExpr:
		p.str("(")
		p.query(x.Query)
		p.str(")")
	case *Case:
		p.str("CASE")
		if x.Operand != nil {
			p.str(" ")
			p.expr(x.Operand, precLowest)
		}
		for _, w := range x.Whens {
			p.str(" WHEN ")
			p.expr(w.Cond, precLowest)
			p.str(" THEN ")
			p.expr(w.Result, precLowest)
		}
		if x.Else != nil {
			p.str(" ELSE ")
			p.expr(x.Else, precLowest)
		}
		p.str(" END")
	case *Cast:
		if x.Try {
			p.str("TRY_CAST(")
		} else {
			p.str("CAST(")
		}
		p.expr(x.X, precLowest)
		p.str(" AS ")
		p.typ(x.Type)
		p.str(")")
	case *Call:
		p.call(x)
	case *TimeUnit:
		p.str(x.Unit)
	case *Index:
		p.postfixBase(x.X)
		p.str("[")
		p.expr(x.Index, precLowest)
		p.str("]")
	case *FieldAccess:
		p.postfixBase(x.X)
		p.str(".")
		p.ident(x.Name)
	case *RowCtor:
		p.str("ROW(")
		p.exprs(x.Args)
		p.str(")")
	case *ArrayCtor:
		p.str("ARRAY[")
		p.exprs(x.Elems)
		p.str("]")
	case *MapCtor:
		p.str("MAP[")
		p.exprs(x.Elems)
		p.str("]")
	case *TableArg:
		p.str("TABLE ")
		p.name(x.Name)
		switch len(x.PartitionBy) {
		case 0:
		case 1:
			p.str(" PARTITION BY ")
			p.expr(x.PartitionBy[0], precLowest)
		default:
			p.str(" PARTITION BY (")
			p.exprs(x.PartitionBy)
			p.str(")")
		}
	case *Descriptor:
		p.str("DESCRIPTOR")
		p.identList(x.Columns)
	case *GroupingSet:
		p.str(x.Kind + " (")
		p.groupingItems(x.Items)
		p.str(")")
	default:
		p.str("/* unprintable expression */")
	}
}

// groupingItems prints the elements of GROUP BY or of a grouping set: a
// list of expressions (a, b) or the empty set () in parentheses.
func (p *printer) groupingItems(items []Expr) {
	for i, it := range items {
		if i > 0 {
			p.str(", ")
		}
		if r, ok := it.(*RowCtor); ok && len(r.Args) != 1 {
			p.str("(")
			p.exprs(r.Args)
			p.str(")")
			continue
		}
		p.expr(it, precLowest)
	}
}

func (p *printer) idents0(parts []*Ident) {
	for i, id := range parts {
		if i > 0 {
			p.str(".")
		}
		p.ident(id)
	}
}

// postfixBase prints the operand of x[i] or x.name. A plain name or a
// number must be parenthesised: (r).f is not the name r.f, and 1.f would
// scan as the number 1.
func (p *printer) postfixBase(x Expr) {
	paren := exprPrec(x) < precPrimary
	switch x := x.(type) {
	case *ColumnRef:
		paren = true
	case *Literal:
		paren = x.Kind == Number
	case *Call:
		paren = isNiladicCall(x)
	}
	if paren {
		p.str("(")
		p.expr(x, precLowest)
		p.str(")")
		return
	}
	p.expr(x, precPrimary)
}

func (p *printer) literal(x *Literal) {
	switch x.Kind {
	case String:
		p.str(quote(x.Value))
	case Hex:
		p.str("X'" + x.Value + "'")
	case Number:
		p.str(x.Value)
	default:
		p.str(strings.ToUpper(x.Value))
	}
}

// isNiladicCall reports whether c is written without parentheses.
func isNiladicCall(c *Call) bool {
	if len(c.Name.Parts) != 1 || c.Name.Parts[0].Quoted || c.Args != nil || c.Star || c.Distinct {
		return false
	}
	switch c.Name.Parts[0].Name {
	case "CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIMESTAMP", "LOCALTIME":
		return true
	}
	return false
}

func (p *printer) call(c *Call) {
	if isNiladicCall(c) {
		p.str(c.Name.Parts[0].Name)
		return
	}
	special := ""
	if len(c.Name.Parts) == 1 && !c.Name.Parts[0].Quoted {
		special = c.Name.Parts[0].Name
	}
	p.name(c.Name)
	p.str("(")
	args := c.Args
	switch {
	case special == "EXTRACT" && len(args) == 2 && isTimeUnit(args[0]):
		p.expr(args[0], precLowest)
		p.str(" FROM ")
		p.expr(args[1], precLowest)
	case special == "POSITION" && len(args) == 2:
		p.expr(args[0], precConcat)
		p.str(" IN ")
		p.expr(args[1], precLowest)
	case special == "TRIM" && len(args) == 3 && isTrimMode(args[0]):
		p.str(args[0].(*Literal).Value + " ")
		p.expr(args[1], precLowest)
		p.str(" FROM ")
		p.expr(args[2], precLowest)
	case special == "OVERLAY" && (len(args) == 3 || len(args) == 4):
		p.expr(args[0], precLowest)
		p.str(" PLACING ")
		p.expr(args[1], precLowest)
		p.str(" FROM ")
		p.expr(args[2], precLowest)
		if len(args) == 4 {
			p.str(" FOR ")
			p.expr(args[3], precLowest)
		}
	case (special == "FLOOR" || special == "CEIL" || special == "CEILING") && len(args) == 2 && isTimeUnit(args[1]):
		p.expr(args[0], precLowest)
		p.str(" TO ")
		p.expr(args[1], precLowest)
	default:
		if c.Star {
			p.str("*")
		}
		if c.Distinct {
			p.str("DISTINCT ")
		}
		p.exprs(args)
	}
	if c.Returning != nil {
		p.str(" RETURNING ")
		p.typ(c.Returning)
	}
	p.jsonBehavior(c.OnEmpty, "EMPTY")
	p.jsonBehavior(c.OnError, "ERROR")
	p.str(")")
	if c.Filter != nil {
		p.str(" FILTER (WHERE ")
		p.expr(c.Filter, precLowest)
		p.str(")")
	}
	if c.Over != nil {
		p.str(" OVER ")
		p.windowSpec(c.Over)
	} else if c.OverName != nil {
		p.str(" OVER ")
		p.ident(c.OverName)
	}
}

func (p *printer) jsonBehavior(b *JSONBehavior, on string) {
	if b == nil {
		return
	}
	p.str(" " + b.Kind)
	if b.Default != nil {
		p.str(" ")
		p.expr(b.Default, precLowest)
	}
	p.str(" ON " + on)
}

func isTimeUnit(x Expr) bool {
	_, ok := x.(*TimeUnit)
	return ok
}

func isTrimMode(x Expr) bool {
	l, ok := x.(*Literal)
	return ok && l.Kind == String && (l.Value == "BOTH" || l.Value == "LEADING" || l.Value == "TRAILING")
}

// hints prints hint blocks as one: " /*+ A(x), B('k' = 'v') */".
func (p *printer) hints(hs []*Hint) {
	if len(hs) == 0 {
		return
	}
	p.str(" /*+ ")
	for i, h := range hs {
		if i > 0 {
			p.str(", ")
		}
		p.ident(h.Name)
		if len(h.List) == 0 && len(h.KeyValues) == 0 {
			continue
		}
		p.str("(")
		for j, x := range h.List {
			if j > 0 {
				p.str(", ")
			}
			p.str(quote(x.Name))
		}
		for j, o := range h.KeyValues {
			if j > 0 {
				p.str(", ")
			}
			p.str(quote(o.Key) + " = " + quote(o.Value))
		}
		p.str(")")
	}
	p.str(" */")
}
