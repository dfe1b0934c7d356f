package json

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// Factory builds json decoders and encoders.
type Factory struct{}

// New returns the json format factory.
func New() Factory { return Factory{} }

// Name implements format.Factory.
func (Factory) Name() string { return "json" }

var knownOptions = []string{
	"fail-on-missing-field",
	"ignore-parse-errors",
	"timestamp-format.standard",
	"map-null-key.mode",
	"map-null-key.literal",
	"encode.decimal-as-plain-number",
	"encode.ignore-null-fields",
}

// Options are the parsed options of the json format, or of a format built
// on it (debezium-json, canal-json, maxwell-json), which reads rows with
// a Decoder and writes them with an Encoder built from them.
type Options struct {
	// FailOnMissingField makes a missing field an error.
	FailOnMissingField bool
	// IgnoreParseErrors skips malformed records (the connector's error
	// policy applies it).
	IgnoreParseErrors bool
	// ISO selects ISO-8601 timestamps rather than SQL ones.
	ISO bool
	// PlainDecimal writes DECIMAL without an exponent.
	PlainDecimal bool
	// IgnoreNullFields leaves NULL fields out of encoded objects.
	IgnoreNullFields bool

	nullKeyMode int
	nullKey     string
}

// ParseOptions parses the options of the format called name (the prefix of
// its keys in messages, e.g. "json" or "debezium-json"): opts are the
// format's options with that prefix removed. Keys other than the json
// format's are refused unless listed in extra; their values are left to
// the caller.
func ParseOptions(name string, opts map[string]string, extra ...string) (Options, error) {
	var o Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(knownOptions, k) && !contains(extra, k) {
			return o, fmt.Errorf("%s format: unsupported option '%s.%s'%s", name, name, k,
				suggest.Hint(k, append(append([]string(nil), knownOptions...), extra...)))
		}
	}
	var err error
	if o.FailOnMissingField, err = boolOption(name, opts, "fail-on-missing-field"); err != nil {
		return o, err
	}
	if o.IgnoreParseErrors, err = boolOption(name, opts, "ignore-parse-errors"); err != nil {
		return o, err
	}
	if o.FailOnMissingField && o.IgnoreParseErrors {
		return o, fmt.Errorf("%s format: options '%s.fail-on-missing-field' and '%s.ignore-parse-errors' cannot both be true", name, name, name)
	}
	if o.PlainDecimal, err = boolOption(name, opts, "encode.decimal-as-plain-number"); err != nil {
		return o, err
	}
	if o.IgnoreNullFields, err = boolOption(name, opts, "encode.ignore-null-fields"); err != nil {
		return o, err
	}
	switch v := opts["timestamp-format.standard"]; strings.ToUpper(v) {
	case "", "SQL":
	case "ISO-8601":
		o.ISO = true
	default:
		return o, fmt.Errorf("%s format: option '%s.timestamp-format.standard': unsupported value '%s' (expected 'SQL' or 'ISO-8601')", name, name, v)
	}
	switch v := opts["map-null-key.mode"]; strings.ToUpper(v) {
	case "", "FAIL":
	case "DROP":
		o.nullKeyMode = nullKeyDrop
	case "LITERAL":
		o.nullKeyMode = nullKeyLiteral
	default:
		return o, fmt.Errorf("%s format: option '%s.map-null-key.mode': unsupported value '%s' (expected 'FAIL', 'DROP' or 'LITERAL')", name, name, v)
	}
	o.nullKey = "null"
	if v, ok := opts["map-null-key.literal"]; ok {
		o.nullKey = v
	}
	return o, nil
}

// NewDecoder returns a decoder for rows of schema with these options.
func (o Options) NewDecoder(schema types.Schema) *Decoder {
	return NewDecoder(schema, o.ISO, o.FailOnMissingField)
}

// NewEncoder returns an encoder for rows of schema with these options.
func (o Options) NewEncoder(schema types.Schema) *Encoder {
	return &Encoder{
		root:         compile(types.RowOf(schema.Columns...)),
		iso:          o.ISO,
		plainDecimal: o.PlainDecimal,
		ignoreNull:   o.IgnoreNullFields,
		nullKeyMode:  o.nullKeyMode,
		nullKey:      o.nullKey,
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func boolOption(name string, opts map[string]string, key string) (bool, error) {
	v, ok := opts[key]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s format: option '%s.%s': expected true or false, got %q", name, name, key, v)
}

// NewDecoder implements format.Factory.
func (Factory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	o, err := ParseOptions("json", opts)
	if err != nil {
		return nil, err
	}
	return o.NewDecoder(schema), nil
}

// NewDecoder returns a decoder for rows of schema. iso selects ISO-8601
// timestamps; failMissing makes a missing field an error.
func NewDecoder(schema types.Schema, iso, failMissing bool) *Decoder {
	return &Decoder{root: compile(types.RowOf(schema.Columns...)), iso: iso, failMissing: failMissing}
}

// NewEncoder implements format.Factory.
func (Factory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	o, err := ParseOptions("json", opts)
	if err != nil {
		return nil, err
	}
	return o.NewEncoder(schema), nil
}
