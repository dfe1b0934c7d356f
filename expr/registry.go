package expr

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// ScalarFunction is a scalar function: a built-in or a user-defined one.
//
// A user-defined function declares its argument types in Args (the last one
// repeats when Variadic; Args nil with Variadic accepts any arguments) and
// its result in Result, or computes the result from the argument types in
// ResultType. Arguments are converted to the declared types (implicit casts
// as types.Assignable allows) before Eval sees them.
//
// Unless CallOnNull is set, a call with a NULL argument is NULL without
// calling Eval. Eval must not keep the args slice: it is reused between
// calls. Eval may be called from several goroutines at once (one per
// compiled expression); it must be safe for that or keep no state.
type ScalarFunction struct {
	// Name is the SQL name; lookups are case-insensitive.
	Name string
	// Args are the declared argument types (nil with Variadic: any).
	Args []types.Type
	// Variadic makes the last of Args repeat (or, with Args nil, accepts
	// any number of arguments of any type).
	Variadic bool
	// Result is the result type when ResultType is nil.
	Result types.Type
	// ResultType, if set, computes the result type from the argument
	// types, or rejects them with an error.
	ResultType func(args []types.Type) (types.Type, error)
	// NonDeterministic marks functions whose result may differ between
	// calls with the same arguments (RAND, NOW): they are never folded
	// into constants. The zero value means deterministic, as in Flink.
	NonDeterministic bool
	// CallOnNull makes Eval see NULL arguments instead of the call being
	// NULL.
	CallOnNull bool
	// Eval computes the result.
	Eval func(args []types.Value) (types.Value, error)
	// Instantiate, if set, replaces Eval: every compiled call of the
	// function gets an evaluator of its own from it, for functions that
	// hold state one goroutine at a time may use (a WebAssembly
	// instance). A failure fails the compilation.
	Instantiate func() (func(args []types.Value) (types.Value, error), error)

	builtin *builtin // nil for user-defined functions
}

// IsBuiltin reports whether f is one of Sluice's built-in functions or
// operators. Built-ins have their own type rules: Args, Result and Eval
// are unset for them.
func (f *ScalarFunction) IsBuiltin() bool { return f.builtin != nil }

// TableFunction is a user-defined table function, called with LATERAL
// TABLE(f(args)): for each input row it emits zero or more rows of the
// Result schema.
type TableFunction struct {
	// Name is the SQL name; lookups are case-insensitive.
	Name string
	// Args are the declared argument types (see ScalarFunction.Args).
	Args     []types.Type
	Variadic bool
	// Result is the schema of the emitted rows when ResultType is nil.
	Result types.Schema
	// ResultType, if set, computes the schema from the argument types.
	ResultType func(args []types.Type) (types.Schema, error)
	// NonDeterministic marks functions whose output may differ between
	// calls with the same arguments.
	NonDeterministic bool
	// Eval emits the rows for one call. emit copies the row it is given;
	// Eval may reuse it. An error from emit must be returned.
	Eval func(args []types.Value, emit func(row []types.Value) error) error
	// Instantiate, if set, replaces Eval with an evaluator of each
	// compiled call's own (see ScalarFunction.Instantiate).
	Instantiate func() (func(args []types.Value, emit func(row []types.Value) error) error, error)
}

// syntax says how a built-in call prints.
type syntax uint8

const (
	synFunc    syntax = iota // NAME(args)
	synInfix                 // (a op b)
	synPrefix                // op a
	synPostfix               // (a op)
	synIn                    // (a IN (b, c))
	synBetween               // (a BETWEEN b AND c)
	synLike                  // (a LIKE b [ESCAPE c])
	synNiladic               // NAME without parentheses when it has no arguments
)

// builtin is the definition of a built-in function or operator.
type builtin struct {
	syntax syntax
	// operator marks names that are not functions ("+", "IS NULL"): they
	// are left out of Names.
	operator bool
	// bind checks the arguments, possibly wrapping them in implicit casts,
	// and returns them with the result type.
	bind func(b *Builder, name string, args []Node) ([]Node, types.Type, error)
	// compile builds the evaluator from the compiled arguments.
	compile func(c *compiler, call *Call, args []Eval) (Eval, error)
	// tri, if set, compiles a BOOLEAN-valued call directly into a
	// three-valued evaluator (comparisons, logic, LIKE); compile is then
	// unused.
	tri func(c *compiler, call *Call) (triEval, error)
}

