package agg

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicesql/sluice/internal/suggest"
)

// Registry maps upper-case SQL names to aggregate functions. It is a value:
// each engine builds its own with NewRegistry and may Register user-defined
// aggregates without affecting any other. A Registry is not safe for
// concurrent mutation; build it before sharing it.
type Registry struct {
	funcs map[string]Func
}

// NewRegistry returns a registry holding the built-in aggregates.
func NewRegistry() *Registry {
	r := &Registry{funcs: make(map[string]Func)}
	for _, f := range builtins() {
		r.funcs[f.Name()] = f
	}
	// Alternative names, as Flink and Calcite accept them.
	r.funcs["STDDEV"] = r.funcs["STDDEV_SAMP"]
	r.funcs["VARIANCE"] = r.funcs["VAR_SAMP"]
	r.funcs["$SUM0"] = r.funcs["SUM0"]
	return r
}

func builtins() []Func {
	return []Func{
		countFunc{},
		sumFunc{},
		sumFunc{zero: true},
		avgFunc{},
		minMaxFunc{},
		minMaxFunc{max: true},
		firstLastFunc{},
		firstLastFunc{last: true},
		listAggFunc{},
		varianceFunc{name: "VAR_POP"},
		varianceFunc{name: "VAR_SAMP", sample: true},
		varianceFunc{name: "STDDEV_POP", sqrt: true},
		varianceFunc{name: "STDDEV_SAMP", sample: true, sqrt: true},
		boolAggFunc{},
		boolAggFunc{or: true},
		collectFunc{},
	}
}

// Lookup returns the function named name (case-insensitive). The error for
// an unknown name suggests the nearest known one.
func (r *Registry) Lookup(name string) (Func, error) {
	if f, ok := r.funcs[strings.ToUpper(name)]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("cannot find aggregate function %s%s", name, suggest.Hint(name, r.Names()))
}

// Has reports whether a function is named name (case-insensitive):
// Lookup without the error, whose suggestion compares name with every
// function's (the planner asks of each call it binds).
func (r *Registry) Has(name string) bool {
	_, ok := r.funcs[strings.ToUpper(name)]
	return ok
}

// Names returns the names of all registered functions, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.funcs))
	for n := range r.funcs {
		// $SUM0 is Flink's internal name for SUM0: SQL cannot call it
		// ('$' starts no identifier), so it is not listed.
		if !strings.HasPrefix(n, "$") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Register adds f under its (upper-cased) name. It fails if the name is
// empty or already taken: built-ins cannot be shadowed by accident.
func (r *Registry) Register(f Func) error {
	name := strings.ToUpper(f.Name())
	if name == "" {
		return fmt.Errorf("cannot register aggregate function: empty name")
	}
	if _, ok := r.funcs[name]; ok {
		return fmt.Errorf("cannot register aggregate function %s: name already registered", name)
	}
	r.funcs[name] = f
	return nil
}

// Unregister removes the function registered as name (DROP FUNCTION of a
// user aggregate); built-ins are not removed.
func (r *Registry) Unregister(name string) error {
	name = strings.ToUpper(name)
	f, ok := r.funcs[name]
	if !ok {
		return fmt.Errorf("cannot drop aggregate function %s: it does not exist", name)
	}
	for _, b := range builtins() {
		if b.Name() == f.Name() {
			return fmt.Errorf("cannot drop built-in aggregate function %s", name)
		}
	}
	delete(r.funcs, name)
	return nil
}
