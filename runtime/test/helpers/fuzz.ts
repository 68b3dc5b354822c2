// The fuzz suite of issue 16: fast-check generates malformed and adversarial HTTP requests (raw
// TCP: any method, request target, header and body bytes), WebSocket frames and raw bytes from the
// contract's examples, and they are sent to a live `brain serve` subprocess (the CLI, from the
// sources, with a SQLite journal). Then the run is judged as a whole: no 5xx, no `internal` code
// anywhere (HTTP bodies, error/rejected/model_result frames, journal records), no crash or hang,
// GET /v1/sessions still 200, a normal scripted turn still completes, every session's journal is
// gap-free from 1, and after a clean stop `PRAGMA integrity_check` of the journal file is ok.
//
// Cases come from one seed (`fc.sample`), so `--seed N --cases M` replays a run and `--only i`
// replays one case. Used by test/fuzz.test.ts (a few hundred cases in `npm test`) and
// test/fuzz-main.mts (`npm run fuzz`, 10,000 by default).
import fc from "fast-check";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { WebSocket } from "ws";
import { PROTOCOL, validate } from "@aexhq/brain-protocol";
import type { JournalRecord, ToolContract } from "@aexhq/brain-protocol";
import { contractDigest } from "../../src/index.ts";
import { orAfter } from "./provider-server.ts";

const runtimeDir = fileURLToPath(new URL("../..", import.meta.url));
const examplesDir = fileURLToPath(new URL("../../../contract/examples/", import.meta.url));

/** Every contract example by def name (mutation bases). */
export const EXAMPLES: Record<string, unknown> = Object.fromEntries(
  readdirSync(examplesDir).filter((f) => f.endsWith(".json")).sort().map((f) => [f.slice(0, -5), JSON.parse(readFileSync(join(examplesDir, f), "utf8"))]),
);
const EXAMPLE_NAMES = Object.keys(EXAMPLES);
const HOST_FRAMES = ["EmitFrame", "EmitResultFrame", "FinishFrame", "ReturnedFrame", "ModelRequestFrame", "PingFrame", "RegisterFrame"].filter((n) => n in EXAMPLES);
/** Runtime→host frame type → its contract def: every frame the runtime sends must match. */
const DEF_OF: Record<string, string> = {
  registered: "RegisteredFrame", invoke: "InvokeFrame", cancel: "CancelFrame", committed: "CommittedFrame",
  rejected: "RejectedFrame", model_result: "ModelResultFrame", environment_result: "EnvironmentResultFrame", error: "ErrorFrame", pong: "PongFrame",
};
const INTERNAL = /"code"\s*:\s*"internal"/;
const TOKEN_PLACEHOLDER = "operator-token";

// ---------------------------------------------------------------------------------------------
// Case model and arbitraries

/** A replacement that is materialized only when the text is written (deep nesting, huge strings). */
type Lazy = { lazy: "deep"; depth: number; shape: "array" | "object" } | { lazy: "huge"; chars: number };
type Replacement = { value: unknown } | Lazy;
interface Mutation {
  /** Child choices while walking down from the root (index modulo the children at each level). */
  walk: number[];
  /** `slot`: replace one of the def's free-form JSON values (options, tool input, emit data, outcome value), where any shape passes validation. */
  op: "replace" | "delete" | "addKey" | "wrap" | "repeat" | "slot";
  key: string;
  with: Replacement;
}
type TextMutation =
  | { op: "none" }
  | { op: "truncate"; at: number }
  | { op: "insert"; at: number; bytes: number[] }
  | { op: "bom" }
  | { op: "garbage"; bytes: number[] };
interface Body {
  base: string;
  mutations: Mutation[];
  text: TextMutation;
}
type Id = { real: number } | { text: string };
interface HttpCase {
  kind: "http";
  method: string;
  route: string;
  id: Id;
  query: string;
  /** A raw request target that replaces the route (odd paths, percent-escapes, absolute forms). */
  rawTarget: string | null;
  auth: { kind: "valid" | "none" | "wrong" | "scheme" | "spaces" | "latin1" | "huge"; text: string };
  contentType: string | null;
  accept: string | null;
  lastEventId: string | null;
  extraHeaders: Array<[string, string]>;
  framing: "length" | "none" | "chunked" | "short";
  body: Body | null;
}
interface FrameSpec {
  body: Body;
  /** Send on the case's live call (when it has one). */
  onLiveCall: boolean;
  realToken: boolean;
  encoding: "text" | "binary" | "invalid-utf8";
}
interface WsCase {
  kind: "ws";
  live: boolean;
  frames: FrameSpec[];
}
interface GarbageCase {
  kind: "garbage";
  bytes: number[];
}
export type FuzzCase = HttpCase | WsCase | GarbageCase;

const INVALID_UTF8 = [[0xff], [0xfe, 0xff], [0xc0, 0x80], [0xe0, 0xa4], [0xed, 0xa0, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80]];

