//! The conformance tool catalogue (conformance/CATALOGUE.md) as one `brain:tool@0.2.0` component,
//! in `#![no_std]` Rust with no crates: the second reference, beside examples/inspect-rust, for
//! anyone writing a binding by hand against contract/tool.wit.
//!
//! examples/inspect-rust/src/lib.rs explains the canonical ABI in full (how `run`'s record is
//! flattened into core parameters, the `retptr` layout of `result<u64, tool-error>`, who allocates
//! what); this file repeats only the one-line reminders next to the code that relies on them.
//!
//! How the catalogue fits one component: the invocation carries no tool name, so the conformance
//! runner places every catalogue tool on this one file with options `{"tool": <name>}` and `run`
//! dispatches on it. The runtime checks the input against the schema in conformance/catalogue.json
//! before `run` is called, so the JSON reader below only reads well-formed, schema-valid,
//! `JSON.stringify`-shaped text (no whitespace, keys without escapes).
//!
//! Waiting: `wasm32-unknown-unknown` has no clock of its own, so this component imports one WASI
//! function, `wasi:clocks/monotonic-clock@0.2.0#now` (the admission allows WASI clocks; see
//! conformance/component-rust/wit/). `run` is synchronous and has no signal: a wait is a loop over
//! the clock, and on a deadline or a cancel the runtime terminates the worker.
//!
//! Build: conformance/component-rust/build.ts (rustc for wasm32-unknown-unknown, then jco
//! componentEmbed against wit/ + contract/tool.wit, then componentNew).

#![no_std]

use core::arch::wasm32;

// ---------------------------------------------------------------------------------------------
// Allocation: a bump allocator over memory grown on demand, reset when `run` returns.
//
// The runtime reuses one instance for a binding's next invocation after a clean return, so
// everything allocated during a run (including the input strings the host placed with
// `cabi_realloc`) must be dead by the time `run` returns: resetting the bump pointer does that.

static mut HEAP_BASE: usize = 0;
static mut HEAP_NEXT: usize = 0;
static mut HEAP_END: usize = 0;
const PAGE: usize = 65536;

