//! The `inspect` tool as a `brain:tool@0.2.0` component, in `#![no_std]` Rust with no crates.
//!
//! This file is the reference for third-party binding implementers: it speaks the WebAssembly
//! Component Model canonical ABI by hand, against `contract/tool.wit`, with nothing generated.
//! Build (see scripts/build-components.mjs):
//!
//!   /usr/bin/rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -O \
//!       -C panic=abort -o inspect.core.wasm src/lib.rs
//!   then `componentEmbed({ binary, witSource: tool.wit, world: "tool" })` and `componentNew(...)`.
//!
//! What the tool does: the pure `wasm32-unknown-unknown` target has no WASI, so this guest has no
//! filesystem. It inspects the *path string*: it emits an `inspect_started` event (and gets back
//! the committed journal sequence), then finishes with
//! `{"path", "depth", "segments": [first `depth` segments], "eventSequence"}`.
//! The JS example (examples/inspect-js) does the real filesystem reading through WASI preopens.
//!
//! ## The canonical ABI in 60 lines
//!
//! Core wasm only has i32/i64/f32/f64. The component model "flattens" every WIT type into such
//! values ("lowering" = component value -> core values/memory, "lifting" = the reverse):
//!
//! * `string`  = (ptr: i32, len: i32), UTF-8 bytes in linear memory. `len` counts bytes.
//! * `u64`     = i64.   `enum level` = i32 (case index: debug=0, info=1, warn=2, error=3).
//! * `option<string>` = (discriminant: i32 [0 = none, 1 = some], ptr: i32, len: i32); when none,
//!   ptr/len are ignored (we pass 0).
//! * `record` = its fields flattened in order.
//!
//! Export `run: func(invocation: invocation)`: the record
//! `{input: string, options: string, descriptor: option<string>, deadline-at-ms: u64}` flattens
//! to 8 core params (<= 16, so they are passed directly):
//!   `run(input_ptr, input_len, options_ptr, options_len, desc_is_some, desc_ptr, desc_len, deadline: i64)`
//! The *host* allocates those strings inside our memory by calling our exported
//! `cabi_realloc(old_ptr, old_size, align, new_size) -> ptr` and copying bytes in. We own them.
//!
//! Imports from module `brain:tool/host@0.2.0`. A function whose flattened results are more than
//! one core value (every `result<..>` here) instead takes one extra trailing i32 param, `retptr`:
//! a pointer to guest memory where the host *stores* the result in its memory layout:
//!
//! * `result<u64, tool-error>`: size 24, align 8.
//!     offset 0: u8 discriminant (0 = ok, 1 = err)
//!     offset 8: ok  -> u64 (the committed journal sequence)
//!               err -> tool-error { code: string @8 (ptr i32 @8, len i32 @12),
//!                                   message: string @16 (ptr @16, len @20) }
//!   (the payload starts at 8 because the widest case, u64, is 8-aligned.)
//! * `result<string, tool-error>`: size 20, align 4.
//!     offset 0: u8 discriminant; offset 4: ok -> string (ptr @4, len @8);
//!     err -> tool-error (code ptr @4, len @8, message ptr @12, len @16).
//!   Strings the host returns are allocated with our `cabi_realloc` too.
//!
//! So the core import signatures are:
//!   emit(kind_ptr, kind_len, data_ptr, data_len, retptr)
//!   emit-result(outcome_ptr, outcome_len, content_is_some, content_ptr, content_len, retptr)
//!   finish(outcome_is_some, outcome_ptr, outcome_len, content_is_some, content_ptr, content_len, retptr)
//!   returned()
//!   model(request_ptr, request_len, retptr)
//!   telemetry(level, message_ptr, message_len)
//!
//! Memory: the component must export `memory` (rustc does) and `cabi_realloc`. Since `run`
//! returns nothing, no `cabi_post_run` is needed.
//!
//! Instance lifetime: the runtime keeps one warm instance per binding worker and reuses it for the
//! binding's next invocation after a clean return (a trap retires it). So globals survive between
//! invocations of one binding, and whatever `run` allocates must be released by the time it
//! returns. Here that is one line: the bump allocator is reset to its base when `run` returns
//! (the input strings the host placed with `cabi_realloc` belong to the call, too).

#![no_std]

use core::arch::wasm32;

// ---------------------------------------------------------------------------------------------
// Allocation: a bump allocator over memory grown on demand.

static mut HEAP_BASE: usize = 0;
static mut HEAP_NEXT: usize = 0;
static mut HEAP_END: usize = 0;
const PAGE: usize = 65536;

