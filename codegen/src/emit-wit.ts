import { generateTypes, $init } from "@bytecodealliance/jco-transpile/component";

// jco's path-based helpers read the WIT through a WASI filesystem that preview2-shim 0.26
// does not grant, so the bindgen component is called directly with the WIT source text.
await $init;

export interface WitTypes { guest: Map<string, string>; host: Map<string, string> }

/** TypeScript declarations for the `tool` world, as a guest (component author) and as a host (runtime). */
export function witTypes(witSource: string): WitTypes {
  const run = (guest: boolean) => {
    const files = generateTypes("tool", {
      wit: { tag: "source", val: witSource },
      world: "tool",
      guest,
      tlaCompat: false,
      features: { tag: "all" },
    } as Parameters<typeof generateTypes>[1]);
    const out = new Map<string, string>();
    for (const [name, bytes] of files) out.set(name, new TextDecoder().decode(bytes));
    return out;
  };
  return { guest: run(true), host: run(false) };
}

/** The package and version the WIT declares, e.g. `brain:tool@0.2.0`. */
export function witPackage(witSource: string): string {
  const match = /^\s*package\s+([a-z0-9-]+:[a-z0-9-]+@[0-9.]+)\s*;/m.exec(witSource);
  if (!match) throw new Error("tool.wit declares no package");
  return match[1]!;
}
