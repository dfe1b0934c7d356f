// Package format defines record formats (json, csv, raw, ...): schema-directed
// decoders from bytes into typed rows and encoders back, registered by name in
// a Registry value.
package format

import (
	"fmt"
	"sort"
	"sync"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// Decoder decodes one record into a row of the schema it was built for.
// It is not safe for concurrent use; build one per reader.
type Decoder interface {
	// Decode fills dst (len == schema width, all NULL on entry) from data.
	// Strings in dst must not alias data (data is reused by the caller).
	// A malformed record returns an error saying why (field and reason).
	Decode(data []byte, dst []types.Value) error
}

// Pruner is implemented by a Decoder that can skip the columns a job does
// not read (see connector.Table.Read).
type Pruner interface {
	// Prune says which columns of the schema to decode: read[i] false
	// leaves column i NULL, its value skipped without being decoded or
	// checked (the record's syntax still is). read has the schema's width.
	Prune(read []bool)
}

// ChangelogDecoder is a Decoder for a format whose records stand for
// changes of a table (debezium-json, canal-json, maxwell-json): one record
// gives zero or more rows, each with its own kind (an update gives -U and
// +U, a canal record may carry several rows, a schema-change event none).
// Readers use DecodeChangelog when the decoder has it; Decode takes only
// records that give exactly one +I row.
type ChangelogDecoder interface {
	Decoder
	// DecodeChangelog decodes one record. For each row, in order, it calls
	// add with the row's kind and fills the values add returns (len ==
	// schema width, all NULL). Strings must not alias data. On error the
	// caller discards the rows added for the record.
	DecodeChangelog(data []byte, add func(kind types.RowKind) []types.Value) error
}

// ChangelogFactory is a Factory whose format carries a changelog: its
// decoders are ChangelogDecoders, so a table read with it is updating, and
// its encoders take rows of every kind.
type ChangelogFactory interface {
	Factory
	// Changelog marks the factory; it does nothing.
	Changelog()
}

// IsChangelog reports whether f is a changelog format.
func IsChangelog(f Factory) bool {
	_, ok := f.(ChangelogFactory)
	return ok
}

// Encoder encodes rows of the schema it was built for. Not safe for
// concurrent use.
type Encoder interface {
	// Encode appends the encoding of r (without a trailing newline) to dst.
	// Encoders of append-only formats ignore r.Kind: the sink refuses rows
	// that are not +I/+U before they get here.
	Encode(dst []byte, r types.Row) ([]byte, error)
}

// Factory builds decoders and encoders for one format name.
type Factory interface {
	// Name is the value of the 'format' option.
	Name() string
	// NewDecoder builds a decoder; opts are the format's options with the
	// "<format>." prefix removed (e.g. "ignore-parse-errors").
	NewDecoder(schema types.Schema, opts map[string]string) (Decoder, error)
	// NewEncoder builds an encoder.
	NewEncoder(schema types.Schema, opts map[string]string) (Encoder, error)
}

// Registry maps format names to factories; safe for concurrent use.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: make(map[string]Factory)} }

// Register adds f; it fails if a format of that name is registered.
func (r *Registry) Register(f Factory) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[f.Name()]; ok {
		return fmt.Errorf("format %q is already registered", f.Name())
	}
	r.m[f.Name()] = f
	return nil
}

// Lookup returns the factory for name or an error suggesting the nearest.
func (r *Registry) Lookup(name string) (Factory, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.m[name]
	if !ok {
		names := make([]string, 0, len(r.m))
		for n := range r.m {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown format '%s'%s; available: %v", name, suggest.Hint(name, names), names)
	}
	return f, nil
}
