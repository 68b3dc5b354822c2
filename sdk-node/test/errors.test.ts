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
