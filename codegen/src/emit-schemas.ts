import { VariableDeclarationKind } from "ts-morph";
import { type ProtocolSchema, type SchemaNode, assertSupported, topologicalOrder, refName } from "./json-schema.ts";
import { TYPEBOX_TYPES, typeboxExpression, typeboxType } from "./typebox-expression.ts";
import { newSourceFile, render, jsdoc } from "./ts-file.ts";

/** generated/schemas.ts: one TypeBox constant and one static type per $defs entry. */
export function emitSchemas(schema: ProtocolSchema, headerText: string): string {
  const file = newSourceFile("schemas.ts");
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox", namedImports: ["Type"] });
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox", namedImports: ["Static", ...TYPEBOX_TYPES], isTypeOnly: true });
  for (const name of topologicalOrder(schema.$defs)) {
    const def = schema.$defs[name]!;
    assertSupported(def, name);
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: jsdoc(def.description),
      declarations: [{ name, type: typeboxType(def), initializer: typeboxExpression(def) }],
    });
    file.addTypeAlias({ isExported: true, name, type: `Static<typeof ${name}>`, docs: jsdoc(def.description) });
  }
  const names = Object.keys(schema.$defs).sort();
  file.addTypeAlias({
    isExported: true,
    name: "DefName",
    docs: jsdoc("The name of every $defs entry of contract/protocol.schema.json."),
    type: names.map((n) => JSON.stringify(n)).join(" | "),
  });
  return render(file, headerText);
}

/** generated/validators.ts: compiled validators for every def, and a uniform issue list. */
export function emitValidators(schema: ProtocolSchema, headerText: string): string {
  const names = Object.keys(schema.$defs).sort();
  const file = newSourceFile("validators.ts");
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox/compiler", namedImports: ["TypeCompiler"] });
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox/compiler", namedImports: ["TypeCheck"], isTypeOnly: true });
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namespaceImport: "S" });
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namedImports: ["DefName"], isTypeOnly: true });
  file.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    docs: jsdoc("Compiled TypeBox validators, one per def: `validate.Outcome.Check(value)`."),
    declarations: [{
      name: "validate",
      type: `{ readonly [K in DefName]: TypeCheck<(typeof S)[K]> }`,
      initializer: `{\n${names.map((n) => `  ${n}: TypeCompiler.Compile(S.${n}),`).join("\n")}\n}`,
    }],
  });
  file.addInterface({
    isExported: true,
    name: "ValidationIssue",
    docs: jsdoc("One reason a value does not match a def: a JSON pointer and a message."),
    properties: [{ name: "path", type: "string" }, { name: "message", type: "string" }],
  });
  const unions = discriminatedUnions(schema);
  file.addVariableStatement({
    declarationKind: VariableDeclarationKind.Const,
    docs: jsdoc("Unions whose members are told apart by one property: issues are reported against the member the value names."),
    declarations: [{ name: "discriminated", type: "Partial<Record<DefName, { key: string; members: Record<string, DefName> }>>", initializer: JSON.stringify(unions, null, 2) }],
  });
  file.addFunction({
    isExported: true,
    name: "issues",
    docs: jsdoc("Every reason `value` does not match the def `name` (empty when it matches)."),
    parameters: [{ name: "name", type: "DefName" }, { name: "value", type: "unknown" }],
    returnType: "ValidationIssue[]",
    statements: [
      "const validator = validate[name];",
      "if (validator.Check(value)) return [];",
      "const union = discriminated[name];",
      "const tag = union && typeof value === \"object\" && value !== null ? (value as Record<string, unknown>)[union.key] : undefined;",
      "const member = union && typeof tag === \"string\" ? union.members[tag] : undefined;",
      "if (member) return issues(member, value);",
      "if (union) return [{ path: `/${union.key}`, message: `Expected one of ${Object.keys(union.members).map((m) => JSON.stringify(m)).join(\", \")}` }];",
      "// TypeBox reports a missing property twice (missing, then wrong type): keep the first reason per path.",
      "const seen = new Set<string>();",
      "const found: ValidationIssue[] = [];",
      "for (const e of validator.Errors(value)) {",
      "  const path = e.path === \"\" ? \"/\" : e.path;",
      "  if (!seen.has(path)) { seen.add(path); found.push({ path, message: e.message }); }",
      "}",
      "return found;",
    ],
  });
  return render(file, headerText);
}

function discriminatedUnions(schema: ProtocolSchema): Record<string, { key: string; members: Record<string, string> }> {
  const out: Record<string, { key: string; members: Record<string, string> }> = {};
  for (const [name, def] of Object.entries(schema.$defs).sort(([a], [b]) => a.localeCompare(b))) {
    if (!def.oneOf) continue;
    const members = def.oneOf.map((m) => refName(m.$ref!));
    const shapes = members.map((m) => schema.$defs[m]!);
    const key = Object.keys(shapes[0]!.properties ?? {}).find((k) => shapes.every((s) => tags(s.properties?.[k]).length > 0));
    if (!key) continue;
    const map: Record<string, string> = {};
    members.forEach((m, i) => { for (const t of tags(shapes[i]!.properties![key])) map[t] = m; });
    out[name] = { key, members: map };
  }
  return out;
}

function tags(node: SchemaNode | undefined): string[] {
  if (!node) return [];
  if (typeof node.const === "string") return [node.const];
  if (node.enum?.every((v) => typeof v === "string")) return node.enum as string[];
  return [];
}