unsafe fn alloc(size: usize, align: usize) -> *mut u8 {
    if HEAP_NEXT == 0 {
        // Start after everything rustc laid out: the current end of memory.
        HEAP_BASE = wasm32::memory_size(0) * PAGE;
        HEAP_NEXT = HEAP_BASE;
        HEAP_END = HEAP_BASE;
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

/// The canonical ABI's allocator: the host calls it to place strings inside this instance (the
/// invocation's input and options, and the strings of a `tool-error` it returns).
#[no_mangle]
pub unsafe extern "C" fn cabi_realloc(old: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    // Growing the newest allocation in place keeps a doubling buffer from copying every time.
    if !old.is_null() && old as usize + old_size == HEAP_NEXT && old as usize + new_size <= HEAP_END {
        HEAP_NEXT = old as usize + new_size;
        return old;
    }
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
// Imports, flattened by the canonical ABI: a `string` is (ptr, len); an `option<string>` is
// (is_some, ptr, len); a function returning `result<..>` takes a trailing `retptr` where the host
// stores the result (layout in `Ret` below).

#[link(wasm_import_module = "brain:tool/host@0.2.0")]
extern "C" {
    #[link_name = "emit"]
    fn host_emit(kind_ptr: *const u8, kind_len: usize, data_ptr: *const u8, data_len: usize, ret: *mut u8);
    #[link_name = "emit-result"]
    fn host_emit_result(
        outcome_ptr: *const u8, outcome_len: usize,
        content_some: u32, content_ptr: *const u8, content_len: usize, ret: *mut u8,
    );
    #[link_name = "finish"]
    fn host_finish(
        outcome_some: u32, outcome_ptr: *const u8, outcome_len: usize,
        content_some: u32, content_ptr: *const u8, content_len: usize, ret: *mut u8,
    );
    #[link_name = "returned"]
    fn host_returned();
    #[link_name = "model"]
    fn host_model(request_ptr: *const u8, request_len: usize, ret: *mut u8);
}

#[link(wasm_import_module = "wasi:clocks/monotonic-clock@0.2.0")]
extern "C" {
    /// `now: func() -> instant` (instant = u64 nanoseconds): one core i64 result, no retptr.
    #[link_name = "now"]
    fn clock_now() -> u64;
}

/// A `tool-error` the host returned: `code` (e.g. `call_finished`, `budget_exceeded`) and
/// `message`, both in memory the host allocated through `cabi_realloc`.
struct ToolError {
    code: &'static [u8],
    #[allow(dead_code)]
    message: &'static [u8],
}

/// Where the host stores a `result<u64, tool-error>`: 24 bytes, 8-aligned. Byte 0 is the
/// discriminant (0 ok, 1 err); from byte 8 either the u64 or the tool-error's two strings
/// (code ptr @8, len @12, message ptr @16, len @20).
#[repr(C, align(8))]
struct Ret([u8; 24]);

impl Ret {
    fn new() -> Ret {
        Ret([0; 24])
    }
    unsafe fn read(&self) -> Result<u64, ToolError> {
        let base = self.0.as_ptr();
        if *base == 0 {
            return Ok(*(base.add(8) as *const u64));
        }
        let string = |at: usize| {
            let ptr = *(base.add(at) as *const u32) as *const u8;
            let len = *(base.add(at + 4) as *const u32) as usize;
            core::slice::from_raw_parts(ptr, len)
        };
        Err(ToolError { code: string(8), message: string(16) })
    }
}

/// Splits an `option<string>` into its three flattened core values.
fn opt(s: Option<&[u8]>) -> (u32, *const u8, usize) {
    match s {
        Some(s) => (1, s.as_ptr(), s.len()),
        None => (0, core::ptr::null(), 0),
    }
}

/// `emit(kind, data-json) -> result<u64, tool-error>`: the committed journal sequence.
fn emit(kind: &[u8], data: &[u8]) -> Result<u64, ToolError> {
    let mut ret = Ret::new();
    unsafe {
        host_emit(kind.as_ptr(), kind.len(), data.as_ptr(), data.len(), ret.0.as_mut_ptr());
        ret.read()
    }
}

/// `emit-result(outcome-json, content) -> result<u64, tool-error>`.
fn emit_result(outcome: &[u8], content: Option<&[u8]>) -> Result<u64, ToolError> {
    let mut ret = Ret::new();
    let (c_some, c_ptr, c_len) = opt(content);
    unsafe {
        host_emit_result(outcome.as_ptr(), outcome.len(), c_some, c_ptr, c_len, ret.0.as_mut_ptr());
        ret.read()
    }
}

/// `finish(outcome-json?, content?) -> result<u64, tool-error>`.
fn finish(outcome: Option<&[u8]>, content: Option<&[u8]>) -> Result<u64, ToolError> {
    let mut ret = Ret::new();
    let (o_some, o_ptr, o_len) = opt(outcome);
    let (c_some, c_ptr, c_len) = opt(content);
    unsafe {
        host_finish(o_some, o_ptr, o_len, c_some, c_ptr, c_len, ret.0.as_mut_ptr());
        ret.read()
    }
}

fn returned() {
    unsafe { host_returned() }
}

/// Where the host stores a `result<string, tool-error>`: 20 bytes, 4-aligned (every payload is
/// made of u32s). Byte 0 is the discriminant; from byte 4 either the string (ptr @4, len @8) or
/// the tool-error's two strings (code @4/@8, message @12/@16).
#[repr(C, align(4))]
struct RetString([u8; 20]);

/// `model(request-json) -> result<string, tool-error>`: the ModelResult JSON, or the host's refusal.
fn model(request: &[u8]) -> Result<&'static [u8], ToolError> {
    let mut ret = RetString([0; 20]);
    unsafe {
        host_model(request.as_ptr(), request.len(), ret.0.as_mut_ptr());
        let base = ret.0.as_ptr();
        let string = |at: usize| {
            let ptr = *(base.add(at) as *const u32) as *const u8;
            let len = *(base.add(at + 4) as *const u32) as usize;
            core::slice::from_raw_parts(ptr, len)
        };
        if *base == 0 { Ok(string(4)) } else { Err(ToolError { code: string(4), message: string(12) }) }
    }
}

/// Waits `ms` of wall time (capped at 60 s, as the JS catalogue component does). A synchronous
/// export cannot yield, so this spins on the clock; the runtime terminates the worker on a
/// deadline or a cancel, which ends the wait early.
fn wait(ms: i64) {
    let ms = if ms < 0 { 0 } else if ms > 60_000 { 60_000 } else { ms as u64 };
    let until = unsafe { clock_now() } + ms * 1_000_000;
    while unsafe { clock_now() } < until {}
}

// ---------------------------------------------------------------------------------------------
// Output: a growable byte buffer on the bump allocator, for building JSON as text.

struct Buf {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl Buf {
    fn new() -> Buf {
        Buf { ptr: unsafe { alloc(64, 1) }, len: 0, cap: 64 }
    }
    fn reserve(&mut self, more: usize) {
        if self.len + more > self.cap {
            let mut cap = self.cap * 2;
            while cap < self.len + more {
                cap *= 2;
            }
            self.ptr = unsafe { cabi_realloc(self.ptr, self.cap, 1, cap) };
            self.cap = cap;
        }
    }
    fn push(&mut self, b: u8) -> &mut Buf {
        self.reserve(1);
        unsafe { *self.ptr.add(self.len) = b };
        self.len += 1;
        self
    }
    fn s(&mut self, s: &[u8]) -> &mut Buf {
        self.reserve(s.len());
        unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), self.ptr.add(self.len), s.len()) };
        self.len += s.len();
        self
    }
    fn char(&mut self, c: char) -> &mut Buf {
        let mut tmp = [0u8; 4];
        self.s(c.encode_utf8(&mut tmp).as_bytes())
    }
    /// `s` as a JSON string literal (quotes added; `"`, `\` and control characters escaped).
    fn json_string(&mut self, s: &[u8]) -> &mut Buf {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.push(b'"');
        for &b in s {
            match b {
                b'"' => self.s(b"\\\""),
                b'\\' => self.s(b"\\\\"),
                0..=0x1f => self.s(b"\\u00").push(HEX[(b >> 4) as usize]).push(HEX[(b & 15) as usize]),
                _ => self.push(b),
            };
        }
        self.push(b'"')
    }
    fn int(&mut self, n: i64) -> &mut Buf {
        if n < 0 {
            self.push(b'-');
        }
        let mut n = n.unsigned_abs();
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.s(&digits[i..])
    }
    fn bytes(&self) -> &'static [u8] {
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// `{"status":"ok","value":` + value + `}`: the envelope ordinary data travels in (a component
/// sends Outcome envelopes, so even `{status:"done"}` data must be wrapped).
fn ok(value: &[u8]) -> &'static [u8] {
    Buf::new().s(b"{\"status\":\"ok\",\"value\":").s(value).push(b'}').bytes()
}