// Registry holds the scalar and table functions known to an engine: the
// built-ins and the user-defined functions registered into it. It is a
// value the engine owns, safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	scalar map[string]*ScalarFunction
	table  map[string]*TableFunction
}

// NewRegistry returns a registry holding the built-in functions.
func NewRegistry() *Registry {
	r := &Registry{scalar: make(map[string]*ScalarFunction), table: make(map[string]*TableFunction)}
	addBuiltins(r)
	return r
}

// def registers a built-in under one or more names.
func (r *Registry) def(b *builtin, nonDet bool, names ...string) {
	for _, n := range names {
		r.scalar[n] = &ScalarFunction{Name: n, builtin: b, NonDeterministic: nonDet}
	}
}

// Lookup returns the scalar function or operator called name (any case),
// or an error suggesting the nearest known name.
func (r *Registry) Lookup(name string) (*ScalarFunction, error) {
	r.mu.RLock()
	f, ok := r.scalar[strings.ToUpper(name)]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown function '%s'%s", name, suggest.Hint(name, r.Names()))
	}
	return f, nil
}

// LookupTable returns the table function called name (any case), or an
// error suggesting the nearest known table function.
func (r *Registry) LookupTable(name string) (*TableFunction, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.table[strings.ToUpper(name)]
	if !ok {
		names := make([]string, 0, len(r.table))
		for n := range r.table {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown table function '%s'%s", name, suggest.Hint(name, names))
	}
	return f, nil
}

// Names returns the names of all scalar and table functions, sorted, for
// "did you mean" hints. Operators are not included.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.scalar)+len(r.table))
	for n, f := range r.scalar {
		if f.builtin == nil || !f.builtin.operator {
			out = append(out, n)
		}
	}
	for n := range r.table {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func validName(name string) error {
	if name == "" {
		return fmt.Errorf("cannot register a function without a name")
	}
	for _, c := range name {
		if !(c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c > 127) {
			return fmt.Errorf("cannot register function %q: invalid character %q in its name", name, c)
		}
	}
	return nil
}

// Register adds a user-defined scalar function. It fails if the name is
// taken (built-ins cannot be replaced) or the definition is incomplete.
func (r *Registry) Register(f ScalarFunction) error {
	if err := validName(f.Name); err != nil {
		return err
	}
	if f.Eval == nil && f.Instantiate == nil {
		return fmt.Errorf("cannot register function %s: it has no Eval", f.Name)
	}
	if f.ResultType == nil && f.Result.Kind == types.KindNull {
		return fmt.Errorf("cannot register function %s: it declares neither Result nor ResultType", f.Name)
	}
	if f.Variadic && f.Args != nil && len(f.Args) == 0 {
		return fmt.Errorf("cannot register function %s: a variadic function needs at least one argument type", f.Name)
	}
	f.builtin = nil
	name := strings.ToUpper(f.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.scalar[name]; ok {
		return fmt.Errorf("cannot register function %s: a function of that name exists", f.Name)
	}
	if _, ok := r.table[name]; ok {
		return fmt.Errorf("cannot register function %s: a table function of that name exists", f.Name)
	}
	f.Name = name
	r.scalar[name] = &f
	return nil
}

// RegisterTable adds a user-defined table function.
func (r *Registry) RegisterTable(f TableFunction) error {
	if err := validName(f.Name); err != nil {
		return err
	}
	if f.Eval == nil && f.Instantiate == nil {
		return fmt.Errorf("cannot register table function %s: it has no Eval", f.Name)
	}
	if f.ResultType == nil && f.Result.Len() == 0 {
		return fmt.Errorf("cannot register table function %s: it declares neither Result nor ResultType", f.Name)
	}
	name := strings.ToUpper(f.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.scalar[name]; ok {
		return fmt.Errorf("cannot register table function %s: a function of that name exists", f.Name)
	}
	if _, ok := r.table[name]; ok {
		return fmt.Errorf("cannot register table function %s: a table function of that name exists", f.Name)
	}
	f.Name = name
	r.table[name] = &f
	return nil
}

// Unregister removes a user-defined scalar or table function (DROP
// FUNCTION). Built-ins cannot be removed.
func (r *Registry) Unregister(name string) error {
	name = strings.ToUpper(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.scalar[name]; ok {
		if f.builtin != nil {
			return fmt.Errorf("cannot drop built-in function %s", name)
		}
		delete(r.scalar, name)
		return nil
	}
	if _, ok := r.table[name]; ok {
		delete(r.table, name)
		return nil
	}
	return fmt.Errorf("cannot drop function %s: it does not exist", name)
}
