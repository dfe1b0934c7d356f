package sigma

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mapping says how Sigma rules meet a table: which column each Sigma
// field is, the table the rules read, and where alerts go.
//
// A mapping file is YAML:
//
//	table: events                  # the table the rules read
//	time: event_time               # its event-time column (correlations)
//	ruleset: detections            # the detections' ruleset (default sigma)
//	alerts: alerts                 # where detection rules' alerts go
//	correlation_alerts: alerts_corr  # and correlations' (default <alerts>_correlations)
//	fields:                        # Sigma field: column
//	  CommandLine: command_line
//	  Image: image
//	columns:                       # column types other than STRING
//	  pid: BIGINT
//	  event_time: TIMESTAMP(3)
//	keywords: [command_line]       # columns a keyword (fieldless) search looks in
//	alert_columns: [event_time, host, command_line]  # columns an alert carries
//	alerts_with: {connector: print}  # the alerts tables' options (with --create-alerts)
//	placeholders:                  # values of %name% placeholders (the expand modifier)
//	  Admins: [root, administrator]
//	prelude: |                     # SQL put at the top of the script (the table's DDL)
//	  CREATE TABLE events (...) WITH (...);
//	logsources:                    # per logsource: an extra condition, a table, fields
//	  - category: process_creation
//	    product: windows
//	    condition: "event_type = 'process'"
//
// Without fields, a Sigma field is the column of the same name.
type Mapping struct {
	Table string
	Time  string
	// Ruleset names the detections' ruleset (ScriptOptions.Ruleset).
	Ruleset           string
	Alerts            string
	CorrelationAlerts string
	// Fields maps Sigma field names to columns; FieldOrder is its keys
	// in the file's order. Nil Fields maps every field to itself.
	Fields     map[string]string
	FieldOrder []string
	// Columns maps columns to SQL types; a column not listed is STRING.
	Columns      map[string]string
	Keywords     []string
	AlertColumns []string
	AlertsWith   map[string]string
	Placeholders map[string][]string
	Prelude      string
	Logsources   []Logsource
}

// Logsource narrows the rules of one logsource: those whose logsource
// has every attribute given here (compared without case) take its
// condition, table and fields. The first that fits a rule applies.
type Logsource struct {
	Match     map[string]string // category, product, service: value
	Condition string            // SQL ANDed to the rules' conditions
	Table     string            // the table instead of the mapping's
	Fields    map[string]string // fields over the mapping's
}

// mappingFile is the YAML of a mapping file.
type mappingFile struct {
	Table             string              `yaml:"table"`
	Time              string              `yaml:"time"`
	Ruleset           string              `yaml:"ruleset"`
	Alerts            string              `yaml:"alerts"`
	CorrelationAlerts string              `yaml:"correlation_alerts"`
	Fields            yaml.Node           `yaml:"fields"`
	Columns           map[string]string   `yaml:"columns"`
	Keywords          []string            `yaml:"keywords"`
	AlertColumns      []string            `yaml:"alert_columns"`
	AlertsWith        map[string]string   `yaml:"alerts_with"`
	Placeholders      map[string][]string `yaml:"placeholders"`
	Prelude           string              `yaml:"prelude"`
	Logsources        []struct {
		Category  string            `yaml:"category"`
		Product   string            `yaml:"product"`
		Service   string            `yaml:"service"`
		Condition string            `yaml:"condition"`
		Table     string            `yaml:"table"`
		Fields    map[string]string `yaml:"fields"`
	} `yaml:"logsources"`
}

// LoadMapping reads a mapping file.
func LoadMapping(path string) (*Mapping, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseMapping(path, data)
}

