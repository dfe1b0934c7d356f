package wasmudf_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/wasmudf"
	"github.com/sluicesql/sluice/internal/wat"
	"github.com/sluicesql/sluice/types"
)

// A call stuck in a loop is stopped by the timeout, also while the
// collector stops the world (machine code is not preempted: the loop must
// leave it now and then, or the collector, and every goroutine with it,
// would wait for ever).
func TestTimeoutStopsALoopDuringGC(t *testing.T) {
	f := load(t, wasmudf.Spec{Name: "SPIN", Export: "spin", Params: []types.Type{types.Int}, Result: types.Int,
		Limits: wasmudf.Limits{CallTimeout: 100 * time.Millisecond}})
	eval, err := f.ScalarFunction().Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := eval([]types.Value{types.Int32Value(1)}); done <- err }()
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer close(stop)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not return within wasm.call-timeout (100ms)") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call was not stopped")
	}
}

// Instrumenting a module that has no memory, no globals and no exports
// but its function adds what the checks need and keeps its meaning.
func TestInstrumentMinimalModule(t *testing.T) {
	bin, err := wat.Assemble([]byte(`(module
	  (func (export "sum_to") (param $n i64) (result i64)
	    (local $s i64)
	    (loop $l
	      (local.set $s (i64.add (local.get $s) (local.get $n)))
	      (local.set $n (i64.sub (local.get $n) (i64.const 1)))
	      (br_if $l (i64.gt_s (local.get $n) (i64.const 0))))
	    (local.get $s)))`))
	if err != nil {
		t.Fatal(err)
	}
	h := wasmudf.NewHost()
	defer h.Close()
	f, err := h.Load(context.Background(), wasmudf.Spec{Name: "SUM_TO", Export: "sum_to", Module: bin,
		Params: []types.Type{types.BigInt}, Result: types.BigInt, Limits: wasmudf.Limits{CallTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	eval, err := f.ScalarFunction().Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	// 200000 iterations: several exits to Go on the way.
	v, err := eval([]types.Value{types.BigIntValue(200000)})
	if err != nil || v.Int() != 200000*200001/2 {
		t.Fatalf("sum_to(200000) = %v, %v", v, err)
	}
}
