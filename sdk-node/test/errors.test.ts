// Mistakes a new user makes, answered with an SdkError that names what they gave.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:net";
import { z } from "zod";
import { Brain, SdkError, tool } from "@aexhq/brain";

const hello = tool({ name: "hello", description: "d", input: z.object({}), run: async () => "hi" });

function refused(fn: () => unknown): SdkError {
  try {
    fn();
  } catch (e) {
    assert.instance(e, SdkError);
    return e as SdkError;
  }
  throw new Error("did not throw");
}

test("a URL without a scheme is an SdkError naming it and the fix, not a raw TypeError", () => {
  for (const url of ["127.0.0.1:3210", "localhost:3210", "ftp://example.com/"]) {
    const e = refused(() => new Brain({ url, token: "t" }));
    assert.is(e.code, "invalid_url");
    assert.ok(e.message.includes(JSON.stringify(url)), e.message);
    assert.match(e.message, /http:/);
  }
  const e = refused(() => new Brain({ url: "127.0.0.1:3210", token: "t" }));
  assert.match(e.message, /e\.g\. http:\/\/127\.0\.0\.1:3210/);
});

test("a host secret shorter than 16 characters (or a bad host id) is an SdkError invalid_host at new Brain, from options or from BRAIN_HOST_ID/BRAIN_HOST_SECRET", () => {
  const short = refused(() => new Brain({ url: "http://127.0.0.1:3210", token: "t", host: { id: "app-1", secret: "too-short" } }));
  assert.is(short.code, "invalid_host");
  assert.match(short.message, /host: the host secret must be at least 16 characters \(got 9 characters\)/);
  const id = refused(() => new Brain({ url: "http://127.0.0.1:3210", token: "t", host: { id: "has space", secret: "0123456789abcdef" } }));
  assert.is(id.code, "invalid_host");
  assert.match(id.message, /host id "has space"/);
  const saved = { id: process.env.BRAIN_HOST_ID, secret: process.env.BRAIN_HOST_SECRET };
  process.env.BRAIN_HOST_ID = "app-env";
  process.env.BRAIN_HOST_SECRET = "short";
  try {
    const env = refused(() => new Brain({ url: "http://127.0.0.1:3210", token: "t" }));
    assert.is(env.code, "invalid_host");
    assert.match(env.message, /^BRAIN_HOST_ID\/BRAIN_HOST_SECRET: the host secret must be at least 16/);
  } finally {
    for (const [k, v] of [["BRAIN_HOST_ID", saved.id], ["BRAIN_HOST_SECRET", saved.secret]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  // Exactly 16 is enough.
  new Brain({ url: "http://127.0.0.1:3210", token: "t", host: { id: "app-1", secret: "0123456789abcdef" } });
});

test("a server that is down is reported with the http: URL the user configured", async () => {
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const brain = new Brain({ url, token: "t" });
  try {
    const e = await brain.sessions.create({ model: { provider: "scripted", script: [{ text: "x" }] }, tools: [hello()] }).then(() => undefined, (e) => e);
    assert.instance(e, SdkError);
    assert.is(e.code, "connection_failed");
    assert.ok(e.message.includes(`could not reach Brain at ${url}`), e.message);
  } finally {
    await brain.close();
  }
});

test.run();