const weird = fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, "", " ", "null", "\u0000", "\ud800", "💥", "../..", "%", [], {}, [null], { "": null }, { __proto__: 1 }, { constructor: { prototype: 1 } });
const replacementArb: fc.Arbitrary<Replacement> = fc.oneof(
  { weight: 5, arbitrary: weird.map((value) => ({ value })) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map((value) => ({ value })) },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })).map((value) => ({ value })) },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value })) },
  { weight: 2, arbitrary: fc.record({ lazy: fc.constant("deep" as const), depth: fc.oneof(fc.integer({ min: 100, max: 140 }), fc.integer({ min: 141, max: 3000 }), fc.integer({ min: 3000, max: 30_000 })), shape: fc.constantFrom("array" as const, "object" as const) }) },
  { weight: 1, arbitrary: fc.record({ lazy: fc.constant("huge" as const), chars: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1000, max: 300_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 1_000_000, max: 4_000_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 4_194_000, max: 5_000_000 }) }) }) },
);
const deepArb = fc.record({ lazy: fc.constant("deep" as const), depth: fc.oneof(fc.integer({ min: 100, max: 140 }), fc.integer({ min: 141, max: 3000 }), fc.integer({ min: 3000, max: 30_000 })), shape: fc.constantFrom("array" as const, "object" as const) });
const slotMutationArb: fc.Arbitrary<Mutation> = fc.record({
  walk: fc.array(fc.nat(50), { maxLength: 4 }),
  op: fc.constant("slot" as const),
  key: fc.constant(""),
  with: fc.oneof({ weight: 4, arbitrary: deepArb }, { weight: 1, arbitrary: replacementArb }),
});
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof({ weight: 4, arbitrary: fc.record({
  walk: fc.array(fc.nat(50), { maxLength: 8 }),
  op: fc.constantFrom("replace", "replace", "replace", "delete", "addKey", "wrap", "repeat"),
  key: fc.oneof(fc.constantFrom("type", "ref", "callId", "data", "outcome", "status", "__proto__", "constructor", "toString", "tools", "model", "script"), fc.string({ maxLength: 10 })),
  with: replacementArb,
}) }, { weight: 1, arbitrary: slotMutationArb });
const textMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ op: "none" as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("insert" as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.oneof(fc.constantFrom(...INVALID_UTF8), fc.array(fc.nat(255), { minLength: 1, maxLength: 8 })) }) },
  { weight: 1, arbitrary: fc.constant({ op: "bom" as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("garbage" as const), bytes: fc.array(fc.nat(255), { maxLength: 64 }) }) },
);
const bodyArb = (bases: fc.Arbitrary<string>): fc.Arbitrary<Body> =>
  fc.record({ base: bases, mutations: fc.oneof({ weight: 1, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 3, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }), text: textMutationArb });

