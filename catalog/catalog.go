// Package catalog holds the tables, views and settings a session has
// declared. It stores declarations; binding them into plans is the
// planner's job.
package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// Column is a declared column of a table.
type Column struct {
	Name string
	// Type is the declared type; for a computed column it is unknown until
	// the expression is bound (Kind KindNull).
	Type types.Type
	// Computed is the expression of a computed column (name AS expr).
	Computed ast.Expr
	// Metadata marks a METADATA column, read from MetadataKey.
	Metadata    bool
	MetadataKey string
	Virtual     bool
}

// Table is a declared table.
type Table struct {
	Name       string
	Columns    []Column
	Watermark  *ast.WatermarkDef
	PrimaryKey []string
	// PartitionKeys are the columns of PARTITIONED BY.
	PartitionKeys []string
	Options       map[string]string
	Temporary     bool
	// Decl holds the extent, name and options of the CREATE TABLE
	// statement, and File its source, for positioned errors; the
	// declared columns are Columns.
	Decl *ast.CreateTable
	File *token.File
	// Legacy maps the options Flink's legacy options were read as to
	// the legacy ones written (path → connector.path), for positioned
	// errors.
	Legacy map[string]string
	// HintAt holds, in a copy of the table made for one reference to it,
	// the options an OPTIONS hint of that reference set, at the hint's
	// key, for positioned errors.
	HintAt map[string]token.Position
}

// Physical returns the physical columns: what the connector reads and writes.
func (t *Table) Physical() types.Schema {
	n := 0
	for _, c := range t.Columns {
		if c.Computed == nil && !c.Metadata {
			n++
		}
	}
	s := types.Schema{Columns: make([]types.Column, 0, n)}
	for _, c := range t.Columns {
		if c.Computed == nil && !c.Metadata {
			s.Columns = append(s.Columns, types.Column{Name: c.Name, Type: c.Type})
		}
	}
	return s
}

// View is a declared view, or a ruleset: a view whose rows are the
// alerts its rules raise over the rows of its source (Ruleset set, Query
// nil). Each change of a ruleset makes a new View of the next Version.
type View struct {
	Name    string
	Columns []string
	Query   *ast.Query
	File    *token.File
	Ruleset *ast.CreateRuleset
	// MetricGroup is set for a metric group: a view whose rows are its
	// source's, each with the group's metrics for its key appended.
	MetricGroup *ast.CreateMetricGroup
	Version     int
	// RuleFiles, parallel to Ruleset.Rules (or MetricGroup.Metrics), is
	// the file each rule (metric) was written in (nil: File; ALTER
	// RULESET ... ADD RULE writes in its own).
	RuleFiles []*token.File
	// ExceptFile and SuppressFile are the files the ruleset's EXCEPT
	// WHEN and SUPPRESS BY were written in (nil: File; ALTER RULESET ...
	// SET writes in its own).
	ExceptFile, SuppressFile *token.File
	// Previous is the ruleset's version before this one (nil: none).
	Previous *View
	// Shadow, if set, is the ruleset's shadow: a definition run beside
	// this one by the jobs that insert from the ruleset, its alerts into
	// table ShadowInto. Its Version is that of the earlier version it is
	// (SHADOW VERSION n), or 0 for rules of its own, whose alerts carry
	// the version PROMOTE SHADOW would give them (Version + 1).
	Shadow     *View
	ShadowInto string
}

// ShadowVersion returns the version the alerts of v's shadow carry.
func (v *View) ShadowVersion() int {
	switch {
	case v.Shadow == nil:
		return 0
	case v.Shadow.Version == 0:
		return v.Version + 1
	}
	return v.Shadow.Version
}

// Kind is what v is: "VIEW", "RULESET" or "METRIC GROUP".
func (v *View) Kind() string {
	switch {
	case v.Ruleset != nil:
		return "RULESET"
	case v.MetricGroup != nil:
		return "METRIC GROUP"
	}
	return "VIEW"
}

