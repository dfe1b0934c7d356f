package exec

import (
	"fmt"

	"github.com/sluicesql/sluice/state"
)

// OpenState opens the state of a stateful operator, as its Open does: the
// store id of ctx's backend and its offsets table; without a backend or
// an id (a test, a job without state), no store and a fresh offsets table,
// so that replays are dropped within the run all the same. what names the
// operator in the error.
func OpenState(ctx *Context, id, what string) (state.Store, *state.Offsets, error) {
	if ctx == nil || ctx.State == nil || id == "" {
		return nil, state.NewOffsets(), nil
	}
	st, err := ctx.State.Store(id)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open %s: %w", what, err)
	}
	return st, st.Offsets(), nil
}
