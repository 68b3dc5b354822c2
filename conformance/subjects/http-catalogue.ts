// The HTTP conformance subject (`--subject http`): the catalogue served by the SDK's httpTools()
// handler behind node:http on 127.0.0.1:BRAIN_CONFORMANCE_HTTP_PORT, for the Brain at BRAIN_URL.
// A binding in another language does the same: listen on that port, speak brain.http/0.2.
import { createServer } from "node:http";
import { httpTools } from "@aexhq/brain";
import { catalogue } from "./catalogue-tools.ts";

const brainUrl = process.env.BRAIN_URL;
const port = Number(process.env.BRAIN_CONFORMANCE_HTTP_PORT);
if (!brainUrl || !Number.isInteger(port)) throw new Error("BRAIN_URL and BRAIN_CONFORMANCE_HTTP_PORT must be set");

const handler = httpTools(catalogue, { brainUrl });
createServer(async (req, res) => {
  // Brain giving up on the call (deadline, cancel) closes the request: the tool's ctx.signal fires.
  const abort = new AbortController();
  res.on("close", () => res.writableFinished || abort.abort());
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks);
  const response = await handler(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body, signal: abort.signal }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}).listen(port, "127.0.0.1");
