// The entrypoint of a Brain-managed JS host (Node or Deno). The runtime copies this file into the
// unpacked package's folder and starts it there, under the binding's permission flags, once the
// package is prepared (its setup script, if any, has run). It reads its configuration from stdin
// (never argv: no secret in the process list), imports each tool by its executable reference and
// serves it with the package's own copy of the SDK (`@aexhq/brain`, which its tools were made
// with), as an ordinary host over the runtime's host channel.
import process from "node:process";
import { readFileSync } from "node:fs";

let text = "";
for await (const chunk of process.stdin) text += chunk;
const config = JSON.parse(text);

const isDeno = typeof globalThis.Deno !== "undefined";
const conditions = isDeno ? ["deno", "node", "import", "default"] : ["node", "import", "default"];

/** The file an `exports` subpath names under this runtime's ESM conditions. */
function target(entry) {
  if (typeof entry === "string") return entry;
  if (Array.isArray(entry)) return entry.map(target).find(Boolean);
  if (entry && typeof entry === "object") for (const c of conditions) if (c in entry) return target(entry[c]);
  return undefined;
}

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
async function load(ref) {
  if (ref.package !== pkg.name) throw new Error(`tool ${ref.export} comes from ${ref.package}, but this host holds ${pkg.name}`);
  const exp = pkg.exports;
  const map = typeof exp === "string" || Array.isArray(exp) || (exp && !Object.keys(exp).some((k) => k.startsWith("."))) ? { ".": exp } : exp ?? { ".": pkg.main ?? "./index.js" };
  const file = target(map[ref.module]);
  if (file === undefined) throw new Error(`${pkg.name} exports no ${ref.module} for this runtime`);
  const mod = await import(new URL(file, import.meta.url).href);
  const factory = mod[ref.export];
  if (typeof factory !== "function" || typeof factory.tool?.contract !== "function") throw new Error(`${pkg.name} ${ref.module} export ${ref.export} is not a Brain tool factory`);
  return factory;
}

const specs = [];
for (const t of config.tools) specs.push((await load(t.executable))(t.options));
const { Brain } = await import("@aexhq/brain");
const brain = new Brain({ url: config.url, token: config.token, host: { id: config.hostId, secret: config.secret } });
await brain.serve(specs);
process.stdout.write("brain-managed-host: ready\n");
