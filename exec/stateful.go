package exec

import (
	"fmt"

	"github.com/sluicesql/sluice/state"
)

// OpenState opens the state of a stateful operator, as its Open does: it
// sets *store to the store id of ctx's backend and *offsets to its offsets
// table, then calls restore (if not nil) to read the operator's state
// back. Without a backend or an id (a test, a job without state) there is
// no store and nothing to restore, and *offsets is a fresh table, so that
// replays are dropped within the run all the same. what names the
// operator in errors.
func OpenState(ctx *Context, id, what string, store *state.Store, offsets **state.Offsets, restore func() error) error {
	*store, *offsets = nil, state.NewOffsets()
	if ctx == nil || ctx.State == nil || id == "" {
		return nil
	}
	st, err := ctx.State.Store(id)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", what, err)
	}
	*store, *offsets = st, st.Offsets()
	if restore != nil {
		if err := restore(); err != nil {
			return fmt.Errorf("cannot restore %s: %w", what, err)
		}
	}
	return nil
}
