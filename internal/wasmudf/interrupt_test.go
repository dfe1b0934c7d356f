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

// The instrumenter walks every instruction to find the loops: a module
// with bulk memory, br_table, select, floats, globals and calls inside
// loops keeps its meaning.
func TestInstrumentKeepsMeaning(t *testing.T) {
	bin, err := wat.Assemble([]byte(`(module
	  (memory (export "memory") 1)
	  (global $g (mut i64) (i64.const 0))
	  (func $classify (param $x i32) (result i32)
	    (block $c (block $b (block $a
	      (br_table $a $b $c (local.get $x)))
	      (return (i32.const 10)))
	      (return (i32.const 20)))
	    (i32.const 30))
	  (func (export "mix") (param $n i32) (result i64)
	    (local $i i32)
	    (memory.fill (i32.const 0) (i32.const 7) (i32.const 64))
	    (memory.copy (i32.const 64) (i32.const 0) (i32.const 64))
	    (loop $l
	      (global.set $g (i64.add (global.get $g)
	        (i64.extend_i32_u (call $classify (i32.rem_u (local.get $i) (i32.const 3))))))
	      (global.set $g (i64.add (global.get $g)
	        (i64.extend_i32_u (select (i32.load8_u offset=100 (i32.const 0)) (i32.const 0) (i32.const 1)))))
	      (global.set $g (i64.add (global.get $g) (i64.trunc_f64_s (f64.mul (f64.const 0.5) (f64.const 4)))))
	      (local.set $i (i32.add (local.get $i) (i32.const 1)))
	      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
	    (global.get $g)))`))
	if err != nil {
		t.Fatal(err)
	}
	h := wasmudf.NewHost()
	defer h.Close()
	f, err := h.Load(context.Background(), wasmudf.Spec{Name: "MIX", Export: "mix", Module: bin,
		Params: []types.Type{types.Int}, Result: types.BigInt, Limits: wasmudf.Limits{CallTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	eval, err := f.ScalarFunction().Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	// Per iteration: 10, 20 or 30 by i mod 3, 7 (the copied byte), 2.
	v, err := eval([]types.Value{types.Int32Value(300000)})
	if want := int64(100000*(10+20+30) + 300000*(7+2)); err != nil || v.Int() != want {
		t.Fatalf("mix(300000) = %v, %v; want %d", v.Int(), err, want)
	}
}