unsafe fn alloc(size: usize, align: usize) -> *mut u8 {
    if HEAP_NEXT == 0 {
        // Start after everything rustc laid out: the current end of memory.
        HEAP_BASE = wasm32::memory_size(0) * PAGE;
        HEAP_NEXT = HEAP_BASE;
        HEAP_END = HEAP_NEXT;
    }
    let start = (HEAP_NEXT + align - 1) & !(align - 1);
    let end = start + size;
    if end > HEAP_END {
        let pages = (end - HEAP_END + PAGE - 1) / PAGE;
        if wasm32::memory_grow(0, pages) == usize::MAX {
            wasm32::unreachable();
        }
        HEAP_END += pages * PAGE;
    }
    HEAP_NEXT = end;
    start as *mut u8
}

/// The canonical ABI's allocator: the host calls it to place strings inside this instance.
#[no_mangle]
pub unsafe extern "C" fn cabi_realloc(old: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    let p = alloc(new_size, align);
    if !old.is_null() && old_size > 0 {
        core::ptr::copy_nonoverlapping(old, p, if old_size < new_size { old_size } else { new_size });
    }
    p
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    wasm32::unreachable()
}

// ---------------------------------------------------------------------------------------------
// The imports, exactly as the canonical ABI flattens them (see the header).

#[link(wasm_import_module = "brain:tool/host@0.2.0")]
extern "C" {
    #[link_name = "emit"]
    fn host_emit(kind_ptr: *const u8, kind_len: usize, data_ptr: *const u8, data_len: usize, ret: *mut u8);
    #[link_name = "finish"]
    fn host_finish(
        outcome_some: u32, outcome_ptr: *const u8, outcome_len: usize,
        content_some: u32, content_ptr: *const u8, content_len: usize, ret: *mut u8,
    );
    #[link_name = "telemetry"]
    fn host_telemetry(level: u32, msg_ptr: *const u8, msg_len: usize);
}

/// Storage for a `result<u64, tool-error>` the host writes into: 24 bytes, 8-aligned.
#[repr(C, align(8))]
struct RetU64([u8; 24]);

/// Reads a lifted `result<u64, tool-error>`: Ok(sequence) or Err((code, message)).
unsafe fn read_result_u64(r: &RetU64) -> Result<u64, (&'static [u8], &'static [u8])> {
    let base = r.0.as_ptr();
    if *base == 0 {
        Ok(*(base.add(8) as *const u64))
    } else {
        let code = core::slice::from_raw_parts(*(base.add(8) as *const u32) as *const u8, *(base.add(12) as *const u32) as usize);
        let msg = core::slice::from_raw_parts(*(base.add(16) as *const u32) as *const u8, *(base.add(20) as *const u32) as usize);
        Err((code, msg))
    }
}

fn emit(kind: &[u8], data: &[u8]) -> Result<u64, (&'static [u8], &'static [u8])> {
    let mut ret = RetU64([0; 24]);
    unsafe {
        host_emit(kind.as_ptr(), kind.len(), data.as_ptr(), data.len(), ret.0.as_mut_ptr());
        read_result_u64(&ret)
    }
}

fn finish(outcome: &[u8]) -> Result<u64, (&'static [u8], &'static [u8])> {
    let mut ret = RetU64([0; 24]);
    unsafe {
        host_finish(1, outcome.as_ptr(), outcome.len(), 0, core::ptr::null(), 0, ret.0.as_mut_ptr());
        read_result_u64(&ret)
    }
}

fn telemetry(level: u32, msg: &[u8]) {
    unsafe { host_telemetry(level, msg.as_ptr(), msg.len()) }
}

// ---------------------------------------------------------------------------------------------
// A growable byte buffer on the bump allocator, for building JSON.

struct Buf {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl Buf {
    fn new() -> Buf {
        Buf { ptr: unsafe { alloc(256, 1) }, len: 0, cap: 256 }
    }
    fn push(&mut self, b: u8) {
        if self.len == self.cap {
            self.ptr = unsafe { cabi_realloc(self.ptr, self.len, 1, self.cap * 2) };
            self.cap *= 2;
        }
        unsafe { *self.ptr.add(self.len) = b };
        self.len += 1;
    }
    fn extend(&mut self, s: &[u8]) {
        for &b in s {
            self.push(b);
        }
    }
    fn json_string(&mut self, s: &[u8]) {
        self.push(b'"');
        for &b in s {
            match b {
                b'"' => self.extend(b"\\\""),
                b'\\' => self.extend(b"\\\\"),
                0..=0x1f => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.extend(b"\\u00");
                    self.push(HEX[(b >> 4) as usize]);
                    self.push(HEX[(b & 15) as usize]);
                }
                _ => self.push(b),
            }
        }
        self.push(b'"');
    }
    fn number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = 20;
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.extend(&digits[i..]);
    }
    fn bytes(&self) -> &'static [u8] {
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

// ---------------------------------------------------------------------------------------------
// Just enough JSON reading: the runtime hands us `JSON.stringify` output of schema-checked values.

