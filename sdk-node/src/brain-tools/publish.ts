// brain-tools: what the helper does after the publisher's build. ts-morph finds the exported
// `tool({...})` declarations (find.ts); importing the built modules gives the factories, whose own
// `contract()` (the SDK copy the package uses) gives exactly the contract Brain will be advertised;
// the manifest records both, and each declaring file gets the executable reference defined on its
// factory, so importing the tool from the published package gives a factory that carries it.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ExecutableReference } from "@aexhq/brain-core";
import { findTools, where, type Candidate } from "./find.ts";
import { BrainToolsError, isEsm, readPackage, rel, shipped, type PackageInfo } from "./package.ts";

/** The format version of brain-tools.json; a reader refuses versions it does not know. */
export const MANIFEST_VERSION = 1;
export const MANIFEST_NAME = "brain-tools.json";

/** The contract exactly as the SDK advertises it (`factory.tool.contract()`). */
export interface ManifestContract {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  optionsSchema?: Record<string, unknown>;
  digest: string;
}

/** One packaged tool: how to import it, where it is declared, and its contract. */
export interface ManifestTool {
  executable: ExecutableReference;
  /** The package-relative file that declares it (and defines its `executable`). */
  file: string;
  contract: ManifestContract;
}

/** brain-tools.json */
export interface BrainToolsManifest {
  manifestVersion: typeof MANIFEST_VERSION;
  package: string;
  version: string;
  /** Sorted by contract name; names are unique. */
  tools: ManifestTool[];
}

export interface PublishOptions {
  /** Where to write the manifest; default: brain-tools.json in the folder of the package's first entry (usually dist/). */
  out?: string;
}

export interface PublishResult {
  manifest: BrainToolsManifest;
  manifestPath: string;
  /** Things the publisher may want to know (nothing failed). */
  notes: string[];
}

const BEGIN = "// brain-tools: executable references (written by brain-tools after the build; do not edit)";
const END = "// brain-tools: end";
const BLOCK = /\n?\/\/ brain-tools: executable references[^\n]*\n[^]*?\/\/ brain-tools: end\n?/g;

interface FactoryLike {
  (...args: unknown[]): unknown;
  tool: { name: string; run?: unknown; contract(): Promise<ManifestContract> };
}
const isFactory = (v: unknown): v is FactoryLike =>
  typeof v === "function" && typeof (v as Partial<FactoryLike>).tool === "object" && typeof (v as FactoryLike).tool?.contract === "function" && typeof (v as FactoryLike).tool?.name === "string";

const describe = (c: Candidate): string => `export "${c.exportName}" of "${c.subpath}"`;

