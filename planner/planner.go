package planner

import (
	"slices"
	"strings"

	"github.com/sluicesql/sluice/catalog"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// Planner plans the statements of one source file against a catalog.
type Planner struct {
	Catalog *catalog.Catalog
	Funcs   *expr.Registry
	Aggs    *agg.Registry
	// Config holds the session's SET options.
	Config map[string]string
	// File is the source of the statement being planned, for positions.
	File *token.File
	// SourceChangelog reports whether reading a table gives a changelog
	// (rows of every kind) rather than inserts: such a table's scan is
	// updating. Nil means no table does.
	SourceChangelog func(t connector.Table) bool
	// SourceUpserts reports whether a table's changelog is an upsert
	// stream keyed by its primary key; its scan is then followed by a
	// ChangelogNormalize. Nil means no table's is.
	SourceUpserts func(t connector.Table) bool
	// SourceLookup reports whether a table's connector can be the
	// dimension side of a lookup join (connector.LookupFactory). Nil
	// means no table's can.
	SourceLookup func(t connector.Table) bool
	// LookupConnectors lists the connectors that can, for messages.
	LookupConnectors func() []string
	// Notify, if set, hears of what deserves a warning but is no error:
	// a deprecated option read as another, at its position.
	Notify func(at token.Position, msg string)

	builder *expr.Builder
	// ctes are the WITH names in scope, innermost last.
	ctes []map[string]*cte
	// views guards against a view that refers to itself.
	viewDepth int
	// shadowing holds the rulesets whose names are bound as their
	// shadows (see ShadowSinks), by name.
	shadowing map[string]*catalog.View
	// orderItems are the ORDER BY expressions being planned as more
	// items of the select list they order; inOrderBy is set while one
	// is bound, for messages.
	orderItems []*ast.SelectItem
	inOrderBy  bool
	// scans are the tables bound so far (see bindScan), by declaration.
	scans map[*catalog.Table]boundScan
}

// boundScan is a table's scan as bindScan planned it, and its scope.
type boundScan struct {
	scan *plan.Scan
	sc   *scope
}

type cte struct {
	def  *ast.CTE
	file *token.File
	// before are the CTEs declared before this one in its WITH: the
	// ones its query sees, besides those of enclosing queries.
	before map[string]*cte
}

// New returns a planner.
func New(cat *catalog.Catalog, funcs *expr.Registry, aggs *agg.Registry, config map[string]string, file *token.File) *Planner {
	return &Planner{Catalog: cat, Funcs: funcs, Aggs: aggs, Config: config, File: file, builder: expr.NewBuilder(funcs)}
}

// sqlAt names the construct what written at pos, for messages.
func (p *Planner) sqlAt(what string, pos token.Pos) plan.SQL {
	s := plan.SQL{What: what}
	if p.File != nil && pos.IsValid() {
		s.At = p.File.Position(pos)
	}
	return s
}

// aggregateSQL names what an aggregation of sel is planned for: its GROUP
// BY, or its first aggregate call.
func (p *Planner) aggregateSQL(sel *ast.Select) plan.SQL {
	if sel.GroupByPos.IsValid() {
		return p.sqlAt("GROUP BY", sel.GroupByPos)
	}
	if c := p.firstAggregate(sel); c != nil {
		return p.sqlAt(ast.Format(c), c.Pos())
	}
	return p.sqlAt("GROUP BY", sel.Pos())
}

// errorf returns a positioned error at n.
func (p *Planner) errorf(n ast.Node, format string, args ...any) error {
	pos := token.NoPos
	if n != nil {
		pos = n.Pos()
	}
	return token.NewError(p.File, pos, format, args...)
}

// wrap positions a plain error (from the expression builder) at n.
func (p *Planner) wrap(n ast.Node, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*token.Error); ok {
		return err
	}
	return p.errorf(n, "%s", err.Error())
}

// ---------------------------------------------------------------------------
// Scopes

// scopeCol is a column visible to expressions: its qualifier (the table
// alias), its name and its type.
type scopeCol struct {
	qual string
	name string
	typ  types.Type
	// hidden columns (a Rank's row number) are left out of *.
	hidden bool
}

// scope is the row an expression is evaluated over: the columns of the
// FROM clause (or of an operator's input), in order. A scope may be
// shared (a table's scans share one, see bindScan; requalify returns its
// scope when the qualifier is already that): code that would change one
// changes a copy.
type scope struct {
	cols []scopeCol
}

