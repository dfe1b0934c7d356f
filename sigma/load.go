package sigma

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Pos is a place in a rule or mapping file: a file name and a 1-based
// line and column (0 when unknown).
type Pos struct {
	File      string
	Line, Col int
}

// String prints the position as file:line:col, leaving out what is
// unknown.
func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
		if p.Col > 0 {
			s += fmt.Sprintf(":%d", p.Col)
		}
	}
	return s
}

// Document is one YAML document of a rule file: a detection rule, a
// correlation rule or a filter, with the attributes every kind has.
type Document struct {
	Pos    Pos
	Title  string
	ID     string
	Name   string // the rule's name, which correlations may refer to instead of its id
	Level  string
	Status string
	Tags   []string
	// Logsource holds the logsource attributes (category, product,
	// service, ...), keys lower-cased.
	Logsource map[string]string

	root *yaml.Node // the document's mapping
	// The sections; at most one is set for a well-formed document.
	detection, correlation, filter *yaml.Node
	// problem is why the document cannot be a rule, when its attributes
	// have the wrong shape (found while reading it).
	problem *Failure
}

// Kind names what the document is: "detection", "correlation", "filter"
// or "unknown".
func (d *Document) Kind() string {
	switch {
	case d.correlation != nil:
		return "correlation"
	case d.filter != nil:
		return "filter"
	case d.detection != nil:
		return "detection"
	}
	return "unknown"
}

// label names the document in messages: its title, else its name or id.
func (d *Document) label() string {
	for _, s := range []string{d.Title, d.Name, d.ID} {
		if s != "" {
			return s
		}
	}
	return "untitled rule"
}