/** Builds the manifest for the package in `dir`, records the references in its built files and writes the manifest. */
export async function publishTools(dir: string, options: PublishOptions = {}): Promise<PublishResult> {
  const pkg = readPackage(resolve(dir));
  const notes = [...pkg.skipped];
  const { candidates, files } = await findTools(pkg);

  // A previous run's references go first, so the modules are imported as the build wrote them.
  for (const sf of files) {
    const path = sf.getFilePath();
    const text = readFileSync(path, "utf8");
    if (text.includes(BEGIN)) writeFileSync(path, text.replace(BLOCK, "\n"));
  }

  const namespaces = new Map<string, Record<string, unknown>>();
  for (const entry of pkg.entries) {
    try {
      namespaces.set(entry.subpath, (await import(pathToFileURL(entry.file).href)) as Record<string, unknown>);
    } catch (e) {
      throw new BrainToolsError(`importing ${rel(pkg.dir, entry.file)} (exports "${entry.subpath}") failed: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  // One tool per declaration, referenced by its first export: exports order, then named before default.
  const order = new Map(pkg.entries.map((e, i) => [e.subpath, i]));
  candidates.sort((a, b) => order.get(a.subpath)! - order.get(b.subpath)! || Number(a.exportName === "default") - Number(b.exportName === "default"));
  const chosen = new Map<string, { candidate: Candidate; factory: FactoryLike }>();
  const problems: string[] = [];
  for (const c of candidates) {
    const value = namespaces.get(c.subpath)?.[c.exportName];
    if (!isFactory(value)) {
      notes.push(`${describe(c)} (${where(pkg, c)}) calls a tool() that is not Brain's; skipped`);
      continue;
    }
    if (chosen.has(c.key)) continue;
    if (typeof value.tool.run !== "function") {
      problems.push(`${describe(c)} (${where(pkg, c)}) is tool "${value.tool.name}" without run: brain-tools publishes run tools (a component or descriptor tool travels with its implementation); give it run, or do not export it from a public module`);
      continue;
    }
    chosen.set(c.key, { candidate: c, factory: value });
  }
  const found = new Set([...chosen.values()].map((t) => t.factory));
  for (const [subpath, ns] of namespaces) {
    for (const [name, value] of Object.entries(ns)) {
      if (isFactory(value) && !found.has(value) && !candidates.some((c) => c.subpath === subpath && c.exportName === name)) {
        notes.push(`export "${name}" of "${subpath}" is Brain tool "${value.tool.name}" but not declared as tool({...}) in this package's files (made by a helper, or re-exported from another package): it gets no executable reference`);
      }
    }
  }
  const byName = new Map<string, Candidate[]>();
  for (const { candidate, factory } of chosen.values()) byName.set(factory.tool.name, [...(byName.get(factory.tool.name) ?? []), candidate]);
  for (const [name, cs] of byName) {
    if (cs.length > 1) problems.push(`two tools are named "${name}": ${cs.map((c) => `${describe(c)} (${where(pkg, c)})`).join(" and ")}; a session cannot tell them apart`);
  }
  for (const { candidate } of chosen.values()) {
    if (!isEsm(pkg, candidate.declFile)) problems.push(`${describe(candidate)} is declared in ${rel(pkg.dir, candidate.declFile)}, a CommonJS file: @aexhq/brain is an ES module, so publish ES modules ("type": "module" or .mjs)`);
  }
  if (problems.length > 0) throw new BrainToolsError(problems.join("\n"));
  if (chosen.size === 0) {
    throw new BrainToolsError(`${pkg.name} exports no run tools: brain-tools looked for exports declared as tool({ ..., run }) in ${pkg.entries.map((e) => rel(pkg.dir, e.file)).join(", ")}`);
  }

  const tools: ManifestTool[] = [];
  const byFile = new Map<string, { candidate: Candidate; executable: ExecutableReference }[]>();
  for (const { candidate, factory } of chosen.values()) {
    const executable: ExecutableReference = { package: pkg.name, version: pkg.version, module: candidate.subpath, export: candidate.exportName };
    tools.push({ executable, file: rel(pkg.dir, candidate.declFile), contract: await factory.tool.contract() });
    byFile.set(candidate.declFile, [...(byFile.get(candidate.declFile) ?? []), { candidate, executable }]);
  }
  tools.sort((a, b) => (a.contract.name < b.contract.name ? -1 : a.contract.name > b.contract.name ? 1 : 0));
  const manifest: BrainToolsManifest = { manifestVersion: MANIFEST_VERSION, package: pkg.name, version: pkg.version, tools };
  for (const [file, refs] of byFile) writeFileSync(file, withReferences(readFileSync(file, "utf8"), file, refs));

  const manifestPath = resolve(options.out ?? resolve(dirname((pkg.entries.find((e) => e.subpath === ".") ?? pkg.entries[0]!).file), MANIFEST_NAME));
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  if (!shipped(pkg, manifestPath)) notes.push(`${rel(pkg.dir, manifestPath)} is not in package.json "files": add it so the manifest ships with the package`);
  return { manifest, manifestPath, notes };
}

/** The declaring file with its block of references, placed before a trailing source-map comment. */
function withReferences(text: string, file: string, refs: { candidate: Candidate; executable: ExecutableReference }[]): string {
  const lines = [BEGIN];
  const seen = new Set<string>();
  for (const { candidate, executable } of refs) {
    if (seen.has(candidate.local)) continue;
    seen.add(candidate.local);
    let binding = candidate.local;
    if (binding === "default") {
      binding = "__brainToolsDefault";
      lines.push(`import ${binding} from ${JSON.stringify(`./${basename(file)}`)};`);
    }
    lines.push(`Object.defineProperty(${binding}, "executable", { value: Object.freeze(${JSON.stringify(executable)}), enumerable: true });`);
  }
  lines.push(END);
  const block = `${lines.join("\n")}\n`;
  const map = /\n\/\/# sourceMappingURL=[^\n]*\n?$/.exec(text);
  const body = map ? text.slice(0, map.index + 1) : text.endsWith("\n") ? text : `${text}\n`;
  return map ? `${body}${block}${text.slice(map.index + 1)}` : `${body}${block}`;
}
