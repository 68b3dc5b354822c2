// The layering of docs/ARCHITECTURE.md as data, and a checker that applies it to TypeScript source.
// scripts/test/imports.test.mjs runs it over the whole repository.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, posix } from "node:path";
import ts from "typescript";

/** Workspace package names → the top-level folder that holds them. */
export const PACKAGE_AREA = {
  "@aexhq/brain-protocol": "generated",
  "@aexhq/brain-codegen": "codegen",
  "@aexhq/brain-runtime": "runtime",
  "@aexhq/brain-core": "sdk-core",
  "@aexhq/brain": "sdk-node",
  "@aexhq/brain-conformance": "conformance",
  "@aexhq/brain-examples": "examples",
  "@aexhq/example-text-tools": "examples",
};

const EVERY_AREA = ["contract", "codegen", "generated", "runtime", "sdk-core", "sdk-node", "sdk-deno", "conformance", "examples", "bench", "scripts"];
/** Leaf folders: only bench (and each of them itself) may import them. */
const LEAVES = ["conformance", "examples", "bench"];

/**
 * What source files (not tests) in each top-level folder may import.
 * - areas: other top-level folders, reached by package name (contract: by relative path, it is no package)
 * - node: `node:*` / Node builtins
 * - wit: `brain:tool/...` specifiers (WIT interfaces, provided to components by the host)
 * - externals: npm package names; "@scope/*" allows a whole scope, "*" anything
 * - neutral: Web APIs only, so no Node/Deno globals (process, Deno, Buffer, ...)
 */
export const RULES = {
  contract: { areas: [], node: false, wit: false, externals: [], neutral: true },
  codegen: { areas: ["contract"], node: true, wit: false, externals: ["ts-morph", "typescript", "@bytecodealliance/*", "@sinclair/typebox"], neutral: false },
  generated: { areas: [], node: false, wit: true, externals: ["@sinclair/typebox", "canonicalize"], neutral: true },
  runtime: { areas: ["generated"], node: true, wit: false, externals: ["ws", "better-sqlite3", "pg", "@bytecodealliance/*", "@sinclair/typebox", "prom-client", "@opentelemetry/*", "@modelcontextprotocol/sdk"], neutral: false },
  "sdk-core": { areas: ["generated"], node: false, wit: false, externals: ["zod"], neutral: true },
  // ts-morph: only the brain-tools publishing helper (an optional peer, loaded on demand).
  "sdk-node": { areas: ["sdk-core"], node: true, wit: false, externals: ["ws", "zod", "ts-morph", "@modelcontextprotocol/sdk"], neutral: false },
  "sdk-deno": { areas: ["sdk-core"], node: false, wit: false, externals: ["zod", "@std/*"], neutral: false },
  conformance: { areas: ["runtime", "generated", "sdk-core", "sdk-node", "sdk-deno"], node: true, wit: true, externals: ["ws", "zod", "@bytecodealliance/*", "@modelcontextprotocol/sdk"], neutral: false },
  examples: { areas: ["sdk-node", "sdk-deno", "runtime"], node: true, wit: true, externals: ["zod", "@bytecodealliance/*", "@modelcontextprotocol/sdk"], neutral: false },
  bench: { areas: EVERY_AREA, node: true, wit: true, externals: ["*"], neutral: false },
  scripts: { areas: EVERY_AREA.filter((a) => !LEAVES.includes(a)), node: true, wit: false, externals: ["*"], neutral: false },
};

/**
 * Tests may drive real lower layers (an sdk-core test starts the real runtime) and use Node and test
 * tooling, but the leaves stay off limits and the platform-neutral rule is not applied to them.
 */
export function testRule(area) {
  return { areas: EVERY_AREA.filter((a) => a === area || !LEAVES.includes(a) || area === "bench"), node: true, wit: true, externals: ["*"], neutral: false };
}

/** Identifiers that only exist on Node or Deno; a neutral area must not reference them. */
export const PLATFORM_GLOBALS = ["process", "Deno", "Buffer", "require", "__dirname", "__filename", "global", "setImmediate", "NodeJS"];

