// Packaged tools in Brain-managed hosts from the Deno SDK: the packaged example, installed in this
// checkout's node_modules (sdk-deno/deno.json: "nodeModulesDir": "manual", the npm workspace) and
// imported by name as a Deno application imports it, placed with brainEnv({ runtime: "node" | "deno" })
// against `brain serve`; the Deno platform packs the installed package from node_modules (sdk-core's
// packInstalledWith over Deno.*Sync), uploads it and the runtime's managed hosts answer. Also: Deno's
// own node_modules layout ("nodeModulesDir": "auto": node_modules/.deno/<name>@<version>/...), the
// same tar as the Node SDK packs, and the refusals (not installed, only in Deno's global npm cache).
import { Brain, SdkError, brainEnv, packInstalled, tool } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { z } from "zod";
import { node, serveRuntime, stopRuntime } from "../../scripts/deno-runtime.ts";

const root = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");
const EXAMPLE = "@aexhq/example-text-tools";
const token = crypto.randomUUID();
const opts = { sanitizeOps: false, sanitizeResources: false };
const tmp = Deno.env.get("TMPDIR") ?? "/tmp";

/** Runs a shell script (this suite has no write permission; fixtures are made by a child). */
async function sh(script: string): Promise<string> {
  const out = await new Deno.Command("bash", { args: ["-euc", script], stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${script}\n${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** Newest mtime under `dir` (sources only), as scripts/prepack.mjs decides staleness. */
function newest(dir: string): number {
  let t = 0;
  for (const e of Deno.readDirSync(dir)) {
    if (e.name === "node_modules" || e.name === "dist" || e.name === "test" || e.name.startsWith(".")) continue;
    const p = `${dir}/${e.name}`;
    t = Math.max(t, e.isDirectory ? newest(p) : Deno.statSync(p).mtime?.getTime() ?? 0);
  }
  return t;
}
function built(dir: string): boolean {
  try {
    return [...Deno.readDirSync(`${dir}/dist`)].length > 0 && (Deno.statSync(`${dir}/dist`).mtime?.getTime() ?? 0) >= newest(dir);
  } catch {
    return false;
  }
}

/** The example and the SDK copy it ships with, built by the example's prepack when stale (as sdk-node/test/managed.test.ts). */
async function buildExample(): Promise<void> {
  if (["generated", "sdk-core", "sdk-node", "examples/packaged-tools"].every((w) => built(`${root}/${w}`))) return;
  // Through /usr/bin/env: Deno substitutes itself for a command named plainly "node".
  const out = await new Deno.Command("/usr/bin/env", { args: ["node", `${root}/scripts/prepack.mjs`], cwd: `${root}/examples/packaged-tools`, stdout: "null", stderr: "inherit" }).output();
  if (!out.success) throw new Error("building the packaged example (its prepack) failed");
}

/** The tar inside a gzip upload. */
async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const inflated = await new Response(new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  return new Uint8Array(inflated);
}

/** Entry names of a tar (ustar; PAX headers carry long names). */
function tarNames(tar: Uint8Array): string[] {
  const names: string[] = [];
  const text = (from: number, len: number) => new TextDecoder().decode(tar.subarray(from, from + len)).replace(/\0.*$/s, "");
  let pax: string | undefined;
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const size = parseInt(text(at + 124, 12), 8);
    const type = text(at + 156, 1);
    const prefix = text(at + 345, 155);
    const name = prefix ? `${prefix}/${text(at, 100)}` : text(at, 100);
    if (type === "x") pax = /path=(.*)\n/.exec(new TextDecoder().decode(tar.subarray(at + 512, at + 512 + size)))?.[1];
    else {
      names.push(pax ?? name);
      pax = undefined;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function records(url: string, sessionId: string): Promise<JournalRecord[]> {
  const res = await fetch(`${url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { records: JournalRecord[] }).records;
}

const scripted = (calls: Array<{ name: string; input: unknown }>) => ({
  provider: "scripted" as const,
  script: [{ toolCalls: calls }, { text: "done" }, ...[1, 2, 3].map((i) => ({ text: `done (wake ${i})` }))],
});

Deno.test({ name: "the installed example placed with brainEnv({ runtime: \"node\" }) and \"deno\" from Deno answers, emits and finishes; one upload per server", ...opts }, async () => {
  await buildExample();
  // Imported by name from node_modules, as a Deno application with "nodeModulesDir": "manual" does.
  const example = await import(EXAMPLE) as Record<string, any>;
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", BRAIN_DENO: Deno.execPath() });
  const seen: string[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.includes("/v1/packages/")) seen.push(init?.method ?? "GET");
    return original(input, init);
  }) as typeof fetch;
  const brain = new Brain({ url: runtime.url, token });
  try {
    for (const runtimeName of ["node", "deno"] as const) {
      const env = brainEnv({ name: `text-${runtimeName}`, runtime: runtimeName });
      const session = await brain.sessions.create({
        model: scripted([{ name: "count_words", input: { text: "one two  three" } }, { name: "slugify", input: { title: "Héllo, Managed World" } }]),
        tools: [example.countWords({ env }), example.slugify({ env, separator: "_" })],
      });
      const answer = await session.send("go");
      if (answer !== "done") throw new Error(`${runtimeName}: answer ${answer}`);
      // slugify finishes (ctx.finish); its tool.finished may follow its result a moment later.
      let all = await records(runtime.url, session.id);
      for (let i = 0; i < 200 && !all.some((r) => r.type === "tool.finished"); i++) {
        await new Promise((r) => setTimeout(r, 25));
        all = await records(runtime.url, session.id);
      }
      const results = Object.fromEntries(all.flatMap((r) => (r.type === "tool.result" ? [[(r.data as any).callId, (r.data as any).outcome]] : [])));
      const started = all.flatMap((r) => (r.type === "tool.call_started" ? [r.data as any] : []));
      const got = JSON.stringify(started.map((c) => [c.tool, c.placement.kind, c.placement.runtime, results[c.callId]]));
      const want = JSON.stringify([
        ["count_words", "managed", runtimeName, { status: "ok", value: { words: 3 } }],
        ["slugify", "managed", runtimeName, { status: "ok", value: { slug: "hello_managed_world" } }],
      ]);
      if (got !== want) throw new Error(`${runtimeName}: calls ${got}`);
      const events = JSON.stringify(all.flatMap((r) => (r.type === "tool.event" ? [[(r.data as any).kind, (r.data as any).data]] : [])));
      if (events !== JSON.stringify([["slugified", { words: 3 }]])) throw new Error(`${runtimeName}: events ${events}`);
      const finished = JSON.stringify(all.flatMap((r) => (r.type === "tool.finished" ? [[(r.data as any).callId, (r.data as any).status]] : [])));
      if (finished !== JSON.stringify([[started[1].callId, "ok"]])) throw new Error(`${runtimeName}: finished ${finished}`);
    }
    // Both sessions on this server: HEAD + PUT once, nothing for the second.
    if (JSON.stringify(seen) !== JSON.stringify(["HEAD", "PUT"])) throw new Error(`package requests ${JSON.stringify(seen)}`);
  } finally {
    globalThis.fetch = original;
    await brain.close();
    await stopRuntime(runtime.child);
  }
});

Deno.test({ name: "packInstalled from Deno: the example from node_modules in npm pack layout with its run-time dependencies, stable", ...opts }, async () => {
  await buildExample();
  const ref = { package: EXAMPLE, version: "0.2.0", module: ".", export: "slugify" };
  // Found from the working directory (sdk-deno/) upward: the checkout's node_modules.
  const a = await packInstalled(ref);
  const b = await packInstalled(ref);
  if (a.digest !== b.digest || a.digest !== await sha256(a.bytes)) throw new Error("the upload is not stable or its digest is not its sha256");
  const tar = await gunzip(a.bytes);
  const names = tarNames(tar);
  for (const n of ["package/package.json", "package/dist/index.js", "package/dist/brain-tools.json", "package/node_modules/@aexhq/brain/package.json", "package/node_modules/@aexhq/brain/dist/deno/mod.js", "package/node_modules/@aexhq/brain-core/package.json", "package/node_modules/zod/package.json"]) {
    if (!names.includes(n)) throw new Error(`${n} not in the upload`);
  }
  if (names.some((n) => n.startsWith("package/src/") || n.includes("node_modules/ts-morph/") || n.includes("node_modules/typescript/"))) throw new Error("sources or dev dependencies in the upload");
});

Deno.test({ name: "packInstalled from Deno reads Deno's own node_modules layout (\"nodeModulesDir\": \"auto\"), into the same tar as the Node SDK", ...opts }, async () => {
  const dir = `${tmp}/brain-deno-layout-${crypto.randomUUID()}`;
  // What `deno install` makes: each package in .deno/<name with + for />@<version>/node_modules/<name>,
  // its dependencies linked beside it there, the application's direct dependencies linked at the top.
  await sh(`
    cd ${JSON.stringify(dir.slice(0, dir.lastIndexOf("/")))}; mkdir ${JSON.stringify(dir)}; cd ${JSON.stringify(dir)}
    echo '{"nodeModulesDir":"auto"}' > deno.json
    tools=node_modules/.deno/@x+tools@1.0.0/node_modules; dep=node_modules/.deno/dep@2.0.0/node_modules; peer=node_modules/.deno/peer@3.0.0/node_modules
    long=lib/a-folder-with-a-rather-long-name/another-folder-with-a-long-name/and-a-third-one-to-pass-the-ustar-limits
    mkdir -p $tools/@x/tools/lib $tools/@x/tools/$long $tools/@x/tools/src $dep/dep $peer/peer node_modules/@x
    echo '{"name":"@x/tools","version":"1.0.0","type":"module","files":["lib"],"dependencies":{"dep":"^2"},"peerDependencies":{"peer":"*"},"devDependencies":{"dev":"*"}}' > $tools/@x/tools/package.json
    echo 'export const x = 1;' > $tools/@x/tools/lib/index.js; echo 'not shipped' > $tools/@x/tools/src/index.ts
    printf '#!/bin/sh\necho hi\n' > $tools/@x/tools/lib/run.sh; chmod 755 $tools/@x/tools/lib/run.sh
    echo '{}' > $tools/@x/tools/$long/file-with-a-long-name-too-so-that-neither-half-fits-in-its-ustar-field-of-one-hundred-bytes.json
    echo '{"name":"dep","version":"2.0.0","main":"index.js"}' > $dep/dep/package.json; echo 'module.exports = 2;' > $dep/dep/index.js
    echo '{"name":"peer","version":"3.0.0"}' > $peer/peer/package.json
    ln -s ../../dep@2.0.0/node_modules/dep $tools/dep; ln -s ../../peer@3.0.0/node_modules/peer $tools/peer
    ln -s ../.deno/@x+tools@1.0.0/node_modules/@x/tools node_modules/@x/tools; ln -s .deno/peer@3.0.0/node_modules/peer node_modules/peer
    mkdir app`);
  try {
    const upload = await packInstalled({ package: "@x/tools", version: "1.0.0", module: ".", export: "x" }, [`${dir}/app`]);
    const want = [
      "package/lib/a-folder-with-a-rather-long-name/another-folder-with-a-long-name/and-a-third-one-to-pass-the-ustar-limits/file-with-a-long-name-too-so-that-neither-half-fits-in-its-ustar-field-of-one-hundred-bytes.json",
      "package/lib/index.js", "package/lib/run.sh", "package/node_modules/dep/index.js", "package/node_modules/dep/package.json", "package/node_modules/peer/package.json", "package/package.json",
    ];
    const tar = await gunzip(upload.bytes);
    if (JSON.stringify(tarNames(tar)) !== JSON.stringify(want)) throw new Error(`upload ${JSON.stringify(tarNames(tar))}`);
    // The Node SDK packs the same files into the same tar (the gzip bytes are each runtime's own).
    const out = await node(["--conditions=brain-source", "--import", "tsx", "--input-type=module", "-e", `
      import { gunzipSync } from "node:zlib"; import { createHash } from "node:crypto";
      const { packInstalled } = await import("./sdk-node/src/packages.ts");
      const u = await packInstalled({ package: "@x/tools", version: "1.0.0", module: ".", export: "x" }, [${JSON.stringify(`${dir}/app`)}]);
      console.log(createHash("sha256").update(gunzipSync(u.bytes)).digest("hex"));`]).output();
    if (!out.success) throw new Error("packing with the Node SDK failed");
    const nodeTar = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1);
    if (nodeTar !== await sha256(tar)) throw new Error(`the Deno tar ${await sha256(tar)} differs from the Node tar ${nodeTar}`);
    // tar(1) reads it: the executable keeps 0755, the long name arrives whole (PAX).
    const listing = await sh(`cd ${JSON.stringify(dir)} && printf '%s' ${JSON.stringify(btoa(String.fromCharCode(...upload.bytes)))} | base64 -d | tar -tvzf -`);
    if (!/^-rwxr-xr-x .* package\/lib\/run\.sh$/m.test(listing) || !listing.includes(want[0]!)) throw new Error(`tar -tv:\n${listing}`);
    // Another version installed than the tool was imported from.
    await packInstalled({ package: "@x/tools", version: "1.1.0", module: ".", export: "x" }, [`${dir}/app`]).then(
      () => { throw new Error("packed"); },
      (e) => { if (!(e instanceof SdkError) || e.code !== "package_version_mismatch") throw e; },
    );
  } finally {
    await sh(`rm -rf ${JSON.stringify(dir)}`);
  }
});

Deno.test({ name: "packInstalled from Deno: not in any node_modules is package_not_installed naming nodeModulesDir; only in Deno's global npm cache is unsupported", ...opts }, async () => {
  const dir = `${tmp}/brain-deno-cache-${crypto.randomUUID()}`;
  await sh(`mkdir -p ${JSON.stringify(`${dir}/app`)} ${JSON.stringify(`${dir}/deno/npm/registry.npmjs.org/@x/cached-tools/1.0.0`)}; echo '{"name":"@x/cached-tools","version":"1.0.0"}' > ${JSON.stringify(`${dir}/deno/npm/registry.npmjs.org/@x/cached-tools/1.0.0/package.json`)}`);
  const before = Deno.env.get("DENO_DIR");
  Deno.env.set("DENO_DIR", `${dir}/deno`);
  try {
    const expect = async (pkg: string, code: string, pattern: RegExp) => {
      try {
        await packInstalled({ package: pkg, version: "1.0.0", module: ".", export: "x" }, [`${dir}/app`]);
      } catch (e) {
        if (e instanceof SdkError && e.code === code && pattern.test(e.message) && e.message.includes(pkg)) return;
        throw e;
      }
      throw new Error(`${pkg}: packed`);
    };
    await expect("@x/nowhere-tools", "package_not_installed", /"nodeModulesDir": "auto"/);
    await expect("@x/cached-tools", "unsupported", /global npm cache.*"nodeModulesDir": "auto"/);
    // Through the client: at session creation, before anything reaches the (absent) server.
    const t = tool({ name: "t", description: "d", input: z.object({}), run: () => ({}) });
    Object.defineProperty(t, "executable", { value: Object.freeze({ package: "@x/nowhere-tools", version: "1.0.0", module: ".", export: "t" }) });
    const brain = new Brain({ url: "http://127.0.0.1:9", token: "t" });
    try {
      await brain.sessions.create({ model: { provider: "scripted", script: [] }, tools: [t({ env: brainEnv({ name: "text", runtime: "deno" }) })] });
      throw new Error("created");
    } catch (e) {
      if (!(e instanceof SdkError) || e.code !== "package_not_installed" || !/nodeModulesDir/.test(e.message)) throw e;
    } finally {
      await brain.close();
    }
  } finally {
    if (before === undefined) Deno.env.delete("DENO_DIR");
    else Deno.env.set("DENO_DIR", before);
    await sh(`rm -rf ${JSON.stringify(dir)}`);
  }
});
