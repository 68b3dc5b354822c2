import { VariableDeclarationKind } from "ts-morph";
import { type ExternalSchemas, type ProtocolSchema, type SchemaNode, assertSupported, refName, topologicalOrder } from "./json-schema.ts";
import { TYPEBOX_TYPES, typeboxExpression, typeboxType } from "./typebox-expression.ts";
import { newSourceFile, render, jsdoc } from "./ts-file.ts";

/** contract/conformance-scenario.schema.json: a root `$ref` and `$defs` that may point into the protocol by its `$id`. */
export interface ScenarioSchema {
  $id: string;
  $ref: string;
  description: string;
  $defs: Record<string, SchemaNode>;
}

/**
 * generated/scenario.ts: a TypeBox constant and static type per def of the conformance scenario
 * schema (protocol defs it references are imported, not copied), and `scenarioIssues`, which the
 * conformance runner uses to refuse a malformed scenario file with the path of each problem.
 */
export function emitScenario(scenario: ScenarioSchema, protocol: ProtocolSchema & { $id: string }, headerText: string): string {
  const external: ExternalSchemas = { id: protocol.$id, alias: "P", defs: protocol.$defs };
  for (const name of Object.keys(scenario.$defs)) {
    if (name in protocol.$defs) throw new Error(`conformance-scenario.schema.json: def ${name} has the name of a protocol def; both are exported from @aexhq/brain-protocol`);
  }
  const root = refName(scenario.$ref);
  if (!(root in scenario.$defs)) throw new Error(`conformance-scenario.schema.json: root $ref ${scenario.$ref} names no def`);

  const file = newSourceFile("scenario.ts");
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox", namedImports: ["Type"] });
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox", namedImports: ["Static", ...TYPEBOX_TYPES], isTypeOnly: true });
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox/compiler", namedImports: ["TypeCompiler", "ValueErrorType"] });
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox/errors", namedImports: ["ValueError"], isTypeOnly: true });
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namespaceImport: "P" });
  file.addImportDeclaration({ moduleSpecifier: "./validators.ts", namedImports: ["ValidationIssue"], isTypeOnly: true });
  for (const name of topologicalOrder(scenario.$defs)) {
    const def = scenario.$defs[name]!;
    assertSupported(def, name);
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: jsdoc(def.description),
      declarations: [{ name, type: typeboxType(def, external), initializer: typeboxExpression(def, external) }],
    });
    file.addTypeAlias({ isExported: true, name, type: `Static<typeof ${name}>`, docs: jsdoc(def.description) });
  }
  file.addVariableStatement({
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{ name: "compiled", initializer: `TypeCompiler.Compile(${root})` }],
  });
  file.addFunction({
    isExported: true,
    name: "scenarioIssues",
    docs: jsdoc(`Every reason \`value\` is not a valid conformance scenario (${root}); empty when it is. A union is reported against its closest member.`),
    parameters: [{ name: "value", type: "unknown" }],
    returnType: "ValidationIssue[]",
    statements: [
      "if (compiled.Check(value)) return [];",
      "const found: ValidationIssue[] = [];",
      "collect([...compiled.Errors(value)], found, new Set());",
      "return found;",
    ],
  });
  file.addFunction({
    name: "collect",
    parameters: [{ name: "errors", type: "ValueError[]" }, { name: "found", type: "ValidationIssue[]" }, { name: "seen", type: "Set<string>" }],
    returnType: "void",
    statements: [
      "for (const e of errors) {",
      "  if (e.type === ValueErrorType.Union && e.errors.length > 0) {",
      "    // The member whose discriminating literals matched, with the fewest problems, is the one the author meant.",
      "    const members = e.errors.map((it) => [...it]).sort((a, b) => rank(a) - rank(b));",
      "    if (members[0]!.length > 0) { collect(members[0]!, found, seen); continue; }",
      "  }",
      "  const path = e.path === \"\" ? \"/\" : e.path;",
      "  // TypeBox reports a missing property twice (missing, then wrong type): keep the first reason per path.",
      "  if (!seen.has(path)) { seen.add(path); found.push({ path, message: e.message }); }",
      "}",
    ],
  });
  file.addFunction({
    name: "rank",
    parameters: [{ name: "errors", type: "ValueError[]" }],
    returnType: "number",
    statements: ["return errors.length + (errors.some((e) => e.type === ValueErrorType.Literal) ? 1000 : 0);"],
  });
  const names = Object.keys(scenario.$defs).sort();
  file.addTypeAlias({
    isExported: true,
    name: "ScenarioDefName",
    docs: jsdoc("The name of every $defs entry of contract/conformance-scenario.schema.json."),
    type: names.map((n) => JSON.stringify(n)).join(" | "),
  });
  return render(file, headerText);
}