/** Path segments: real ids, bad percent-escapes, unicode, dots, very long ones. */
const idArb: fc.Arbitrary<Id> = fc.oneof(
  { weight: 7, arbitrary: fc.nat(1000).map((real) => ({ real })) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom("%FF%FE", "%E0%A4%A", "%", "%%", "%2", "%C0%80", "%ED%A0%80", "%00", "..", ".", "%2e%2e", "%2F", "ses_nope", "ses_%ZZ", "a%20b", "%F0%9F%92%A5"),
      fc.string({ unit: "binary", maxLength: 20 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "x"))),
      fc.array(fc.constantFrom("%", "F", "E", "0", "8", "A", "a", "-", "_", ":", ".", "~", "@", "+"), { maxLength: 30 }).map((a) => a.join("")),
      fc.integer({ min: 200, max: 9000 }).map((n) => "x".repeat(n)),
    ).map((text) => ({ text })),
  },
);
const rawTargetArb = fc.oneof(
  fc.constantFrom("///", "//", "/", "*", "//evil.example/v1/sessions", "http://h/v1/sessions", "http://h", "/v1/sessions?%", "/v1/sessions?after=%FF", "/v1/sessions#frag",
    "/v1/sessions/..%2F..%2Fetc", "/v1//sessions", "/v1/sessions/%/events?after=1", "/v1/hosts/%", "/v1/hosts/connect", "/healthz?%%", "/v1/sessions/%E0%A4%A/events",
    "/\\v1\\sessions", "/v1/sessions;x=1", "/%2e%2e/v1/sessions", "/v1/components/%ZZ", "/v1/calls/%C0%80/http", "/v1/keys", "/v1/keys/%FF", "/v1/hosts", "/v1/hosts/", "/ui", "/ui/%FF", "/ui/hosts", "/ui/keys", "/ui/assets/journal-rules.js", "/ui/assets/%2e%2e%2fjournal%2fsession.ts"),
  fc.array(fc.constantFrom("/", "%", "v1", "sessions", "hosts", "events", "..", ".", "?", "#", "&", "=", "%FF", "%2F", "ses_", "😀", "\\", "@", ":"), { maxLength: 12 }).map((a) => "/" + a.join("")),
);
const DEF_OF_ROUTE: Record<string, string> = { sessions: "CreateSessionRequest", messages: "SendMessageRequest", cancel: "CancelRequest", calls: "HttpCallbackRequest", keys: "CreateKeyRequest" };
/** Routes with the method they take, weighted towards session creation and messages. */
const ROUTES: Array<[string, string, number]> = [
  ["sessions", "POST", 8], ["sessions", "GET", 1], ["session", "GET", 2], ["session", "DELETE", 1], ["messages", "POST", 5], ["cancel", "POST", 2],
  ["events", "GET", 3], ["hosts", "GET", 1], ["components", "PUT", 1], ["calls", "POST", 1], ["healthz", "GET", 1], ["keys", "POST", 1], ["key", "DELETE", 1], ["hostList", "GET", 1],
];
const routeArb = fc.oneof(...ROUTES.map(([route, method, weight]) => ({ weight, arbitrary: fc.constant({ route, method }) })));
const methodArb = (natural: string) => fc.oneof(
  { weight: 12, arbitrary: fc.constant(natural) },
  { weight: 2, arbitrary: fc.constantFrom("GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH") },
  { weight: 1, arbitrary: fc.constantFrom("TRACE", "CONNECT", "BREW", "get", "G ET", "") },
);
const httpArb: fc.Arbitrary<HttpCase> = routeArb.chain(({ route, method }) => fc.record({
  kind: fc.constant("http" as const),
  method: methodArb(method),
  route: fc.constant(route),
  id: idArb,
  query: fc.oneof(
    { weight: 6, arbitrary: fc.constant("") },
    { weight: 2, arbitrary: fc.constantFrom("?after=0", "?after=-1", "?after=1e3", "?after=abc", "?after=99999999999999999999", "?expand=requests", "?expand=nope", "?expand=requests,requests", "?limit=0", "?limit=5", "?limit=x", "?status=idle", "?status=%FF", "?cursor=%", "?after=1&after=2") },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => "?" + encodeURIComponent(s)) },
  ),
  rawTarget: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: rawTargetArb }),
  auth: fc.oneof(
    { weight: 14, arbitrary: fc.constant({ kind: "valid" as const, text: "" }) },
    { weight: 1, arbitrary: fc.constantFrom("none" as const, "wrong" as const, "scheme" as const, "spaces" as const, "latin1" as const, "huge" as const).chain((kind) => fc.string({ maxLength: 12 }).map((text) => ({ kind, text }))) },
  ),
  contentType: fc.oneof({ weight: 4, arbitrary: fc.constant("application/json") }, { weight: 1, arbitrary: fc.constantFrom(null, "text/plain", "application/wasm", "multipart/form-data; boundary=x", "application/json; charset=latin1", "\u00ff") }),
  accept: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom("text/event-stream", "*/*", "application/json, text/event-stream", "text/html") }),
  lastEventId: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom("0", "3", "-1", "x", "1.5", "99999999999999999999999", "") }),
  extraHeaders: fc.array(fc.tuple(fc.constantFrom("x-a", "content-encoding", "transfer-encoding", "expect", "x-forwarded-for", "host", "upgrade", "connection", "cookie", "te"), fc.constantFrom("gzip", "chunked", "100-continue", "websocket", "keep-alive", "", "x".repeat(300), "\u00e9")), { maxLength: 2 }),
  framing: fc.oneof({ weight: 8, arbitrary: fc.constant("length" as const) }, { weight: 1, arbitrary: fc.constantFrom("none" as const, "chunked" as const, "short" as const) }),
  body: fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 6, arbitrary: bodyArb(fc.oneof({ weight: 6, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constantFrom(...EXAMPLE_NAMES) })) }),
}));
/** Only the body is mutated (1-2 mutations, often into a free-form slot); everything else is a valid request of the route. */
const focusedHttpArb: fc.Arbitrary<HttpCase> = routeArb.chain(({ route, method }) => fc.record({
  kind: fc.constant("http" as const),
  method: fc.constant(method),
  route: fc.constant(route),
  id: fc.nat(1000).map((real): Id => ({ real })),
  query: fc.constant(""),
  rawTarget: fc.constant(null),
  auth: fc.constant({ kind: "valid" as const, text: "" }),
  contentType: fc.constant("application/json"),
  accept: fc.constant(null),
  lastEventId: fc.constant(null),
  extraHeaders: fc.constant([]),
  framing: fc.constant("length" as const),
  body: fc.record({ base: fc.constant(""), mutations: fc.array(fc.oneof(mutationArb, slotMutationArb), { minLength: 1, maxLength: 2 }), text: fc.constant({ op: "none" as const }) }),
}));
const focusedFrameArb: fc.Arbitrary<FrameSpec> = fc.record({
  body: fc.record({ base: fc.constantFrom(...HOST_FRAMES), mutations: fc.array(fc.oneof(mutationArb, slotMutationArb), { minLength: 1, maxLength: 2 }), text: fc.constant({ op: "none" as const }) }),
  onLiveCall: fc.constant(true),
  realToken: fc.constant(true),
  encoding: fc.constant("text" as const),
});
const frameArb: fc.Arbitrary<FrameSpec> = fc.record({
  body: bodyArb(fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...HOST_FRAMES) }, { weight: 1, arbitrary: fc.constantFrom(...EXAMPLE_NAMES) })),
  onLiveCall: fc.boolean(),
  realToken: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  encoding: fc.oneof({ weight: 20, arbitrary: fc.constant("text" as const) }, { weight: 1, arbitrary: fc.constantFrom("binary" as const, "invalid-utf8" as const) }),
});
const wsArb: fc.Arbitrary<WsCase> = fc.oneof(
  fc.record({ kind: fc.constant("ws" as const), live: fc.boolean(), frames: fc.array(frameArb, { minLength: 1, maxLength: 6 }) }),
  fc.record({ kind: fc.constant("ws" as const), live: fc.constant(true), frames: fc.array(focusedFrameArb, { minLength: 1, maxLength: 4 }) }),
);
const garbageArb: fc.Arbitrary<GarbageCase> = fc.record({
  kind: fc.constant("garbage" as const),
  bytes: fc.oneof(fc.array(fc.nat(255), { maxLength: 200 }), fc.string({ maxLength: 200 }).map((s) => [...Buffer.from(s + "\r\n\r\n")])),
});
export const caseArb: fc.Arbitrary<FuzzCase> = fc.oneof({ weight: 7, arbitrary: httpArb }, { weight: 5, arbitrary: focusedHttpArb }, { weight: 7, arbitrary: wsArb }, { weight: 1, arbitrary: garbageArb });

