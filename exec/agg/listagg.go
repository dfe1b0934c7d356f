package agg

import (
	"encoding/binary"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// listAggFunc is LISTAGG(x [, sep]): the non-NULL string values joined by
// sep (',' by default) in arrival order; STRING, NULL for an empty group.
// As in Flink, the separator is the one of the latest row folded in.
//
// The default accumulator keeps the values so that a retraction removes one
// (the earliest equal one); the AppendOnly variant keeps only the joined
// bytes.
type listAggFunc struct{ appendOnly bool }

func (listAggFunc) Name() string { return "LISTAGG" }

func (listAggFunc) ResultType(args []types.Type) (types.Type, error) {
	if len(args) != 1 && len(args) != 2 {
		return types.Type{}, argError("LISTAGG", args, "(string) or (string, separator)")
	}
	for _, a := range args {
		if !a.Kind.IsString() && a.Kind != types.KindNull {
			return types.Type{}, argError("LISTAGG", args, "string arguments")
		}
	}
	return types.String, nil
}

func (f listAggFunc) New(args []types.Type, result types.Type) Accumulator {
	if f.appendOnly {
		return &listAggAcc{sep: ","}
	}
	return &listAggRetractAcc{sep: ","}
}

// AppendOnly implements AppendOnlyFunc.
func (f listAggFunc) AppendOnly() Func { f.appendOnly = true; return f }

// separator returns the separator argument, or cur when there is none or it
// is NULL.
func separator(args []types.Value, cur string) string {
	if len(args) > 1 && !args[1].IsNull() {
		return args[1].Str()
	}
	return cur
}

// listAggAcc is append-only LISTAGG: the joined bytes.
type listAggAcc struct {
	buf []byte
	has bool
	sep string
}

func (a *listAggAcc) Add(args []types.Value) error {
	if args[0].IsNull() {
		return nil
	}
	a.sep = separator(args, a.sep)
	a.appendStr(args[0].Str())
	return nil
}

func (a *listAggAcc) appendStr(s string) {
	if a.has {
		a.buf = append(a.buf, a.sep...)
	}
	a.buf = append(a.buf, s...)
	a.has = true
}

func (a *listAggAcc) Retract(args []types.Value) error {
	if args[0].IsNull() {
		return nil
	}
	return appendOnlyError("LISTAGG")
}

func (a *listAggAcc) Merge(other Accumulator) error {
	switch o := other.(type) {
	case *listAggAcc:
		if o.has {
			a.appendStr(string(o.buf))
			a.sep = o.sep
		}
	case *listAggRetractAcc:
		if v := o.Result(); !v.IsNull() {
			a.appendStr(v.Str())
			a.sep = o.sep
		}
	default:
		return mergeError("LISTAGG", other)
	}
	return nil
}

func (a *listAggAcc) Result() types.Value {
	if !a.has {
		return types.Value{}
	}
	return types.StringValue(string(a.buf))
}

func (a *listAggAcc) Clone() Accumulator {
	c := *a
	c.buf = append([]byte(nil), a.buf...)
	return &c
}

func (a *listAggAcc) Reset() { a.buf, a.has, a.sep = a.buf[:0], false, "," }

func (a *listAggAcc) AppendState(dst []byte) []byte {
	dst = appendString(dst, a.sep)
	if !a.has {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	return appendString(dst, string(a.buf))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func (a *listAggAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.sep = string(r.bytes())
	a.buf, a.has = a.buf[:0], false
	if len(r.src) > 0 {
		has := r.src[0] == 1
		r.src = r.src[1:]
		if has {
			a.buf, a.has = append(a.buf, r.bytes()...), true
		}
	}
	return r.done("LISTAGG")
}

// listAggRetractAcc is LISTAGG with retraction: the values in arrival order.
type listAggRetractAcc struct {
	h   history
	sep string
}

func (a *listAggRetractAcc) Add(args []types.Value) error {
	if !args[0].IsNull() {
		a.sep = separator(args, a.sep)
		a.h.add(args[0])
	}
	return nil
}

func (a *listAggRetractAcc) Retract(args []types.Value) error {
	if !args[0].IsNull() {
		a.h.retract(args[0])
	}
	return nil
}

func (a *listAggRetractAcc) Merge(other Accumulator) error {
	o, ok := other.(*listAggRetractAcc)
	if !ok {
		return mergeError("LISTAGG", other)
	}
	a.h.merge(&o.h)
	if len(o.h.vals) > 0 {
		a.sep = o.sep
	}
	return nil
}

func (a *listAggRetractAcc) Result() types.Value {
	if len(a.h.vals) == 0 {
		return types.Value{}
	}
	var b strings.Builder
	for i, v := range a.h.vals {
		if i > 0 {
			b.WriteString(a.sep)
		}
		b.WriteString(v.Str())
	}
	return types.StringValue(b.String())
}

func (a *listAggRetractAcc) Clone() Accumulator {
	return &listAggRetractAcc{h: a.h.clone(), sep: a.sep}
}

func (a *listAggRetractAcc) Reset() { a.h.reset(); a.sep = "," }

func (a *listAggRetractAcc) AppendState(dst []byte) []byte {
	dst = appendString(dst, a.sep)
	return a.h.appendState(dst)
}

func (a *listAggRetractAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.sep = string(r.bytes())
	a.h.load(&r)
	return r.done("LISTAGG")
}
