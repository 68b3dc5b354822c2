/**
 * Caps the linear memories of a core wasm module by rewriting their limits in the binary.
 *
 * V8's worker resourceLimits bound only the JS heap; a guest's linear memory grows outside it up
 * to wasm32's 4 GiB. Setting `max` on every memory the module defines makes `memory.grow` past the
 * cap return -1 inside the guest (its allocator then fails or traps), so the cap holds without any
 * cooperation from the guest.
 *
 * Binary format (https://webassembly.github.io/spec/core/binary/modules.html): the 8-byte
 * preamble, then sections `id:u8 size:u32(LEB128) contents`. Section 5 (memory) is
 * `vec(limits)`; section 2 (import) is `vec(module:name field:name desc)` where a memory import's
 * desc is `0x02 limits`. Limits: `flags:u8 min:LEB [max:LEB]`, flags bit 0 = has max, bit 1 =
 * shared, bit 2 = 64-bit indices (then min/max are u64 LEBs).
 *
 * Defined memories get `max = min(max, cap)`. Imported memories are left unbounded or lowered to
 * the cap: an import without max accepts any memory, and every memory comes from some module's
 * definition, which is capped itself. A module whose initial size already exceeds the cap is
 * refused (MemoryCapError) rather than instantiated.
 */

export const WASM_PAGE_BYTES = 65536;

export class MemoryCapError extends Error {
  readonly code = "memory_limit";
}

interface Limits {
  flags: number;
  min: bigint;
  max: bigint | undefined;
}

class Reader {
  constructor(
    readonly b: Uint8Array,
    public i: number,
  ) {}
  byte(): number {
    if (this.i >= this.b.length) throw new MemoryCapError("truncated wasm module");
    return this.b[this.i++]!;
  }
  leb(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new MemoryCapError("malformed LEB128 in wasm module");
    }
  }
  skip(n: number): void {
    this.i += n;
    if (this.i > this.b.length) throw new MemoryCapError("truncated wasm module");
  }
  name(): void {
    this.skip(Number(this.leb()));
  }
  limits(): Limits {
    const flags = this.byte();
    const min = this.leb();
    const max = flags & 1 ? this.leb() : undefined;
    return { flags, min, max };
  }
}

function leb(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}

function encodeLimits(l: Limits): number[] {
  return [l.flags, ...leb(l.min), ...(l.max === undefined ? [] : leb(l.max))];
}

/** New limits with max <= capPages; throws when the initial size alone is over the cap. */
function capped(l: Limits, capPages: bigint, what: string, defined: boolean): Limits {
  if (defined && l.min > capPages) {
    throw new MemoryCapError(`${what} starts at ${l.min} pages (${mib(l.min)} MiB), over the component memory limit of ${capPages} pages (${mib(capPages)} MiB)`);
  }
  if (!defined && l.max === undefined) return l;
  if (l.max !== undefined && l.max <= capPages) return l;
  // An import's min above the cap can never be satisfied by a capped definition: lower it too.
  return { flags: l.flags | 1, min: l.min > capPages ? capPages : l.min, max: capPages };
}

function mib(pages: bigint): string {
  return ((Number(pages) * WASM_PAGE_BYTES) / (1024 * 1024)).toFixed(0);
}

/**
 * Returns the module bytes with every memory capped at `capBytes` (rounded down to whole pages).
 * Bytes that are not a core module (no wasm preamble) are returned unchanged.
 */
export function capMemories(bytes: Uint8Array, capBytes: number): Uint8Array {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) return bytes;
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) return bytes; // not a core module (a component has another version/layer)
  const capPages = BigInt(Math.max(1, Math.floor(capBytes / WASM_PAGE_BYTES)));
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let changed = false;
  const r = new Reader(bytes, 8);
  while (r.i < bytes.length) {
    const start = r.i;
    const id = r.byte();
    const size = Number(r.leb());
    const bodyStart = r.i;
    r.skip(size);
    const body = bytes.subarray(bodyStart, bodyStart + size);
    const rewritten = id === 5 ? rewriteMemorySection(body, capPages) : id === 2 ? rewriteImportSection(body, capPages) : undefined;
    if (rewritten === undefined) {
      parts.push(bytes.subarray(start, bodyStart + size));
      continue;
    }
    changed = true;
    parts.push(new Uint8Array([id, ...leb(BigInt(rewritten.length))]), rewritten);
  }
  if (!changed) return bytes;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function rewriteMemorySection(body: Uint8Array, capPages: bigint): Uint8Array | undefined {
  const r = new Reader(body, 0);
  const count = Number(r.leb());
  const out: number[] = [...leb(BigInt(count))];
  let changed = false;
  for (let k = 0; k < count; k++) {
    const l = r.limits();
    const c = capped(l, capPages, `linear memory ${k}`, true);
    if (c !== l) changed = true;
    out.push(...encodeLimits(c));
  }
  if (r.i !== body.length) throw new MemoryCapError("memory section has trailing bytes");
  return changed ? new Uint8Array(out) : undefined;
}

function rewriteImportSection(body: Uint8Array, capPages: bigint): Uint8Array | undefined {
  const r = new Reader(body, 0);
  const count = Number(r.leb());
  const chunks: Uint8Array[] = [];
  let copiedTo = 0;
  let changed = false;
  for (let k = 0; k < count; k++) {
    r.name();
    r.name();
    const kind = r.byte();
    switch (kind) {
      case 0x00: // func: typeidx
        r.leb();
        break;
      case 0x01: // table: reftype limits
        r.byte();
        r.limits();
        break;
      case 0x02: {
        const at = r.i;
        const l = r.limits();
        const c = capped(l, capPages, "imported memory", false);
        if (c !== l) {
          chunks.push(body.subarray(copiedTo, at), new Uint8Array(encodeLimits(c)));
          copiedTo = r.i;
          changed = true;
        }
        break;
      }
      case 0x03: // global: valtype mut
        r.byte();
        r.byte();
        break;
      case 0x04: // tag: attribute typeidx
        r.byte();
        r.leb();
        break;
      default:
        throw new MemoryCapError(`unknown import kind 0x${kind.toString(16)}`);
    }
  }
  if (!changed) return undefined;
  chunks.push(body.subarray(copiedTo));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
