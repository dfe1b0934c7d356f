package raw

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// Factory builds raw decoders and encoders.
type Factory struct{}

// New returns the raw format factory.
func New() Factory { return Factory{} }

// Name implements format.Factory.
func (Factory) Name() string { return "raw" }

var knownOptions = []string{"charset", "endianness"}

func check(schema types.Schema, opts map[string]string) (types.Kind, error) {
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
			return 0, fmt.Errorf("raw format: unsupported option 'raw.%s'%s", k, suggest.Hint(k, knownOptions))
		}
	}
	if cs, ok := opts["charset"]; ok && !strings.EqualFold(strings.ReplaceAll(cs, "-", ""), "utf8") {
		return 0, fmt.Errorf("raw format: option 'raw.charset': only 'UTF-8' is supported, got %q", cs)
	}
	if e, ok := opts["endianness"]; ok && !strings.EqualFold(e, "big-endian") && !strings.EqualFold(e, "little-endian") {
		return 0, fmt.Errorf("raw format: option 'raw.endianness': expected 'big-endian' or 'little-endian', got %q", e)
	}
	if schema.Len() != 1 {
		return 0, fmt.Errorf("raw format: the table must have exactly one physical column, it has %d", schema.Len())
	}
	k := schema.Columns[0].Type.Kind
	switch k {
	case types.KindVarChar, types.KindChar, types.KindVarBinary, types.KindBinary:
		return k, nil
	}
	return 0, fmt.Errorf("raw format: column %s must be STRING or BYTES, not %s", schema.Columns[0].Name, schema.Columns[0].Type)
}

// NewDecoder implements format.Factory.
func (Factory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	k, err := check(schema, opts)
	if err != nil {
		return nil, err
	}
	return Decoder{kind: k}, nil
}

// NewEncoder implements format.Factory.
func (Factory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	if _, err := check(schema, opts); err != nil {
		return nil, err
	}
	return Encoder{}, nil
}

// Decoder copies the record into the single column.
type Decoder struct{ kind types.Kind }

// Decode implements format.Decoder.
func (d Decoder) Decode(data []byte, dst []types.Value) error {
	if len(dst) != 1 {
		return fmt.Errorf("cannot decode into a row of %d values: the raw format has one column", len(dst))
	}
	dst[0] = types.StringValue(string(data)).WithKind(d.kind)
	return nil
}

// Encoder writes the single column's bytes.
type Encoder struct{}

// Encode implements format.Encoder.
func (Encoder) Encode(dst []byte, r types.Row) ([]byte, error) {
	if len(r.Vals) != 1 {
		return dst, fmt.Errorf("cannot encode a row of %d values: the raw format has one column", len(r.Vals))
	}
	return append(dst, r.Vals[0].Str()...), nil
}
