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

/** One node-to-node link message def (x-brain-kind "link"), and what it is on a link. */
export interface LinkDef {
  def: string;
  type: string;
  method: string;
  /** A request has `id` and gets one answer; an answer has `re`; a notice has neither. */
  role: "request" | "notice" | "answer";
  /** For a request: the def of the answer it gets when it succeeds (it may get `error` instead). */
  answer?: string;
  description?: string;
}

/**
 * The link message defs, checked: each is a request, a notice or an answer; each request names
 * exactly one success answer in x-brain-answers, and that answer exists; the `LinkMessage` union
 * lists every one of them.
 */
export function linkMessagesOf(schema: ProtocolSchema): LinkDef[] {
  const entries = Object.entries(schema.$defs).filter(([, d]) => d["x-brain-kind"] === "link" && !d.oneOf);
  const byType = new Map(entries.map(([def, d]) => [frameType(d), def]));
  const messages = entries.map(([def, d]): LinkDef => {
    const props = d.properties ?? {};
    if ("id" in props && "re" in props) throw new Error(`${def}: a link message is a request (id) or an answer (re), not both`);
    const role = "id" in props ? "request" : "re" in props ? "answer" : "notice";
    const answers = (d["x-brain-answers"] as { answer: string }[] | undefined) ?? [];
    if (role !== "request" && answers.length > 0) throw new Error(`${def}: only a request (with id) has x-brain-answers`);
    const type = frameType(d);
    const out: LinkDef = { def, type, method: handlerName(type), role, description: d.description };
    if (role === "request") {
      const success = [...new Set(answers.map((a) => a.answer).filter((a) => a !== "error"))];
      if (success.length !== 1) throw new Error(`${def}: a link request names exactly one answer besides error in x-brain-answers, not ${JSON.stringify(success)}`);
      const answer = byType.get(success[0]!);
      if (answer === undefined || !("re" in (schema.$defs[answer]!.properties ?? {}))) throw new Error(`${def}: answer ${success[0]} is no link answer`);
      out.answer = answer;
    }
    return out;
  }).sort((a, b) => a.type.localeCompare(b.type));
  const union = schema.$defs.LinkMessage;
  const members = new Set((union?.oneOf ?? []).map((m) => m.$ref?.replace("#/$defs/", "")));
  const missing = messages.filter((m) => !members.has(m.def)).map((m) => m.def);
  if (union === undefined || missing.length > 0 || members.size !== messages.length) {
    throw new Error(`the LinkMessage union must list every link message def exactly (missing: ${missing.join(", ") || "none"})`);
  }
  return messages;
}

