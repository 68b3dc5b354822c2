;; Finishes with an outcome that is not JSON: the runtime must record error/invalid_output.
(module
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
  (data (i32.const 16) "not json")
  (func (export "run") (param i32 i32 i32 i32 i32 i32 i32 i64)
    ;; finish(some("not json"), none, retptr=64)
    (call $finish (i32.const 1) (i32.const 16) (i32.const 8) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 64))))
