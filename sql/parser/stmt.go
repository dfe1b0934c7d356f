package parser

import (
	"strings"

	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

func (p *parser) span(start token.Pos) ast.Span {
	return ast.Span{Start: start, Stop: p.prevEnd()}
}

// parseIfNotExists parses an optional IF NOT EXISTS.
func (p *parser) parseIfNotExists() bool {
	if p.tok == token.IF && p.peek(1) == token.NOT {
		p.next()
		p.next()
		p.expect(token.EXISTS)
		return true
	}
	return false
}

// parseIfExists parses an optional IF EXISTS.
func (p *parser) parseIfExists() bool {
	if p.tok == token.IF && p.peek(1) == token.EXISTS {
		p.next()
		p.next()
		return true
	}
	return false
}

func (p *parser) parseCreate() ast.Statement {
	start := p.expect(token.CREATE)
	temporary, system := false, false
	if p.got(token.TEMPORARY) {
		temporary = true
		system = p.got(token.SYSTEM)
	}
	switch p.tok {
	case token.TABLE:
		if system {
			p.errorExpected(p.pos, "FUNCTION after TEMPORARY SYSTEM")
		}
		return p.parseCreateTable(start, temporary)
	case token.VIEW:
		if system {
			p.errorExpected(p.pos, "FUNCTION after TEMPORARY SYSTEM")
		}
		return p.parseCreateView(start, temporary)
	case token.FUNCTION:
		return p.parseCreateFunction(start, temporary, system)
	}
	if p.isWord("RULESET") {
		if temporary {
			p.error(p.pos, "a ruleset cannot be TEMPORARY: it lives in the catalog, with its versions")
		}
		return p.parseCreateRuleset(start)
	}
	if p.isWord("METRIC") {
		if temporary {
			p.error(p.pos, "a metric group cannot be TEMPORARY: it lives in the catalog, with its versions")
		}
		return p.parseCreateMetricGroup(start)
	}
	p.errorExpected(p.pos, "TABLE, VIEW, FUNCTION, RULESET or METRIC GROUP")
	return nil
}

func (p *parser) parseCreateTable(start token.Pos, temporary bool) *ast.CreateTable {
	p.expect(token.TABLE)
	ct := &ast.CreateTable{Temporary: temporary}
	ct.IfNotExists = p.parseIfNotExists()
	ct.Name = p.parseObjectName()
	if p.tok == token.LPAREN {
		p.next()
		for {
			p.parseTableElement(ct)
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.RPAREN)
	}
	if p.got(token.COMMENT_KW) {
		ct.Comment, _ = p.parseString("comment string")
	}
	if p.got(token.PARTITIONED) {
		p.expect(token.BY)
		ct.PartitionedBy = p.parseIdentList()
	}
	if p.got(token.WITH) {
		ct.Options = p.parseOptions()
	}
	if p.got(token.LIKE) {
		ct.Like = p.parseObjectName()
		if p.got(token.LPAREN) {
			for p.tok != token.RPAREN {
				ct.LikeOptions = append(ct.LikeOptions, p.parseLikeOption())
			}
			p.expect(token.RPAREN)
		}
	}
	if p.tok == token.AS {
		p.error(p.pos, "CREATE TABLE ... AS query is not supported: create the table, then INSERT INTO it")
	}
	ct.Span = p.span(start)
	return ct
}

// parseLikeOption parses INCLUDING|EXCLUDING|OVERWRITING ALL|CONSTRAINTS|...
func (p *parser) parseLikeOption() string {
	mode := strings.ToUpper(p.lit)
	switch {
	case p.isWord("INCLUDING"), p.isWord("EXCLUDING"), p.isWord("OVERWRITING"):
	default:
		p.errorExpected(p.pos, "INCLUDING, EXCLUDING or OVERWRITING")
	}
	p.next()
	what := strings.ToUpper(p.lit)
	switch what {
	case "ALL", "CONSTRAINTS", "DISTRIBUTION", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS":
	default:
		p.errorExpected(p.pos, "ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS or WATERMARKS")
	}
	p.next()
	return mode + " " + what
}

func (p *parser) parseTableElement(ct *ast.CreateTable) {
	start := p.pos
	switch {
	case p.tok == token.WATERMARK && p.peek(1) == token.FOR:
		if ct.Watermark != nil {
			p.error(start, "a table can have only one WATERMARK")
		}
		p.next()
		p.next()
		col := p.parseIdent()
		p.expect(token.AS)
		x := p.parseExpr()
		ct.Watermark = &ast.WatermarkDef{Span: p.span(start), Column: col, Expr: x}
		return
	case p.tok == token.PRIMARY && p.peek(1) == token.KEY,
		p.tok == token.CONSTRAINT && isIdent(p.peek(1)) && p.peek(2) == token.PRIMARY:
		var name *ast.Ident
		if p.got(token.CONSTRAINT) {
			name = p.parseIdent()
		}
		p.next()
		p.next()
		cols := p.parseIdentList()
		p.parseNotEnforced()
		if ct.PrimaryKey != nil {
			p.error(start, "a table can have only one PRIMARY KEY")
		}
		ct.PrimaryKey, ct.PrimaryKeyName = cols, name
		return
	}
	col := &ast.ColumnDef{Name: p.parseIdent()}
	if p.got(token.AS) {
		col.Computed = p.parseExpr()
	} else {
		col.Type = p.parseType()
		if p.got(token.METADATA) {
			col.Metadata = true
			if p.got(token.FROM) {
				col.MetadataKey, _ = p.parseString("metadata key string")
			}
			col.Virtual = p.got(token.VIRTUAL)
		}
		if p.tok == token.PRIMARY || p.tok == token.CONSTRAINT {
			kpos := p.pos
			var name *ast.Ident
			if p.got(token.CONSTRAINT) {
				name = p.parseIdent()
			}
			p.expect(token.PRIMARY)
			p.expect(token.KEY)
			p.parseNotEnforced()
			if ct.PrimaryKey != nil {
				p.error(kpos, "a table can have only one PRIMARY KEY")
			}
			col.PrimaryKey = true
			ct.PrimaryKey, ct.PrimaryKeyName = []*ast.Ident{col.Name}, name
		}
	}
	if p.got(token.COMMENT_KW) {
		col.Comment, _ = p.parseString("comment string")
	}
	col.Span = p.span(start)
	ct.Columns = append(ct.Columns, col)
}

func (p *parser) parseNotEnforced() {
	if p.tok != token.NOT || p.peek(1) != token.ENFORCED {
		p.errorExpected(p.pos, "NOT ENFORCED (primary keys are not enforced)")
	}
	p.next()
	p.next()
}

// parseOptions parses ('key' = 'value', ...).
func (p *parser) parseOptions() []*ast.Option {
	p.expect(token.LPAREN)
	var opts []*ast.Option
	if p.tok == token.RPAREN {
		p.next()
		return nil
	}
	for {
		o := &ast.Option{}
		o.Key, o.KeyPos = p.parseString("option key string")
		p.expect(token.EQ)
		o.Value, o.ValuePos = p.parseString("option value string")
		o.EndPos = p.prevEnd()
		opts = append(opts, o)
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	return opts
}

func (p *parser) parseCreateView(start token.Pos, temporary bool) *ast.CreateView {
	p.expect(token.VIEW)
	cv := &ast.CreateView{Temporary: temporary}
	cv.IfNotExists = p.parseIfNotExists()
	cv.Name = p.parseObjectName()
	if p.tok == token.LPAREN {
		cv.Columns = p.parseIdentList()
	}
	if p.got(token.COMMENT_KW) {
		cv.Comment, _ = p.parseString("comment string")
	}
	p.expect(token.AS)
	cv.Query = p.parseQuery()
	cv.Span = p.span(start)
	return cv
}

func (p *parser) parseCreateFunction(start token.Pos, temporary, system bool) *ast.CreateFunction {
	p.expect(token.FUNCTION)
	cf := &ast.CreateFunction{Temporary: temporary, System: system}
	cf.IfNotExists = p.parseIfNotExists()
	cf.Name = p.parseObjectName()
	if p.tok == token.LPAREN {
		cf.Signature = p.parseFunctionSignature()
	}
	if p.tok != token.AS && cf.Signature == nil {
		p.errorExpected(p.pos, "'AS' or a signature (name TYPE, ...) RETURNS TYPE")
	}
	p.expect(token.AS)
	cf.Class, cf.ClassPos = p.parseString("function identifier string")
	if p.got(token.LANGUAGE) {
		if !isIdent(p.tok) {
			p.errorExpected(p.pos, "language name")
		}
		cf.Language = strings.ToUpper(p.lit)
		p.next()
	}
	if p.got(token.USING) {
		for {
			rs := p.pos
			if !p.isWord("JAR") {
				p.errorExpected(p.pos, "JAR")
			}
			p.next()
			r := &ast.FunctionResource{Kind: "JAR"}
			r.URI, _ = p.parseString("resource URI string")
			r.Span = p.span(rs)
			cf.Using = append(cf.Using, r)
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	cf.Span = p.span(start)
	return cf
}

// parseFunctionSignature parses (name TYPE, ...) RETURNS TYPE or RETURNS
// TABLE (name TYPE, ...), then RETURNS NULL ON NULL INPUT or CALLED ON
// NULL INPUT.
func (p *parser) parseFunctionSignature() *ast.FunctionSignature {
	start := p.expect(token.LPAREN)
	sig := &ast.FunctionSignature{}
	sig.Params = []*ast.ColumnDef{}
	if p.tok != token.RPAREN {
		sig.Params = p.parseTypedNames()
	}
	p.expect(token.RPAREN)
	if !p.isWord("RETURNS") {
		p.errorExpected(p.pos, "RETURNS")
	}
	p.next()
	if p.got(token.TABLE) {
		p.expect(token.LPAREN)
		sig.ReturnsTable = p.parseTypedNames()
		p.expect(token.RPAREN)
	} else {
		sig.Returns = p.parseType()
	}
	switch {
	case p.isWord("RETURNS") && p.peek(1) == token.NULL:
		p.next()
		p.next()
		p.parseWords("ON", "NULL", "INPUT")
	case p.isWord("CALLED"):
		p.next()
		p.parseWords("ON", "NULL", "INPUT")
		sig.CalledOnNull = true
	}
	sig.Span = p.span(start)
	return sig
}

// parseTypedNames parses name TYPE [, name TYPE]*.
func (p *parser) parseTypedNames() []*ast.ColumnDef {
	var out []*ast.ColumnDef
	for {
		c := &ast.ColumnDef{}
		c.Name = p.parseIdent()
		c.Type = p.parseType()
		c.Span = ast.Span{Start: c.Name.Pos(), Stop: p.prevEnd()}
		out = append(out, c)
		if !p.got(token.COMMA) {
			return out
		}
	}
}

// parseWords consumes the given words (keywords or not) in order.
func (p *parser) parseWords(words ...string) {
	for _, w := range words {
		if !strings.EqualFold(p.lit, w) || p.tok == token.STRING || p.tok == token.QIDENT {
			p.errorExpected(p.pos, w)
		}
		p.next()
	}
}

func (p *parser) parseDrop() *ast.Drop {
	start := p.expect(token.DROP)
	d := &ast.Drop{}
	if p.got(token.TEMPORARY) {
		d.Temporary = true
		d.System = p.got(token.SYSTEM)
	}
	switch p.tok {
	case token.TABLE, token.VIEW, token.FUNCTION:
		if d.System && p.tok != token.FUNCTION {
			p.errorExpected(p.pos, "FUNCTION after TEMPORARY SYSTEM")
		}
		d.What = p.tok.String()
		p.next()
	default:
		if p.isWord("RULESET") && !d.Temporary {
			d.What = "RULESET"
			p.next()
			break
		}
		if p.isWord("METRIC") && !d.Temporary {
			p.next()
			p.parseWords("GROUP")
			d.What = "METRIC GROUP"
			break
		}
		p.errorExpected(p.pos, "TABLE, VIEW, FUNCTION, RULESET or METRIC GROUP")
	}
	d.IfExists = p.parseIfExists()
	d.Name = p.parseObjectName()
	d.Span = p.span(start)
	return d
}

// parseSetKey parses a 'quoted' key, or a bare key (table.exec.mini-batch.size)
// as the older SQL client accepted: the source text up to '=' or the end of
// the statement.
func (p *parser) parseSetKey() string {
	if p.tok == token.STRING {
		pos := p.pos
		s, _ := p.parseString("key")
		if s == "" {
			p.error(pos, "the key must not be empty")
		}
		return s
	}
	if !isIdent(p.tok) && !p.tok.IsKeyword() {
		p.errorExpected(p.pos, "key string")
	}
	return p.rawUntil(token.EQ)
}

// rawUntil consumes tokens up to stop, ';' or the end of input and returns
// their source text with surrounding white space trimmed.
func (p *parser) rawUntil(stop token.Token) string {
	start := p.pos.Offset()
	for p.tok != stop && p.tok != token.SEMICOLON && p.tok != token.EOF {
		p.next()
	}
	return strings.TrimSpace(string(p.file.Source()[start:p.prevEnd().Offset()]))
}

func (p *parser) parseSet() *ast.Set {
	start := p.expect(token.SET)
	s := &ast.Set{}
	if p.tok != token.SEMICOLON && p.tok != token.EOF {
		s.Key = p.parseSetKey()
		p.expect(token.EQ)
		switch {
		case p.tok == token.STRING:
			s.Value, _ = p.parseString("value")
		case p.tok != token.SEMICOLON && p.tok != token.EOF:
			// A bare value: SET a.b = true, SET a.b = 10 s.
			s.Value = p.rawUntil(token.SEMICOLON)
		default:
			p.errorExpected(p.pos, "value string")
		}
	}
	s.Span = p.span(start)
	return s
}

func (p *parser) parseReset() *ast.Reset {
	start := p.expect(token.RESET)
	r := &ast.Reset{}
	if p.tok != token.SEMICOLON && p.tok != token.EOF {
		r.Key = p.parseSetKey()
	}
	r.Span = p.span(start)
	return r
}

// isQueryStart reports whether the token n places ahead starts a query,
// looking through opening parentheses (no further than the nesting limit,
// which keeps deeply nested input linear).
func (p *parser) isQueryStart(n int) bool {
	for i := 0; p.peek(n) == token.LPAREN && i < maxDepth; i++ {
		n++
	}
	switch p.peek(n) {
	case token.SELECT, token.WITH, token.VALUES:
		return true
	}
	return false
}

func (p *parser) parseInsert() *ast.Insert {
	start := p.expect(token.INSERT)
	ins := &ast.Insert{}
	switch p.tok {
	case token.INTO:
	case token.OVERWRITE:
		ins.Overwrite = true
	default:
		p.errorExpected(p.pos, "INTO or OVERWRITE")
	}
	p.next()
	ins.Table = p.parseObjectName()
	ins.TableHints = p.parseHints()
	if p.tok == token.LPAREN && !p.isQueryStart(0) {
		ins.Columns = p.parseIdentList()
	}
	ins.Query = p.parseQuery()
	ins.Span = p.span(start)
	return ins
}

func (p *parser) parseExecute() ast.Statement {
	start := p.expect(token.EXECUTE)
	if p.tok == token.INSERT {
		ins := p.parseInsert()
		ins.Span.Start = start
		return ins
	}
	return p.parseStatementSet(start)
}

// parseStatementSet parses STATEMENT SET BEGIN insert; ... END, after
// EXECUTE or EXPLAIN at start.
func (p *parser) parseStatementSet(start token.Pos) *ast.StatementSet {
	p.expect(token.STATEMENT)
	p.expect(token.SET)
	p.expect(token.BEGIN)
	set := &ast.StatementSet{}
	for p.tok != token.END {
		if p.tok != token.INSERT {
			p.errorExpected(p.pos, "INSERT or END")
		}
		set.Inserts = append(set.Inserts, p.parseInsert())
		if p.tok != token.END {
			p.expect(token.SEMICOLON)
		}
	}
	p.expect(token.END)
	set.Span = p.span(start)
	return set
}

func (p *parser) parseLegacyStatementSet() *ast.StatementSet {
	start := p.expect(token.BEGIN)
	p.expect(token.STATEMENT)
	p.expect(token.SET)
	p.expect(token.SEMICOLON)
	set := &ast.StatementSet{Legacy: true}
	for p.tok != token.END {
		if p.tok != token.INSERT {
			p.errorExpected(p.pos, "INSERT or END")
		}
		set.Inserts = append(set.Inserts, p.parseInsert())
		p.expect(token.SEMICOLON)
	}
	p.expect(token.END)
	set.Span = p.span(start)
	return set
}

func (p *parser) parseExplain() *ast.Explain {
	start := p.expect(token.EXPLAIN)
	if p.got(token.PLAN) {
		p.expect(token.FOR)
	}
	switch p.tok {
	case token.EXPLAIN:
		p.errorExpected(p.pos, "statement to explain")
	case token.STATEMENT: // EXPLAIN STATEMENT SET BEGIN ... END, as Flink
		set := p.parseStatementSet(p.pos)
		return &ast.Explain{Span: p.span(start), Stmt: set}
	}
	stmt := p.parseStatement()
	return &ast.Explain{Span: p.span(start), Stmt: stmt}
}

var showWords = []string{"TABLES", "VIEWS", "FUNCTIONS", "CATALOGS", "DATABASES", "MODULES", "JOBS"}

func (p *parser) parseShow() *ast.Show {
	start := p.expect(token.SHOW)
	what := strings.ToUpper(p.lit)
	found := false
	if isIdent(p.tok) {
		for _, w := range showWords {
			if w == what {
				found = true
			}
		}
	}
	if !found {
		p.errorExpected(p.pos, "TABLES, VIEWS, FUNCTIONS, CATALOGS, DATABASES, MODULES or JOBS")
	}
	p.next()
	return &ast.Show{Span: p.span(start), What: what}
}