/** generated/router-link.ts: the node-to-node link router (parse, validate, dispatch; answers built from the handler's replies). */
export function emitLinkRouter(schema: ProtocolSchema, headerText: string): string {
  const all = linkMessagesOf(schema);
  const of = (role: LinkDef["role"]) => all.filter((m) => m.role === role);
  const requests = of("request");
  const file = newSourceFile("router-link.ts");
  file.addImportDeclaration({ moduleSpecifier: "./schemas.ts", namedImports: [...all.map((m) => m.def), "DefName"].sort(), isTypeOnly: true });
  file.addImportDeclaration({ moduleSpecifier: "./validators.ts", namedImports: ["validate", "issues"] });
  const union = (role: LinkDef["role"]) => of(role).map((m) => m.def).join(" | ");
  file.addTypeAlias({ isExported: true, name: "LinkRequest", type: union("request"), docs: jsdoc("A link request: it carries an `id` and gets exactly one answer whose `re` is that id.") });
  file.addTypeAlias({ isExported: true, name: "LinkNotice", type: union("notice"), docs: jsdoc("A link notice: one way, never answered.") });
  file.addTypeAlias({ isExported: true, name: "LinkAnswer", type: union("answer"), docs: jsdoc("A link answer: `re` names the request it answers.") });
  file.addInterface({
    isExported: true, name: "LinkAnswers",
    docs: jsdoc("The answer each request type gets when it succeeds (any request may get `error` instead)."),
    properties: requests.map((m) => ({ name: JSON.stringify(m.type), type: m.answer! })),
  });
  file.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    docs: jsdoc("The type of the answer each request type gets when it succeeds, at run time."),
    declarations: [{
      name: "LINK_ANSWER_TYPES",
      type: `{ readonly [T in LinkRequest["type"]]: LinkAnswers[T]["type"] }`,
      initializer: `{ ${requests.map((m) => `${JSON.stringify(m.type)}: ${JSON.stringify(frameType(schema.$defs[m.answer!]!))}`).join(", ")} }`,
    }],
  });
  file.addFunction({
    isExported: true, name: "answersRequest",
    docs: jsdoc("Whether `answer` is the success answer of a request of type `type` (otherwise it is an `error`, or the peer answered out of contract)."),
    typeParameters: [{ name: "T", constraint: `LinkRequest["type"]` }],
    parameters: [{ name: "type", type: "T" }, { name: "answer", type: "LinkAnswer" }],
    returnType: "answer is LinkAnswers[T]",
    statements: "return answer.type === LINK_ANSWER_TYPES[type];",
  });
  file.addTypeAlias({
    isExported: true, name: "LinkReply",
    typeParameters: [{ name: "T", constraint: `LinkRequest["type"]` }],
    type: `Omit<LinkAnswers[T], "type" | "re">`,
    docs: jsdoc("What a request's handler resolves with: its answer without `type` and `re`, which the router adds."),
  });
  file.addInterface({
    isExported: true, name: "LinkMessageHandler",
    docs: jsdoc("Implemented by a runtime node, for what its peers send on a link. The router calls exactly one method per valid request or notice. A request's method returns (or resolves with) its answer's fields, or throws (rejects with) the error to answer; a notice's returns nothing."),
    methods: [...requests, ...of("notice")].map((m) => ({
      name: m.method,
      parameters: [{ name: "message", type: m.def }],
      returnType: m.role === "request" ? `LinkReply<${JSON.stringify(m.type)}> | Promise<LinkReply<${JSON.stringify(m.type)}>>` : "void",
      docs: jsdoc(m.description),
    })),
  });
  file.addInterface({
    isExported: true, name: "LinkMessageError",
    docs: jsdoc("Why a link message was not routed. The receiver answers it with an `error` (`re` = `id`) when it has an `id`, fails its own request `re` when it has a `re` (an answer is never answered), and otherwise answers an `error` without `re`."),
    properties: [
      { name: "code", type: `"malformed_json" | "unknown_frame" | "invalid_frame"` },
      { name: "message", type: "string" },
      { name: "id", type: "number", hasQuestionToken: true, docs: jsdoc("The message's `id`, when it has a usable one.") },
      { name: "re", type: "number", hasQuestionToken: true, docs: jsdoc("The message's `re`, when it has a usable one.") },
      { name: "details", type: "unknown", hasQuestionToken: true },
    ],
  });
  file.addTypeAlias({
    isExported: true, name: "LinkRoute",
    docs: jsdoc("What routing one message gave: a request's answer to send once it settles (a rejection is the receiver's to turn into an `error` with `re` = `id`), a notice handled, an answer for the request `re` names, or an error."),
    type: `{ kind: "request"; id: number; answer: Promise<LinkAnswer> } | { kind: "notice" } | { kind: "answer"; answer: LinkAnswer } | { kind: "error"; error: LinkMessageError }`,
  });
  const cases = all.map((m) => {
    const check = `    if (!validate.${m.def}.Check(message)) return invalid(${JSON.stringify(m.def)}, message);`;
    if (m.role === "answer") return `  case ${JSON.stringify(m.type)}:\n${check}\n    return { kind: "answer", answer: message };`;
    if (m.role === "notice") return `  case ${JSON.stringify(m.type)}:\n${check}\n    handler.${m.method}(message);\n    return { kind: "notice" };`;
    const answerType = frameType(schema.$defs[m.answer!]!);
    return `  case ${JSON.stringify(m.type)}: {
${check}
    const id = message.id;
    const answer = Promise.resolve(message).then((m) => handler.${m.method}(m)).then((reply): ${m.answer} => ({ type: ${JSON.stringify(answerType)}, re: id, ...reply }));
    return { kind: "request", id, answer };
  }`;
  }).join("\n");
  file.addFunction({
    isExported: true, name: "routeLinkMessage",
    docs: jsdoc("Parses and validates one raw link message, then dispatches a request or a notice to `handler`. Returns what it did, or a LinkMessageError instead of calling anything when the message is bad."),
    parameters: [{ name: "raw", type: "string" }, { name: "handler", type: "LinkMessageHandler" }],
    returnType: "LinkRoute",
    statements: `let value: unknown;
try {
  value = JSON.parse(raw);
} catch (e) {
  return { kind: "error", error: { code: "malformed_json", message: \`link message is not JSON: \${(e as Error).message}\` } };
}
if (typeof value !== "object" || value === null || Array.isArray(value)) {
  return { kind: "error", error: { code: "invalid_frame", message: "a link message must be a JSON object" } };
}
const message = value as Record<string, unknown>;
switch (message.type) {
${cases}
  default:
    return { kind: "error", error: withIds({ code: "unknown_frame", message: \`unknown link message type \${JSON.stringify(message.type)}\` }, message) };
}`,
  });
  file.addFunction({
    name: "invalid",
    parameters: [{ name: "def", type: "DefName" }, { name: "message", type: "Record<string, unknown>" }],
    returnType: "LinkRoute",
    statements: `const found = issues(def, message);
const first = found[0];
return { kind: "error", error: withIds({ code: "invalid_frame", message: \`invalid \${def}\${first ? \`: \${first.path} \${first.message}\` : ""}\`, details: found }, message) };`,
  });
  file.addFunction({
    name: "withIds",
    docs: jsdoc("Adds the message's `id` and `re` when they are usable, so the error can answer the one and fail the other."),
    parameters: [{ name: "error", type: "LinkMessageError" }, { name: "message", type: "Record<string, unknown>" }],
    returnType: "LinkMessageError",
    statements: `for (const key of ["id", "re"] as const) {
  const n = message[key];
  if (typeof n === "number" && Number.isInteger(n) && n >= 0) error[key] = n;
}
return error;`,
  });
  return render(file, headerText);
}
