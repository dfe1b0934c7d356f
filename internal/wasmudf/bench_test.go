package wasmudf_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/wasmudf"
	"github.com/sluicesql/sluice/types"
)

func load(tb testing.TB, s wasmudf.Spec) *wasmudf.Function {
	tb.Helper()
	bin, err := os.ReadFile("testdata/udfs.wasm")
	if err != nil {
		tb.Fatal(err)
	}
	h := wasmudf.NewHost()
	tb.Cleanup(func() { h.Close() })
	s.Module = bin
	f, err := h.Load(context.Background(), s)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// BenchmarkScalarCall measures one call of a scalar function through the
// evaluator a compiled expression uses: an INT function, and count_char
// over a 100-byte string, with the call timeout's termination checks and
// without them ('wasm.call-timeout' = '0').
func BenchmarkScalarCall(b *testing.B) {
	for _, timeout := range []time.Duration{wasmudf.DefaultCallTimeout, 0} {
		name := "timeout"
		if timeout == 0 {
			name = "no-timeout"
		}
		limits := wasmudf.Limits{CallTimeout: timeout}
		b.Run("int/"+name, func(b *testing.B) {
			f := load(b, wasmudf.Spec{Name: "ADD", Export: "add_i32", Params: []types.Type{types.Int, types.Int}, Result: types.Int, Limits: limits})
			eval, err := f.ScalarFunction().Instantiate()
			if err != nil {
				b.Fatal(err)
			}
			args := []types.Value{types.Int32Value(40), types.Int32Value(2)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eval(args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("string/"+name, func(b *testing.B) {
			f := load(b, wasmudf.Spec{Name: "CC", Export: "count_char", Params: []types.Type{types.String, types.String}, Result: types.BigInt, Limits: limits})
			eval, err := f.ScalarFunction().Instantiate()
			if err != nil {
				b.Fatal(err)
			}
			args := []types.Value{types.StringValue(strings.Repeat("abcdefghij", 10)), types.StringValue("c")}
			b.ReportAllocs()
			for b.Loop() {
				if v, err := eval(args); err != nil || v.Int() != 10 {
					b.Fatal(v, err)
				}
			}
		})
	}
}
