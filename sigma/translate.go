package sigma

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicesql/sluice/internal/suggest"
)

// Failure is a rule that is not translated, and why.
type Failure struct {
	Pos    Pos
	Rule   string // the rule's title (else its name or id)
	Reason string
}

// String prints the failure as file:line: rule: reason.
func (f Failure) String() string { return fmt.Sprintf("%s: %s: %s", f.Pos, f.Rule, f.Reason) }

// Query is one translated rule: a detection, whose condition selects
// the events it alerts on, or a correlation over detections.
type Query struct {
	// Name is unique in the ruleset, made of the rule's name, title or id
	// (lower case, letters, digits and _): what an alert names.
	Name  string
	ID    string
	Title string
	// Severity is the rule's level (informational, low, medium, high,
	// critical), "" when it has none.
	Severity string
	Tags     []string
	Pos      Pos
	// Table is the table the rule reads, as SQL.
	Table string
	// Condition is a SQL boolean expression over Table's columns: TRUE
	// for the events the detection matches. For a correlation, the
	// events it counts (those of the rules it refers to).
	Condition string
	// Parts, when set, are conditions that together select the events
	// Condition selects, no event in two of them: Condition split at its
	// ORs of tests of several columns. The script writes an INSERT per
	// part, since the engine evaluates a condition without a test of one
	// column (its guard) on every row, and one with a guard only on the
	// rows the guard holds for.
	Parts []string
	// PartNames name the parts in a ruleset: the rule's name and
	// _part1, _part2, ... (numbered further if another rule has one).
	PartNames []string
	// Referenced is set on a detection that correlations refer to and
	// that does not alert on its own (Sigma's generate: false, the
	// default).
	Referenced bool
	// Correlation is set for a correlation rule.
	Correlation *Correlation
}

// Ruleset is the translation of a set of Sigma documents.
type Ruleset struct {
	// Queries are the translated rules, in the order they were read.
	Queries []*Query
	// Failures are the rules not translated, in the order they were read.
	Failures []Failure
	// Mapping is the mapping the rules were translated with.
	Mapping *Mapping
}

// Alerting returns the queries that raise alerts: correlations, and
// detections that are not only referenced by correlations.
func (rs *Ruleset) Alerting() []*Query {
	var qs []*Query
	for _, q := range rs.Queries {
		if !q.Referenced {
			qs = append(qs, q)
		}
	}
	return qs
}

var levels = map[string]bool{"informational": true, "low": true, "medium": true, "high": true, "critical": true}

// translator holds the state of one Translate.
type translator struct {
	m  *Mapping
	rs *Ruleset
	// byRef finds documents by id and by name; refs lists the keys
	// used, for suggestions.
	byRef   map[string][]*Document
	refs    []string
	queries map[*Document]*Query
	failed  map[*Document]string
	filters map[*Document][]*Document // a rule's filters
	// generated are the queries a correlation with generate: true
	// refers to: they alert on their own, whatever other correlations
	// that refer to them say.
	generated map[*Query]bool
}

// Translate translates docs with the mapping m (nil: fields are their
// own columns, and there is no table unless a logsource gives one).
func Translate(docs []*Document, m *Mapping) *Ruleset {
	if m == nil {
		m = &Mapping{}
	}
	t := &translator{m: m, rs: &Ruleset{Mapping: m}, byRef: map[string][]*Document{},
		queries: map[*Document]*Query{}, failed: map[*Document]string{}, filters: map[*Document][]*Document{},
		generated: map[*Query]bool{}}
	for _, d := range docs {
		for _, k := range []string{d.ID, d.Name} {
			if k != "" {
				if len(t.byRef[k]) == 0 {
					t.refs = append(t.refs, k)
				}
				t.byRef[k] = append(t.byRef[k], d)
			}
		}
	}
	// Filters first: they change the rules they name.
	for _, d := range docs {
		if d.problem == nil && d.Kind() == "filter" {
			t.collectFilter(d)
		}
	}
	for _, d := range docs {
		if d.problem != nil {
			t.fail(d, d.problem.Pos, d.problem.Reason)
			continue
		}
		if d.Kind() == "detection" {
			t.detection(d)
		}
	}
	for _, d := range docs {
		if d.problem == nil && d.Kind() == "correlation" {
			t.correlation(d)
		}
	}
	// In the order read; failures of filters and correlations after
	// their rules' are put back in order too.
	var qs []*Query
	var fs []Failure
	for _, d := range docs {
		if q := t.queries[d]; q != nil {
			qs = append(qs, q)
		}
	}
	fs = append(fs, t.rs.Failures...)
	sortFailures(fs, docs)
	t.rs.Queries, t.rs.Failures = qs, fs
	nameQueries(qs)
	return t.rs
}

// fail records that d is not translated, at pos, because of reason.
func (t *translator) fail(d *Document, pos Pos, reason string) {
	if _, done := t.failed[d]; done {
		return
	}
	t.failed[d] = reason
	t.rs.Failures = append(t.rs.Failures, Failure{Pos: pos, Rule: d.label(), Reason: reason})
}

// failErr records err (a posError, or any error) as d's failure.
func (t *translator) failErr(d *Document, err error) {
	pos := d.Pos
	var pe *posError
	if errors.As(err, &pe) && pe.node != nil {
		pos = d.nodePos(pe.node)
	}
	t.fail(d, pos, err.Error())
}

