// A raw SSE reader for the tests of stream ends (revocation, the stream bound): every event and
// comment line the server sent, and when the stream ended.
import { request } from "node:http";
import type { IncomingMessage } from "node:http";
import type { JournalRecord } from "@aexhq/brain-protocol";

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
