;; Returns from run without calling finish: the runtime ends the call as error/tool_error.
(module
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
  (func (export "run") (param i32 i32 i32 i32 i32 i32 i32 i64)))