// ParseMapping reads the mapping file name, whose text is data. Keys it
// does not know are errors (a misspelt key would otherwise change
// nothing).
func ParseMapping(name string, data []byte) (m *Mapping, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("%s: cannot parse YAML: %v", name, r)
		}
	}()
	var f mappingFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return &Mapping{}, nil
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m = &Mapping{Table: f.Table, Time: f.Time, Ruleset: f.Ruleset, Alerts: f.Alerts, CorrelationAlerts: f.CorrelationAlerts,
		Columns: f.Columns, Keywords: f.Keywords, AlertColumns: f.AlertColumns, AlertsWith: f.AlertsWith,
		Placeholders: f.Placeholders, Prelude: f.Prelude}
	switch f.Fields.Kind {
	case 0:
	case yaml.MappingNode:
		m.Fields = map[string]string{}
		for i := 0; i+1 < len(f.Fields.Content); i += 2 {
			k, v := f.Fields.Content[i], f.Fields.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, fmt.Errorf("%s:%d:%d: the field %s maps to %s, not a column name", name, v.Line, v.Column, k.Value, nodeKind(v))
			}
			if _, dup := m.Fields[k.Value]; dup {
				return nil, fmt.Errorf("%s:%d:%d: the field %s is mapped twice", name, k.Line, k.Column, k.Value)
			}
			m.Fields[k.Value] = v.Value
			m.FieldOrder = append(m.FieldOrder, k.Value)
		}
	default:
		return nil, fmt.Errorf("%s:%d:%d: fields is %s, not a mapping of Sigma fields to columns", name, f.Fields.Line, f.Fields.Column, nodeKind(&f.Fields))
	}
	for _, l := range f.Logsources {
		ls := Logsource{Match: map[string]string{}, Condition: l.Condition, Table: l.Table, Fields: l.Fields}
		for k, v := range map[string]string{"category": l.Category, "product": l.Product, "service": l.Service} {
			if v != "" {
				ls.Match[k] = v
			}
		}
		m.Logsources = append(m.Logsources, ls)
	}
	return m, m.validate(name)
}

// sqlTypeRE accepts what a SQL type is written with (TIMESTAMP(3),
// DECIMAL(10, 2), ARRAY<STRING>, TIMESTAMP(3) WITH LOCAL TIME ZONE) and
// nothing that could end the column definition it is put in.
var sqlTypeRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ (),<>]*$`)

// validate checks what would otherwise surface as a puzzling SQL error.
func (m *Mapping) validate(name string) error {
	if m.Ruleset != "" && !plainIdent.MatchString(m.Ruleset) {
		return fmt.Errorf("%s: the ruleset name %q is not a SQL name (letters, digits and _, not first a digit)", name, m.Ruleset)
	}
	for c, t := range m.Columns {
		if !sqlTypeRE.MatchString(strings.TrimSpace(t)) {
			return fmt.Errorf("%s: the type %q of column %s is not a SQL type name", name, t, c)
		}
	}
	for k := range m.Placeholders {
		if !placeholderName.MatchString(k) {
			return fmt.Errorf("%s: %q is not a placeholder name (letters, digits, _ and -)", name, k)
		}
	}
	return nil
}

// column returns the column of a Sigma field, under the logsource ls
// (nil for none); ok is false when the mapping has no such field.
func (m *Mapping) column(field string, ls *Logsource) (string, bool) {
	if ls != nil {
		if c, ok := ls.Fields[field]; ok {
			return c, true
		}
	}
	if m.Fields == nil {
		return field, true
	}
	c, ok := m.Fields[field]
	return c, ok
}

// fieldNames lists the mapped Sigma fields, for suggestions.
func (m *Mapping) fieldNames(ls *Logsource) []string {
	names := append([]string(nil), m.FieldOrder...)
	if ls != nil {
		for f := range ls.Fields {
			names = append(names, f)
		}
	}
	return names
}

// columnType is the SQL type of a column, upper-cased; STRING when the
// mapping does not say.
func (m *Mapping) columnType(col string) string {
	if t, ok := m.Columns[col]; ok {
		return strings.ToUpper(strings.TrimSpace(t))
	}
	return "STRING"
}

// logsource returns the first of m's logsources that fits the rule's
// logsource attributes; ok is false when m has logsources and none fits.
func (m *Mapping) logsource(attrs map[string]string) (*Logsource, bool) {
	if len(m.Logsources) == 0 {
		return nil, true
	}
	for i := range m.Logsources {
		ls := &m.Logsources[i]
		fits := true
		for k, v := range ls.Match {
			if !strings.EqualFold(attrs[k], v) {
				fits = false
				break
			}
		}
		if fits {
			return ls, true
		}
	}
	return nil, false
}

// typeClass sorts SQL types into the classes translation treats alike.
type typeClass uint8

const (
	classString typeClass = iota
	classNumber
	classBoolean
	classTime
	classOther
)

func classOf(sqlType string) typeClass {
	t := strings.ToUpper(sqlType)
	if i := strings.IndexAny(t, "( "); i >= 0 {
		t = t[:i]
	}
	switch t {
	case "STRING", "VARCHAR", "CHAR":
		return classString
	case "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL", "DEC", "NUMERIC":
		return classNumber
	case "BOOLEAN":
		return classBoolean
	case "TIMESTAMP", "TIMESTAMP_LTZ", "DATE":
		return classTime
	}
	return classOther
}