/** The first `count` cases of `seed` (the same seed always gives the same cases, in the same order). */
export function generateCases(seed: number, count: number): FuzzCase[] {
  return fc.sample(caseArb, { seed, numRuns: count });
}

// ---------------------------------------------------------------------------------------------
// Materializing a case: bodies as bytes

const PLACEHOLDER = /"⟦LAZY(\d+)⟧"/g;

/** Where each def holds free-form JSON (JsonValue): values there pass validation and travel on to the journal. */
const SLOTS: Record<string, Array<Array<string | number>>> = {
  CreateSessionRequest: [["tools", 0, "options"], ["model", "script", 0, "toolCalls", 0, "input"], ["tools", 0, "options", "prefix"]],
  EmitFrame: [["data"]],
  EmitResultFrame: [["outcome", "value"]],
  FinishFrame: [["outcome", "value"]],
  HttpCallbackRequest: [["outcome", "value"]],
  ModelRequestFrame: [["request", "messages", 0, "content"]],
  SendMessageRequest: [["text"]],
};

function children(v: unknown): Array<[string | number, unknown]> {
  if (Array.isArray(v)) return v.map((x, i) => [i, x]);
  if (typeof v === "object" && v !== null) return Object.entries(v);
  return [];
}

/** Applies mutations to a deep copy of `base`; lazy replacements become placeholders filled in `bodyBytes`. */
function mutate(base: unknown, mutations: Mutation[], lazies: Lazy[], def: string): unknown {
  let root: unknown = base === undefined ? undefined : structuredClone(base);
  const materialize = (r: Replacement): unknown => {
    if ("lazy" in r) {
      lazies.push(r);
      return `⟦LAZY${lazies.length - 1}⟧`;
    }
    // A copy: fast-check hands out the same constant objects to many cases, and later mutations write into them.
    return structuredClone(r.value);
  };
  for (const m of mutations) {
    const slots = SLOTS[def];
    if (m.op === "slot" && slots !== undefined) {
      const path = slots[m.walk.length % slots.length]!;
      let cur = typeof root === "object" && root !== null ? (root as Record<string | number, unknown>) : undefined;
      for (const k of path.slice(0, -1)) cur = typeof cur?.[k] === "object" && cur[k] !== null ? (cur[k] as Record<string | number, unknown>) : undefined;
      if (cur !== undefined) cur[path.at(-1)!] = materialize(m.with);
      continue;
    }
    // Walk down as far as the walk goes (or a leaf), remembering the parent and the key.
    let parent: unknown = undefined;
    let key: string | number | undefined;
    let cur = root;
    for (const step of m.walk) {
      const kids = children(cur);
      if (kids.length === 0) break;
      const [k, v] = kids[step % kids.length]!;
      parent = cur;
      key = k;
      cur = v;
    }
    const set = (value: unknown) => {
      if (parent === undefined) root = value;
      else (parent as Record<string | number, unknown>)[key!] = value;
    };
    switch (m.op) {
      case "replace":
        set(materialize(m.with));
        break;
      case "delete":
        if (parent === undefined) root = undefined;
        else if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete (parent as Record<string, unknown>)[key as string];
        break;
      case "addKey":
        if (typeof cur === "object" && cur !== null && !Array.isArray(cur)) Object.defineProperty(cur, m.key, { value: materialize(m.with), enumerable: true, writable: true, configurable: true });
        else if (Array.isArray(cur)) cur.push(materialize(m.with));
        else set({ [m.key]: materialize(m.with) });
        break;
      case "wrap":
        set([cur]);
        break;
      case "repeat":
        set(Array.from({ length: 1 + (m.walk.length * 37) % 200 }, () => cur));
        break;
    }
  }
  return root;
}

function lazyText(l: Lazy): string {
  if (l.lazy === "huge") return JSON.stringify("x".repeat(l.chars));
  return l.shape === "array" ? "[".repeat(l.depth) + "1" + "]".repeat(l.depth) : '{"a":'.repeat(l.depth - 1) + "{}" + "}".repeat(l.depth - 1);
}

/** The bytes of a body: the mutated base as JSON, lazy parts filled in, then the text mutation. */
function bodyBytes(body: Body, def: string, base: unknown, fix: (text: string) => string): Buffer {
  const lazies: Lazy[] = [];
  const value = mutate(base, body.mutations, lazies, def);
  let text = value === undefined ? "" : fix(JSON.stringify(value));
  text = text.replace(PLACEHOLDER, (_m, i: string) => lazyText(lazies[Number(i)]!));
  let bytes = Buffer.from(text, "utf8");
  const t = body.text;
  if (t.op === "truncate") bytes = bytes.subarray(0, Math.floor(bytes.length * t.at));
  else if (t.op === "insert") {
    const at = Math.floor(bytes.length * t.at);
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(t.bytes), bytes.subarray(at)]);
  } else if (t.op === "bom") bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  else if (t.op === "garbage") bytes = Buffer.from(t.bytes);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// The live runtime and the harness

