import { VariableDeclarationKind } from "ts-morph";
import { type ProtocolSchema, type Direction, frameType, handlerName } from "./json-schema.ts";
import { newSourceFile, render, jsdoc } from "./ts-file.ts";

interface FrameDef { def: string; type: string; method: string; description?: string }

export function framesOf(schema: ProtocolSchema, direction: Direction): FrameDef[] {
  return Object.entries(schema.$defs)
    .filter(([, d]) => d["x-brain-kind"] === "frame" && d["x-brain-direction"] === direction)
    .map(([def, d]) => ({ def, type: frameType(d), method: handlerName(frameType(d)), description: d.description }))
    .sort((a, b) => a.type.localeCompare(b.type));
}

const ENDS = {
  "host-to-runtime": { union: "HostToRuntimeFrame", handler: "RuntimeFrameHandler", route: "routeRuntimeFrame", file: "router-runtime.ts", who: "the runtime, for frames a host sends" },
  "runtime-to-host": { union: "RuntimeToHostFrame", handler: "HostFrameHandler", route: "routeHostFrame", file: "router-host.ts", who: "a host binding, for frames the runtime sends" },
} as const;

/** generated/frames.ts: the frame unions and the shared parsing step of both routers. */
export function emitFrames(schema: ProtocolSchema, headerText: string): string {
  const file = newSourceFile("frames.ts");
  const all = [...framesOf(schema, "host-to-runtime"), ...framesOf(schema, "runtime-to-host")];
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namedImports: all.map((f) => f.def).sort(), isTypeOnly: true });
  file.addImportDeclaration({ moduleSpecifier: "./constants.ts", namedImports: ["LIMITS"] });
  for (const direction of ["host-to-runtime", "runtime-to-host"] as const) {
    const frames = framesOf(schema, direction);
    file.addTypeAlias({
      isExported: true, name: ENDS[direction].union,
      docs: jsdoc(`Every frame sent ${direction === "host-to-runtime" ? "by a host to the runtime" : "by the runtime to a host"}.`),
      type: frames.map((f) => f.def).join(" | "),
    });
  }
  file.addInterface({
    isExported: true, name: "FrameError",
    docs: jsdoc("Why a frame was not routed. The receiver answers with an `error` frame built from it."),
    properties: [
      { name: "code", type: `"malformed_json" | "unknown_frame" | "invalid_frame" | "frame_too_large"` },
      { name: "message", type: "string" },
      { name: "ref", type: "number", hasQuestionToken: true },
      { name: "details", type: "unknown", hasQuestionToken: true },
    ],
  });
  file.addVariableStatement({
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{ name: "encoder", initializer: "new TextEncoder()" }],
  });
  file.addFunction({
    isExported: true, name: "parseFrame",
    docs: jsdoc("Size check and JSON parse shared by both routers. Returns the object, or a FrameError."),
    parameters: [{ name: "raw", type: "string" }],
    returnType: "{ frame: Record<string, unknown> } | { error: FrameError }",
    statements: `// A UTF-8 character is at most 3 bytes per UTF-16 unit, so short frames skip the encode.
if (raw.length * 3 > LIMITS.maxFrameBytes && encoder.encode(raw).length > LIMITS.maxFrameBytes) {
  // Still read (the runtime receives frames up to 4x the limit) so that the error names the frame's ref.
  const error: FrameError = { code: "frame_too_large", message: \`frame exceeds \${LIMITS.maxFrameBytes} bytes\` };
  try {
    const whole: unknown = JSON.parse(raw);
    const ref = typeof whole === "object" && whole !== null && !Array.isArray(whole) ? frameRef(whole as Record<string, unknown>) : undefined;
    if (ref !== undefined) error.ref = ref;
  } catch {
    // not JSON either: no ref to name
  }
  return { error };
}
let value: unknown;
try {
  value = JSON.parse(raw);
} catch (e) {
  return { error: { code: "malformed_json", message: \`frame is not JSON: \${(e as Error).message}\` } };
}
if (typeof value !== "object" || value === null || Array.isArray(value)) {
  return { error: { code: "invalid_frame", message: "a frame must be a JSON object" } };
}
return { frame: value as Record<string, unknown> };`,
  });
  file.addFunction({
    isExported: true, name: "frameRef",
    docs: jsdoc("The frame's `ref`, when it has a usable one, so an error can name the offending frame."),
    parameters: [{ name: "frame", type: "Record<string, unknown>" }],
    returnType: "number | undefined",
    statements: `const ref = frame.ref;
return typeof ref === "number" && Number.isInteger(ref) && ref >= 0 ? ref : undefined;`,
  });
  return render(file, headerText);
}

/** generated/router-runtime.ts and router-host.ts: validate, then call the handler method. */
export function emitRouter(schema: ProtocolSchema, direction: Direction, headerText: string): { file: string; text: string } {
  const end = ENDS[direction];
  const frames = framesOf(schema, direction);
  const file = newSourceFile(end.file);
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namedImports: frames.map((f) => f.def), isTypeOnly: true });
  file.addImportDeclaration({ moduleSpecifier: "./validators.ts", namedImports: ["validate", "issues"] });
  file.addImportDeclaration({ moduleSpecifier: "./frames.ts", namedImports: ["parseFrame", "frameRef"] });
  file.addImportDeclaration({ moduleSpecifier: "./frames.ts", namedImports: ["FrameError"], isTypeOnly: true });
  file.addInterface({
    isExported: true, name: end.handler,
    docs: jsdoc(`Implemented by ${end.who}. The router calls exactly one method per valid frame.`),
    methods: frames.map((f) => ({
      name: f.method,
      parameters: [{ name: "frame", type: f.def }],
      returnType: "void",
      docs: jsdoc(f.description),
    })),
  });
  const cases = frames.map((f) => `  case ${JSON.stringify(f.type)}:
    if (!validate.${f.def}.Check(frame)) return invalid(${JSON.stringify(f.def)}, frame, issues(${JSON.stringify(f.def)}, frame));
    handler.${f.method}(frame);
    return undefined;`).join("\n");
  file.addFunction({
    isExported: true, name: end.route,
    docs: jsdoc(`Parses, size-checks and validates one raw frame, then dispatches it to \`handler\`. Returns a FrameError instead of calling anything when the frame is bad.`),
    parameters: [{ name: "raw", type: "string" }, { name: "handler", type: end.handler }],
    returnType: "FrameError | undefined",
    statements: `const parsed = parseFrame(raw);
if ("error" in parsed) return parsed.error;
const frame = parsed.frame;
switch (frame.type) {
${cases}
  default:
    return { code: "unknown_frame", message: \`unknown frame type \${JSON.stringify(frame.type)}\`, ref: frameRef(frame) };
}`,
  });
  file.addFunction({
    name: "invalid",
    parameters: [{ name: "def", type: "string" }, { name: "frame", type: "Record<string, unknown>" }, { name: "found", type: "{ path: string; message: string }[]" }],
    returnType: "FrameError",
    statements: `const first = found[0];
return { code: "invalid_frame", message: \`invalid \${def}\${first ? \`: \${first.path} \${first.message}\` : ""}\`, ref: frameRef(frame), details: found };`,
  });
  return { file: end.file, text: render(file, headerText) };
}