const SKIP_DIRS = new Set(["node_modules", "dist", ".turbo", ".brain", "target", "coverage"]);
const NODE_BUILTINS = new Set(builtinModules);
// `test/` folders, `*.test.ts` (uvu) and `*_test.ts` (Deno's convention).
const isTestPath = (rel) => rel.split("/").slice(1).includes("test") || /[._]test\.[cm]?tsx?$/.test(rel);
const TS_FILE = /\.[cm]?tsx?$/;

/** Every TypeScript file under the top-level folders the rules know, as repo-relative posix paths. */
export function listSourceFiles(root) {
  const out = [];
  const walk = (rel) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      if (name.startsWith(".") || SKIP_DIRS.has(name)) continue;
      const child = `${rel}/${name}`;
      if (statSync(join(root, child)).isDirectory()) walk(child);
      else if (TS_FILE.test(name)) out.push(child);
    }
  };
  for (const area of Object.keys(RULES)) {
    try {
      if (statSync(join(root, area)).isDirectory()) walk(area);
    } catch {
      // a folder that does not exist yet has nothing to check
    }
  }
  return out;
}

/** What an import specifier points at, seen from file `rel`. */
export function classify(rel, specifier) {
  if (specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === "..") {
    const target = posix.normalize(posix.join(posix.dirname(rel), specifier));
    if (target.startsWith("..")) return { kind: "outside", target };
    return { kind: "area", area: target.split("/")[0], relative: true, target };
  }
  if (specifier.startsWith("node:") || NODE_BUILTINS.has(specifier.split("/")[0])) return { kind: "node" };
  if (specifier.startsWith("brain:")) return { kind: "wit" };
  if (/^(https?|file|data):/.test(specifier)) return { kind: "url" };
  const bare = specifier.replace(/^(npm|jsr):\/?/, "");
  const parts = bare.split("/");
  const name = bare.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  const versionless = name.replace(/(?<=.)@[^/]*$/, "");
  if (PACKAGE_AREA[versionless]) return { kind: "area", area: PACKAGE_AREA[versionless], relative: false };
  return { kind: "external", name: versionless };
}

const externalAllowed = (patterns, name) =>
  patterns.some((p) => p === "*" || p === name || (p.endsWith("/*") && name.startsWith(p.slice(0, -1))));

/** The reason `specifier` may not be imported from `rel` under `rule`, or undefined when it may. */
function importViolation(rel, area, rule, specifier) {
  const target = classify(rel, specifier);
  switch (target.kind) {
    case "outside":
      return `relative import leaves the repository (${target.target})`;
    case "area":
      if (target.area === area) return undefined;
      if (!rule.areas.includes(target.area)) return `${area}/ may not import from ${target.area}/`;
      // Cross-folder relative paths bypass package exports (and the `brain-source` condition).
      // contract/ and scripts/ are no packages, and bench measures whatever it likes however it likes.
      if (target.relative && target.area !== "contract" && target.area !== "scripts" && area !== "bench") return `import ${target.area}/ by its package name, not a relative path`;
      return undefined;
    case "node":
      return rule.node ? undefined : `${area}/ may not import Node builtins (${specifier})`;
    case "wit":
      return rule.wit ? undefined : `${area}/ may not import WIT interfaces (${specifier})`;
    case "url":
      return rule.externals.includes("*") ? undefined : `${area}/ may not import by URL (${specifier})`;
    case "external":
      return externalAllowed(rule.externals, target.name) ? undefined : `${area}/ may not depend on ${target.name}`;
  }
}