// RulesetVersion returns version n of ruleset v (v or one of its
// previous versions), or nil.
func (v *View) RulesetVersion(n int) *View {
	for ; v != nil; v = v.Previous {
		if v.Version == n {
			return v
		}
	}
	return nil
}

// Catalog is a session's namespace of tables and views. It is safe for
// concurrent use.
type Catalog struct {
	mu     sync.RWMutex
	tables map[string]*Table
	views  map[string]*View
	// parent's names are seen through this catalog's, which hide them.
	parent *Catalog
	// gen counts the changes to tables (see Generation).
	gen uint64
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{tables: map[string]*Table{}, views: map[string]*View{}}
}

// NewChild returns an empty catalog over parent: a lookup finds its own
// tables and views first, then parent's; a name it declares hides
// parent's (as Flink's temporary tables hide catalog tables); it drops
// only its own.
func NewChild(parent *Catalog) *Catalog {
	c := New()
	c.parent = parent
	return c
}

// AddTable declares a table. With ifNotExists an existing name is kept
// silently; otherwise it is an error.
func (c *Catalog) AddTable(t *Table, ifNotExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exists(t.Name) {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("table or view '%s' already exists", t.Name)
	}
	c.tables[t.Name] = t
	c.gen++
	return nil
}

// AddView declares a view.
func (c *Catalog) AddView(v *View, ifNotExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exists(v.Name) {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("table or view '%s' already exists", v.Name)
	}
	c.views[v.Name] = v
	return nil
}

