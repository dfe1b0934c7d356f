package connector

import (
	"fmt"
	"sort"
	"sync"

	"github.com/sluicesql/sluice/internal/suggest"
)

// Registry maps connector names to factories. The engine owns one; it is
// safe for concurrent use.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: make(map[string]Factory)} }

// Register adds f; it fails if a factory of that name is registered.
func (r *Registry) Register(f Factory) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[f.Name()]; ok {
		return fmt.Errorf("connector %q is already registered", f.Name())
	}
	r.m[f.Name()] = f
	return nil
}

// Names returns the registered connector names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the factory for name, or an error suggesting the nearest
// registered name.
func (r *Registry) Lookup(name string) (Factory, error) {
	r.mu.RLock()
	f, ok := r.m[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown connector '%s'%s; available: %v", name, suggest.Hint(name, r.Names()), r.Names())
	}
	return f, nil
}

// lookupOnly explains why a lookup connector's table is neither a source
// nor a sink.
const lookupOnly = "its tables are dimension tables, read only by a lookup join (JOIN t FOR SYSTEM_TIME AS OF a processing-time attribute)"

// Source builds a source for t from its 'connector' option.
func (r *Registry) Source(t Table, env Env) (Source, error) {
	name, err := t.Options.Required("connector")
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	f, err := r.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	sf, ok := f.(SourceFactory)
	if !ok {
		if _, ok := f.(LookupFactory); ok {
			return nil, fmt.Errorf("table %s: connector '%s' cannot be scanned: %s", t.Name, name, lookupOnly)
		}
		return nil, fmt.Errorf("table %s: connector '%s' cannot be read from (it is a sink only)", t.Name, name)
	}
	if len(t.Metadata) > 0 {
		mf, ok := f.(MetadataFactory)
		for _, m := range t.Metadata {
			if !ok || !mf.ProvidesMetadata(m.Key) {
				return nil, fmt.Errorf("table %s: connector '%s' does not provide metadata '%s' (column '%s')", t.Name, name, m.Key, m.Name)
			}
		}
	}
	s, err := sf.CreateSource(t, env)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return s, nil
}

// Sink builds a sink for t from its 'connector' option.
func (r *Registry) Sink(t Table, env Env) (Sink, error) {
	name, err := t.Options.Required("connector")
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	f, err := r.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	sf, ok := f.(SinkFactory)
	if !ok {
		if _, ok := f.(LookupFactory); ok {
			return nil, fmt.Errorf("table %s: connector '%s' cannot be written to: %s", t.Name, name, lookupOnly)
		}
		return nil, fmt.Errorf("table %s: connector '%s' cannot be written to (it is a source only)", t.Name, name)
	}
	s, err := sf.CreateSink(t, env)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return s, nil
}

// SingleWriterTarget says whether a sink of t writes one target that takes
// a single writer, and which (see SingleWriterFactory).
func (r *Registry) SingleWriterTarget(t Table) (string, bool) {
	name, err := t.Options.Required("connector")
	if err != nil {
		return "", false
	}
	f, err := r.Lookup(name)
	if err != nil {
		return "", false
	}
	if sw, ok := f.(SingleWriterFactory); ok {
		return sw.SingleWriterTarget(t)
	}
	return "", false
}
