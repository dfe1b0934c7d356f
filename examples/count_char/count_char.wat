;; count_char(s STRING, c STRING) RETURNS BIGINT: how many times the first
;; character of c occurs in s, as Nexmark q14's CountChar does. Strings
;; arrive as (pointer, length) in this module's memory, in UTF-8; the
;; character is matched as its UTF-8 bytes.
;;
;;   CREATE FUNCTION count_char(s STRING, c STRING) RETURNS BIGINT
;;   AS 'count_char' LANGUAGE WASM USING JAR 'file:///path/count_char.wasm';
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

  ;; charLen is the length of the UTF-8 sequence that starts with byte b.
  (func $charLen (param $b i32) (result i32)
    (if (i32.lt_u (local.get $b) (i32.const 0xc0)) (then (return (i32.const 1))))
    (if (i32.lt_u (local.get $b) (i32.const 0xe0)) (then (return (i32.const 2))))
    (if (i32.lt_u (local.get $b) (i32.const 0xf0)) (then (return (i32.const 3))))
    (i32.const 4))

  ;; matches reports whether the m bytes at c occur at s+i (within n).
  (func $matches (param $s i32) (param $n i32) (param $i i32) (param $c i32) (param $m i32) (result i32)
    (local $k i32)
    (if (i32.gt_u (i32.add (local.get $i) (local.get $m)) (local.get $n)) (then (return (i32.const 0))))
    (block $no
      (loop $next
        (br_if $no (i32.ge_u (local.get $k) (local.get $m)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $s) (i32.add (local.get $i) (local.get $k))))
                    (i32.load8_u (i32.add (local.get $c) (local.get $k))))
          (then (return (i32.const 0))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  (func (export "count_char") (param $s i32) (param $n i32) (param $c i32) (param $cn i32) (result i64)
    (local $m i32) (local $i i32) (local $count i64) (local $first i32)
    (if (i32.eqz (local.get $cn)) (then (return (i64.const 0))))
    (local.set $m (call $charLen (i32.load8_u (local.get $c))))
    (if (i32.gt_u (local.get $m) (local.get $cn)) (then (local.set $m (local.get $cn))))
    (local.set $first (i32.load8_u (local.get $c)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eq (i32.load8_u (i32.add (local.get $s) (local.get $i))) (local.get $first))
          (then
            (if (call $matches (local.get $s) (local.get $n) (local.get $i) (local.get $c) (local.get $m))
              (then (local.set $count (i64.add (local.get $count) (i64.const 1)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $count))
)