// lookup finds the one document ref names; what names the referrer for
// messages.
func (t *translator) lookup(ref string) (*Document, error) {
	ds := t.byRef[ref]
	switch len(ds) {
	case 0:
		return nil, fmt.Errorf("it refers to %q, which is not the id or name of a rule read%s", ref, hintQuoted(ref, t.refs))
	case 1:
		return ds[0], nil
	}
	return nil, fmt.Errorf("it refers to %q, which names %d rules (%s and %s)", ref, len(ds), ds[0].Pos, ds[1].Pos)
}

// collectFilter notes the rules the filter d applies to.
func (t *translator) collectFilter(d *Document) {
	rules := mapGet(d.filter, "rules")
	var refs []*yaml.Node
	switch {
	case rules == nil:
		t.fail(d, d.nodePos(d.filter), "the filter has no rules: list the ids or names of the rules it applies to")
		return
	case rules.Kind == yaml.ScalarNode:
		refs = []*yaml.Node{rules}
	case rules.Kind == yaml.SequenceNode:
		refs = rules.Content
	default:
		t.fail(d, d.nodePos(rules), "the filter's rules is "+nodeKind(rules)+", not a list of rule ids or names")
		return
	}
	for _, r := range refs {
		target, err := t.lookup(r.Value)
		if err != nil {
			t.fail(d, d.nodePos(r), "the filter "+err.Error())
			continue
		}
		if target.Kind() != "detection" {
			t.fail(d, d.nodePos(r), fmt.Sprintf("the filter refers to %q, which is a %s, not a detection rule", r.Value, target.Kind()))
			continue
		}
		t.filters[target] = append(t.filters[target], d)
	}
}

// detection translates a detection rule.
func (t *translator) detection(d *Document) {
	if d.Level != "" && !levels[d.Level] {
		t.fail(d, d.Pos, fmt.Sprintf("the level %q is not one of informational, low, medium, high and critical", d.Level))
		return
	}
	ls, ok := t.m.logsource(d.Logsource)
	if !ok {
		t.fail(d, d.nodePos(mapGet(d.root, "logsource")), "no logsource of the mapping fits the rule's logsource "+describeLogsource(d.Logsource))
		return
	}
	table := t.m.Table
	if ls != nil && ls.Table != "" {
		table = ls.Table
	}
	if table == "" {
		t.fail(d, d.Pos, "no table to read: give one with --table or table: in the mapping")
		return
	}
	dt := &detector{doc: d, m: t.m, ls: ls}
	n, err := dt.condition(d.detection)
	if err != nil {
		t.failErr(d, err)
		return
	}
	for _, f := range t.filters[d] {
		fn, err := (&detector{doc: f, m: t.m, ls: ls}).condition(f.filter)
		if err != nil {
			t.failErr(f, err)
			t.fail(d, d.Pos, fmt.Sprintf("its filter %q (%s) cannot be translated", f.label(), f.Pos))
			return
		}
		n = andNode(n, fn)
	}
	sql := func(n *node) string {
		if ls != nil && ls.Condition != "" {
			return "(" + ls.Condition + ") AND " + render(n, false)
		}
		return render(n, true)
	}
	tree := nnf(n, false)
	q := &Query{ID: d.ID, Title: d.Title, Severity: d.Level, Tags: d.Tags, Pos: d.Pos,
		Table: ident(table), Condition: sql(tree), Name: baseName(d)}
	if parts := split(tree); len(parts) > 1 {
		for _, p := range parts {
			q.Parts = append(q.Parts, sql(p))
		}
	}
	t.queries[d] = q
}

func describeLogsource(attrs map[string]string) string {
	var parts []string
	for _, k := range []string{"category", "product", "service"} {
		if v, ok := attrs[k]; ok {
			parts = append(parts, k+": "+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func hintQuoted(name string, refs []string) string {
	if len(refs) > 2000 {
		return "" // suggestions over a large rule set cost more than they help
	}
	return hint(name, refs)
}

// hint suggests the candidate nearest to name, as Sluice's errors do; a
// long name is no typo worth the edit distances.
func hint(name string, candidates []string) string {
	if len(name) > 64 {
		return ""
	}
	return suggest.Hint(name, candidates)
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// baseName is a rule's name before duplicates are numbered: its name,
// else its title, else its id, as lower-case words joined by _.
func baseName(d *Document) string {
	for _, s := range []string{d.Name, d.Title, d.ID} {
		n := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "_"), "_")
		if len(n) > 80 {
			n = strings.TrimRight(n[:80], "_")
		}
		if n != "" {
			if n[0] >= '0' && n[0] <= '9' {
				n = "r_" + n
			}
			return n
		}
	}
	return "rule"
}

// nameQueries numbers the names that repeat (x, x_2, x_3, ...), then
// names the parts of split conditions (x_part1, ...), unique too.
func nameQueries(qs []*Query) {
	used := map[string]bool{}
	for _, q := range qs {
		used[q.Name] = false
	}
	unique := func(base string) string {
		name := base
		for n := 2; used[name]; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		used[name] = true
		return name
	}
	for _, q := range qs {
		q.Name = unique(q.Name)
	}
	for _, q := range qs {
		for i := range q.Parts {
			q.PartNames = append(q.PartNames, unique(q.Name+"_part"+strconv.Itoa(i+1)))
		}
	}
}

// sortFailures orders failures by file (in the order of docs) and line,
// keeping the order of those at one line.
func sortFailures(fs []Failure, docs []*Document) {
	fileOrder := map[string]int{}
	for _, d := range docs {
		if _, ok := fileOrder[d.Pos.File]; !ok {
			fileOrder[d.Pos.File] = len(fileOrder)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool {
		if fi, fj := fileOrder[fs[i].Pos.File], fileOrder[fs[j].Pos.File]; fi != fj {
			return fi < fj
		}
		return fs[i].Pos.Line < fs[j].Pos.Line
	})
}
