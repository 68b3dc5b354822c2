;; A tool whose world imports wasi:sockets (as a libc or language runtime built for WASI 0.2 does)
;; and one WASI interface the runtime does not know (wasi:example/unlisted). The input's "op" picks
;; what it calls (its first letter, at byte 7 of {"op":"..."}):
;;   none   calls nothing (the imports are there, unused)
;;   tcp    wasi:sockets/tcp-create-socket create-tcp-socket(ipv4)
;;   udp    wasi:sockets/udp-create-socket create-udp-socket(ipv4)
;;   dns    wasi:sockets/ip-name-lookup resolve-addresses(instance-network(), "example.com")
;;   http   wasi:http/outgoing-handler handle(new outgoing-request(new fields()), none)
;;   x      wasi:example/unlisted ping (no error value in its WIT: the runtime traps)
;; and finishes with {"op":"<letter>","tag":<0 ok | 1 err>,"code":"<error-code index, 2 digits>"}.
(module
  (import "brain:tool/host@0.2.0" "finish" (func $finish (param i32 i32 i32 i32 i32 i32 i32)))
  (import "wasi:sockets/instance-network@0.2.0" "instance-network" (func $instance_network (result i32)))
  (import "wasi:sockets/ip-name-lookup@0.2.0" "resolve-addresses" (func $resolve (param i32 i32 i32 i32)))
  (import "wasi:sockets/tcp-create-socket@0.2.0" "create-tcp-socket" (func $create_tcp (param i32 i32)))
  (import "wasi:sockets/udp-create-socket@0.2.0" "create-udp-socket" (func $create_udp (param i32 i32)))
  (import "wasi:example/unlisted@0.2.0" "ping" (func $ping (result i32)))
  (import "wasi:http/types@0.2.0" "[constructor]fields" (func $new_fields (result i32)))
  (import "wasi:http/types@0.2.0" "[constructor]outgoing-request" (func $new_request (param i32) (result i32)))
  (import "wasi:http/outgoing-handler@0.2.0" "handle" (func $handle (param i32 i32 i32 i32)))
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
  ;; 54 bytes at 16: the op letter at 46, the tag digit at 55, the code's two digits at 65-66.
  (data (i32.const 16) "{\"status\":\"ok\",\"value\":{\"op\":\"n\",\"tag\":0,\"code\":\"00\"}}")
  (data (i32.const 128) "example.com")
  ;; The result<own<_>, error-code> of a call: discriminant byte at 512, payload at 516 (for
  ;; wasi:http's error-code, its case index is the byte at 516 too: its payloads align to 4 here).
  (func $report
    (local $code i32)
    (i32.store8 (i32.const 55) (i32.add (i32.const 48) (i32.load8_u (i32.const 512))))
    (local.set $code (i32.load8_u (i32.const 516)))
    (if (i32.eqz (i32.load8_u (i32.const 512))) (then (local.set $code (i32.const 0))))
    (i32.store8 (i32.const 65) (i32.add (i32.const 48) (i32.div_u (local.get $code) (i32.const 10))))
    (i32.store8 (i32.const 66) (i32.add (i32.const 48) (i32.rem_u (local.get $code) (i32.const 10)))))
  (func (export "run") (param $in i32) (param i32 i32 i32 i32 i32 i32 i64)
    (local $op i32)
    (local.set $op (i32.load8_u (i32.add (local.get $in) (i32.const 7))))
    (i32.store8 (i32.const 46) (local.get $op))
    ;; Clear the previous call's result (the instance is reused): no result, tag 0, code "00".
    (i64.store (i32.const 512) (i64.const 0))
    (i32.store8 (i32.const 55) (i32.const 48))
    (i32.store8 (i32.const 65) (i32.const 48))
    (i32.store8 (i32.const 66) (i32.const 48))
    (if (i32.eq (local.get $op) (i32.const 116)) ;; t
      (then (call $create_tcp (i32.const 0) (i32.const 512)) (call $report)))
    (if (i32.eq (local.get $op) (i32.const 117)) ;; u
      (then (call $create_udp (i32.const 0) (i32.const 512)) (call $report)))
    (if (i32.eq (local.get $op) (i32.const 100)) ;; d
      (then (call $resolve (call $instance_network) (i32.const 128) (i32.const 11) (i32.const 512)) (call $report)))
    (if (i32.eq (local.get $op) (i32.const 104)) ;; h
      (then (call $handle (call $new_request (call $new_fields)) (i32.const 0) (i32.const 0) (i32.const 512)) (call $report)))
    (if (i32.eq (local.get $op) (i32.const 120)) ;; x
      (then (i32.store (i32.const 516) (call $ping)) (call $report)))
    ;; finish(some(outcome), none, retptr=256)
    (call $finish (i32.const 1) (i32.const 16) (i32.const 54) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 256))))