/// `{"status":"error","error":{"code":…,"message":…` + extra (raw `,"key":value` pairs) + `}}`.
fn error_with(code: &[u8], message: &[u8], extra: &[u8]) -> &'static [u8] {
    let mut b = Buf::new();
    b.s(b"{\"status\":\"error\",\"error\":{\"code\":").json_string(code);
    b.s(b",\"message\":").json_string(message).s(extra).s(b"}}");
    b.bytes()
}

fn error(code: &[u8], message: &[u8]) -> &'static [u8] {
    error_with(code, message, b"")
}

// ---------------------------------------------------------------------------------------------
// Input: a small JSON reader. It never builds a tree: `field` finds a top-level key of an object
// and returns the raw text of its value, which is then read as the type the schema promised
// (`as_int`, `as_bool`, `as_string`) or copied into the output unchanged (raw JSON stays valid
// JSON, so `echo` and `fail.details` need no decoding at all).

/// Index just past the JSON value starting at `s[i]` (a string, an object, an array or a scalar).
fn skip_value(s: &[u8], mut i: usize) -> usize {
    match s.get(i) {
        Some(b'"') => {
            i += 1;
            while i < s.len() && s[i] != b'"' {
                // A backslash escapes the next byte (for \uXXXX the XXXX are plain bytes anyway).
                i += if s[i] == b'\\' { 2 } else { 1 };
            }
            i + 1
        }
        Some(b'{') | Some(b'[') => {
            let mut depth = 0usize;
            while i < s.len() {
                match s[i] {
                    b'"' => {
                        i = skip_value(s, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i
        }
        // A number, true, false or null: up to the next delimiter.
        _ => {
            while i < s.len() && !matches!(s[i], b',' | b'}' | b']') {
                i += 1;
            }
            i
        }
    }
}

/// The raw text of top-level `key` in the object `s`, or None when the key is absent. Keys are
/// compared as raw bytes, which is exact for the catalogue's plain ASCII keys.
fn field(s: &'static [u8], key: &[u8]) -> Option<&'static [u8]> {
    if s.first() != Some(&b'{') {
        return None;
    }
    let mut i = 1;
    while s.get(i) == Some(&b'"') {
        let key_end = skip_value(s, i);
        let name = &s[i + 1..key_end - 1];
        let value_start = key_end + 1; // past the ':'
        let value_end = skip_value(s, value_start);
        if name == key {
            return Some(&s[value_start..value_end]);
        }
        if s.get(value_end) != Some(&b',') {
            return None;
        }
        i = value_end + 1;
    }
    None
}

/// A JSON integer (the schemas say `integer`, within ±2^53).
fn as_int(raw: Option<&[u8]>) -> i64 {
    let raw = match raw {
        Some(r) => r,
        None => return 0,
    };
    let (negative, digits) = match raw.first() {
        Some(b'-') => (true, &raw[1..]),
        _ => (false, raw),
    };
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            break; // JSON.stringify writes integers without fraction or exponent below 1e21
        }
        n = n * 10 + (d - b'0') as i64;
    }
    if negative { -n } else { n }
}

fn as_bool(raw: Option<&[u8]>) -> bool {
    raw == Some(b"true")
}

/// Decodes a JSON string literal into its characters (escapes resolved, surrogate pairs joined).
fn as_string(raw: &[u8]) -> impl Iterator<Item = char> + '_ {
    let body = &raw[1..raw.len() - 1];
    let mut i = 0;
    let hex4 = move |at: usize| -> u32 {
        let mut v = 0;
        for &h in &body[at..at + 4] {
            v = v * 16 + (h as char).to_digit(16).unwrap_or(0);
        }
        v
    };
    core::iter::from_fn(move || {
        let b = *body.get(i)?;
        if b != b'\\' {
            // One UTF-8 sequence; its length comes from the lead byte.
            let n = match b {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            let seq = &body[i..(i + n).min(body.len())];
            i += n;
            return core::str::from_utf8(seq).ok()?.chars().next();
        }
        let e = body[i + 1];
        i += 2;
        Some(match e {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let hi = hex4(i);
                i += 4;
                if (0xd800..0xdc00).contains(&hi) && body.get(i) == Some(&b'\\') && body.get(i + 1) == Some(&b'u') {
                    let lo = hex4(i + 2);
                    i += 6;
                    char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo.wrapping_sub(0xdc00) & 0x3ff)).unwrap_or('\u{fffd}')
                } else {
                    char::from_u32(hi).unwrap_or('\u{fffd}')
                }
            }
            other => other as char, // \" \\ \/
        })
    })
}

