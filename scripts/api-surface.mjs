#!/usr/bin/env node
// The public API surface of the published packages, as committed reports under api/ (one
// `<package>.api.md` each, in the spirit of API Extractor's reports): every export of the package's
// entry with its signature, read from the TypeScript sources by the compiler's own type checker.
// A change to what users can import shows up as a diff of these files in review.
//
//   node scripts/api-surface.mjs          rewrite api/*.api.md (npm run api:update)
//   node scripts/api-surface.mjs --check  exit 1 naming the packages whose report is stale, and
//                                         any export without a TSDoc comment
//
// scripts/test/api-surface.test.mjs runs the same check in `npm test`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The packages whose surface is recorded: name, entry source (the "." export), report file. */
export const PACKAGES = [
  { name: "@aexhq/brain", entry: "sdk-node/src/index.ts", report: "api/brain.api.md" },
  { name: "@aexhq/brain-core", entry: "sdk-core/src/index.ts", report: "api/brain-core.api.md" },
  { name: "@aexhq/brain-runtime", entry: "runtime/src/index.ts", report: "api/brain-runtime.api.md" },
  { name: "@aexhq/brain-conformance", entry: "conformance/src/cli.ts", report: "api/brain-conformance.api.md" },
];

const FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType | ts.TypeFormatFlags.WriteArrayAsGenericType;

/** One program over every entry, with the repository's compiler options (sources through the brain-source condition). */
function program() {
  const base = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile).config;
  const { options } = ts.convertCompilerOptionsFromJson({ ...base.compilerOptions, types: ["node"], noEmit: true }, root);
  return ts.createProgram(PACKAGES.map((p) => join(root, p.entry)), options);
}

const isPrivate = (decl) => {
  const flags = ts.getCombinedModifierFlags(decl);
  return (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0 || (decl.name && ts.isPrivateIdentifier(decl.name));
};

/**
 * Whether a member is declared in this repository: members a class or interface inherits from the
 * platform (Error's stackTraceLimit, from @types/node) depend on the installed typings, not on us.
 */
const ours = (decl) => {
  const file = decl?.getSourceFile().fileName ?? "";
  return file.startsWith(root) && !file.includes("/node_modules/");
};

/** The members of an object-like type, one line each: `readonly name?: type` or `name(args): result`. */
function members(checker, type, node, indent) {
  const lines = [];
  for (const prop of checker.getPropertiesOfType(type)) {
    const decl = prop.valueDeclaration ?? prop.declarations?.[0];
    if (decl && (isPrivate(decl) || !ours(decl))) continue;
    if (prop.name.startsWith("__")) continue;
    const propType = checker.getTypeOfSymbolAtLocation(prop, decl ?? node);
    const optional = prop.flags & ts.SymbolFlags.Optional ? "?" : "";
    const readonly = decl && ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Readonly ? "readonly " : "";
    const isMethod = prop.flags & ts.SymbolFlags.Method;
    if (isMethod) {
      for (const sig of propType.getCallSignatures()) lines.push(`${indent}${prop.name}${optional}${checker.signatureToString(sig, node, FORMAT)};`);
    } else if (prop.flags & ts.SymbolFlags.GetAccessor && !(prop.flags & ts.SymbolFlags.SetAccessor)) {
      lines.push(`${indent}get ${prop.name}(): ${checker.typeToString(propType, node, FORMAT)};`);
    } else {
      lines.push(`${indent}${readonly}${prop.name}${optional}: ${checker.typeToString(propType, node, FORMAT)};`);
    }
  }
  for (const sig of type.getCallSignatures()) lines.push(`${indent}${checker.signatureToString(sig, node, FORMAT)};`);
  for (const info of checker.getIndexInfosOfType(type)) lines.push(`${indent}[key: ${checker.typeToString(info.keyType)}]: ${checker.typeToString(info.type, node, FORMAT)};`);
  return lines;
}

const typeParams = (checker, decl) => (decl.typeParameters?.length ? `<${decl.typeParameters.map((p) => p.getText()).join(", ")}>` : "");

/** The declaration text of one export, as a reader of the package sees it. */
function describe(checker, name, symbol, node) {
  const decl = symbol.declarations?.[0];
  const blocks = [];
  if (symbol.flags & ts.SymbolFlags.Class) {
    const heritage = decl.heritageClauses?.map((h) => h.getText()).join(" ") ?? "";
    const staticType = checker.getTypeOfSymbolAtLocation(symbol, decl);
    const instance = checker.getDeclaredTypeOfSymbol(symbol);
    const lines = [`export ${ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Abstract ? "abstract " : ""}class ${name}${typeParams(checker, decl)}${heritage ? ` ${heritage}` : ""} {`];
    for (const sig of staticType.getConstructSignatures()) {
      if (sig.declaration && isPrivate(sig.declaration)) continue;
      lines.push(`  constructor${checker.signatureToString(sig, node, FORMAT).replace(/: [^:]+$/, "")};`);
    }
    for (const line of members(checker, staticType, node, "  static ")) if (!/^ {2}static prototype[:?]/.test(line)) lines.push(line);
    lines.push(...members(checker, instance, node, "  "), "}");
    blocks.push(lines.join("\n"));
  }
  if (symbol.flags & ts.SymbolFlags.Interface) {
    const iface = symbol.declarations.find(ts.isInterfaceDeclaration);
    const heritage = iface.heritageClauses?.map((h) => h.getText()).join(" ") ?? "";
    blocks.push([`export interface ${name}${typeParams(checker, iface)}${heritage ? ` ${heritage}` : ""} {`, ...members(checker, checker.getDeclaredTypeOfSymbol(symbol), node, "  "), "}"].join("\n"));
  }
  if (symbol.flags & ts.SymbolFlags.TypeAlias) {
    const alias = symbol.declarations.find(ts.isTypeAliasDeclaration);
    const type = checker.getTypeAtLocation(alias.name);
    blocks.push(`export type ${name}${typeParams(checker, alias)} = ${checker.typeToString(type, alias, FORMAT | ts.TypeFormatFlags.InTypeAlias)};`);
  }
  if (symbol.flags & ts.SymbolFlags.Function) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, decl);
    for (const sig of type.getCallSignatures()) blocks.push(`export function ${name}${checker.signatureToString(sig, node, FORMAT)};`);
  }
  if (symbol.flags & ts.SymbolFlags.Variable) {
    const keyword = decl.parent && ts.isVariableDeclarationList(decl.parent) && decl.parent.flags & ts.NodeFlags.Const ? "const" : "let";
    blocks.push(`export ${keyword} ${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), node, FORMAT)};`);
  }
  if (symbol.flags & ts.SymbolFlags.Enum) blocks.push(`export enum ${name} { ${checker.getExportsOfModule(symbol).map((m) => m.name).join(", ")} }`);
  if (blocks.length === 0) blocks.push(`export ${name}; // ${ts.SymbolFlags[symbol.flags] ?? symbol.flags}`);
  return blocks.join("\n");
}