export interface Finding {
  case?: number;
  kind: string;
  detail: string;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  ms: number;
  findings: Finding[];
  /** Counts by case kind and HTTP status / frame outcome, for the record. */
  stats: Record<string, number>;
  sessionsChecked: number;
  recordsChecked: number;
  integrity: string;
}

interface Server {
  url: string;
  port: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string[];
}

/** `brain serve` from the sources, as its own process: SQLite journal in `dataDir`, any free port. */
async function startServer(dataDir: string, token: string): Promise<Server> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(BRAIN_|OPENAI_|ANTHROPIC_)/.test(k)) env[k] = v;
  Object.assign(env, { BRAIN_PORT: "0", BRAIN_HOST: "127.0.0.1", BRAIN_DATA_DIR: dataDir, BRAIN_TOKEN: token, BRAIN_JOURNAL: "sqlite" });
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", "serve"], { cwd: runtimeDir, env, stdio: ["ignore", "pipe", "pipe"] });
  const stderr: string[] = [];
  child.stderr!.setEncoding("utf8").on("data", (d: string) => stderr.push(d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`brain serve did not listen in 30 s: ${out} ${stderr.join("")}`)), 30_000);
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /brain listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then(({ code }) => reject(new Error(`brain serve exited (${code}) before listening: ${out} ${stderr.join("")}`)));
  });
  return { url, port: Number(new URL(url).port), child, exited, stderr };
}

interface RawResponse {
  status: number;
  head: string;
  body: string;
  /** The server closed without answering (after a parse error, an oversized body). */
  none: boolean;
}

/** Sends raw bytes on a new TCP connection and reads the answer; an SSE answer is read briefly and dropped. */
function rawRequest(port: number, bytes: Buffer, timeoutMs: number, endWrite = false): Promise<RawResponse | "timeout"> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    let sseTimer: NodeJS.Timeout | undefined;
    const finish = (r: RawResponse | "timeout") => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(sseTimer);
      socket.destroy();
      resolve(r);
    };
    const parse = (): RawResponse => {
      const text = Buffer.concat(chunks).toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      const head = split >= 0 ? text.slice(0, split) : text;
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      return { status: m ? Number(m[1]) : 0, head, body: split >= 0 ? Buffer.concat(chunks).subarray(Buffer.byteLength(text.slice(0, split + 4), "latin1")).toString("utf8") : "", none: chunks.length === 0 };
    };
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    socket.on("data", (d) => {
      chunks.push(d);
      const text = Buffer.concat(chunks).toString("latin1");
      if (sseTimer === undefined && /content-type: text\/event-stream/i.test(text)) sseTimer = setTimeout(() => finish(parse()), 150);
    });
    socket.on("end", () => finish(parse()));
    socket.on("close", () => finish(parse()));
    socket.on("error", () => finish(parse()));
    // Garbage is followed by the end of the stream (the server sees EOF); requests keep it open for SSE.
    if (endWrite) socket.end(bytes);
    else socket.write(bytes);
  });
}

/** An API call with the real token through fetch (setup and checks, not fuzzed). */
async function call(url: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, text };
}

/** A host WebSocket: collects frames, answers nothing by itself unless told to. */
class Host {
  readonly frames: any[] = [];
  readonly badFrames: string[] = [];
  closeCode: number | undefined;
  private listeners: Array<(f: any) => void> = [];
  readonly closed: Promise<void>;
  constructor(readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => {
      const text = data.toString();
      let f: any;
      try {
        f = JSON.parse(text);
      } catch {
        this.badFrames.push(`not JSON${isBinary ? " (binary)" : ""}: ${text.slice(0, 200)}`);
        return;
      }
      const def = DEF_OF[f?.type];
      if (def === undefined || !validate[def as keyof typeof validate].Check(f)) this.badFrames.push(`frame outside the contract: ${text.slice(0, 600)}`);
      if (INTERNAL.test(text)) this.badFrames.push(`internal: ${text.slice(0, 300)}`);
      this.frames.push(f);
      for (const l of this.listeners) l(f);
    });
    ws.on("error", () => {});
    this.closed = new Promise((resolve) => ws.on("close", (code) => {
      this.closeCode = code;
      resolve();
    }));
  }
  static open(url: string): Promise<Host> {
    const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/hosts/connect", { maxPayload: 64 * 1024 * 1024 });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new Host(ws)));
      ws.once("error", reject);
    });
  }
  on(listener: (f: any) => void): void {
    this.listeners.push(listener);
  }
  next(pred: (f: any) => boolean, timeoutMs: number): Promise<any> {
    const found = this.frames.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      this.on((f) => {
        if (pred(f)) {
          clearTimeout(timer);
          resolve(f);
        }
      });
    });
  }
  send(data: string | Buffer, binary = false): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(data, { binary });
  }
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    await orAfter(this.closed, 2000, undefined);
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate();
  }
}