// ---------------------------------------------------------------------------------------------
// The catalogue. Each tool reads its (schema-checked) input and ends with `finish`, except the
// ones the catalogue says return or never finish. A `finish` that the runtime rejects (the call
// already ended by a deadline or a cancel) has nothing left to tell anyone, so its result is
// ignored with `let _`.

fn tool_echo(input: &'static [u8]) {
    let value = field(input, b"value").unwrap_or(b"null");
    let _ = finish(Some(ok(Buf::new().s(b"{\"value\":").s(value).push(b'}').bytes())), None);
}

fn tool_fail(input: &'static [u8]) {
    // code and message are copied as the raw JSON strings they arrived as; absent optional fields
    // stay absent.
    let mut b = Buf::new();
    b.s(b"{\"status\":\"error\",\"error\":{\"code\":").s(field(input, b"code").unwrap_or(b"\"\""));
    b.s(b",\"message\":").s(field(input, b"message").unwrap_or(b"\"\""));
    if let Some(r) = field(input, b"retryable") {
        b.s(b",\"retryable\":").s(r);
    }
    if let Some(d) = field(input, b"details") {
        b.s(b",\"details\":").s(d);
    }
    b.s(b"}}");
    let _ = finish(Some(b.bytes()), None);
}

fn tool_malformed(input: &'static [u8]) {
    let outcome: &[u8] = match field(input, b"variant") {
        Some(b"\"ok_without_value\"") => b"{\"status\":\"ok\"}",
        Some(b"\"error_without_code\"") => b"{\"status\":\"error\",\"error\":{\"message\":\"m\"}}",
        _ => b"{\"status\":\"timeout\",\"value\":1}", // timeout_with_value
    };
    let _ = finish(Some(outcome), None);
}

