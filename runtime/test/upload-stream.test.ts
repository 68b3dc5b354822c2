// Uploads (components, packages) are written to disk as they arrive, hashed on the way, never held
// whole in the runtime's memory (issue 35). A real server, real HTTP uploads sent in parts, the
// store's folder looked at while a body is still arriving.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import type { ClientRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { memoryBrain } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { components, digestOf } from "./component-helpers.mts";
import { BrainRuntimeError } from "../src/index.ts";
import type { ComponentEnvironment } from "../src/index.ts";
import { receiveToFile } from "../src/environments/upload-file.ts";

let brain: Brain;
let storeDir: string;

test.before(async () => {
  brain = await memoryBrain();
  storeDir = (brain.internals.environments.get("component") as unknown as ComponentEnvironment).store.dir;
});

test.after(async () => {
  await brain.close();
});

/** A PUT whose body the test writes part by part; `answer` resolves with the response. */
function openPut(digest: string): { req: ClientRequest; answer: Promise<{ status: number; body: any }> } {
  const url = new URL(`/v1/components/${digest}`, brain.url);
  const req = request(url, { method: "PUT", headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/wasm" } });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", reject);
  });
  return { req, answer };
}

function incoming(): { name: string; size: number }[] {
  const dir = join(storeDir, ".incoming");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => ({ name, size: statSync(join(dir, name)).size }));
}

async function until(what: string, pred: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; incoming: ${JSON.stringify(incoming())}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("the first half of a component upload is on the server's disk before the second is sent; the whole is admitted and kept", async () => {
  const path = (await components()).fixtures.netprobe!;
  const bytes = readFileSync(path);
  const digest = digestOf(path);
  const half = Math.floor(bytes.length / 2);
  const { req, answer } = openPut(digest);
  req.write(bytes.subarray(0, half));
  await until("the first half on disk", () => incoming().some((f) => f.size === half));
  req.end(bytes.subarray(half));
  const r = await answer;
  assert.is(r.status, 201, JSON.stringify(r.body));
  assert.is(r.body.status, "admitted");
  assert.equal(incoming(), [], "nothing is left in .incoming");
  assert.ok(readFileSync(join(storeDir, `${digest}.wasm`)).equals(bytes), "the kept bytes are the upload's");
});

test("bytes that are not the digest's are refused, and nothing of them stays on disk", async () => {
  const path = (await components()).fixtures.netprobe!;
  const bytes = readFileSync(path);
  const wrong = "0".repeat(64);
  const { req, answer } = openPut(wrong);
  req.end(bytes);
  const r = await answer;
  assert.is(r.status, 400);
  assert.is(r.body.error.code, "invalid_request");
  assert.match(r.body.error.message, /body sha256 is [0-9a-f]{64}, not 0{64}/);
  assert.equal(incoming(), []);
  assert.not.ok(existsSync(join(storeDir, `${wrong}.wasm`)));
});

test("bytes that are no component are refused after they arrived whole, and not kept", async () => {
  const bytes = Buffer.from("not a component, but hashed like one".repeat(1000));
  const digest = createHash("sha256").update(bytes).digest("hex");
  const { req, answer } = openPut(digest);
  req.end(bytes);
  const r = await answer;
  assert.is(r.status, 400);
  assert.match(r.body.error.message, /is not a WebAssembly component/);
  assert.equal(incoming(), []);
  assert.not.ok(existsSync(join(storeDir, `${digest}.wasm`)));
});

test("an upload the client abandons halfway leaves nothing on disk, and the server goes on", async () => {
  // Bytes of their own: a digest the server already admitted would be answered without reading them.
  const bytes = randomBytes(64 * 1024);
  const { req, answer } = openPut(createHash("sha256").update(bytes).digest("hex"));
  answer.catch(() => undefined); // the client side of an abandoned request ends in a socket error
  req.write(bytes.subarray(0, 4096));
  await until("the first part on disk", () => incoming().some((f) => f.size === 4096));
  req.destroy();
  await until("the abandoned upload removed", () => incoming().length === 0);
  const health = await fetch(`${brain.url}/healthz`);
  assert.is(health.status, 200);
});

test("receiveToFile: a body past its limit is body_too_large, drained, and nothing stays on disk", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-upload-"));
  try {
    const body = new PassThrough();
    const got = receiveToFile(body, dir, 1000, "package");
    body.write(Buffer.alloc(600));
    body.write(Buffer.alloc(600));
    body.end(Buffer.alloc(600));
    const e = await got.then(() => undefined, (err: unknown) => err);
    assert.instance(e, BrainRuntimeError);
    assert.is((e as BrainRuntimeError).code, "body_too_large");
    assert.match((e as BrainRuntimeError).message, /package exceeds 1000 bytes/);
    assert.equal(readdirSync(join(dir, ".incoming")), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