// ReplaceView replaces the view of v's name with v, in the catalog (this
// one or a parent) that holds it.
func (c *Catalog) ReplaceView(v *View) error {
	c.mu.Lock()
	if _, ok := c.views[v.Name]; ok {
		c.views[v.Name] = v
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if c.parent != nil {
		return c.parent.ReplaceView(v)
	}
	return fmt.Errorf("view '%s' does not exist", v.Name)
}

func (c *Catalog) exists(name string) bool {
	_, t := c.tables[name]
	_, v := c.views[name]
	return t || v
}

// Drop removes a table ("TABLE") or a view ("VIEW").
func (c *Catalog) Drop(what, name string, ifExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch what {
	case "TABLE":
		if _, ok := c.tables[name]; ok {
			delete(c.tables, name)
			c.gen++
			return nil
		}
	case "VIEW", "RULESET", "METRIC GROUP":
		if v, ok := c.views[name]; ok {
			if v.Kind() != what {
				kind := "a " + strings.ToLower(v.Kind())
				return fmt.Errorf("'%s' is %s: drop it with DROP %s", name, kind, strings.ToUpper(kind[2:]))
			}
			delete(c.views, name)
			return nil
		}
	default:
		return fmt.Errorf("cannot drop a %s", strings.ToLower(what))
	}
	if ifExists {
		return nil
	}
	return fmt.Errorf("%s '%s' does not exist%s", strings.ToLower(what), name, suggest.Hint(name, c.namesLocked()))
}

// Lookup finds a table or a view by name: exact match first, then a unique
// case-insensitive match. Exactly one of the results is non-nil, or err
// names the nearest known name.
func (c *Catalog) Lookup(name string) (*Table, *View, error) {
	t, v, ok := c.lookup(name)
	if ok {
		return t, v, nil
	}
	if c.parent != nil {
		if t, v, err := c.parent.Lookup(name); err == nil {
			return t, v, nil
		}
	}
	return nil, nil, fmt.Errorf("unknown table '%s'%s", name, suggest.Hint(name, append(c.Tables(), c.Views()...)))
}

// Declares reports whether the catalog itself (not its parent) has a
// table or view name.
func (c *Catalog) Declares(name string) bool {
	_, _, ok := c.lookup(name)
	return ok
}

// lookup finds name among the catalog's own tables and views.
func (c *Catalog) lookup(name string) (*Table, *View, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t, ok := c.tables[name]; ok {
		return t, nil, true
	}
	if v, ok := c.views[name]; ok {
		return nil, v, true
	}
	var ft *Table
	var fv *View
	n := 0
	for k, t := range c.tables {
		if strings.EqualFold(k, name) {
			ft, n = t, n+1
		}
	}
	for k, v := range c.views {
		if strings.EqualFold(k, name) {
			fv, n = v, n+1
		}
	}
	return ft, fv, n == 1
}

// Generation changes whenever a table is added or dropped, here or in the
// parent's: what a caller derived from the tables (their secrets, say)
// holds while it is the same.
func (c *Catalog) Generation() uint64 {
	c.mu.RLock()
	gen := c.gen
	c.mu.RUnlock()
	if c.parent != nil {
		gen += c.parent.Generation() // both only grow
	}
	return gen
}

// Tables returns the names of tables, sorted.
func (c *Catalog) Tables() []string {
	c.mu.RLock()
	names := sortedKeys(c.tables)
	c.mu.RUnlock()
	return c.withParent(names, (*Catalog).Tables)
}

// Views returns the names of views, sorted.
func (c *Catalog) Views() []string {
	c.mu.RLock()
	names := sortedKeys(c.views)
	c.mu.RUnlock()
	return c.withParent(names, (*Catalog).Views)
}

// Rulesets returns the names of rulesets, sorted.
func (c *Catalog) Rulesets() []string {
	var names []string
	for _, n := range c.Views() {
		if _, v, ok := c.find(n); ok && v != nil && v.Ruleset != nil {
			names = append(names, n)
		}
	}
	return names
}

// MetricGroups returns the names of metric groups, sorted.
func (c *Catalog) MetricGroups() []string {
	var names []string
	for _, n := range c.Views() {
		if _, v, ok := c.find(n); ok && v != nil && v.MetricGroup != nil {
			names = append(names, n)
		}
	}
	return names
}

// find looks name up here, then in the parents.
func (c *Catalog) find(name string) (*Table, *View, bool) {
	if t, v, ok := c.lookup(name); ok {
		return t, v, true
	}
	if c.parent != nil {
		return c.parent.find(name)
	}
	return nil, nil, false
}

// withParent adds to names (sorted) those of parent's that the catalog
// does not hide.
func (c *Catalog) withParent(names []string, of func(*Catalog) []string) []string {
	if c.parent == nil {
		return names
	}
	for _, n := range of(c.parent) {
		if _, _, own := c.lookup(n); !own {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

func (c *Catalog) namesLocked() []string {
	return append(sortedKeys(c.tables), sortedKeys(c.views)...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The names of the one catalog and the one database that hold a session's
// tables and views: Flink's defaults.
const (
	DefaultCatalog  = "default_catalog"
	DefaultDatabase = "default_database"
)

// CheckQualifiers checks the catalog and database parts of a dotted name
// (catalog.database.object or database.object): they must name the one
// catalog and database there are, DefaultCatalog and DefaultDatabase, as
// Flink names its defaults. It returns the index of the part in error, or
// -1.
func CheckQualifiers(parts []string) (int, error) {
	switch len(parts) {
	case 1:
		return -1, nil
	case 2:
		if parts[0] != DefaultDatabase {
			return 0, fmt.Errorf("database '%s' does not exist: the one database is '%s' (in catalog '%s')%s",
				parts[0], DefaultDatabase, DefaultCatalog, suggest.Hint(parts[0], []string{DefaultDatabase}))
		}
	case 3:
		if parts[0] != DefaultCatalog {
			return 0, fmt.Errorf("catalog '%s' does not exist: the one catalog is '%s'%s",
				parts[0], DefaultCatalog, suggest.Hint(parts[0], []string{DefaultCatalog}))
		}
		if parts[1] != DefaultDatabase {
			return 1, fmt.Errorf("database '%s' does not exist in catalog '%s': the one database is '%s'%s",
				parts[1], DefaultCatalog, DefaultDatabase, suggest.Hint(parts[1], []string{DefaultDatabase}))
		}
	default:
		return 0, fmt.Errorf("'%s' has %d parts; a table is named table, database.table or catalog.database.table",
			strings.Join(parts, "."), len(parts))
	}
	return -1, nil
}
