package wat_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/internal/wat"
	"github.com/tetratelabs/wazero"
)

// A module in both instruction forms, run by wazero: what the assembler
// writes is what the text means.
const sample = `
(module
  (import "env" "twice" (func $twice (param i64) (result i64)))
  (memory (export "memory") 1 2)
  (global $counter (mut i32) (i32.const 7))
  (data (i32.const 16) "hello\0aworld")
  ;; flat form, a loop summing 1..n
  (func $sum (export "sum") (param $n i32) (result i64)
    (local $acc i64)
    block $done
      loop $again
        local.get $n
        i32.eqz
        br_if $done
        local.get $acc
        local.get $n
        i64.extend_i32_u
        i64.add
        local.set $acc
        local.get $n
        i32.const 1
        i32.sub
        local.set $n
        br $again
      end
    end
    local.get $acc)
  (; folded form ;)
  (func (export "count") (param $ptr i32) (param $len i32) (param $c i32) (result i32)
    (local $i i32) (local $k i32)
    (block $out
      (loop $next
        (br_if $out (i32.ge_u (local.get $i) (local.get $len)))
        (if (i32.eq (i32.load8_u (i32.add (local.get $ptr) (local.get $i))) (local.get $c))
          (then (local.set $k (i32.add (local.get $k) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $k))
  (func (export "bump") (result i32)
    (global.set $counter (i32.add (global.get $counter) (i32.const 1)))
    (global.get $counter))
  (func (export "quad") (param i64) (result i64)
    (call $twice (call $twice (local.get 0))))
  (func (export "mix") (param $x f64) (result f64)
    (f64.add (f64.mul (local.get $x) (f64.const 0.5)) (f64.const -1.25)))
  (func (export "neg") (result i64) (i64.const -9_000_000_000))
)`

func TestAssembleRuns(t *testing.T) {
	bin, err := wat.Assemble([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := wat.Assemble([]byte(sample))
	if !bytes.Equal(bin, again) {
		t.Fatal("two assemblies of the same text differ")
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(v int64) int64 { return 2 * v }).Export("twice").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Instantiate(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args ...uint64) uint64 {
		t.Helper()
		res, err := m.ExportedFunction(name).Call(ctx, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res[0]
	}
	if got := call("sum", 100); got != 5050 {
		t.Errorf("sum(100) = %d", got)
	}
	if got := call("count", 16, 11, 'o'); got != 2 {
		t.Errorf("count of 'o' in hello\\nworld = %d", got)
	}
	if got := call("count", 16, 11, '\n'); got != 1 {
		t.Errorf("count of newline = %d", got)
	}
	if got := call("bump"); got != 8 {
		t.Errorf("bump = %d", got)
	}
	if got := call("quad", 5); got != 20 {
		t.Errorf("quad(5) = %d", got)
	}
	if got := int64(call("neg")); got != -9_000_000_000 {
		t.Errorf("neg = %d", got)
	}
	if got := call("mix", 0x4010000000000000); got != 0x3fe8000000000000 { // 4*0.5-1.25 = 0.75
		t.Errorf("mix(4) bits = %#x", got)
	}
}

func TestAssembleErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`(module (func (result i32) (i32.const 1) (i32.bogus)))`, `1:43: unknown or unsupported instruction "i32.bogus"`},
		{`(module (func (local.get $x)))`, `1:26: unknown local $x`},
		{`(module (func (br $nowhere)))`, `1:19: unknown label $nowhere`},
		{"(module\n  (func (call $f)))", `2:15: unknown function $f`},
		{`(module (func (param i33)))`, `1:22: expected a value type`},
		{`(module (func)`, `1:1: unclosed '('`},
	} {
		_, err := wat.Assemble([]byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s", tc.src, err, tc.want)
		}
	}
}
