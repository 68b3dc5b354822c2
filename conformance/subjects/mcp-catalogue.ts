// The MCP conformance subject (`--subject mcp`, `--subject mcp-http`): the catalogue tools that have
// an MCP form (CATALOGUE.md, "MCP form") as an MCP server built with the official SDK's McpServer.
// Over stdio by default (the runtime starts it as an operator-defined server); with
// BRAIN_CONFORMANCE_HTTP_PORT set, over stateless Streamable HTTP on 127.0.0.1:<port>/mcp. A server
// in another language does the same with its own MCP SDK.
//
// Values travel as `structuredContent` (with their JSON as a text block, as MCP recommends);
// events are `notifications/progress` for the call's progress token; an error is a result with
// `isError: true`. Two tools answer what the SDK refuses to send (a structuredContent that does not
// match the tool's outputSchema, a result that is not a CallToolResult): their handlers leave the
// answer in `raw`, and the transport writes it in place of the SDK's result (`withRawAnswers`).
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, JSONRPCMessage, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** What a handler is given besides its input (the SDK's RequestHandlerExtra, the parts used here). */
interface Extra {
  signal: AbortSignal;
  requestId: string | number;
  _meta?: { progressToken?: string | number };
  sendNotification(n: ServerNotification): Promise<void>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });

/** A value as MCP carries it: structuredContent, and its JSON as text for clients that read only content. */
const value = (v: Record<string, unknown>): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(v) }], structuredContent: v });

/** A progress notification for this call (none when the client sent no progress token). */
function progress(extra: Extra, p: { progress: number; total?: number; message?: string }): Promise<void> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return Promise.resolve();
  return extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...p } });
}

/** Answers the SDK would refuse to send, by request id: the transport writes them instead of its result. */
const raw = new Map<string | number, unknown>();

/** The answers of `malformed`: each is not a CallToolResult (a text block without text, a non-boolean isError, content that is no array). */
const MALFORMED: Record<string, unknown> = {
  ok_without_value: { content: [{ type: "text" }] },
  error_without_code: { content: [], isError: "yes" },
  timeout_with_value: { content: "timeout" },
};

/** One McpServer with every catalogue tool that has an MCP form. */
export function catalogueServer(): McpServer {
  const server = new McpServer({ name: "brain-conformance-catalogue", version: "0.2.0" });
  const add = <S extends z.ZodObject | z.ZodType<object>>(
    name: string,
    description: string,
    input: S,
    run: (input: z.output<S>, extra: Extra) => Promise<CallToolResult>,
    output?: z.ZodObject,
  ) => server.registerTool(name, { description, inputSchema: input as never, ...(output ? { outputSchema: output as never } : {}) }, ((input: z.output<S>, extra: Extra) => run(input, extra)) as never);

  add("echo", "Answer the input value.", z.object({ value: z.json() }), async ({ value: v }) => value({ value: v }));
  add("throw", "Throw (the SDK answers isError with the message).", z.object({ message: z.string() }), async ({ message }) => { throw new Error(message); });
  add("reserved_data", "structuredContent with a status field is data.", z.object({}), async () => value({ status: "error", note: "business data" }));
  add("other_status", "A status field is data.", z.object({}), async () => value({ status: "done", count: 2 }));
  add("malformed", "Answer something that is not a CallToolResult.", z.object({ variant: z.enum(["ok_without_value", "error_without_code", "timeout_with_value"]) }), async ({ variant }, extra) => {
    raw.set(extra.requestId, MALFORMED[variant]);
    return value({});
  });
  add("typed_output", "structuredContent checked against { n: integer }.", z.object({ good: z.boolean() }), async ({ good }, extra) => {
    // The SDK checks its own structuredContent against the outputSchema: the bad one goes out raw.
    if (!good) raw.set(extra.requestId, value({ n: "one" }));
    return value({ n: 1 });
  }, z.object({ n: z.number().int() }));
  add("defaults", "Defaults and transforms reach the handler.", z.object({ name: z.string(), count: z.number().int().default(1), shout: z.string().transform((s) => s.toUpperCase()).optional() }), async (input) => value(input));
  add("strict", "Strict input.", z.strictObject({ a: z.string() }), async ({ a }) => value({ a }));
  add("strip", "Ordinary input strips extras.", z.object({ a: z.string() }), async (input) => value(input));
  add("emit_then_finish", "count progress notifications, then the answer.", z.object({ count: z.number().int() }), async ({ count }, extra) => {
    for (let i = 0; i < count; i++) await progress(extra, { progress: i + 1, total: count, message: `step ${i + 1}` });
    return value({ count });
  });
  add("emit_after_finish", "Answer, then a progress notification for the answered call.", z.object({}), async (_, extra) => {
    setTimeout(() => void progress(extra, { progress: 1, message: "late" }).catch(() => undefined), 10);
    return value({ done: true });
  });
  add("with_content", "A result with model-facing text.", z.object({ error: z.boolean() }), async ({ error }) =>
    error ? { content: [{ type: "text", text: "model-facing text" }], isError: true } : { content: [{ type: "text", text: "model-facing text" }], structuredContent: { v: 1 } });
  add("sleep", "Sleep, observing the cancellation.", z.object({ ms: z.number().int() }), async ({ ms }, extra) => {
    await sleep(ms, extra.signal);
    return value({ slept: ms });
  });
  add("sleep_then_finish", "Sleep ignoring the cancellation, then answer late.", z.object({ ms: z.number().int() }), async ({ ms }) => {
    await sleep(ms);
    return value({ late: true });
  });
  add("slow_validation", "An asynchronous input check that takes ms.", z.object({ ms: z.number().int() }).refine(async ({ ms }) => { await sleep(ms); return true; }), async () => value({ validated: true }));
  add("big_emit", "One progress notification of bytes characters, then the answer.", z.object({ bytes: z.number().int() }), async ({ bytes }, extra) => {
    await progress(extra, { progress: 1, message: "x".repeat(bytes) });
    return value({ ok: true });
  });
  return server;
}

/** The transport, writing a `raw` answer in place of the SDK's result for that request. */
function withRawAnswers<T extends Transport>(t: T): T {
  const send = t.send.bind(t);
  t.send = (m: JSONRPCMessage, o?: Parameters<Transport["send"]>[1]) => {
    if ("result" in m && raw.has(m.id)) {
      const result = raw.get(m.id);
      raw.delete(m.id);
      return send({ ...m, result } as JSONRPCMessage, o);
    }
    return send(m, o);
  };
  return t;
}

const port = process.env.BRAIN_CONFORMANCE_HTTP_PORT;
if (port === undefined) {
  await catalogueServer().connect(withRawAnswers(new StdioServerTransport()));
} else {
  // Stateless Streamable HTTP (no Mcp-Session-Id): each POST is served by a server of its own, so a
  // restarted process serves the runtime's next call as the one before it did.
  createServer(async (req, res) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
      return;
    }
    const server = catalogueServer();
    const transport = withRawAnswers(new StreamableHTTPServerTransport({ sessionIdGenerator: undefined }));
    res.on("close", () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }).listen(Number(port), "127.0.0.1");
}
