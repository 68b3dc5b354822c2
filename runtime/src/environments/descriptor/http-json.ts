import type { PlacedTool } from "@aexhq/brain-protocol";
import type { CallHandle, CallInvocation, CallSink } from "../../dispatch/environment.ts";
import type { DescriptorInterpreter } from "./environment.ts";
import { validateSchema } from "../json-schema.ts";
import { ERROR_BODY_CHARS, failure, jsonValueOutcome, readText } from "../json-answer.ts";
import type { JsonOutcome as Outcome } from "../json-answer.ts";
import { BrainRuntimeError } from "../../errors.ts";

/** An operator-defined http_json Environment. */
export interface HttpJsonEnvironmentConfig {
  type: "http_json";
  /** Every descriptor path is resolved under it; a request may not leave its origin or path. */
  baseUrl: string;
  /** Sent with every request (typically credentials); the application never sees or sets them. */
  headers?: Record<string, string>;
}

/** What a tool's implementation returns: `{field}` in the path is taken from the input. */
export interface HttpJsonDescriptor {
  type: "http_json";
  method: (typeof METHODS)[number];
  path: string;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const BODY_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"]);
const DESCRIPTOR_KEYS = ["type", "method", "path"];
const CONFIG_KEYS = ["type", "baseUrl", "headers"];
// No "/" inside a placeholder: each one fills (part of) a single path segment.
const PLACEHOLDER = /\{([^{}/]*)\}/g;

const fail = (where: string, message: string) => new BrainRuntimeError("invalid_request", `${where}${message}`);

/** Checks one definition; `where` (e.g. BRAIN_HTTP_ENVIRONMENTS.github) prefixes every message. */
export function parseHttpJsonConfig(value: unknown, where: string): HttpJsonEnvironmentConfig {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw fail(where, ` must be an object {"type":"http_json","baseUrl":"https://...","headers":{...}}`);
  const def = value as Record<string, unknown>;
  const extra = Object.keys(def).find((k) => !CONFIG_KEYS.includes(k));
  if (extra !== undefined) throw fail(where, ` must have only type, baseUrl and headers, got ${JSON.stringify(extra)}`);
  let base: URL | undefined;
  try {
    base = typeof def.baseUrl === "string" ? new URL(def.baseUrl) : undefined;
  } catch {
    base = undefined;
  }
  // fetch refuses URLs with credentials, and a query or fragment would be lost when paths are appended.
  if (base === undefined || (base.protocol !== "http:" && base.protocol !== "https:") || base.username !== "" || base.password !== "" || base.search !== "" || base.hash !== "") {
    throw fail(where, `.baseUrl must be an http: or https: URL without credentials, query or fragment`);
  }
  const headers = def.headers;
  if (headers !== undefined) {
    const bad = headers === null || typeof headers !== "object" || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== "string");
    let valid = !bad;
    if (valid) {
      try {
        new Headers(headers as Record<string, string>);
      } catch {
        valid = false;
      }
    }
    if (!valid) throw fail(where, `.headers must map HTTP header names to string values`);
  }
  return { type: "http_json", baseUrl: def.baseUrl as string, ...(headers === undefined ? {} : { headers: { ...(headers as Record<string, string>) } }) };
}