/// The nearest text that is not JSON for each kind a JavaScript value can be but JSON cannot;
/// Rust has none of these values, so the component sends the text and the runtime refuses it.
fn tool_not_json(input: &'static [u8]) {
    let v: &[u8] = match field(input, b"kind") {
        Some(b"\"undefined\"") => b"undefined",
        Some(b"\"nan\"") => b"NaN",
        Some(b"\"infinity\"") => b"Infinity",
        Some(b"\"bigint\"") => b"10n",
        Some(b"\"date\"") => b"new Date(0)",
        Some(b"\"map\"") => b"new Map([[\"a\",1]])",
        _ => b"new NotPlainData()", // class
    };
    let _ = finish(Some(ok(Buf::new().s(b"{\"v\":").s(v).push(b'}').bytes())), None);
}

fn tool_typed_output(input: &'static [u8]) {
    // The bad value fails the advertised output schema ({n: integer}) in the runtime.
    let value: &[u8] = if as_bool(field(input, b"good")) { b"{\"n\":1}" } else { b"{\"n\":\"one\"}" };
    let _ = finish(Some(ok(value)), None);
}

/// The runtime applies no defaults or transforms to component input (the JSON Schema carries the
/// default but cannot say "upper case"), so the guest does both, as the Zod schema would.
fn tool_defaults(input: &'static [u8]) {
    let mut b = Buf::new();
    b.s(b"{\"name\":").s(field(input, b"name").unwrap_or(b"\"\""));
    b.s(b",\"count\":").s(field(input, b"count").unwrap_or(b"1"));
    if let Some(shout) = field(input, b"shout") {
        let mut upper = Buf::new();
        for c in as_string(shout) {
            for u in c.to_uppercase() {
                upper.char(u);
            }
        }
        b.s(b",\"shout\":").json_string(upper.bytes());
    }
    b.push(b'}');
    let _ = finish(Some(ok(b.bytes())), None);
}

/// `strict` (extra properties refused by the runtime's schema check) and `strip` (extras allowed
/// by the schema, dropped here) both finish with just `{a}`.
fn tool_a_only(input: &'static [u8]) {
    let a = field(input, b"a").unwrap_or(b"\"\"");
    let _ = finish(Some(ok(Buf::new().s(b"{\"a\":").s(a).push(b'}').bytes())), None);
}

fn tool_emit_then_finish(input: &'static [u8]) {
    let mut seqs = Buf::new();
    for i in 0..as_int(field(input, b"count")) {
        match emit(b"progress", Buf::new().s(b"{\"i\":").int(i).push(b'}').bytes()) {
            Ok(seq) => {
                if i > 0 {
                    seqs.push(b',');
                }
                seqs.int(seq as i64);
            }
            Err(e) => {
                let _ = finish(Some(error(e.code, b"emit rejected")), None);
                return;
            }
        }
    }
    let _ = finish(Some(ok(Buf::new().s(b"{\"sequences\":[").s(seqs.bytes()).s(b"]}").bytes())), None);
}

fn tool_emit_after_finish() {
    let _ = finish(Some(ok(b"{\"done\":true}")), None);
    // Must be refused with call_finished; the refusal is the expected answer, so it is dropped.
    let _ = emit(b"late", b"{}");
}

fn tool_multi_result(input: &'static [u8]) {
    for i in 0..as_int(field(input, b"count")) {
        let _ = emit_result(ok(Buf::new().s(b"{\"i\":").int(i).push(b'}').bytes()), None);
    }
    let _ = finish(None, None); // no value: the results above are the call's results
}

fn tool_with_content(input: &'static [u8]) {
    let outcome = if as_bool(field(input, b"error")) { error(b"bad", b"bad") } else { ok(b"{\"v\":1}") };
    let _ = finish(Some(outcome), Some(b"model-facing text"));
}

fn tool_return_then_finish(input: &'static [u8]) {
    let _ = emit_result(ok(b"{\"phase\":\"returned\"}"), None);
    returned(); // the model loop goes on; this `run` keeps going in the background
    wait(as_int(field(input, b"delayMs")));
    let _ = finish(Some(ok(b"{\"phase\":\"finished\"}")), None);
}

fn tool_return_nothing(input: &'static [u8]) {
    returned();
    wait(as_int(field(input, b"delayMs")));
    let _ = finish(Some(ok(b"{\"late\":true}")), None);
}

/// Never finishes: the call stays open until the runtime ends it and terminates the worker.
fn tool_forget() {
    let _ = emit_result(ok(b"{\"forgot\":true}"), None);
    returned();
    wait(60_000);
}

/// `sleep` and `sleep_then_finish` are the same here: there is no signal to observe.
fn tool_sleep(input: &'static [u8], late: bool) {
    let ms = field(input, b"ms");
    wait(as_int(ms));
    let value = if late { ok(b"{\"late\":true}") } else { ok(Buf::new().s(b"{\"slept\":").s(ms.unwrap_or(b"0")).push(b'}').bytes()) };
    let _ = finish(Some(value), None);
}

