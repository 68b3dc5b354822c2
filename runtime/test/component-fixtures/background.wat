;; Calls returned() first, then emits a result and finishes: the synchronous phase ends before
;; run does. Also returns the input unchanged as the result value.
(module
  (import "brain:tool/host@0.2.0" "returned" (func $returned))
  (import "brain:tool/host@0.2.0" "emit-result" (func $emit_result (param i32 i32 i32 i32 i32 i32)))
  (import "brain:tool/host@0.2.0" "finish" (func $finish (param i32 i32 i32 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 4096))
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
  (data (i32.const 16) "{\"status\":\"ok\",\"value\":{\"later\":true}}")
  (data (i32.const 128) "later")
  (func (export "run") (param i32 i32 i32 i32 i32 i32 i32 i64)
    (call $returned)
    ;; emit-result(outcome, some("later"), retptr=256)
    (call $emit_result (i32.const 16) (i32.const 38) (i32.const 1) (i32.const 128) (i32.const 5) (i32.const 256))
    ;; finish(none, none, retptr=256)
    (call $finish (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 256))))
