package agg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// anyNull reports whether any argument is NULL: SQL aggregates skip such rows.
func anyNull(args []types.Value) bool {
	for _, v := range args {
		if v.IsNull() {
			return true
		}
	}
	return false
}

func mergeError(name string, other Accumulator) error {
	return fmt.Errorf("cannot merge %s accumulator with %T", name, other)
}

// argError reports arguments (their number or types) the function does not
// accept, and what it wants instead.
func argError(name string, args []types.Type, want string) error {
	return fmt.Errorf("cannot apply %s to (%s): want %s", name, typeList(args), want)
}

func typeList(args []types.Type) string {
	var b strings.Builder
	for i, t := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
	return b.String()
}

// oneArg checks that args holds exactly one argument.
func oneArg(name string, args []types.Type) error {
	if len(args) != 1 {
		return argError(name, args, "one argument")
	}
	return nil
}

// ErrAppendOnly is wrapped by the error Retract returns from an accumulator
// built for append-only input (Call.AppendOnly).
var ErrAppendOnly = errors.New("accumulator is append-only")

func appendOnlyError(name string) error {
	return fmt.Errorf("cannot retract from %s: %w", name, ErrAppendOnly)
}
