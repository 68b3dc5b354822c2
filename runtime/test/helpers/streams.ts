// For the tests of stream ends (revocation, the stream bound): a raw SSE reader (every event and
// comment line the server sent, and when the stream ended), a /ui login, and a session that keeps
// committing records.
import { request } from "node:http";
import type { IncomingMessage } from "node:http";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { api, waitFor } from "./brain.ts";
import type { Brain } from "./brain.ts";
import { contract, placed } from "./contract.ts";
import type { TestHost } from "./host.ts";

export const tick = contract("tick");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SseStream {
  status: number;
  /** The body of an answer that is not a stream (an error). */
  text: string;
  records: JournalRecord[];
  /** SSE comment lines (`: …`), without the colon. */
  comments: string[];
  /** performance.now() when the response ended or closed. */
  ended: Promise<number>;
  /** Resolves once a delivered record satisfies `pred`; rejects after `timeoutMs`. */
  until(pred: (r: JournalRecord) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** GET `url` with `Accept: text/event-stream` and `headers`; resolves once the answer's head arrived. */
export function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream", ...headers } }, (res: IncomingMessage) => {
      const records: JournalRecord[] = [];
      const comments: string[] = [];
      const waiters: Array<() => boolean> = [];
      let buf = "";
      let text = "";
      let markEnded!: (at: number) => void;
      const ended = new Promise<number>((r) => (markEnded = r));
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        get text() {
          return text;
        },
        records,
        comments,
        ended,
        until(pred, timeoutMs = 5000) {
          return new Promise<void>((ok, fail) => {
            const check = () => {
              if (!records.some(pred)) return false;
              clearTimeout(timer);
              ok();
              return true;
            };
            const timer = setTimeout(() => fail(new Error(`no such record in ${timeoutMs} ms; got ${records.map((r) => `${r.sequence}:${r.type}`).join(" ")}`)), timeoutMs);
            if (!check()) waiters.push(check);
          });
        },
        close: () => req.destroy(),
      };
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (stream.status !== 200) return void (text += chunk);
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          for (const line of block.split("\n")) if (line.startsWith(":")) comments.push(line.slice(1).trim());
          const data = /^data: (.*)$/m.exec(block);
          if (data) records.push(JSON.parse(data[1]!) as JournalRecord);
        }
        for (const w of waiters.splice(0)) if (!w()) waiters.push(w);
      });
      const done = () => markEnded(performance.now());
      res.on("end", done);
      res.on("close", done);
      res.on("error", done);
      resolve(stream);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Logs in at `server`/ui with `credential` as the login form does; returns the Cookie header the page then sends. */
export async function uiCookie(server: { url: string }, credential: string): Promise<string> {
  const res = await fetch(`${server.url}/ui/login`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ credential, next: "/ui" }).toString() });
  const cookie = /^(brain_ui=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
  if (res.status !== 303 || cookie === undefined) throw new Error(`login: ${res.status} ${await res.text()}`);
  return cookie;
}

/**
 * A session created through `server` with `token`, whose one tool call (on `host`, which serves
 * `tick`) emits a `tick` record every few ms from `start()` until the function it returns is called
 * (which reads the journal with `server`'s own token: the operator's, as `token` may be revoked by then).
 */
export async function tickingSession(server: { url: string; token: string }, token: string, host: TestHost) {
  const as = { url: server.url, token } as Brain;
  const created = await api(as, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "tick", input: {} }] }, { text: "done" }] }, tools: [placed(tick, host.hostId)] });
  if (created.status !== 201) throw new Error(`create session: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  return {
    id,
    /** Starts the turn and the ticks; the function it resolves with stops them, finishes the call and waits for turn.completed. */
    async start(): Promise<() => Promise<void>> {
      const sent = await api(as, "POST", `/v1/sessions/${id}/messages`, { text: "go" });
      if (sent.status !== 202) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
      const invoke = await host.invoke(10_000);
      let stopped = false;
      // Its failure is reported by the stop function; a test that fails first closes the host, which ends it.
      const loop = (async () => {
        for (let n = 0; !stopped; n++) {
          const answer = await host.request({ type: "emit", callId: invoke.callId, kind: "tick", data: { n } });
          if (answer.type !== "committed") throw new Error(`tick ${n}: ${JSON.stringify(answer)}`);
          await sleep(5);
        }
      })().then(() => undefined, (e: Error) => e);
      return async () => {
        stopped = true;
        const failed = await loop;
        if (failed !== undefined) throw failed;
        await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: "ticked" } });
        await waitFor(server as Brain, id, (r) => r.type === "turn.completed", 10_000);
      };
    },
  };
}

export const ticks = (records: JournalRecord[]) => records.filter((r) => r.type === "tool.event").length;

/** The session's last committed sequence, read through `server` with its token. */
export async function lastSequence(server: { url: string; token: string }, id: string): Promise<number> {
  const r = await api(server as Brain, "GET", `/v1/sessions/${id}/events?after=${Number.MAX_SAFE_INTEGER}`);
  if (r.status !== 200) throw new Error(`events: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.lastSequence as number;
}