/** Whether an export carries a TSDoc comment: on its declaration, or on the export statement that names it. */
function documented(checker, exported, resolved) {
  if (resolved.getDocumentationComment(checker).length > 0) return true;
  for (const decl of [...(exported.declarations ?? []), ...(resolved.declarations ?? [])]) {
    const statement = ts.isExportSpecifier(decl) ? decl.parent.parent : decl;
    if (ts.getJSDocCommentsAndTags(statement).some((c) => !/@module\b/.test(c.getText()))) return true;
    const text = statement.getSourceFile().text;
    const ranges = ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? [];
    // A file's `@module` comment documents the package, not the statement that happens to follow it.
    if (ranges.some((r) => text.slice(r.pos, r.pos + 3) === "/**" && !/@module\b/.test(text.slice(r.pos, r.end)))) return true;
  }
  return false;
}

/** Every package's report text and its undocumented exports. */
export function surfaces() {
  const prog = program();
  const checker = prog.getTypeChecker();
  return PACKAGES.map((pkg) => {
    const file = prog.getSourceFile(join(root, pkg.entry));
    if (!file) throw new Error(`${pkg.entry} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(file);
    const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name));
    const undocumented = [];
    const entries = exports.map((exported) => {
      const resolved = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!documented(checker, exported, resolved)) undocumented.push(exported.name);
      return describe(checker, exported.name, resolved, file);
    });
    // The checker names a type it cannot reach by name from the entry as import("<absolute path>").T:
    // the path differs between checkouts, the name is what a reader needs.
    const body = entries.join("\n\n").replace(/import\("[^"]*"\)\./g, "");
    const text = [
      `# ${pkg.name}: public API`,
      "",
      `Every export of \`${pkg.name}\` (its entry: \`${pkg.entry}\`) with its signature, as the TypeScript checker`,
      "sees it. Generated by `npm run api:update` (`scripts/api-surface.mjs`); do not edit by hand.",
      "`npm test` fails while this file differs from the sources, so a change to the public surface is a",
      "visible diff here: review it, and say it in CHANGELOG.md.",
      "",
      "```ts",
      body,
      "```",
      "",
    ].join("\n");
    return { ...pkg, text, undocumented };
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes("--check");
  let failed = false;
  for (const s of surfaces()) {
    const path = join(root, s.report);
    if (s.undocumented.length) {
      console.error(`${s.name}: exports without a TSDoc comment: ${s.undocumented.join(", ")}`);
      failed = true;
    }
    const current = existsSync(path) ? readFileSync(path, "utf8") : "";
    if (current === s.text) continue;
    if (check) {
      console.error(`${relative(root, path)} is stale: run npm run api:update and commit the diff`);
      failed = true;
    } else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, s.text);
      console.log(`wrote ${relative(root, path)}`);
    }
  }
  process.exitCode = failed && check ? 1 : 0;
}