fn tool_big_emit(input: &'static [u8]) {
    let bytes = as_int(field(input, b"bytes")).max(0) as usize;
    let mut data = Buf::new();
    data.s(b"{\"s\":\"");
    data.reserve(bytes + 2);
    for _ in 0..bytes {
        data.push(b'x');
    }
    data.s(b"\"}");
    let outcome = match emit(b"blob", data.bytes()) {
        Ok(_) => ok(b"{\"ok\":true}"),
        Err(e) => error(e.code, b"emit rejected"), // budget_exceeded, in the scenario
    };
    let _ = finish(Some(outcome), None);
}

/// The prompt and the model's `text` stay raw JSON string literals: copied, never decoded.
fn tool_ask_model(input: &'static [u8]) {
    let prompt = field(input, b"prompt").unwrap_or(b"\"\"");
    let mut request = Buf::new();
    request.s(b"{\"messages\":[{\"role\":\"user\",\"content\":").s(prompt).s(b"}]}");
    let outcome = match model(request.bytes()) {
        Ok(result) => {
            let text = field(result, b"text").unwrap_or(b"\"\"");
            ok(Buf::new().s(b"{\"text\":").s(text).push(b'}').bytes())
        }
        Err(e) => error(e.code, b"the model call failed"),
    };
    let _ = finish(Some(outcome), None);
}

fn dispatch(tool: &[u8], input: &'static [u8]) {
    match tool {
        b"echo" => tool_echo(input),
        b"fail" => tool_fail(input),
        b"reserved_data" => {
            // Business data that uses a reserved status travels inside an explicit ok.
            let _ = finish(Some(ok(b"{\"status\":\"error\",\"note\":\"business data\"}")), None);
        }
        b"other_status" => {
            // Not a reserved status: ordinary data, so the value of an ok envelope too.
            let _ = finish(Some(ok(b"{\"status\":\"done\",\"count\":2}")), None);
        }
        b"malformed" => tool_malformed(input),
        b"not_json" => tool_not_json(input),
        b"typed_output" => tool_typed_output(input),
        b"typed_error" => {
            // Non-success outcomes skip output validation.
            let _ = finish(Some(error(b"nope", b"m")), None);
        }
        b"defaults" => tool_defaults(input),
        b"strict" | b"strip" => tool_a_only(input),
        b"emit_then_finish" => tool_emit_then_finish(input),
        b"emit_after_finish" => tool_emit_after_finish(),
        b"multi_result" => tool_multi_result(input),
        b"with_content" => tool_with_content(input),
        b"return_then_finish" => tool_return_then_finish(input),
        b"return_nothing" => tool_return_nothing(input),
        b"forget" => tool_forget(),
        b"sleep" => tool_sleep(input, false),
        b"sleep_then_finish" => tool_sleep(input, true),
        b"big_emit" => tool_big_emit(input),
        b"ask_model" => tool_ask_model(input),
        _ => {
            // A tool this component does not implement fails clearly, naming it.
            let mut m = Buf::new();
            m.s(b"the Rust catalogue component has no catalogue tool ").s(tool);
            let _ = finish(Some(error(b"not_registered", m.bytes())), None);
        }
    }
}

/// `export run: func(invocation: invocation)`. The record
/// `{input: string, options: string, descriptor: option<string>, deadline-at-ms: u64}` flattens
/// to these 8 core parameters; the host placed the strings with our `cabi_realloc`.
#[no_mangle]
pub unsafe extern "C" fn run(
    input_ptr: *const u8, input_len: usize,
    options_ptr: *const u8, options_len: usize,
    _descriptor_some: u32, _descriptor_ptr: *const u8, _descriptor_len: usize,
    _deadline_at_ms: u64,
) {
    let input = core::slice::from_raw_parts(input_ptr, input_len);
    let options = core::slice::from_raw_parts(options_ptr, options_len);
    // options = {"tool":"<name>"}: the raw string minus its quotes is the name (plain ASCII).
    let tool = match field(options, b"tool") {
        Some(raw) if raw.len() >= 2 => &raw[1..raw.len() - 1],
        _ => b"(none)".as_slice(),
    };
    dispatch(tool, input);
    // Everything allocated for this invocation is dead now: the next one starts from the base.
    HEAP_NEXT = HEAP_BASE;
}