function inputProperties(tool: PlacedTool): Record<string, unknown> {
  const props = (tool.contract.inputSchema as { properties?: unknown }).properties;
  return props !== null && typeof props === "object" ? (props as Record<string, unknown>) : {};
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Query values of one input field: arrays repeat the key, objects travel as JSON text, null is left out. */
function queryValues(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.flatMap(queryValues);
  if (typeof v === "object") return [JSON.stringify(v)];
  return [String(v)];
}

/**
 * Interprets `{type:"http_json", method, path}`: one JSON request to the operator's base URL per
 * call. Path placeholders are filled from the input (each value one encoded segment); the other
 * input fields become the query string (GET, DELETE) or the JSON body (POST, PUT, PATCH).
 */
export class HttpJsonInterpreter implements DescriptorInterpreter {
  readonly type = "http_json";
  private readonly origin: string;
  /** The base URL's path without its trailing slash ("" for the root). */
  private readonly basePath: string;
  private readonly inflight = new Set<AbortController>();

  constructor(
    private readonly env: string,
    private readonly config: HttpJsonEnvironmentConfig,
  ) {
    const base = new URL(config.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, "");
  }

  check(d: Record<string, unknown>, tool: PlacedTool): string | undefined {
    const extra = Object.keys(d).find((k) => !DESCRIPTOR_KEYS.includes(k));
    if (extra !== undefined) return `has key ${JSON.stringify(extra)}: an http_json descriptor has only type, method and path (headers and credentials belong to the environment)`;
    if (!(METHODS as readonly unknown[]).includes(d.method)) return `has method ${JSON.stringify(d.method)}: use one of ${METHODS.join(", ")}`;
    const path = d.path;
    if (typeof path !== "string" || !path.startsWith("/")) return `has path ${JSON.stringify(path)}: it must be a string starting with "/"`;
    if (/[?#]/.test(path)) return `has path ${JSON.stringify(path)} with "?" or "#": the query string is made of the input fields that are not in the path`;
    const names: string[] = [];
    const literal = path.replace(PLACEHOLDER, (_, name: string) => {
      names.push(name);
      return "";
    });
    if (/[{}]/.test(literal)) return `has path ${JSON.stringify(path)} with an unmatched "{" or "}"`;
    const props = inputProperties(tool);
    const unknown = names.find((n) => !Object.hasOwn(props, n));
    if (unknown !== undefined) return `has path placeholder {${unknown}}, which is not a property of the tool's input schema`;
    return undefined;
  }

  start(call: CallInvocation, descriptor: Record<string, unknown>, sink: CallSink): CallHandle {
    const abort = new AbortController();
    this.inflight.add(abort);
    const d = descriptor as unknown as HttpJsonDescriptor;
    this.run(call, d, sink, abort.signal)
      .catch((e) => this.end(sink, abort.signal, failure("internal", `http_json call failed: ${e instanceof Error ? e.message : String(e)}`)))
      .finally(() => this.inflight.delete(abort));
    // The dispatcher calls stop after it committed timeout/cancelled: the request is aborted and
    // whatever the server answers later is dropped.
    return { stop: () => abort.abort() };
  }

  private async end(sink: CallSink, signal: AbortSignal, outcome: Outcome): Promise<void> {
    if (signal.aborted || sink.finished) return;
    await sink.finish(outcome).catch(() => {
      // Handled: a refused finish is a call already finished (its first outcome stands), and a failed
      // commit is logged by the call itself (ToolCall.uncommitted).
    });
  }

  private async run(call: CallInvocation, d: HttpJsonDescriptor, sink: CallSink, signal: AbortSignal): Promise<void> {
    const inputIssues = validateSchema(call.tool.contract.inputSchema, call.input);
    if (inputIssues.length > 0) return this.end(sink, signal, failure("invalid_input", "input does not match the tool's input schema", inputIssues));
    if (call.deadlineAt !== null && call.deadlineAt <= Date.now()) return; // the dispatcher's deadline ends it
    const request = this.request(call, d);
    if ("status" in request) return this.end(sink, signal, request);

    let res: Response;
    try {
      // Redirects are not followed: one could lead away from the base URL with the environment's headers.
      res = await fetch(request.url, { method: d.method, headers: request.headers, body: request.body, signal, redirect: "manual" });
    } catch (e) {
      const cause = (e as { cause?: unknown }).cause;
      const why = e instanceof Error ? e.message : String(e);
      const detail = cause instanceof Error ? ` (${cause.message})` : "";
      return this.end(sink, signal, failure("tool_error", `${d.method} request to environment ${this.env} failed: ${why}${detail}`));
    }
    if (res.status < 200 || res.status > 299) {
      const { text } = await readText(res, ERROR_BODY_CHARS * 4);
      return this.end(sink, signal, failure("tool_error", `HTTP ${res.status} from ${this.env}`, { status: res.status, body: text.slice(0, ERROR_BODY_CHARS) }, res.status >= 500 || res.status === 429));
    }
    return this.end(sink, signal, await jsonValueOutcome(res, this.env, call.tool.contract.outputSchema));
  }

  /** The request for one call, or the error outcome that refuses it (nothing is sent then). */
  private request(call: CallInvocation, d: HttpJsonDescriptor): { url: string; headers: Headers; body: string | undefined } | Outcome {
    const input = call.input;
    const used = new Set<string>();
    let problem: Outcome | undefined;
    // Segment by segment, so a value can neither add segments (encodeURIComponent encodes "/")
    // nor, as "." or "..", make one that URL parsing removes together with the one before it.
    const segments = d.path.split("/").map((segment) => {
      let filled = false;
      const out = segment.replace(PLACEHOLDER, (_, field: string) => {
        filled = true;
        used.add(field);
        const v = isPlainObject(input) ? input[field] : undefined;
        if (typeof v !== "string" && typeof v !== "boolean" && !(typeof v === "number" && Number.isFinite(v))) {
          problem ??= failure("invalid_input", `path placeholder {${field}} needs a string, number or boolean input field ${field}`, [{ path: `/${field}`, message: v === undefined ? "required by the path" : "must be a string, number or boolean" }]);
          return "";
        }
        return encodeURIComponent(String(v));
      });
      if (filled && /^(\.|%2e){1,2}$/i.test(out)) {
        problem ??= failure("invalid_input", `path segment "${out}" made from the input would climb the path`, [{ path: "", message: "a path placeholder may not make a . or .. segment" }]);
      }
      return out;
    });
    if (problem !== undefined) return problem;

    let url: URL;
    try {
      url = new URL(this.origin + this.basePath + segments.join("/"));
    } catch {
      return failure("forbidden", `tool ${call.tool.contract.name}'s path ${d.path} does not resolve to a URL under environment ${this.env}`);
    }
    if (url.origin !== this.origin || (url.pathname !== this.basePath && !url.pathname.startsWith(`${this.basePath}/`))) {
      return failure("forbidden", `tool ${call.tool.contract.name}'s path ${d.path} resolves outside environment ${this.env}'s base URL; the request was not sent`);
    }

    const rest: Record<string, unknown> = {};
    if (isPlainObject(input)) for (const [k, v] of Object.entries(input)) if (!used.has(k)) rest[k] = v;
    const headers = new Headers(this.config.headers);
    // The operator's own accept / content-type (e.g. a vendor media type) win.
    if (!headers.has("accept")) headers.set("accept", "application/json");
    let body: string | undefined;
    if (BODY_METHODS.has(d.method)) {
      body = JSON.stringify(isPlainObject(input) ? rest : input);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    } else {
      if (input !== undefined && !isPlainObject(input)) {
        return failure("invalid_input", `${d.method} takes an object input: its fields fill the path and the query string`, [{ path: "", message: "expected object" }]);
      }
      for (const [k, v] of Object.entries(rest)) for (const s of queryValues(v)) url.searchParams.append(k, s);
    }
    return { url: url.toString(), headers, body };
  }

  close(): void {
    for (const abort of this.inflight) abort.abort();
  }
}