struct Json<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Json<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\n' | b'\r' | b'\t') {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.i < self.s.len() && self.s[self.i] == c {
            self.i += 1;
            true
        } else {
            false
        }
    }
    /// A string, decoded into a fresh buffer (escapes resolved; \u kept for non-ASCII BMP).
    fn string(&mut self) -> Option<Buf> {
        if !self.eat(b'"') {
            return None;
        }
        let mut out = Buf::new();
        while self.i < self.s.len() {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                b'"' => return Some(out),
                b'\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let mut v: u32 = 0;
                            for _ in 0..4 {
                                let h = *self.s.get(self.i)?;
                                self.i += 1;
                                v = v * 16 + (h as char).to_digit(16)?;
                            }
                            // Encode the code unit as UTF-8 (surrogate pairs are not joined).
                            let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                            let mut tmp = [0u8; 4];
                            out.extend(ch.encode_utf8(&mut tmp).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                _ => out.push(c),
            }
        }
        None
    }
    fn skip_value(&mut self) -> Option<()> {
        self.ws();
        match *self.s.get(self.i)? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                while self.i < self.s.len() {
                    match self.s[self.i] {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                return None;
            }
            _ => {
                while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b'}' | b']') {
                    self.i += 1;
                }
            }
        }
        Some(())
    }
    fn uint(&mut self) -> Option<u64> {
        self.ws();
        let start = self.i;
        let mut v: u64 = 0;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            v = v.checked_mul(10)?.checked_add((self.s[self.i] - b'0') as u64)?;
            self.i += 1;
        }
        if self.i == start { None } else { Some(v) }
    }
    /// Positions the reader at the value of top-level `key`; false when absent.
    fn find(&mut self, key: &[u8]) -> bool {
        self.i = 0;
        if !self.eat(b'{') {
            return false;
        }
        loop {
            let k = match self.string() {
                Some(k) => k,
                None => return false,
            };
            if !self.eat(b':') {
                return false;
            }
            if k.bytes() == key {
                return true;
            }
            if self.skip_value().is_none() || !self.eat(b',') {
                return false;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tool.

unsafe fn str_arg(ptr: *const u8, len: usize) -> &'static [u8] {
    core::slice::from_raw_parts(ptr, len)
}

fn finish_error(code: &[u8], message: &[u8]) {
    let mut o = Buf::new();
    o.extend(b"{\"status\":\"error\",\"error\":{\"code\":");
    o.json_string(code);
    o.extend(b",\"message\":");
    o.json_string(message);
    o.extend(b"}}");
    let _ = finish(o.bytes());
}

/// `export run: func(invocation: invocation)`, flattened (see the header).
#[no_mangle]
pub unsafe extern "C" fn run(
    input_ptr: *const u8, input_len: usize,
    options_ptr: *const u8, options_len: usize,
    descriptor_some: u32, descriptor_ptr: *const u8, descriptor_len: usize,
    deadline_at_ms: u64,
) {
    inspect(input_ptr, input_len, options_ptr, options_len, descriptor_some, descriptor_ptr, descriptor_len, deadline_at_ms);
    // Everything allocated for this invocation is dead now: the next one starts from the base.
    // (Memory already grown stays grown; the next calls reuse it.)
    HEAP_NEXT = HEAP_BASE;
}

unsafe fn inspect(
    input_ptr: *const u8, input_len: usize,
    options_ptr: *const u8, options_len: usize,
    _descriptor_some: u32, _descriptor_ptr: *const u8, _descriptor_len: usize,
    _deadline_at_ms: u64,
) {
    let input = str_arg(input_ptr, input_len);
    let options = str_arg(options_ptr, options_len);

    let mut j = Json { s: input, i: 0 };
    let path = match if j.find(b"path") { j.string() } else { None } {
        Some(p) => p,
        None => return finish_error(b"bad_input", b"input has no string `path`"),
    };
    let mut o = Json { s: options, i: 0 };
    let depth = if o.find(b"depth") { o.uint().unwrap_or(1) } else { 1 };

    telemetry(0, b"inspect-rust: run started");

    let mut data = Buf::new();
    data.extend(b"{\"path\":");
    data.json_string(path.bytes());
    data.push(b'}');
    let sequence = match emit(b"inspect_started", data.bytes()) {
        Ok(s) => s,
        Err((code, msg)) => return finish_error(code, msg),
    };

    // {"status":"ok","value":{"path":..,"depth":..,"segments":[..],"eventSequence":..}}
    let mut out = Buf::new();
    out.extend(b"{\"status\":\"ok\",\"value\":{\"path\":");
    out.json_string(path.bytes());
    out.extend(b",\"depth\":");
    out.number(depth);
    out.extend(b",\"segments\":[");
    let mut taken = 0u64;
    for seg in path.bytes().split(|&b| b == b'/') {
        if seg.is_empty() || seg == b"." {
            continue;
        }
        if taken == depth {
            break;
        }
        if taken > 0 {
            out.push(b',');
        }
        out.json_string(seg);
        taken += 1;
    }
    out.extend(b"],\"eventSequence\":");
    out.number(sequence);
    out.extend(b"}}");
    let _ = finish(out.bytes());
}
