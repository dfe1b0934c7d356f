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

// Encoder encodes rows of the schema it was built for. Not safe for
// concurrent use.
type Encoder interface {
	// Encode appends the encoding of r (without a trailing newline) to dst.
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