/** Every module specifier a file mentions: static, type-only, re-export, dynamic, require, import types. */
function collectSpecifiers(source) {
  const found = [];
  const add = (node, text) => found.push({ specifier: text, pos: node.getStart(source) });
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      add(node, node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && node.arguments.length && ts.isStringLiteralLike(node.arguments[0])) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === "require";
      if (isImport || isRequire) add(node, node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // `/// <reference types="node" />` pulls in a platform just like an import does.
  for (const ref of source.typeReferenceDirectives) found.push({ specifier: ref.fileName, pos: ref.pos });
  return found;
}

const NAME_SLOTS = new Set([
  ts.SyntaxKind.PropertyAssignment, ts.SyntaxKind.PropertyDeclaration, ts.SyntaxKind.PropertySignature,
  ts.SyntaxKind.MethodDeclaration, ts.SyntaxKind.MethodSignature, ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor, ts.SyntaxKind.EnumMember, ts.SyntaxKind.PropertyAccessExpression,
  ts.SyntaxKind.QualifiedName, ts.SyntaxKind.JsxAttribute,
]);
const GLOBAL_OBJECTS = new Set(["globalThis", "self", "window"]);

/** References to Node/Deno globals, ignoring property names (`x.process`) and names the file declares itself. */
function collectPlatformGlobals(source) {
  const banned = new Set(PLATFORM_GLOBALS);
  const declared = new Set();
  const found = [];
  // Only real local bindings shadow a global; an ambient `declare const process` does not make it exist.
  const declare = (node) => {
    const binds = ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isFunctionDeclaration(node)
      || ts.isClassDeclaration(node) || ts.isImportSpecifier(node) || ts.isImportClause(node) || ts.isNamespaceImport(node)
      || ts.isBindingElement(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isEnumDeclaration(node);
    const ambient = ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
    const statement = ts.isVariableDeclaration(node) ? node.parent?.parent : undefined;
    const ambientVar = statement && ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
    if (binds && !ambient && !ambientVar && node.name && ts.isIdentifier(node.name)) declared.add(node.name.text);
    ts.forEachChild(node, declare);
  };
  declare(source);
  const visit = (node) => {
    if (ts.isIdentifier(node) && banned.has(node.text)) {
      const parent = node.parent;
      const onGlobalObject = ts.isPropertyAccessExpression(parent) && parent.name === node && ts.isIdentifier(parent.expression) && GLOBAL_OBJECTS.has(parent.expression.text);
      const isNameSlot = parent && NAME_SLOTS.has(parent.kind) && parent.name === node;
      const isQualifiedRight = parent && ts.isQualifiedName(parent) && parent.right === node;
      const isBindingKey = parent && ts.isBindingElement(parent) && parent.propertyName === node;
      const isDeclaration = parent && parent.name === node && !ts.isShorthandPropertyAssignment(parent) && !NAME_SLOTS.has(parent.kind);
      if (onGlobalObject || (!isNameSlot && !isQualifiedRight && !isBindingKey && !isDeclaration && !declared.has(node.text))) {
        found.push({ identifier: node.text, pos: node.getStart(source) });
      }
    } else if (ts.isElementAccessExpression(node) && ts.isIdentifier(node.expression) && GLOBAL_OBJECTS.has(node.expression.text)
      && ts.isStringLiteralLike(node.argumentExpression) && banned.has(node.argumentExpression.text)) {
      found.push({ identifier: node.argumentExpression.text, pos: node.getStart(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Relative imports must name the real file (`./journal/sqlite.ts`) so the sources run unchanged in
 * Deno, which does no extension guessing. `exists(repoRelPath)` tells `./x.js` that really is a JS
 * file apart from a `.js` alias of a `.ts` source. Declaration files follow tsc's own `.js` style.
 */
function extensionViolation(rel, specifier, exists) {
  if (!specifier.startsWith(".") || /\.d\.[cm]?ts$/.test(rel)) return undefined;
  const last = specifier.split("/").at(-1);
  if (!/\.[A-Za-z0-9]+$/.test(last)) return `relative import without a file extension (write the .ts file name)`;
  const js = /\.([cm]?)js$/.exec(specifier);
  if (js && exists) {
    const target = posix.normalize(posix.join(posix.dirname(rel), specifier));
    const tsTwin = target.replace(/\.([cm]?)js$/, ".$1ts");
    if (!exists(target) && exists(tsTwin)) return `import the .ts source by its own name (${tsTwin.split("/").at(-1)}), not a .js alias`;
  }
  return undefined;
}

/**
 * The runtime's source folders as layers, lowest first: a file may import its own layer and lower
 * ones, never a higher one (a lower layer that must call up is handed an interface). The floor is
 * a group of files (`errors.ts`, `json-limits.ts`) every layer may import; the files directly in
 * runtime/src (server, config, index, cli) are the top.
 */
export const RUNTIME_FLOOR = ["errors.ts", "json-limits.ts", "redact.ts", "logger.ts"];

/** The one runtime file that reads the process environment: every other part is given its settings. */
export const RUNTIME_CONFIG_FILE = "runtime/src/config.ts";

/** `process.env` (and `process["env"]`) outside runtime/src/config.ts, in runtime sources that are not tests. */
function processEnvReads(rel, source) {
  if (!rel.startsWith(RUNTIME_SRC) || rel === RUNTIME_CONFIG_FILE || isTestPath(rel)) return [];
  const found = [];
  const visit = (node) => {
    const isProcess = (e) => ts.isIdentifier(e) && e.text === "process";
    if ((ts.isPropertyAccessExpression(node) && isProcess(node.expression) && node.name.text === "env")
      || (ts.isElementAccessExpression(node) && isProcess(node.expression) && ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text === "env")) {
      found.push(node.getStart(source));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
/**
 * Files whose swallowed failures are left as they are: their catches close connections that are
 * already broken (PostgreSQL clients, a lease's link), where nothing is left to report.
 */
export const SWALLOW_EXEMPT = ["runtime/src/journal/postgres.ts", "runtime/src/cluster/node-journal.ts", "runtime/src/cluster/leases.ts"];

/** The runtime files that print to the terminal by design (the CLI); everything else says things through its Logger. */
export const CONSOLE_FILES = ["runtime/src/cli.ts", "runtime/src/keys-command.ts"];

const hasComment = (source, node) => /\/\/|\/\*/.test(source.text.slice(node.getStart(source), node.getEnd()));
const isEmptyBlock = (node) => node !== undefined && ts.isBlock(node) && node.statements.length === 0;

/**
 * Failures the runtime drops without a word: a `.catch(() => {})` (any callback with an empty body)
 * or a `catch {}` clause with an empty block, each without a comment inside saying why that is
 * right. A survived failure is either handled (the comment names where it is reported, or why it is
 * harmless) or logged through the runtime's Logger.
 */
function swallowedFailures(rel, source) {
  if (!rel.startsWith(RUNTIME_SRC) || isTestPath(rel) || SWALLOW_EXEMPT.includes(rel)) return [];
  const found = [];
  const visit = (node) => {
    const silent = (callback) => callback !== undefined && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback)) && isEmptyBlock(callback.body) && !hasComment(source, callback.body);
    const method = ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : undefined;
    if (method === "catch" && silent(node.arguments[0])) {
      found.push({ pos: node.expression.name.getStart(source), what: "`.catch` with an empty callback" });
    } else if (method === "then" && silent(node.arguments[1])) {
      found.push({ pos: node.expression.name.getStart(source), what: "`.then` with an empty rejection handler" });
    } else if (method === "on" && node.arguments[0] !== undefined && ts.isStringLiteralLike(node.arguments[0]) && node.arguments[0].text === "error" && silent(node.arguments[1])) {
      found.push({ pos: node.expression.name.getStart(source), what: "an empty `error` listener" });
    } else if (ts.isCatchClause(node) && isEmptyBlock(node.block) && !hasComment(source, node.block)) {
      found.push({ pos: node.getStart(source), what: "an empty `catch {}`" });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `console.*` in runtime sources (not tests) other than the CLI's. */
function consoleUses(rel, source) {
  if (!rel.startsWith(RUNTIME_SRC) || isTestPath(rel) || CONSOLE_FILES.includes(rel)) return [];
  const found = [];
  const visit = (node) => {
    if ((ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === "console") {
      found.push(node.getStart(source));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
export const RUNTIME_LAYERS = [RUNTIME_FLOOR, "telemetry", "limits", "journal", "credentials", "models", "dispatch", "hosts", "agentloop", "sessions", "http", "mcp", "ui", "environments", "cluster"];
const RUNTIME_SRC = "runtime/src/";
const layerName = (layer) => (Array.isArray(layer) ? layer.join(" + ") : layer);

/** The layer index of a path under runtime/src, or undefined outside it (the top files rank above every layer). */
function runtimeLayer(path) {
  if (!path.startsWith(RUNTIME_SRC)) return undefined;
  const first = path.slice(RUNTIME_SRC.length).split("/")[0];
  const i = RUNTIME_LAYERS.findIndex((layer) => (Array.isArray(layer) ? layer.includes(first) : layer === first));
  return i >= 0 ? i : RUNTIME_LAYERS.length;
}

/** The runtime files that import @modelcontextprotocol/sdk, one per direction (the server at /v1/mcp, the client Environment): the MCP wire is kept in those, so the next MCP revision is a change there. */
export const MCP_WIRE_FILES = ["runtime/src/mcp/sdk.ts", "runtime/src/environments/mcp/wire.ts"];

/** An import of the MCP SDK by a runtime source other than MCP_WIRE_FILES. */
function mcpWireViolation(rel, specifier) {
  if (!rel.startsWith(RUNTIME_SRC) || MCP_WIRE_FILES.includes(rel)) return undefined;
  if (specifier !== "@modelcontextprotocol/sdk" && !specifier.startsWith("@modelcontextprotocol/sdk/")) return undefined;
  return `the runtime speaks MCP through ${MCP_WIRE_FILES.join(" or ")} only: import what it exports instead of ${specifier}`;
}

/** An import from a lower runtime layer into a higher one. */
function runtimeLayerViolation(rel, specifier) {
  const from = runtimeLayer(rel);
  if (from === undefined || !specifier.startsWith(".")) return undefined;
  const target = posix.normalize(posix.join(posix.dirname(rel), specifier));
  const to = runtimeLayer(target);
  if (to === undefined || to <= from) return undefined;
  const name = (i) => (i < RUNTIME_LAYERS.length ? layerName(RUNTIME_LAYERS[i]) : "the top files (server, config, index, cli)");
  return `runtime layer ${name(from)} may not import the higher layer ${name(to)} (order: ${RUNTIME_LAYERS.map(layerName).join(" < ")} < top)`;
}

/**
 * Checks one file's text against the rules for its location. Returns violations as
 * `{ file, line, message }`; empty when the file keeps to the layering.
 */
export function checkFile(rel, text, { exists } = {}) {
  const area = rel.split("/")[0];
  const base = RULES[area];
  if (!base) return [];
  const rule = isTestPath(rel) ? testRule(area) : base;
  const source = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, rel.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const violations = [];
  for (const { specifier, pos } of collectSpecifiers(source)) {
    const message = importViolation(rel, area, rule, specifier) ?? extensionViolation(rel, specifier, exists) ?? (isTestPath(rel) ? undefined : runtimeLayerViolation(rel, specifier) ?? mcpWireViolation(rel, specifier));
    if (message) violations.push({ file: rel, line: lineOf(pos), message: `${message} — "${specifier}"` });
  }
  for (const pos of processEnvReads(rel, source)) {
    violations.push({ file: rel, line: lineOf(pos), message: `runtime configuration is read in ${RUNTIME_CONFIG_FILE} only: pass the setting in (BrainOptions, the plugin context) instead of reading \`process.env\`` });
  }
  for (const { pos, what } of swallowedFailures(rel, source)) {
    violations.push({ file: rel, line: lineOf(pos), message: `${what} drops a failure: log it through the runtime's Logger, or say inside it (a comment) where it is reported or why it is harmless` });
  }
  for (const pos of consoleUses(rel, source)) {
    violations.push({ file: rel, line: lineOf(pos), message: `the runtime speaks through its Logger (PluginContext.logger, a constructor's logger), not \`console\`; only ${CONSOLE_FILES.join(" and ")} print to the terminal` });
  }
  if (rule.neutral) {
    for (const { identifier, pos } of collectPlatformGlobals(source)) {
      violations.push({ file: rel, line: lineOf(pos), message: `${area}/ must stay platform-neutral (Web APIs only) but uses \`${identifier}\`` });
    }
  }
  return violations;
}

/** Checks every TypeScript file of the repository at `root`. */
export function checkRepository(root) {
  const files = listSourceFiles(root);
  const exists = (rel) => existsSync(join(root, rel));
  return { files, violations: files.flatMap((rel) => checkFile(rel, readFileSync(join(root, rel), "utf8"), { exists })) };
}
