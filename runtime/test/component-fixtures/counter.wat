;; Keeps state in a global across invocations: finishes with {"n": <runs of this instance>}.
;; Shows that a binding's warm instance is reused after a clean return, and that another binding
;; (or a retired worker's successor) starts from a fresh instance. Counts up to 9 (one digit).
(module
  (import "brain:tool/host@0.2.0" "finish" (func $finish (param i32 i32 i32 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 4096))
  (global $runs (mut i32) (i32.const 0))
  ;; cabi_realloc(old, old_size, align, new_size): a bump allocator that never frees (a fixture).
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                           (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
    (global.set $next (i32.add (local.get $p) (local.get 3)))
    (block $ok (loop $grow
      (br_if $ok (i32.le_u (global.get $next) (i32.mul (memory.size) (i32.const 65536))))
      (drop (memory.grow (i32.const 1)))
      (br $grow)))
    (local.get $p))
  ;; {"status":"ok","value":{"n":0}} with the digit at offset 16 + 28 = 44.
  (data (i32.const 16) "{\"status\":\"ok\",\"value\":{\"n\":0}}")
  (func (export "run") (param i32 i32 i32 i32 i32 i32 i32 i64)
    (global.set $runs (i32.add (global.get $runs) (i32.const 1)))
    (i32.store8 (i32.const 44) (i32.add (i32.const 48) (global.get $runs)))
    ;; finish(some(outcome), none, retptr=256)
    (call $finish (i32.const 1) (i32.const 16) (i32.const 31) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 256))))
