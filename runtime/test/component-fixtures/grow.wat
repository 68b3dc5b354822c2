;; Grows its linear memory without bound, 1 MiB at a time, and traps (like a real allocator that
;; runs out) when memory.grow fails. With the runtime's linear memory cap (BRAIN_COMPONENT_MEMORY_MB)
;; the grow fails at the cap and the call ends as error/tool_error naming the limit.
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
  (func (export "run") (param i32 i32 i32 i32 i32 i32 i32 i64)
    (loop $more
      (if (i32.eq (memory.grow (i32.const 16)) (i32.const -1)) (then unreachable))
      (br $more))))
