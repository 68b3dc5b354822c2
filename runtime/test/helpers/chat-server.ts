// A local server speaking the OpenAI Chat Completions streaming wire format, for runtime tests
// that need a real provider over real HTTP: each request is answered by the next scripted reply,
// or held open ("hang") until the client goes away.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ChatReply = { text: string } | { toolCalls: Array<{ id: string; name: string; input: unknown }> } | "hang";

export interface ChatServer {
  url: string;
  /** Bodies of the requests received, in order. */
  requests: Array<Record<string, any>>;
  /** Resolves when a held ("hang") request's connection is closed by the client. */
  aborted(): Promise<void>;
  close(): Promise<void>;
}

export async function chatServer(replies: ChatReply[]): Promise<ChatServer> {
  const requests: Array<Record<string, any>> = [];
  const abortWaiters: Array<() => void> = [];
  let aborts = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    requests.push(JSON.parse(body));
    const reply = replies.shift() ?? { text: "(no more replies)" };
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (reply === "hang") {
      res.write(": held open\n\n");
      res.on("close", () => {
        aborts++;
        for (const w of abortWaiters.splice(0)) w();
      });
      return;
    }
    const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    if ("text" in reply) res.write(chunk({ role: "assistant", content: reply.text }, "stop"));
    else {
      const calls = reply.toolCalls.map((c, index) => ({ index, id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) } }));
      res.write(chunk({ role: "assistant", tool_calls: calls }, "tool_calls"));
    }
    res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    aborted: () => (aborts > 0 ? Promise.resolve() : new Promise<void>((r) => abortWaiters.push(r))),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
