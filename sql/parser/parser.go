package parser

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/scanner"
	"github.com/sluicesql/sluice/sql/token"
)

// Error is a positioned syntax or semantic error; see token.Error.
type Error = token.Error

// ErrorList is a sorted list of Errors; see token.ErrorList.
type ErrorList = token.ErrorList

// NewError returns an Error at pos in file, for later stages (the binder,
// the planner) that report errors against the source text. The file may be
// rebuilt from the source with token.NewFile: positions do not depend on it.
func NewError(file *token.File, pos token.Pos, format string, args ...any) *Error {
	return token.NewError(file, pos, format, args...)
}

// FormatError renders err for a terminal: each positioned error as
// "file:line:col: message", then the offending line of src and a caret under
// the column. See token.Format.
func FormatError(err error, src []byte) string { return token.Format(err, src) }

const (
	maxErrors = 10   // a parse stops after this many errors
	maxDepth  = 1000 // deepest nesting of expressions, queries and types
)

// ParseFile parses the statements of a file, separated by ';'. It returns
// the statements it could parse and, if there were syntax errors, an
// ErrorList.
func ParseFile(filename string, src []byte) ([]ast.Statement, error) {
	p := newParser(filename, src)
	stmts := p.parseFile()
	return stmts, p.err()
}

// ParseStatement parses one statement, optionally followed by ';'.
func ParseStatement(src string) (ast.Statement, error) {
	p := newParser("", []byte(src))
	var stmt ast.Statement
	p.try(func() {
		stmt = p.parseStatement()
		p.got(token.SEMICOLON)
		if p.tok != token.EOF {
			p.errorExpected(p.pos, "end of statement")
		}
	})
	if err := p.err(); err != nil {
		return nil, err
	}
	return stmt, nil
}

// ParseExpr parses one scalar expression.
func ParseExpr(src string) (ast.Expr, error) {
	p := newParser("", []byte(src))
	var x ast.Expr
	p.try(func() {
		x = p.parseExpr()
		if p.tok != token.EOF {
			p.errorExpected(p.pos, "end of expression")
		}
	})
	if err := p.err(); err != nil {
		return nil, err
	}
	return x, nil
}

// tokenInfo is one scanned token. It holds no pointer, so that the
// collector need not scan the hundreds of thousands of a large file: its
// literal is text[off:off+n], or lits[-off-1] when off is negative (a
// literal that is no slice of the source).
type tokenInfo struct {
	pos, end int32 // token.Pos: a source is under 2 GB
	tok      int32 // token.Token
	off, n   int32
}

type parser struct {
	file   *token.File
	errors token.ErrorList
	toks   []tokenInfo // every token of the source, ending with EOF
	i      int         // index of the current token
	text   string      // the source
	lits   []string    // literals that are no slice of text

	// The current token.
	pos token.Pos
	tok token.Token
	lit string

	depth int
}

// bailout unwinds the parse of one statement after a syntax error.
type bailout struct{}

func newParser(filename string, src []byte) *parser {
	p := &parser{file: token.NewFile(filename, src)}
	var s scanner.Scanner
	s.Init(p.file, func(pos token.Position, msg string) { p.errors.Add(pos, msg) }, 0)
	p.text = s.Text()
	if len(src) >= math.MaxInt32 {
		p.errors.Add(p.file.Position(token.PosOf(0)), "the source is too large: 2 GB or more")
		p.toks = []tokenInfo{{tok: int32(token.EOF)}}
		p.setCurrent()
		return p
	}
	p.toks = make([]tokenInfo, 0, len(src)/4+1)
	for {
		pos, tok, lit := s.Scan()
		p.toks = append(p.toks, p.token(pos, s.Pos(), tok, lit))
		if tok == token.EOF {
			break
		}
	}
	p.setCurrent()
	return p
}

// token returns the tokenInfo of a token, its literal found in the source
// where the scanner took it from (after the opening quote of a string or
// a quoted identifier, the X' of a hex literal).
func (p *parser) token(pos, end token.Pos, tok token.Token, lit string) tokenInfo {
	t := tokenInfo{pos: int32(pos), end: int32(end), tok: int32(tok)}
	for from := pos.Offset(); from <= pos.Offset()+2; from++ {
		if to := from + len(lit); from >= 0 && to <= len(p.text) && to <= math.MaxInt32 && p.text[from:to] == lit {
			t.off, t.n = int32(from), int32(len(lit))
			return t
		}
	}
	p.lits = append(p.lits, lit)
	t.off = -int32(len(p.lits))
	return t
}

func (p *parser) err() error {
	if len(p.errors) == 0 {
		return nil
	}
	p.errors.RemoveMultiples()
	if len(p.errors) > maxErrors {
		p.errors = p.errors[:maxErrors]
	}
	return p.errors
}

