import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import type { ProtocolSchema } from "./json-schema.ts";
import { header } from "./header.ts";
import { emitSchemas, emitValidators } from "./emit-schemas.ts";
import { emitFrames, emitLinkRouter, emitRouter } from "./emit-routers.ts";
import { emitConstants } from "./emit-constants.ts";
import { emitDigest } from "./emit-digest.ts";
import { emitProtocolMd } from "./emit-protocol-md.ts";
import type { DigestVector } from "./emit-protocol-md.ts";
import { witTypes, witPackage } from "./emit-wit.ts";
import { emitHostImports } from "./emit-host-imports.ts";
import { emitScenario, type ScenarioSchema } from "./emit-scenario.ts";

export const SCHEMA_PATH = "contract/protocol.schema.json";
export const WIT_PATH = "contract/tool.wit";
export const SCENARIO_SCHEMA_PATH = "contract/conformance-scenario.schema.json";
export const EXAMPLES_DIR = "contract/examples";
export const REPORT_SCHEMA_PATH = "contract/conformance-report.schema.json";
export const GUIDE_PATH = "contract/protocol-guide.md";
export const DIGEST_VECTORS_PATH = "contract/digest-vectors.json";

/** Reads contract/ under `root` and returns every generated file (repo-relative path → text). Pure: writes nothing. */
export function generate(root: string): Map<string, string> {
  const schemaText = readFileSync(join(root, SCHEMA_PATH), "utf8");
  const witText = readFileSync(join(root, WIT_PATH), "utf8");
  const schema = JSON.parse(schemaText) as ProtocolSchema;
  const out = new Map<string, string>();
  const fromSchema = (generator: string) => header(generator, { path: SCHEMA_PATH, text: schemaText }, "//");
  const fromWit = (generator: string) => header(generator, { path: WIT_PATH, text: witText }, "//");

  out.set("generated/schemas.ts", emitSchemas(schema, fromSchema("emit-schemas")));
  out.set("generated/validators.ts", emitValidators(schema, fromSchema("emit-schemas")));
  out.set("generated/constants.ts", emitConstants(schema, fromSchema("emit-constants")));
  out.set("generated/digest.ts", emitDigest(schema, fromSchema("emit-digest")));
  out.set("generated/frames.ts", emitFrames(schema, fromSchema("emit-routers")));
  for (const direction of ["host-to-runtime", "runtime-to-host"] as const) {
    const router = emitRouter(schema, direction, fromSchema("emit-routers"));
    out.set(`generated/${router.file}`, router.text);
  }
  out.set("generated/router-link.ts", emitLinkRouter(schema, fromSchema("emit-routers")));

  const wit = witTypes(witText);
  for (const [side, files] of [["guest", wit.guest], ["host", wit.host]] as const) {
    for (const [name, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
      out.set(`generated/wit/${side}/${name}`, fromWit("emit-wit via jco") + "\n" + text.trimEnd() + "\n");
    }
  }
  out.set("generated/wit/world.ts", fromWit("emit-wit") + `
/** The WIT package every tool component must target. */
export const WIT_PACKAGE = ${JSON.stringify(witPackage(witText))} as const;
/** The world a tool component implements. */
export const WIT_WORLD = "tool" as const;
/** The WIT source of the world, for admission checks and componentize tooling. */
export const WIT_SOURCE: string = ${JSON.stringify(witText)};
`);

  const hostImports = emitHostImports(witText, fromWit("emit-host-imports"));
  out.set("generated/wit/host-imports.mjs", hostImports.mjs);
  out.set("generated/wit/host-imports.d.mts", hostImports.dmts);
  out.set("generated/wit/host-dispatch.ts", hostImports.dispatch);

  const scenarioText = readFileSync(join(root, SCENARIO_SCHEMA_PATH), "utf8");
  const scenarioHeader = header("emit-scenario", { path: SCENARIO_SCHEMA_PATH, text: scenarioText }, "//");
  out.set("generated/scenario.ts", emitScenario(JSON.parse(scenarioText) as ScenarioSchema, schema as ProtocolSchema & { $id: string }, scenarioHeader));

  const reportText = readFileSync(join(root, REPORT_SCHEMA_PATH), "utf8");
  out.set("generated/report.ts", header("generate", { path: REPORT_SCHEMA_PATH, text: reportText }, "//") + `
/** The JSON Schema of a \`brain-conformance --report\` file (${REPORT_SCHEMA_PATH}); the runner validates each report against it. */
export const CONFORMANCE_REPORT_SCHEMA: Record<string, unknown> = ${JSON.stringify(JSON.parse(reportText), null, 2)};
`);
  out.set("generated/index.ts", fromSchema("generate") + `
export * from "./schemas.ts";
export * from "./validators.ts";
export * from "./constants.ts";
export * from "./digest.ts";
export * from "./frames.ts";
export * from "./router-runtime.ts";
export * from "./router-host.ts";
export * from "./router-link.ts";
export * from "./wit/world.ts";
export * from "./wit/host-dispatch.ts";
export * from "./scenario.ts";
export * from "./report.ts";
`);

  const guide = readFileSync(join(root, GUIDE_PATH), "utf8");
  const vectors = (JSON.parse(readFileSync(join(root, DIGEST_VECTORS_PATH), "utf8")) as { vectors: DigestVector[] }).vectors;
  const mdHeader = header("emit-protocol-md", { path: SCHEMA_PATH, text: schemaText }, "md").replace("\nRegenerate:", `\nAlso from: ${GUIDE_PATH} (prose), ${DIGEST_VECTORS_PATH}, ${EXAMPLES_DIR}/\nRegenerate:`);
  out.set("contract/PROTOCOL.md", emitProtocolMd(schema, readExamples(root), mdHeader, guide, vectors));
  return out;
}

/** contract/examples/<DefName>.json, one valid example per def. */
export function readExamples(root: string): Map<string, unknown> {
  const dir = join(root, EXAMPLES_DIR);
  const examples = new Map<string, unknown>();
  if (!existsSync(dir)) return examples;
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".json")) continue;
    examples.set(file.slice(0, -".json".length), JSON.parse(readFileSync(join(dir, file), "utf8")));
  }
  return examples;
}
