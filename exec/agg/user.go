package agg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// UserAggregate describes an aggregate function written in Go. Turn it into
// a Func with NewUserFunc and add it to a Registry with Register.
type UserAggregate struct {
	// Name is the SQL name; it is upper-cased.
	Name string
	// Args are the argument types the function accepts. An argument of a
	// call matches when it has the same type ignoring nullability and time
	// attributes, or is the untyped NULL.
	Args []types.Type
	// Result is the result type.
	Result types.Type
	// New returns an empty accumulator.
	New func() UserAccumulator
}

// UserAccumulator accumulates one group for a UserAggregate. Arguments are
// passed as they are, NULLs included: the accumulator applies its own NULL
// rule. Retract may return an error if the function cannot retract; the
// operator then fails on updating input.
type UserAccumulator interface {
	// Add folds one row's arguments in.
	Add(args []types.Value) error
	// Retract removes one row's arguments.
	Retract(args []types.Value) error
	// Merge folds in another accumulator made by the same New.
	Merge(other UserAccumulator) error
	// Result returns the current result; it must not alias state that
	// later calls mutate.
	Result() types.Value
	// AppendState appends the accumulator's state to dst; LoadState
	// restores a state so written into an accumulator fresh from New.
	// They make user aggregates durable, and Clone uses them.
	AppendState(dst []byte) []byte
	LoadState(src []byte) error
}

// NewUserFunc validates u and returns it as a Func.
func NewUserFunc(u UserAggregate) (Func, error) {
	name := strings.ToUpper(strings.TrimSpace(u.Name))
	switch {
	case name == "":
		return nil, errors.New("cannot define user aggregate: empty name")
	case u.New == nil:
		return nil, fmt.Errorf("cannot define user aggregate %s: New is nil", name)
	case u.Result.Kind == types.KindNull:
		return nil, fmt.Errorf("cannot define user aggregate %s: no result type", name)
	}
	u.Name = name
	return &userFunc{u: u}, nil
}

type userFunc struct{ u UserAggregate }

func (f *userFunc) Name() string { return f.u.Name }

// DeclaredArgs implements Declared.
func (f *userFunc) DeclaredArgs() []types.Type { return f.u.Args }

func (f *userFunc) ResultType(args []types.Type) (types.Type, error) {
	want := typeList(f.u.Args)
	if want == "" {
		want = "no arguments"
	} else {
		want = "(" + want + ")"
	}
	if len(args) != len(f.u.Args) {
		return types.Type{}, argError(f.u.Name, args, want)
	}
	for i, a := range args {
		if a.Kind != types.KindNull && !a.SameKind(f.u.Args[i]) {
			return types.Type{}, argError(f.u.Name, args, want)
		}
	}
	return f.u.Result, nil
}

func (f *userFunc) New(args []types.Type, result types.Type) Accumulator {
	return &userAcc{f: f, acc: f.u.New()}
}

// userAcc adapts a UserAccumulator to Accumulator.
type userAcc struct {
	f   *userFunc
	acc UserAccumulator
}

func (a *userAcc) Add(args []types.Value) error {
	if err := a.acc.Add(args); err != nil {
		return fmt.Errorf("cannot add to %s: %w", a.f.u.Name, err)
	}
	return nil
}

func (a *userAcc) Retract(args []types.Value) error {
	if err := a.acc.Retract(args); err != nil {
		return fmt.Errorf("cannot retract from %s: %w", a.f.u.Name, err)
	}
	return nil
}

func (a *userAcc) Merge(other Accumulator) error {
	o, ok := other.(*userAcc)
	if !ok || o.f != a.f {
		return mergeError(a.f.u.Name, other)
	}
	if err := a.acc.Merge(o.acc); err != nil {
		return fmt.Errorf("cannot merge %s: %w", a.f.u.Name, err)
	}
	return nil
}

func (a *userAcc) Result() types.Value { return a.acc.Result() }

// Clone copies through the state encoding, the one copy operation every
// UserAccumulator provides. A failure to reload one's own state is a broken
// UserAccumulator, not bad input; the clone then starts empty and the
// failure resurfaces at the next LoadState of that state.
func (a *userAcc) Clone() Accumulator {
	c := &userAcc{f: a.f, acc: a.f.u.New()}
	_ = c.acc.LoadState(a.acc.AppendState(nil))
	return c
}

func (a *userAcc) Reset() { a.acc = a.f.u.New() }

func (a *userAcc) AppendState(dst []byte) []byte { return a.acc.AppendState(dst) }

func (a *userAcc) LoadState(src []byte) error {
	acc := a.f.u.New()
	if err := acc.LoadState(src); err != nil {
		return fmt.Errorf("cannot load %s state: %w", a.f.u.Name, err)
	}
	a.acc = acc
	return nil
}
