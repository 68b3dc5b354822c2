import { VariableDeclarationKind } from "ts-morph";
import type { ProtocolSchema } from "./json-schema.ts";
import { newSourceFile, render, jsdoc } from "./ts-file.ts";

/** generated/constants.ts: protocol name, limits, reserved statuses and error codes. */
export function emitConstants(schema: ProtocolSchema, headerText: string): string {
  const file = newSourceFile("constants.ts");
  const constant = (name: string, initializer: string, doc: string) =>
    file.addVariableStatement({ isExported: true, declarationKind: VariableDeclarationKind.Const, docs: jsdoc(doc), declarations: [{ name, initializer }] });
  constant("PROTOCOL", `${JSON.stringify(schema["x-brain-protocol"])} as const`, "The host-channel protocol name sent in `register`.");
  const limits = Object.entries(schema["x-brain-limits"]).sort(([a], [b]) => a.localeCompare(b));
  constant("LIMITS", `{\n${limits.map(([k, v]) => `  /** ${v.description} */\n  ${k}: ${v.value},`).join("\n")}\n} as const`, "Limits shared by every runtime and binding.");
  constant("RESERVED_STATUSES", `${JSON.stringify(schema["x-brain-reserved-statuses"])} as const`, "Top-level `status` values reserved for Outcome envelopes.");
  const codes = schema.$defs.ErrorCode?.enum;
  if (!Array.isArray(codes)) throw new Error("ErrorCode must be a string enum");
  constant("ERROR_CODES", `${JSON.stringify(codes)} as const`, schema.$defs.ErrorCode!.description ?? "");
  file.addTypeAlias({ isExported: true, name: "ReservedStatus", type: "(typeof RESERVED_STATUSES)[number]" });
  return render(file, headerText);
}