// Load reads the Sigma rules of paths: files, and directories searched
// recursively for *.yml and *.yaml files (in lexical order, skipping
// names that begin with a dot). A file that cannot be read or is not
// valid YAML is an error; the error joins those of every such file, and
// the documents of the others are returned with it.
func Load(paths ...string) ([]*Document, error) {
	var docs []*Document
	var errs []error
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.IsDir() {
			d, err := loadFile(p)
			docs = append(docs, d...)
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			if path != p && strings.HasPrefix(e.Name(), ".") {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yml") || strings.HasSuffix(e.Name(), ".yaml")) {
				return nil
			}
			d, err := loadFile(path)
			docs = append(docs, d...)
			if err != nil {
				errs = append(errs, err)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return docs, errors.Join(errs...)
}

func loadFile(path string) ([]*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads the YAML documents of one rule file named name. Text that
// is not valid YAML, or a document that is not a mapping, is an error
// (and no document of the file is returned); attributes of the wrong
// shape make the document's rule untranslatable, reported by Translate.
//
// Sigma 1 collections are resolved as pySigma resolves them: a document
// with action: global is merged into each later one (until action:
// reset), and action: repeat repeats the previous rule with the
// document merged over it.
func Parse(name string, data []byte) (docs []*Document, err error) {
	// The YAML decoder is not ours; should it fail on some input by
	// panicking, that input is malformed, not a reason to stop.
	defer func() {
		if r := recover(); r != nil {
			docs, err = nil, fmt.Errorf("%s: cannot parse YAML: %v", name, r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var global, prev *yaml.Node
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if err == io.EOF {
				break
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 0 {
			continue
		}
		m := &n
		if m.Kind == yaml.DocumentNode {
			m = m.Content[0]
		}
		if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
			continue // an empty document
		}
		if m.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d:%d: a Sigma rule is a mapping of attributes, not %s", name, m.Line, m.Column, nodeKind(m))
		}
		switch action := scalarValue(mapGet(m, "action")); action {
		case "global":
			global = withoutKey(m, "action")
			continue
		case "reset":
			global = nil
			continue
		case "repeat":
			if prev == nil {
				return nil, fmt.Errorf("%s:%d:%d: action: repeat with no rule before it", name, m.Line, m.Column)
			}
			m = mergeNodes(prev, withoutKey(m, "action"))
		case "":
		default:
			return nil, fmt.Errorf("%s:%d:%d: unknown action %q (global, reset and repeat are known)", name, m.Line, m.Column, action)
		}
		prev = m
		if global != nil {
			m = mergeNodes(global, m)
		}
		docs = append(docs, newDocument(name, m))
	}
	return docs, nil
}

// newDocument reads the attributes of the mapping m.
func newDocument(file string, m *yaml.Node) *Document {
	d := &Document{Pos: Pos{File: file, Line: m.Line, Col: m.Column}, root: m}
	bad := func(n *yaml.Node, format string, args ...any) {
		if d.problem == nil {
			d.problem = &Failure{Pos: d.nodePos(n), Reason: fmt.Sprintf(format, args...)}
		}
	}
	str := func(key string) string {
		v := mapGet(m, key)
		if v == nil {
			return ""
		}
		if v.Kind != yaml.ScalarNode {
			bad(v, "%s is %s, not a string", key, nodeKind(v))
			return ""
		}
		if v.Tag == "!!null" {
			return ""
		}
		return v.Value
	}
	d.Title, d.ID, d.Name, d.Status = str("title"), str("id"), str("name"), str("status")
	d.Level = strings.ToLower(str("level"))
	if t := mapGet(m, "tags"); t != nil {
		if t.Kind != yaml.SequenceNode {
			bad(t, "tags is %s, not a list", nodeKind(t))
		}
		for _, x := range t.Content {
			if x.Kind == yaml.ScalarNode {
				d.Tags = append(d.Tags, x.Value)
			} else {
				bad(x, "a tag is %s, not a string", nodeKind(x))
			}
		}
	}
	if l := mapGet(m, "logsource"); l != nil {
		if l.Kind != yaml.MappingNode {
			bad(l, "logsource is %s, not a mapping", nodeKind(l))
		} else {
			d.Logsource = map[string]string{}
			for i := 0; i+1 < len(l.Content); i += 2 {
				if v := l.Content[i+1]; v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
					d.Logsource[strings.ToLower(l.Content[i].Value)] = v.Value
				}
			}
		}
	}
	section := func(key string) *yaml.Node {
		v := mapGet(m, key)
		if v != nil && v.Kind != yaml.MappingNode {
			bad(v, "%s is %s, not a mapping", key, nodeKind(v))
			return nil
		}
		return v
	}
	d.detection, d.correlation, d.filter = section("detection"), section("correlation"), section("filter")
	n := 0
	for _, s := range []*yaml.Node{d.detection, d.correlation, d.filter} {
		if s != nil {
			n++
		}
	}
	switch {
	case n == 0 && d.problem == nil:
		bad(m, "the document has no detection, correlation or filter section")
	case n > 1:
		bad(m, "the document has more than one of the detection, correlation and filter sections")
	}
	return d
}

// nodePos is the position of n in d's file.
func (d *Document) nodePos(n *yaml.Node) Pos {
	if n == nil {
		return d.Pos
	}
	return Pos{File: d.Pos.File, Line: n.Line, Col: n.Column}
}

// mapGet returns the value of key in the mapping m, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarValue is the text of a scalar node, "" for anything else.
func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// withoutKey copies the mapping m without key.
func withoutKey(m *yaml.Node, key string) *yaml.Node {
	c := *m
	c.Content = nil
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			c.Content = append(c.Content, m.Content[i], m.Content[i+1])
		}
	}
	return &c
}

// mergeNodes merges over into base: mappings key by key, recursively;
// anything else is over's. Neither is modified.
func mergeNodes(base, over *yaml.Node) *yaml.Node {
	if base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode {
		return over
	}
	c := *over
	c.Content = nil
	seen := map[string]bool{}
	for i := 0; i+1 < len(base.Content); i += 2 {
		k := base.Content[i].Value
		seen[k] = true
		v := base.Content[i+1]
		if o := mapGet(over, k); o != nil {
			v = mergeNodes(v, o)
		}
		c.Content = append(c.Content, base.Content[i], v)
	}
	for i := 0; i+1 < len(over.Content); i += 2 {
		if !seen[over.Content[i].Value] {
			c.Content = append(c.Content, over.Content[i], over.Content[i+1])
		}
	}
	if c.Line == 0 {
		c.Line, c.Column = base.Line, base.Column
	}
	return &c
}

// nodeKind names the shape of n for messages.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "empty"
}
