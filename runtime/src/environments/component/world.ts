/**
 * The admission rule for brain:tool@0.2.0 components, applied to the world a component
 * actually has (decoded from its bytes with wasm-tools' `component wit`).
 *
 * A tool component must export exactly `run: func(invocation: invocation)` (using
 * brain:tool/types@0.2.0's invocation) and may import brain:tool/host and brain:tool/types at
 * 0.2.0 and any WASI interface at a 0.2.x release version. Of those, GRANTED_WASI get working
 * implementations; every other WASI interface (sockets, http, anything else) is linked to a
 * refusing one (wasi-denied.mjs), because general-purpose toolchains import them whether the tool
 * uses them or not. Anything else (another package, another WASI version) is refused with a
 * message naming what is missing or extra.
 */

/** WASI 0.2.x interfaces the binding provides (any 0.2 patch version). */
export const GRANTED_WASI = [
  "wasi:io/error", "wasi:io/poll", "wasi:io/streams",
  "wasi:cli/environment", "wasi:cli/exit", "wasi:cli/stdin", "wasi:cli/stdout", "wasi:cli/stderr",
  "wasi:cli/terminal-input", "wasi:cli/terminal-output", "wasi:cli/terminal-stdin", "wasi:cli/terminal-stdout", "wasi:cli/terminal-stderr",
  "wasi:clocks/monotonic-clock", "wasi:clocks/wall-clock",
  "wasi:filesystem/types", "wasi:filesystem/preopens",
  "wasi:random/random", "wasi:random/insecure", "wasi:random/insecure-seed",
] as const;

const BRAIN_IMPORTS = ["brain:tool/host@0.2.0", "brain:tool/types@0.2.0"];

export interface ComponentWorld {
  imports: string[];
  exports: string[];
  /** `use` lines of the world, e.g. "brain:tool/types@0.2.0.{invocation}". */
  uses: string[];
}

/** Reads the root world out of `component wit` text: its import/export/use lines. */
export function parseWorld(wit: string): ComponentWorld {
  const start = wit.search(/^\s*world\s+[\w-]+\s*\{/m);
  const body = start < 0 ? "" : wit.slice(wit.indexOf("{", start) + 1);
  const imports: string[] = [];
  const exports: string[] = [];
  const uses: string[] = [];
  let depth = 0;
  // Only top-level items of the world block; inline func/interface bodies are skipped by depth.
  for (const rawLine of body.split("\n")) {
    const line = rawLine.trim();
    if (depth === 0) {
      if (line.startsWith("}")) break;
      const m = /^(import|export|use)\s+(.+?);?$/.exec(line);
      if (m) {
        const item = m[2]!.replace(/;$/, "").replace(/\s+/g, " ").replace(/\s*\{$/, "");
        (m[1] === "import" ? imports : m[1] === "export" ? exports : uses).push(item);
      }
    }
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    if (depth < 0) break;
  }
  return { imports, exports, uses };
}

/** WASI 0.2.x interfaces linked to implementations that answer `access-denied` (sockets) or `HTTP-request-denied` (http). */
export const DENIED_WASI = [
  "wasi:sockets/network", "wasi:sockets/instance-network", "wasi:sockets/ip-name-lookup",
  "wasi:sockets/tcp", "wasi:sockets/tcp-create-socket", "wasi:sockets/udp", "wasi:sockets/udp-create-socket",
  "wasi:http/types", "wasi:http/outgoing-handler", "wasi:http/incoming-handler",
] as const;

/** A WASI interface at a 0.2.x release version (no pre-release tag: those WITs differ). */
const WASI_02 = /^(wasi:[a-z][a-z0-9-]*\/[a-z][a-z0-9-]*)@0\.2\.\d+$/;

/** How the runtime links one WASI import: granted, refused at run time by its error values, or trapping. */
export function wasiLinking(name: string): "granted" | "denied" | "trapping" | undefined {
  const m = WASI_02.exec(name);
  if (m === null) return undefined;
  if ((GRANTED_WASI as readonly string[]).includes(m[1]!)) return "granted";
  return (DENIED_WASI as readonly string[]).includes(m[1]!) ? "denied" : "trapping";
}

/** Why a world is not brain:tool@0.2.0's `tool` world, or undefined when it is. */
export function worldProblems(world: ComponentWorld): { missing: string[]; extra: string[] } | undefined {
  const missing: string[] = [];
  const extra: string[] = [];
  const run = world.exports.find((e) => /^run\s*:/.test(e));
  if (run === undefined) missing.push("export run: func(invocation: invocation)");
  else if (!/^run\s*:\s*func\(invocation:\s*invocation\)$/.test(run)) {
    missing.push("export run: func(invocation: invocation)");
    extra.push(`export ${run}`);
  } else if (!world.uses.some((u) => u.startsWith("brain:tool/types@0.2.0.") && /\binvocation\b/.test(u))) {
    missing.push("use brain:tool/types@0.2.0.{invocation}");
  }
  for (const e of world.exports) if (!/^run\s*:/.test(e)) extra.push(`export ${e}`);
  for (const i of world.imports) {
    if (BRAIN_IMPORTS.includes(i) || wasiLinking(i) !== undefined) continue;
    extra.push(`import ${i}`);
  }
  return missing.length === 0 && extra.length === 0 ? undefined : { missing, extra };
}