function toolContract(example: unknown): ToolContract {
  const { digest: _digest, ...c } = structuredClone(example) as ToolContract;
  return { ...c, digest: contractDigest(c) };
}

export interface FuzzOptions {
  seed: number;
  cases: number;
  /** Run only this case index (of the seed's sequence). */
  only?: number;
  concurrency?: number;
  log?: (line: string) => void;
  /** Per-request answer timeout: a request unanswered this long is a hang. */
  timeoutMs?: number;
}

/** Runs the fuzz suite against a fresh `brain serve` subprocess and judges the run. */
export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const all = generateCases(opts.seed, opts.only !== undefined ? opts.only + 1 : opts.cases);
  const indexes = opts.only !== undefined ? [opts.only] : all.map((_, i) => i);
  const findings: Finding[] = [];
  const stats: Record<string, number> = {};
  const count = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const dataDir = mkdtempSync(join(tmpdir(), "brain-fuzz-"));
  const token = `fuzz-${opts.seed}-token-token`;
  const server = await startServer(dataDir, token);
  const { url, port } = server;
  let crashed = false;
  void server.exited.then(({ code, signal }) => {
    if (!stopping) {
      crashed = true;
      findings.push({ kind: "crash", detail: `brain serve exited (code ${code}, signal ${signal}): ${server.stderr.join("").slice(-2000)}` });
    }
  });
  let stopping = false;

  // Set-up: one host serving the examples' tool, answering every call at once, and a few sessions.
  const contract = toolContract((EXAMPLES.PlacedTool as { contract: unknown }).contract);
  const main = await Host.open(url);
  main.send(JSON.stringify({ type: "register", ref: 0, protocol: PROTOCOL, token, hostId: "fz-main", secret: "fz-main-secret-secret", tools: [contract] }));
  if (!(await main.next((f) => f.type === "registered", 10_000))) throw new Error(`the fuzz host could not register: ${JSON.stringify(main.frames)}`);
  main.on((f) => {
    if (f.type === "invoke") main.send(JSON.stringify({ type: "finish", ref: 1, callId: f.callId, outcome: { status: "ok", value: { value: "v" } } }));
  });
  const placedTool = { ...(structuredClone(EXAMPLES.PlacedTool) as object), contract, placement: { kind: "host", hostId: "fz-main" } };
  const createBase = { ...(structuredClone(EXAMPLES.CreateSessionRequest) as Record<string, unknown>), tools: [placedTool] };
  const sessions: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await call(url, token, "POST", "/v1/sessions", { ...createBase, model: { provider: "scripted", script: Array.from({ length: 40 }, (_, j) => (j % 2 === 0 ? { toolCalls: [{ name: contract.name, input: { id: "1" } }] } : { text: "ok" })) } });
    if (r.status !== 201) throw new Error(`set-up session: ${r.status} ${r.text}`);
    sessions.push(r.body.id);
  }

  /** The body base a route expects (its contract example, fixed up to this server), else the named example. */
  const baseFor = (route: string, name: string): unknown => {
    if (name !== "") return EXAMPLES[name];
    switch (route) {
      case "sessions":
        return createBase;
      case "messages":
        return EXAMPLES.SendMessageRequest;
      case "cancel":
        return { callId: `${sessions[0]}:1` };
      case "calls":
        return EXAMPLES.HttpCallbackRequest;
      case "keys":
        return EXAMPLES.CreateKeyRequest ?? {};
      default:
        return {};
    }
  };
  const idText = (id: Id) => ("real" in id ? sessions[id.real % sessions.length]! : id.text);
  const fixText = (text: string) => text.split(TOKEN_PLACEHOLDER).join(token).replaceAll('"app-1"', '"fz-main"');

  const runHttp = async (i: number, c: HttpCase) => {
    const id = idText(c.id);
    const target = c.rawTarget ?? ({
      sessions: "/v1/sessions",
      session: `/v1/sessions/${id}`,
      messages: `/v1/sessions/${id}/messages`,
      cancel: `/v1/sessions/${id}/cancel`,
      events: `/v1/sessions/${id}/events`,
      hosts: `/v1/hosts/${"real" in c.id ? "fz-main" : id}`,
      components: `/v1/components/${id}`,
      calls: `/v1/calls/${id}/http`,
      healthz: "/healthz",
      keys: "/v1/keys",
      key: `/v1/keys/${id}`,
      hostList: "/v1/hosts",
    } as Record<string, string>)[c.route]! + c.query;
    const body = c.body === null ? Buffer.alloc(0) : bodyBytes(c.body, c.body.base || DEF_OF_ROUTE[c.route] || "", baseFor(c.route, c.body.base), fixText);
    const lines = [`${c.method} ${target} HTTP/1.1`, `host: 127.0.0.1:${port}`, "connection: close"];
    const auth = { valid: `Bearer ${token}`, none: null, wrong: `Bearer ${c.auth.text || "nope"}`, scheme: `Basic ${token}`, spaces: `bearer    ${token}   `, latin1: `Bearer ${token}\u00e9\u00ff`, huge: `Bearer ${"t".repeat(20_000)}` }[c.auth.kind];
    if (auth !== null) lines.push(`authorization: ${auth}`);
    if (c.contentType !== null) lines.push(`content-type: ${c.contentType}`);
    if (c.accept !== null) lines.push(`accept: ${c.accept}`);
    if (c.lastEventId !== null) lines.push(`last-event-id: ${c.lastEventId}`);
    for (const [k, v] of c.extraHeaders) if (k !== "host" && k !== "transfer-encoding" && k !== "connection" && k !== "expect") lines.push(`${k}: ${v}`);
    let payload = body;
    if (c.framing === "length") lines.push(`content-length: ${body.length}`);
    else if (c.framing === "short") lines.push(`content-length: ${Math.floor(body.length / 2)}`);
    else if (c.framing === "chunked") {
      lines.push("transfer-encoding: chunked");
      payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from(body.length > 0 ? "\r\n0\r\n\r\n" : "\r\n")]);
    }
    const head = Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1");
    const r = await rawRequest(port, Buffer.concat([head, payload]), timeoutMs);
    if (r === "timeout") {
      findings.push({ case: i, kind: "hang", detail: `${c.method} ${target.slice(0, 200)}: no answer in ${timeoutMs} ms` });
      return;
    }
    count(`http ${r.none ? "closed" : r.status}`);
    if (r.status >= 500) findings.push({ case: i, kind: "5xx", detail: `${c.method} ${target.slice(0, 200)} → ${r.status} ${r.body.slice(0, 300)}` });
    if (INTERNAL.test(r.body)) findings.push({ case: i, kind: "internal", detail: `${c.method} ${target.slice(0, 200)} → ${r.status} ${r.body.slice(0, 300)}` });
    if (r.status === 201 && /^\/v1\/sessions\/?$/.test(target) && c.method === "POST") {
      try {
        const created = JSON.parse(r.body) as { id?: string };
        if (typeof created.id === "string") sessions.push(created.id);
      } catch {}
    }
  };

  let hostCounter = 0;
  const runWs = async (i: number, c: WsCase) => {
    const host = await Host.open(url);
    const hostId = `fz-ws-${++hostCounter}`;
    let liveCall: string | undefined;
    try {
      if (c.live) {
        host.send(JSON.stringify({ type: "register", ref: 0, protocol: PROTOCOL, token, hostId, secret: "fz-ws-secret-secret", tools: [contract] }));
        if (await host.next((f) => f.type === "registered" || f.type === "error", 5000)) {
          const s = await call(url, token, "POST", "/v1/sessions", { ...createBase, tools: [{ ...placedTool, placement: { kind: "host", hostId } }], model: { provider: "scripted", script: [{ toolCalls: [{ name: contract.name, input: { id: "7" } }] }, { text: "ok" }, { text: "again" }] } });
          if (s.status === 201) {
            sessions.push(s.body.id);
            await call(url, token, "POST", `/v1/sessions/${s.body.id}/messages`, { text: "go" });
            liveCall = (await host.next((f) => f.type === "invoke", 5000))?.callId;
          } else if (s.status >= 500 || INTERNAL.test(s.text)) findings.push({ case: i, kind: "5xx", detail: `set-up session: ${s.status} ${s.text.slice(0, 300)}` });
        }
      }
      const before = host.frames.length;
      for (const f of c.frames) {
        const fix = (text: string) => {
          let t = text.replaceAll('"app-1"', JSON.stringify(hostId));
          if (f.realToken) t = t.split(TOKEN_PLACEHOLDER).join(token);
          if (f.onLiveCall && liveCall !== undefined) t = t.split("ses_01hzy3k9q2:7").join(liveCall);
          return t;
        };
        const bytes = bodyBytes(f.body, f.body.base, EXAMPLES[f.body.base], fix);
        if (f.encoding === "binary") host.send(bytes, true);
        else if (f.encoding === "invalid-utf8") host.send(Buffer.concat([bytes.subarray(0, 10), Buffer.from([0xff, 0xc0, 0x80]), bytes.subarray(10)]), false);
        else host.send(bytes.toString("utf8"));
      }
      // Wait until every frame got some answer, the connection closed, or things went quiet.
      const want = before + c.frames.length;
      const until = Date.now() + 1500;
      while (host.frames.length < want && host.ws.readyState === WebSocket.OPEN && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      count(`ws frames answered ${host.frames.length - before >= c.frames.length ? "all" : "some"}`);
    } finally {
      await host.close();
    }
    for (const bad of host.badFrames) findings.push({ case: i, kind: bad.startsWith("internal") ? "internal" : "bad frame", detail: bad });
    if (host.closeCode === 1011 || host.closeCode === 1006) findings.push({ case: i, kind: "ws close", detail: `the runtime closed the host connection with ${host.closeCode}` });
    count(`ws close ${host.closeCode}`);
  };

  const runGarbage = async (i: number, c: GarbageCase) => {
    const r = await rawRequest(port, Buffer.from(c.bytes), 2000, true);
    if (r === "timeout") return count("garbage unanswered (client kept the connection)");
    count(`garbage ${r.none ? "closed" : r.status}`);
    if (r.status >= 500 || INTERNAL.test(r.body)) findings.push({ case: i, kind: "5xx", detail: `garbage bytes → ${r.status} ${r.body.slice(0, 200)}` });
  };

  // The cases, a few at a time.
  let next = 0;
  let doneCount = 0;
  const slow: string[] = [];
  const concurrency = opts.concurrency ?? 6;
  const worker = async () => {
    while (next < indexes.length && !crashed) {
      const i = indexes[next++]!;
      const c = all[i]!;
      count(`case ${c.kind}`);
      const t0 = Date.now();
      try {
        if (c.kind === "http") await runHttp(i, c);
        else if (c.kind === "ws") await runWs(i, c);
        else await runGarbage(i, c);
      } catch (e) {
        findings.push({ case: i, kind: "harness", detail: `the case could not run: ${(e as Error).stack ?? e}` });
      }
      const took = Date.now() - t0;
      if (took > 5000) slow.push(`${i}:${c.kind}:${took}ms`);
      doneCount += 1;
      if (doneCount % 1000 === 0) log(`fuzz: ${doneCount}/${indexes.length} cases, ${findings.length} findings, ${Math.round((Date.now() - started) / 1000)} s`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));

  if (slow.length > 0) log(`fuzz: cases over 5 s (slow, not findings): ${slow.slice(0, 20).join(" ")}`);
  // The run as a whole.
  let sessionsChecked = 0;
  let recordsChecked = 0;
  let integrity = "not checked";
  if (!crashed) {
    const list = await call(url, token, "GET", "/v1/sessions").catch((e) => ({ status: 0, text: String(e), body: undefined }));
    if (list.status !== 200) findings.push({ kind: "after", detail: `GET /v1/sessions answers ${list.status}: ${list.text.slice(0, 300)}` });
    const turn = await normalTurn(url, token);
    if (turn !== undefined) findings.push({ kind: "after", detail: `a normal scripted turn: ${turn}` });
    const ids = new Set<string>(sessions);
    for (const s of (list.body as { sessions?: Array<{ id: string }> } | undefined)?.sessions ?? []) ids.add(s.id);
    for (const id of ids) {
      const ev = await call(url, token, "GET", `/v1/sessions/${encodeURIComponent(id)}/events`);
      if (ev.status !== 200) {
        findings.push({ kind: "journal", detail: `events of ${id}: ${ev.status} ${ev.text.slice(0, 200)}` });
        continue;
      }
      const records = ev.body.records as JournalRecord[];
      sessionsChecked += 1;
      recordsChecked += records.length;
      const gap = records.findIndex((r, k) => r.sequence !== k + 1);
      if (gap >= 0 || records.length === 0 || records[0]!.type !== "session.created") findings.push({ kind: "journal", detail: `${id}: not gap-free from 1 (${records.map((r) => r.sequence).slice(0, 20).join(",")})` });
      const invalid = records.findIndex((r) => !validate.JournalRecord.Check(r));
      if (invalid >= 0) findings.push({ kind: "journal", detail: `${id}: record ${invalid + 1} outside the contract` });
      if (INTERNAL.test(ev.text)) findings.push({ kind: "internal", detail: `${id}: a journal record carries code internal: ${ev.text.match(/.{0,200}"code"\s*:\s*"internal".{0,200}/)?.[0]}` });
    }
  }
  await main.close();
  stopping = true;
  if (!crashed) {
    server.child.kill("SIGTERM");
    const stopped = await orAfter(server.exited, 20_000, undefined);
    if (stopped === undefined) {
      findings.push({ kind: "hang", detail: "brain serve did not stop within 20 s of SIGTERM" });
      server.child.kill("SIGKILL");
      await server.exited;
    } else if (stopped.code !== 0) findings.push({ kind: "crash", detail: `brain serve stopped with code ${stopped.code} (signal ${stopped.signal})` });
  }
  try {
    const db = new Database(join(dataDir, "journal.sqlite"), { readonly: true });
    integrity = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join("; ");
    db.close();
  } catch (e) {
    integrity = `could not open: ${(e as Error).message}`;
  }
  if (integrity !== "ok") findings.push({ kind: "integrity", detail: `PRAGMA integrity_check: ${integrity}` });
  const stderr = server.stderr.join("");
  for (const line of stderr.split("\n")) {
    if (/uncaught|unhandled|RangeError|TypeError|ReferenceError|Maximum call stack|internal/i.test(line)) findings.push({ kind: "stderr", detail: line.slice(0, 300) });
  }
  rmSync(dataDir, { recursive: true, force: true });
  return { seed: opts.seed, cases: indexes.length, ms: Date.now() - started, findings, stats, sessionsChecked, recordsChecked, integrity };
}

/** A plain session and one scripted turn: undefined when it completes as it should. */
async function normalTurn(url: string, token: string): Promise<string | undefined> {
  try {
    const s = await call(url, token, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "still fine" }] }, tools: [] });
    if (s.status !== 201) return `create: ${s.status} ${s.text.slice(0, 200)}`;
    const sent = await call(url, token, "POST", `/v1/sessions/${s.body.id}/messages`, { text: "hello", wait: true });
    if (sent.status !== 200 || sent.body.status !== "completed" || sent.body.text !== "still fine") return `send: ${sent.status} ${sent.text.slice(0, 200)}`;
    return undefined;
  } catch (e) {
    return String(e);
  }
}

/** A short human summary of a case, for a finding's report. */
export function describeCase(c: FuzzCase): string {
  const s = JSON.stringify(c, (_k, v) => (typeof v === "string" && v.length > 80 ? `${v.slice(0, 80)}…(${v.length})` : v));
  return s.length > 600 ? `${s.slice(0, 600)}…` : s;
}