// try runs f, recovering from a bailout.
func (p *parser) try(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isBailout := r.(bailout); !isBailout {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

func (p *parser) setCurrent() {
	t := &p.toks[p.i]
	p.pos, p.tok = token.Pos(t.pos), token.Token(t.tok)
	if t.off < 0 {
		p.lit = p.lits[-t.off-1]
	} else {
		p.lit = p.text[t.off : t.off+t.n]
	}
}

// next advances to the next token; at EOF it stays there.
func (p *parser) next() {
	if p.i < len(p.toks)-1 {
		p.i++
		p.setCurrent()
	}
}

// peek returns the kind of the token n places ahead of the current one.
func (p *parser) peek(n int) token.Token {
	if j := p.i + n; j < len(p.toks) {
		return token.Token(p.toks[j].tok)
	}
	return token.EOF
}

// peekWord reports whether the token n places ahead of the current one
// is the word w (an identifier, in any case).
func (p *parser) peekWord(n int, w string) bool {
	j := p.i + n
	if j >= len(p.toks) || token.Token(p.toks[j].tok) != token.IDENT {
		return false
	}
	t := &p.toks[j]
	lit := ""
	if t.off < 0 {
		lit = p.lits[-t.off-1]
	} else {
		lit = p.text[t.off : t.off+t.n]
	}
	return strings.EqualFold(lit, w)
}

// prevEnd returns the end of the last consumed token.
func (p *parser) prevEnd() token.Pos {
	if p.i == 0 {
		return p.pos
	}
	return token.Pos(p.toks[p.i-1].end)
}

// error records an error at pos and abandons the current statement.
func (p *parser) error(pos token.Pos, msg string) {
	p.errors.Add(p.file.Position(pos), msg)
	panic(bailout{})
}

// describe names the current token for "found ..." in error messages.
func (p *parser) describe() string {
	switch p.tok {
	case token.EOF:
		return "end of input"
	case token.STRING:
		return "string '" + truncate(strings.ReplaceAll(p.lit, "'", "''")) + "'"
	case token.QIDENT:
		return "'`" + truncate(p.lit) + "`'"
	case token.HEX:
		return "X'" + truncate(p.lit) + "'"
	case token.HINTBEG:
		return "a hint '/*+' (hints belong after SELECT or after a table's name)"
	}
	return "'" + truncate(p.lit) + "'"
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// errorExpected reports that what was expected is not at the current token.
func (p *parser) errorExpected(pos token.Pos, what string) {
	p.error(pos, "expected "+what+", found "+p.describe())
}

// expect consumes a token of kind tok or reports an error.
func (p *parser) expect(tok token.Token) token.Pos {
	pos := p.pos
	if p.tok != tok {
		p.errorExpected(pos, "'"+tok.String()+"'")
	}
	p.next()
	return pos
}

// got consumes the current token if it is of kind tok.
func (p *parser) got(tok token.Token) bool {
	if p.tok == tok {
		p.next()
		return true
	}
	return false
}

// isWord reports whether the current token is the (non-keyword) word w,
// written in any case.
func (p *parser) isWord(w string) bool {
	return p.tok == token.IDENT && strings.EqualFold(p.lit, w)
}

// enter guards recursion depth; leave must follow.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.error(p.pos, "statement nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

// ---------------------------------------------------------------------------
// Identifiers and names

// isIdent reports whether token t can be an identifier.
func isIdent(t token.Token) bool {
	return t == token.IDENT || t == token.QIDENT || t.IsKeyword() && !t.IsReserved()
}

// errorReserved reports a reserved keyword where a name or an expression
// was expected, with a hint to quote it when it is likely meant as a name.
func (p *parser) errorReserved(what string) {
	if p.tok.IsReserved() && !isClauseKeyword(p.tok) {
		p.error(p.pos, fmt.Sprintf("expected %s, found reserved keyword '%s' (quote it as `%s` to use it as a name)", what, p.lit, p.lit))
	}
	p.errorExpected(p.pos, what)
}

// isClauseKeyword reports whether t is a keyword that starts or joins a
// clause, which is more likely misplaced than meant as a name.
func isClauseKeyword(t token.Token) bool {
	switch t {
	case token.FROM, token.WHERE, token.GROUP, token.HAVING, token.ORDER, token.BY, token.LIMIT,
		token.OFFSET, token.FETCH, token.UNION, token.INTERSECT, token.EXCEPT, token.ON, token.USING,
		token.JOIN, token.INNER, token.LEFT, token.RIGHT, token.FULL, token.CROSS, token.NATURAL,
		token.WHEN, token.THEN, token.ELSE, token.END, token.AND, token.OR, token.AS, token.ASC,
		token.DESC, token.IS, token.IN, token.LIKE, token.BETWEEN, token.NOT, token.WINDOW,
		token.OVER, token.FILTER, token.ESCAPE, token.TO, token.FOR, token.WITH, token.INTO,
		token.SIMILAR, token.SYMMETRIC, token.ASYMMETRIC, token.DISTINCT, token.ALL:
		return true
	}
	return false
}

func (p *parser) parseIdent() *ast.Ident {
	if !isIdent(p.tok) {
		p.errorReserved("identifier")
	}
	id := &ast.Ident{NamePos: p.pos, Name: p.lit, Quoted: p.tok == token.QIDENT}
	p.next()
	return id
}

func (p *parser) parseObjectName() *ast.ObjectName {
	n := &ast.ObjectName{Parts: []*ast.Ident{p.parseIdent()}}
	for p.tok == token.PERIOD && isIdent(p.peek(1)) {
		p.next()
		n.Parts = append(n.Parts, p.parseIdent())
	}
	return n
}

// parseIdentList parses ( ident, ... ).
func (p *parser) parseIdentList() []*ast.Ident {
	p.expect(token.LPAREN)
	var list []*ast.Ident
	for {
		list = append(list, p.parseIdent())
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	return list
}

// parseString parses a string literal, concatenating adjacent ones.
func (p *parser) parseString(what string) (string, token.Pos) {
	pos := p.pos
	if p.tok != token.STRING {
		p.errorExpected(pos, what)
	}
	s := p.lit
	p.next()
	if p.tok == token.STRING {
		var b strings.Builder
		b.WriteString(s)
		for p.tok == token.STRING {
			b.WriteString(p.lit)
			p.next()
		}
		s = b.String()
	}
	return s, pos
}

// ---------------------------------------------------------------------------
// Files and statements

var statementWords = []string{
	"SELECT", "WITH", "VALUES", "CREATE", "DROP", "INSERT", "EXECUTE", "BEGIN",
	"EXPLAIN", "SHOW", "DESCRIBE", "DESC", "SET", "RESET", "ALTER",
}

func (p *parser) parseFile() []ast.Statement {
	var stmts []ast.Statement
	for {
		for p.got(token.SEMICOLON) {
		}
		if p.tok == token.EOF || len(p.errors) >= maxErrors {
			return stmts
		}
		start := p.tok
		var stmt ast.Statement
		ok := p.try(func() {
			stmt = p.parseStatement()
			if p.tok != token.SEMICOLON && p.tok != token.EOF {
				p.errorExpected(p.pos, "';' or end of input")
			}
		})
		if ok {
			stmts = append(stmts, stmt)
			continue
		}
		p.sync(start == token.EXECUTE || start == token.BEGIN)
	}
}

// sync skips to just after the ';' ending the current statement. For a
// statement set it first skips to its END.
func (p *parser) sync(block bool) {
	if block {
		for p.tok != token.EOF && p.tok != token.END {
			p.next()
		}
	}
	depth := 0
	for p.tok != token.EOF {
		switch p.tok {
		case token.LPAREN:
			depth++
		case token.RPAREN:
			depth--
		case token.SEMICOLON:
			if depth <= 0 {
				p.next()
				return
			}
		}
		p.next()
	}
}

func (p *parser) parseStatement() ast.Statement {
	switch p.tok {
	case token.SELECT, token.WITH, token.VALUES, token.LPAREN:
		return &ast.QueryStmt{Query: p.parseQuery()}
	case token.CREATE:
		return p.parseCreate()
	case token.DROP:
		return p.parseDrop()
	case token.INSERT:
		return p.parseInsert()
	case token.EXECUTE:
		return p.parseExecute()
	case token.BEGIN:
		return p.parseLegacyStatementSet()
	case token.SET:
		return p.parseSet()
	case token.RESET:
		return p.parseReset()
	case token.EXPLAIN:
		return p.parseExplain()
	case token.SHOW:
		return p.parseShow()
	case token.DESCRIBE, token.DESC:
		pos := p.pos
		p.next()
		name := p.parseObjectName()
		return &ast.Describe{Span: ast.Span{Start: pos, Stop: p.prevEnd()}, Name: name}
	}
	if p.isWord("ALTER") && p.peekWord(1, "METRIC") {
		start := p.pos
		p.next() // ALTER
		return p.parseAlterMetricGroup(start)
	}
	if p.isWord("ALTER") {
		return p.parseAlterRuleset()
	}
	msg := "expected statement, found " + p.describe()
	if p.tok == token.IDENT {
		msg += suggest.Hint(p.lit, statementWords)
	}
	p.error(p.pos, msg)
	return nil
}
