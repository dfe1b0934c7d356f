package agg

import (
	"encoding/binary"

	"github.com/sluicesql/sluice/types"
)

// countFunc is COUNT(*) (no arguments) and COUNT(x, ...): the number of rows
// whose arguments are all non-NULL. The result is BIGINT NOT NULL, 0 for an
// empty group.
type countFunc struct{}

func (countFunc) Name() string { return "COUNT" }

func (countFunc) ResultType(args []types.Type) (types.Type, error) {
	return types.BigInt.WithNullable(false), nil
}

func (countFunc) New(args []types.Type, result types.Type) Accumulator { return &countAcc{} }

type countAcc struct{ n int64 }

func (a *countAcc) Add(args []types.Value) error {
	if !anyNull(args) {
		a.n++
	}
	return nil
}

func (a *countAcc) Retract(args []types.Value) error {
	if !anyNull(args) {
		a.n--
	}
	return nil
}

func (a *countAcc) Merge(other Accumulator) error {
	o, ok := other.(*countAcc)
	if !ok {
		return mergeError("COUNT", other)
	}
	a.n += o.n
	return nil
}

func (a *countAcc) Result() types.Value { return types.BigIntValue(a.n) }

func (a *countAcc) Clone() Accumulator { c := *a; return &c }

func (a *countAcc) Reset() { a.n = 0 }

func (a *countAcc) AppendState(dst []byte) []byte { return binary.AppendVarint(dst, a.n) }

func (a *countAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	return r.done("COUNT")
}
