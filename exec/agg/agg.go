package agg

import (
	"github.com/sluicesql/sluice/types"
)

// Func is an aggregate function.
type Func interface {
	// Name is the SQL name, upper case.
	Name() string
	// ResultType returns the result type for the given argument types, or
	// an error naming the function and the types it accepts.
	ResultType(args []types.Type) (types.Type, error)
	// New returns an empty accumulator for the given argument types and the
	// result type that ResultType returned.
	New(args []types.Type, result types.Type) Accumulator
}

// Accumulator accumulates the rows of one group (one key, one window or
// slice). Accumulators are not safe for concurrent use.
type Accumulator interface {
	// Add folds one row's argument values in. COUNT(*) gets no arguments.
	// Rows whose arguments are NULL are skipped by SQL rules inside the
	// accumulator (COUNT(x) does not count NULLs).
	Add(args []types.Value) error
	// Retract removes one row's argument values, for updating inputs. An
	// accumulator that cannot retract (e.g. FIRST_VALUE without history)
	// returns an error.
	Retract(args []types.Value) error
	// Merge folds another accumulator of the same function and types into
	// this one (session windows merging, hop/cumulate slices).
	Merge(other Accumulator) error
	// Result returns the current result. It may be called many times.
	Result() types.Value
	// Clone returns an independent copy (used when a slice's accumulator
	// is shared by several windows).
	Clone() Accumulator
	// Reset empties the accumulator for reuse.
	Reset()
	// AppendState appends a binary encoding of the accumulator's state to
	// dst, for durable state and changelogs; LoadState restores it into an
	// accumulator made by the same Func.New.
	AppendState(dst []byte) []byte
	LoadState(src []byte) error
}

// Declared is implemented by functions with a fixed signature (user
// aggregates): the planner casts arguments that are assignable to the
// declared types, as Flink widens the arguments of user functions.
type Declared interface {
	DeclaredArgs() []types.Type
}
