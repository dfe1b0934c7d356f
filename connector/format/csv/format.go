package csv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// Factory builds csv decoders and encoders.
type Factory struct{}

// New returns the csv format factory.
func New() Factory { return Factory{} }

// Name implements format.Factory.
func (Factory) Name() string { return "csv" }

var knownOptions = []string{
	"field-delimiter",
	"quote-character",
	"disable-quote-character",
	"allow-comments",
	"ignore-parse-errors",
	"array-element-delimiter",
	"escape-character",
	"null-literal",
	"write-bigdecimal-in-scientific-notation",
}

// Options are the csv format's settings.
type Options struct {
	Delimiter     byte
	Quote         byte
	Quoting       bool // false: 'disable-quote-character'
	Escape        byte
	Escaping      bool
	AllowComments bool
	ArrayDelim    string
	NullLiteral   string
	HasNull       bool
	Scientific    bool // write tiny DECIMALs in scientific notation
}

// DefaultOptions returns Flink's defaults.
func DefaultOptions() Options {
	return Options{Delimiter: ',', Quote: '"', Quoting: true, ArrayDelim: ";", Scientific: true}
}

// ParseOptions reads the format options (keys without the "csv." prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	o := DefaultOptions()
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, x := range knownOptions {
			found = found || x == k
		}
		if !found {
			return o, fmt.Errorf("csv format: unsupported option 'csv.%s'%s", k, suggest.Hint(k, knownOptions))
		}
	}
	var err error
	char := func(key string, dst *byte) (bool, error) {
		v, ok := opts[key]
		if !ok {
			return false, nil
		}
		c, err := parseChar(v)
		if err != nil {
			return false, fmt.Errorf("csv format: option 'csv.%s': %w", key, err)
		}
		*dst = c
		return true, nil
	}
	if _, err = char("field-delimiter", &o.Delimiter); err != nil {
		return o, err
	}
	if _, err = char("quote-character", &o.Quote); err != nil {
		return o, err
	}
	if o.Escaping, err = char("escape-character", &o.Escape); err != nil {
		return o, err
	}
	disable, err := boolOption(opts, "disable-quote-character", false)
	if err != nil {
		return o, err
	}
	o.Quoting = !disable
	if disable {
		if _, ok := opts["quote-character"]; ok {
			return o, fmt.Errorf("csv format: options 'csv.quote-character' and 'csv.disable-quote-character' cannot both be set")
		}
	}
	if o.AllowComments, err = boolOption(opts, "allow-comments", false); err != nil {
		return o, err
	}
	if _, err = boolOption(opts, "ignore-parse-errors", false); err != nil {
		return o, err
	}
	if o.Scientific, err = boolOption(opts, "write-bigdecimal-in-scientific-notation", true); err != nil {
		return o, err
	}
	if v, ok := opts["array-element-delimiter"]; ok {
		if v == "" {
			return o, fmt.Errorf("csv format: option 'csv.array-element-delimiter' must not be empty")
		}
		o.ArrayDelim = unescapeOption(v)
	}
	if v, ok := opts["null-literal"]; ok {
		o.NullLiteral, o.HasNull = v, true
	}
	switch {
	case o.Quoting && o.Quote == o.Delimiter:
		return o, fmt.Errorf("csv format: the quote character and the field delimiter must differ")
	case o.Escaping && (o.Escape == o.Delimiter || o.Quoting && o.Escape == o.Quote):
		return o, fmt.Errorf("csv format: the escape character must differ from the field delimiter and the quote character")
	case o.Delimiter == '\n' || o.Delimiter == '\r':
		return o, fmt.Errorf("csv format: the field delimiter cannot be a line break")
	}
	return o, nil
}

// unescapeOption reads the backslash forms Flink documents for delimiters.
func unescapeOption(v string) string {
	switch v {
	case `\t`:
		return "\t"
	case `\n`:
		return "\n"
	case `\r`:
		return "\r"
	case `\\`:
		return `\`
	case `\0`:
		return "\x00"
	}
	return v
}

func parseChar(v string) (byte, error) {
	s := unescapeOption(v)
	if len(s) != 1 {
		return 0, fmt.Errorf("expected a single (ASCII) character, got %q", v)
	}
	return s[0], nil
}

func boolOption(opts map[string]string, key string, def bool) (bool, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("csv format: option 'csv.%s': expected true or false, got %q", key, v)
}

// checkSchema rejects column types the format cannot hold.
func checkSchema(schema types.Schema) error {
	var check func(t types.Type) error
	check = func(t types.Type) error {
		switch t.Kind {
		case types.KindMap, types.KindMultiset:
			return fmt.Errorf("type %s is not supported", t)
		case types.KindArray:
			return check(*t.Elem)
		case types.KindRow:
			for _, f := range t.Fields {
				if err := check(f.Type); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, c := range schema.Columns {
		if err := check(c.Type); err != nil {
			return fmt.Errorf("csv format: column %s: %w", c.Name, err)
		}
	}
	return nil
}

// NewDecoder implements format.Factory.
func (Factory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewDecoder(schema, o)
}

// NewEncoder implements format.Factory.
func (Factory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewEncoder(schema, o)
}
