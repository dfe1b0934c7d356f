package filesystem

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// A table PARTITIONED BY columns is laid out as Flink (and Hive) lay it out:
// the rows whose partition columns hold v1, v2 live in files under
// <path>/k1=v1/k2=v2/, whose records hold the other columns only. A NULL
// value is written as the table's 'partition.default-name'. Characters
// that a path cannot hold, or that would be read as the layout, are
// escaped as %XX (Flink's PartitionPathUtils.escapePathName).

const (
	defaultNameOption = "partition.default-name"
	defaultPartName   = "__DEFAULT_PARTITION__"
)

// partitioning is how a table's rows map to partition directories.
type partitioning struct {
	keys        []string
	cols        []int // the partition columns in the table's schema
	data        []int // the other columns, in order
	types       []types.Type
	defaultName string
}

// newPartitioning reads t's PARTITIONED BY columns; nil without any.
func newPartitioning(t connector.Table) (*partitioning, error) {
	if len(t.PartitionKeys) == 0 {
		return nil, nil
	}
	p := &partitioning{keys: t.PartitionKeys, defaultName: t.Options.String(defaultNameOption, defaultPartName)}
	if p.defaultName == "" {
		return nil, fmt.Errorf("option '%s' must not be empty", defaultNameOption)
	}
	isKey := map[int]bool{}
	for _, k := range t.PartitionKeys {
		i := t.Schema.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("partition column '%s' is not a physical column", k)
		}
		p.cols = append(p.cols, i)
		p.types = append(p.types, t.Schema.Columns[i].Type)
		isKey[i] = true
	}
	for i := range t.Schema.Columns {
		if !isKey[i] {
			p.data = append(p.data, i)
		}
	}
	if len(p.data) == 0 {
		return nil, fmt.Errorf("every column is a partition column: the files would hold nothing")
	}
	return p, nil
}

// dataSchema is the schema of the records in the files.
func (p *partitioning) dataSchema(s types.Schema) types.Schema {
	var out types.Schema
	for _, i := range p.data {
		out.Columns = append(out.Columns, s.Columns[i])
	}
	return out
}

// dir returns the partition directory of row vals: k1=v1/k2=v2.
func (p *partitioning) dir(vals []types.Value) (string, error) {
	var b strings.Builder
	for i, c := range p.cols {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(escapePathName(p.keys[i]))
		b.WriteByte('=')
		v := vals[c]
		if v.IsNull() {
			b.WriteString(escapePathName(p.defaultName))
			continue
		}
		s, err := types.Cast(v, p.types[i], types.String)
		if err != nil {
			return "", fmt.Errorf("cannot write partition value of %s: %w", p.keys[i], err)
		}
		str := s.Str()
		if str == "" {
			str = p.defaultName // an empty directory name cannot be read back
		}
		b.WriteString(escapePathName(str))
	}
	return b.String(), nil
}

// values parses the partition values of a file from its directory
// relative to the table's path (k1=v1/k2=v2).
func (p *partitioning) values(rel string) ([]types.Value, error) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != len(p.keys) {
		return nil, fmt.Errorf("directory %s is not a partition of %s", rel, strings.Join(p.keys, ", "))
	}
	out := make([]types.Value, len(parts))
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok || !strings.EqualFold(unescapePathName(k), p.keys[i]) {
			return nil, fmt.Errorf("directory %s: expected %s=<value> at level %d", rel, p.keys[i], i+1)
		}
		v = unescapePathName(v)
		if v == p.defaultName {
			continue // NULL
		}
		val, err := types.Cast(types.StringValue(v), types.String, p.types[i])
		if err != nil {
			return nil, fmt.Errorf("directory %s: partition value %s=%q is not a %s: %w", rel, p.keys[i], v, p.types[i], err)
		}
		out[i] = val
	}
	return out, nil
}

// listPartitioned returns the files of the partition directories under
// root, depth levels down, sorted; directories that are hidden (. or _)
// are skipped.
func listPartitioned(root string, depth int) ([]string, error) {
	var files []string
	var walk func(dir string, level int) error
	walk = func(dir string, level int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("cannot list directory: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				continue
			}
			full := filepath.Join(dir, name)
			fi, err := os.Stat(full)
			if err != nil {
				continue
			}
			switch {
			case level < depth && fi.IsDir() && strings.Contains(name, "="):
				if err := walk(full, level+1); err != nil {
					return err
				}
			case level == depth && fi.Mode().IsRegular():
				files = append(files, full)
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// escapePathName escapes what a partition directory's name cannot hold
// as %XX, as Flink's PartitionPathUtils does.
func escapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unescapePathName undoes escapePathName.
func unescapePathName(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, ok := unhex(s[i+1], s[i+2]); ok {
				b.WriteByte(v)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(a, b byte) (byte, bool) {
	h := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	x, ok1 := h(a)
	y, ok2 := h(b)
	return x<<4 | y, ok1 && ok2
}

// localPath turns a 'path' option into a local path: file: URIs as Flink
// writes them (file:///tmp/x, file:/tmp/x) name local files; other schemes
// are not supported.
func localPath(p string) (path string, uri bool, err error) {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		if !strings.HasPrefix(rest, "/") {
			return "", true, fmt.Errorf("path %q: a file URI names an absolute path (file:///...)", p)
		}
		return rest, true, nil
	}
	if rest, ok := strings.CutPrefix(p, "file:"); ok && strings.HasPrefix(rest, "/") {
		return rest, true, nil
	}
	if i := strings.Index(p, "://"); i > 0 && !strings.ContainsAny(p[:i], "/.") {
		return "", true, fmt.Errorf("path %q: scheme %s is not supported: the filesystem connector reads and writes local files", p, p[:i])
	}
	return p, false, nil
}
