import { VariableDeclarationKind } from "ts-morph";
import { type ProtocolSchema, assertSupported, topologicalOrder } from "./json-schema.ts";
import { typeboxExpression } from "./typebox-expression.ts";
import { newSourceFile, render, jsdoc } from "./ts-file.ts";

/** generated/schemas.ts: one TypeBox constant and one static type per $defs entry. */
export function emitSchemas(schema: ProtocolSchema, headerText: string): string {
  const file = newSourceFile("schemas.ts");
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox", namedImports: ["Type"] });
  file.addImportDeclaration({ moduleSpecifier: "@sinclair/typebox", namedImports: ["Static"], isTypeOnly: true });
  for (const name of topologicalOrder(schema.$defs)) {
    const def = schema.$defs[name]!;
    assertSupported(def, name);
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: jsdoc(def.description),
      declarations: [{ name, initializer: typeboxExpression(def) }],
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
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namespaceImport: "S" });
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namedImports: ["DefName"], isTypeOnly: true });
  file.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    docs: jsdoc("Compiled TypeBox validators, one per def: `validate.Outcome.Check(value)`."),
    declarations: [{
      name: "validate",
      initializer: `{\n${names.map((n) => `  ${n}: TypeCompiler.Compile(S.${n}),`).join("\n")}\n} as const`,
    }],
  });
  file.addInterface({
    isExported: true,
    name: "ValidationIssue",
    docs: jsdoc("One reason a value does not match a def: a JSON pointer and a message."),
    properties: [{ name: "path", type: "string" }, { name: "message", type: "string" }],
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
      "return [...validator.Errors(value)].map((e) => ({ path: e.path === \"\" ? \"/\" : e.path, message: e.message }));",
    ],
  });
  return render(file, headerText);
}
