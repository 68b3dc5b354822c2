;; Writes "guest panicked: <input JSON>\n" to stderr, then traps (`unreachable`): what a Rust panic
;; or an uncaught Python exception looks like from outside.
(module
  (import "wasi:cli/stderr@0.2.0" "get-stderr" (func $get_stderr (result i32)))
  (import "wasi:io/streams@0.2.0" "[method]output-stream.blocking-write-and-flush" (func $write (param i32 i32 i32 i32)))
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
  (data (i32.const 16) "guest panicked: ")
  (data (i32.const 48) "\n")
  (func (export "run") (param $in i32) (param $len i32) (param i32 i32 i32 i32 i32 i64)
    (local $err i32)
    (local.set $err (call $get_stderr))
    (call $write (local.get $err) (i32.const 16) (i32.const 16) (i32.const 512))
    (call $write (local.get $err) (local.get $in) (local.get $len) (i32.const 512))
    (call $write (local.get $err) (i32.const 48) (i32.const 1) (i32.const 512))
    unreachable))
