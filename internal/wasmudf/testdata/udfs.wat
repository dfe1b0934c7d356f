;; Functions that exercise Sluice's WebAssembly ABI (see docs/functions.md):
;; every slot kind, NULL in and out, strings in and out, a table function,
;; aggregates with and without retract and merge, a trap and a call that
;; never returns. Rebuilt by `go generate` (internal/wat).
(module
  (import "sluice" "null" (func $null))
  (import "sluice" "set_i32" (func $set_i32 (param i32 i32)))
  (import "sluice" "set_bytes" (func $set_bytes (param i32 i32 i32)))
  (import "sluice" "emit" (func $emit))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))

  ;; A bump allocator: memory is never freed, which is enough here.
  (func $alloc (export "sluice_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (global.get $heap))
    (local.set $end (i32.and (i32.add (i32.add (local.get $p) (local.get $n)) (i32.const 7)) (i32.const -8)))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1)))
                    (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $heap (local.get $end))
    (local.get $p))

  ;; pack returns (ptr | len << 32), how byte strings come back.
  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.extend_i32_u (local.get $p))
            (i64.shl (i64.extend_i32_u (local.get $n)) (i64.const 32))))

  ;; count_char(s STRING, c STRING) RETURNS BIGINT: occurrences of c's first byte.
  (func (export "count_char") (param $s i32) (param $n i32) (param $c i32) (param $cn i32) (result i64)
    (local $i i32) (local $k i64) (local $ch i32)
    (if (i32.eqz (local.get $cn)) (then (return (i64.const 0))))
    (local.set $ch (i32.load8_u (local.get $c)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eq (i32.load8_u (i32.add (local.get $s) (local.get $i))) (local.get $ch))
          (then (local.set $k (i64.add (local.get $k) (i64.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $k))

  (func (export "add_i32") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1)))

  ;; upper(s STRING) RETURNS STRING: ASCII upper case, in a new block.
  (func (export "upper") (param $s i32) (param $n i32) (result i64)
    (local $out i32) (local $i i32) (local $b i32)
    (local.set $out (call $alloc (local.get $n)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $b (i32.load8_u (i32.add (local.get $s) (local.get $i))))
        (if (i32.and (i32.ge_u (local.get $b) (i32.const 97)) (i32.le_u (local.get $b) (i32.const 122)))
          (then (local.set $b (i32.sub (local.get $b) (i32.const 32)))))
        (i32.store8 (i32.add (local.get $out) (local.get $i)) (local.get $b))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $pack (local.get $out) (local.get $n)))

  ;; null_if_negative(x BIGINT) RETURNS BIGINT
  (func (export "null_if_negative") (param $x i64) (result i64)
    (if (i64.lt_s (local.get $x) (i64.const 0)) (then (call $null)))
    (local.get $x))

  ;; nulls(a BIGINT, b STRING) RETURNS BIGINT CALLED ON NULL INPUT:
  ;; the NULL mask times 1000 plus a plus b's length.
  (func (export "nulls") (param $mask i32) (param $a i64) (param $p i32) (param $n i32) (result i64)
    (i64.add (i64.mul (i64.extend_i32_u (local.get $mask)) (i64.const 1000))
             (i64.add (local.get $a) (i64.extend_i32_u (local.get $n)))))

  ;; Every slot kind.
  (func (export "not") (param i32) (result i32) (i32.eqz (local.get 0)))
  (func (export "next_day") (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
  (func (export "plus_day") (param i64) (result i64) (i64.add (local.get 0) (i64.const 86400000000)))
  (func (export "double_it") (param i64) (result i64) (i64.mul (local.get 0) (i64.const 2)))
  (func (export "halve") (param f64) (result f32) (f32.demote_f64 (f64.mul (local.get 0) (f64.const 0.5))))
  (func (export "widen") (param f32) (result f64) (f64.promote_f32 (local.get 0)))
  (func (export "byte_len") (param i32 i32) (result i32) (local.get 1))
  (func (export "tiny") (param i32) (result i32) (local.get 0))

  ;; boom(x INT) RETURNS INT: traps when x is 0.
  (func (export "boom") (param $x i32) (result i32)
    (if (i32.eqz (local.get $x)) (then unreachable))
    (local.get $x))

  ;; spin(x INT) RETURNS INT: never returns.
  (func (export "spin") (param $x i32) (result i32)
    (loop $forever (br $forever))
    (local.get $x))

  ;; split(s STRING) RETURNS TABLE (word STRING, len INT): the words
  ;; between spaces.
  (func (export "split") (param $s i32) (param $n i32)
    (local $i i32) (local $start i32)
    (block $done
      (loop $next
        (if (i32.or (i32.eq (local.get $i) (local.get $n))
                    (i32.eq (i32.load8_u (i32.add (local.get $s) (local.get $i))) (i32.const 32)))
          (then
            (if (i32.gt_u (local.get $i) (local.get $start))
              (then
                (call $set_bytes (i32.const 0) (i32.add (local.get $s) (local.get $start)) (i32.sub (local.get $i) (local.get $start)))
                (call $set_i32 (i32.const 1) (i32.sub (local.get $i) (local.get $start)))
                (call $emit)))
            (local.set $start (i32.add (local.get $i) (i32.const 1)))))
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; my_avg(v BIGINT) RETURNS DOUBLE: accumulator (sum i64, count i64),
  ;; with retract and merge; NULL over no rows.
  (func (export "my_avg_create") (result i64)
    (local $p i32)
    (local.set $p (call $alloc (i32.const 16)))
    (i64.store (local.get $p) (i64.const 0))
    (i64.store offset=8 (local.get $p) (i64.const 0))
    (call $pack (local.get $p) (i32.const 16)))
  (func (export "my_avg_accumulate") (param $p i32) (param $n i32) (param $v i64) (result i64)
    (i64.store (local.get $p) (i64.add (i64.load (local.get $p)) (local.get $v)))
    (i64.store offset=8 (local.get $p) (i64.add (i64.load offset=8 (local.get $p)) (i64.const 1)))
    (call $pack (local.get $p) (local.get $n)))
  (func (export "my_avg_retract") (param $p i32) (param $n i32) (param $v i64) (result i64)
    (i64.store (local.get $p) (i64.sub (i64.load (local.get $p)) (local.get $v)))
    (i64.store offset=8 (local.get $p) (i64.sub (i64.load offset=8 (local.get $p)) (i64.const 1)))
    (call $pack (local.get $p) (local.get $n)))
  (func (export "my_avg_merge") (param $p i32) (param $n i32) (param $q i32) (param $m i32) (result i64)
    (i64.store (local.get $p) (i64.add (i64.load (local.get $p)) (i64.load (local.get $q))))
    (i64.store offset=8 (local.get $p) (i64.add (i64.load offset=8 (local.get $p)) (i64.load offset=8 (local.get $q))))
    (call $pack (local.get $p) (local.get $n)))
  (func (export "my_avg_get_value") (param $p i32) (param $n i32) (result f64)
    (if (i64.eqz (i64.load offset=8 (local.get $p)))
      (then (call $null) (return (f64.const 0))))
    (f64.div (f64.convert_i64_s (i64.load (local.get $p)))
             (f64.convert_i64_s (i64.load offset=8 (local.get $p)))))

  ;; longest(s STRING) RETURNS STRING: append-only (no retract, no
  ;; merge); the accumulator is the longest string so far, so it grows.
  (func (export "longest_create") (result i64)
    (call $pack (i32.const 0) (i32.const 0)))
  (func (export "longest_accumulate") (param $p i32) (param $n i32) (param $s i32) (param $sn i32) (result i64)
    (if (result i64) (i32.gt_u (local.get $sn) (local.get $n))
      (then (call $pack (local.get $s) (local.get $sn)))
      (else (call $pack (local.get $p) (local.get $n)))))
  (func (export "longest_get_value") (param $p i32) (param $n i32) (result i64)
    (call $pack (local.get $p) (local.get $n)))

  ;; ratio(a BIGINT, b BIGINT) aggregate whose get_value divides by the
  ;; sum of b: traps (integer divide by zero) when it is 0.
  (func (export "ratio_create") (result i64)
    (local $p i32)
    (local.set $p (call $alloc (i32.const 16)))
    (i64.store (local.get $p) (i64.const 0))
    (i64.store offset=8 (local.get $p) (i64.const 0))
    (call $pack (local.get $p) (i32.const 16)))
  (func (export "ratio_accumulate") (param $p i32) (param $n i32) (param $a i64) (param $b i64) (result i64)
    (i64.store (local.get $p) (i64.add (i64.load (local.get $p)) (local.get $a)))
    (i64.store offset=8 (local.get $p) (i64.add (i64.load offset=8 (local.get $p)) (local.get $b)))
    (call $pack (local.get $p) (local.get $n)))
  (func (export "ratio_get_value") (param $p i32) (param $n i32) (result i64)
    (i64.div_s (i64.load (local.get $p)) (i64.load offset=8 (local.get $p))))
)
