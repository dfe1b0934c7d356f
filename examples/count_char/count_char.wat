;; count_char: Nexmark q14's user function. It counts the bytes of s equal
;; to the first byte of c (so an ASCII character counts as itself), and is
;; 0 for a NULL s, as the published CountChar does: Flink calls it with
;; NULL arguments, so it is declared CALLED ON NULL INPUT and takes the
;; mask of NULL arguments first.
;;
;;   CREATE FUNCTION count_char(s STRING, c STRING) RETURNS BIGINT
;;   CALLED ON NULL INPUT
;;   AS 'count_char' LANGUAGE WASM USING JAR 'file:///path/count_char.wasm';
;;
;; Strings arrive as (pointer, length) in this module's memory, in a block
;; the host got from sluice_alloc.
(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))

  ;; sluice_alloc gives the host a block to pass strings in. The host asks
  ;; rarely (once, then when an argument outgrows the block), so a bump
  ;; allocator does.
  (func (export "sluice_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p (global.get $heap))
    (local.set $end (i32.and (i32.add (i32.add (local.get $p) (local.get $n)) (i32.const 7)) (i32.const -8)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (local.get $have)) (i32.const 16)) (i32.const 1)))
                    (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $heap (local.get $end))
    (local.get $p))

  ;; count_char(nulls, s, c): nulls has bit 0 set when s is NULL, bit 1
  ;; when c is.
  (func (export "count_char") (param $nulls i32) (param $s i32) (param $n i32) (param $c i32) (param $cn i32) (result i64)
    (local $chr i32) (local $end i32) (local $count i64)
    (if (i32.or (i32.ne (local.get $nulls) (i32.const 0)) (i32.eqz (local.get $cn)))
      (then (return (i64.const 0))))
    (local.set $chr (i32.load8_u (local.get $c)))
    (local.set $end (i32.add (local.get $s) (local.get $n)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $s) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $s)) (local.get $chr))
          (then (local.set $count (i64.add (local.get $count) (i64.const 1)))))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $next)))
    (local.get $count))
)
