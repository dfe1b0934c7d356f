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

// options are the parsed format options.
type options struct {
	failMissing  bool
	ignoreErrors bool
	iso          bool
	nullKeyMode  int
	nullKey      string
	plainDecimal bool
	ignoreNull   bool
}

func parseOptions(opts map[string]string) (options, error) {
	var o options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(knownOptions, k) {
			return o, fmt.Errorf("json format: unsupported option 'json.%s'%s", k, suggest.Hint(k, knownOptions))
		}
	}
	var err error
	if o.failMissing, err = boolOption(opts, "fail-on-missing-field"); err != nil {
		return o, err
	}
	if o.ignoreErrors, err = boolOption(opts, "ignore-parse-errors"); err != nil {
		return o, err
	}
	if o.failMissing && o.ignoreErrors {
		return o, fmt.Errorf("json format: options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true")
	}
	if o.plainDecimal, err = boolOption(opts, "encode.decimal-as-plain-number"); err != nil {
		return o, err
	}
	if o.ignoreNull, err = boolOption(opts, "encode.ignore-null-fields"); err != nil {
		return o, err
	}
	switch v := opts["timestamp-format.standard"]; strings.ToUpper(v) {
	case "", "SQL":
	case "ISO-8601":
		o.iso = true
	default:
		return o, fmt.Errorf("json format: option 'json.timestamp-format.standard': unsupported value '%s' (expected 'SQL' or 'ISO-8601')", v)
	}
	switch v := opts["map-null-key.mode"]; strings.ToUpper(v) {
	case "", "FAIL":
	case "DROP":
		o.nullKeyMode = nullKeyDrop
	case "LITERAL":
		o.nullKeyMode = nullKeyLiteral
	default:
		return o, fmt.Errorf("json format: option 'json.map-null-key.mode': unsupported value '%s' (expected 'FAIL', 'DROP' or 'LITERAL')", v)
	}
	o.nullKey = "null"
	if v, ok := opts["map-null-key.literal"]; ok {
		o.nullKey = v
	}
	return o, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func boolOption(opts map[string]string, key string) (bool, error) {
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
	return false, fmt.Errorf("json format: option 'json.%s': expected true or false, got %q", key, v)
}

// NewDecoder implements format.Factory.
func (Factory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	o, err := parseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewDecoder(schema, o.iso, o.failMissing), nil
}

// NewDecoder returns a decoder for rows of schema. iso selects ISO-8601
// timestamps; failMissing makes a missing field an error.
func NewDecoder(schema types.Schema, iso, failMissing bool) *Decoder {
	return &Decoder{root: compile(types.RowOf(schema.Columns...)), iso: iso, failMissing: failMissing}
}

// NewEncoder implements format.Factory.
func (Factory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	o, err := parseOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Encoder{
		root:         compile(types.RowOf(schema.Columns...)),
		iso:          o.iso,
		plainDecimal: o.plainDecimal,
		ignoreNull:   o.ignoreNull,
		nullKeyMode:  o.nullKeyMode,
		nullKey:      o.nullKey,
	}, nil
}