func scopeOf(qual string, s types.Schema) *scope {
	sc := &scope{cols: make([]scopeCol, len(s.Columns))}
	for i, c := range s.Columns {
		sc.cols[i] = scopeCol{qual: qual, name: c.Name, typ: c.Type}
	}
	return sc
}

func (s *scope) schema() types.Schema {
	out := types.Schema{Columns: make([]types.Column, len(s.cols))}
	for i, c := range s.cols {
		out.Columns[i] = types.Column{Name: c.name, Type: c.typ}
	}
	return out
}

func (s *scope) requalify(qual string) *scope {
	if !slices.ContainsFunc(s.cols, func(c scopeCol) bool { return c.qual != qual }) {
		return s // shared: see scope
	}
	out := &scope{cols: append([]scopeCol(nil), s.cols...)}
	for i := range out.cols {
		out.cols[i].qual = qual
	}
	return out
}

func (s *scope) names() []string {
	out := make([]string, len(s.cols))
	for i, c := range s.cols {
		out[i] = c.name
	}
	return out
}

// resolve finds the column a dotted name refers to and returns the parts
// left over (field accesses into a ROW).
func (p *Planner) resolve(s *scope, parts []*ast.Ident) (int, []*ast.Ident, error) {
	if len(parts) >= 2 {
		if i, ok, err := p.find(s, parts[0].Name, parts[1]); ok || err != nil {
			return i, parts[2:], err
		}
	}
	i, ok, err := p.find(s, "", parts[0])
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		name := parts[0].Name
		if len(parts) >= 2 && p.hasQualifier(s, parts[0].Name) {
			name = parts[1].Name
			return 0, nil, p.errorf(parts[1], "column '%s' not found in table '%s'%s", name, parts[0].Name,
				suggest.Hint(name, p.qualNames(s, parts[0].Name)))
		}
		if p.inOrderBy {
			return 0, nil, p.errorf(parts[0], "ORDER BY column '%s' is neither in the select list nor in a table of the FROM clause%s",
				name, suggest.Hint(name, s.names()))
		}
		return 0, nil, p.errorf(parts[0], "column '%s' not found in any table%s", name, suggest.Hint(name, s.names()))
	}
	return i, parts[1:], nil
}

func (p *Planner) hasQualifier(s *scope, q string) bool {
	for _, c := range s.cols {
		if c.qual != "" && strings.EqualFold(c.qual, q) {
			return true
		}
	}
	return false
}

func (p *Planner) qualNames(s *scope, q string) []string {
	var out []string
	for _, c := range s.cols {
		if strings.EqualFold(c.qual, q) {
			out = append(out, c.name)
		}
	}
	return out
}

// find looks a column up by name (and qualifier, if not empty): exact
// case first, then case-insensitive. Two matches are ambiguous.
func (p *Planner) find(s *scope, qual string, id *ast.Ident) (int, bool, error) {
	for _, fold := range []bool{false, true} {
		found := -1
		for i, c := range s.cols {
			if qual != "" && !strings.EqualFold(c.qual, qual) {
				continue
			}
			if c.name == id.Name || fold && strings.EqualFold(c.name, id.Name) {
				if found >= 0 {
					return 0, false, p.ambiguous(id, s.cols[found], c)
				}
				found = i
			}
		}
		if found >= 0 {
			return found, true, nil
		}
	}
	return 0, false, nil
}

// ambiguous is the error for a name that two columns a and b answer to.
func (p *Planner) ambiguous(id *ast.Ident, a, b scopeCol) error {
	switch {
	case !strings.EqualFold(a.qual, b.qual) && a.qual != "" && b.qual != "":
		return p.errorf(id, "column '%s' is ambiguous: both '%s' and '%s' have it; qualify it (%s.%s or %s.%s)",
			id.Name, a.qual, b.qual, a.qual, a.name, b.qual, b.name)
	case a.qual != "":
		return p.errorf(id, "column '%s' is ambiguous: two columns of '%s' are named '%s'; give them different aliases",
			id.Name, a.qual, a.name)
	}
	return p.errorf(id, "column '%s' is ambiguous: two columns are named '%s'; give them different aliases", id.Name, a.name)
}

// ObjectName returns the unqualified name of a table or view written as
// name, database.name or catalog.database.name, after checking that the
// qualifiers name the one catalog and database (as Flink's defaults).
func (p *Planner) ObjectName(name *ast.ObjectName) (string, error) {
	parts := make([]string, len(name.Parts))
	for i, x := range name.Parts {
		parts[i] = x.Name
	}
	if i, err := catalog.CheckQualifiers(parts); err != nil {
		return "", p.errorf(name.Parts[i], "%s", err.Error())
	}
	return name.Last().Name, nil
}
