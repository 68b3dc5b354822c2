// The shared scenario list (conformance/scenarios) replayed under Deno: the runtime runs as a Node
// subprocess, the catalogue tools run here in Deno through sdk-deno/mod.ts, and every scenario is
// one test. It runs with sdk-deno/deno.json (the task "test" there). The Node side runs the same list through `brain-conformance --subject node`.
import { Brain } from "@aexhq/brain";
import type { ToolContract } from "@aexhq/brain-protocol";
import { catalogue } from "../subjects/catalogue-tools.ts";
import { loadScenarios } from "../src/scenario.ts";
import { runScenario, hostContracts, waitDisconnected, type RunContext } from "../src/run.ts";
import { RuntimeApi } from "../src/http.ts";
import { DropProxy } from "../src/proxy.ts";

const root = new URL("../../", import.meta.url);
const token = crypto.randomUUID();
// Through /usr/bin/env: Deno substitutes itself for a child process named plainly "node".
const runtime = new Deno.Command("/usr/bin/env", {
  args: ["node", "--conditions=brain-source", "--import", "tsx", "runtime/src/cli.ts", "serve"],
  cwd: root,
  env: { BRAIN_PORT: "0", BRAIN_JOURNAL: "memory", BRAIN_TOKEN: token, BRAIN_MAX_EMITTED_BYTES: "100000" },
  stdout: "piped",
  stderr: "inherit",
}).spawn();

async function listeningUrl(): Promise<string> {
  const reader = runtime.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the runtime exited before listening:\n${seen}`);
    seen += value;
    const m = /brain listening on (http:\/\/\S+)/.exec(seen);
    if (m) {
      // Keep draining so the child never blocks on a full pipe.
      (async () => { while (!(await reader.read()).done) { /* drain */ } })();
      return m[1]!;
    }
  }
}

const url = await listeningUrl();
const proxy = new DropProxy(new URL(url));
const proxyUrl = await proxy.start();
const api = new RuntimeApi(url, token);
const host = { id: `deno-${crypto.randomUUID()}`, secret: crypto.randomUUID() };
let brain = new Brain({ url: proxyUrl, token, host });
await brain.serve(catalogue.map((factory) => factory()));
const info = await hostContracts(api, host.id, 10_000);
const ctx: RunContext = {
  api, proxy,
  contracts: new Map(info.tools.map((t: ToolContract) => [t.name, t])),
  place: (contract) => ({ contract, options: {}, placement: { kind: "host", hostId: host.id } }),
  reconnected: async () => { await new Promise((r) => setTimeout(r, 50)); await hostContracts(api, host.id, 10_000); },
  // In-process, a restarted application is a new Brain client with the same host identity.
  restartSubject: async () => {
    await brain.close();
    await waitDisconnected(api, host.id);
    brain = new Brain({ url: proxyUrl, token, host });
    await brain.serve(catalogue.map((factory) => factory()));
    await hostContracts(api, host.id, 10_000);
  },
  timeoutMs: 15_000,
};

const opts = { sanitizeOps: false, sanitizeResources: false };
for (const scenario of loadScenarios(new URL("conformance/scenarios", root).pathname)) {
  Deno.test({ name: scenario.name, ...opts }, async () => {
    const result = await runScenario(ctx, scenario);
    if (!result.pass) throw new Error(`${scenario.name}: ${result.detail}`);
  });
}

Deno.test({ name: "sdk-deno and sdk-node export the same names", ...opts }, async () => {
  const deno = Object.keys(await import("@aexhq/brain")).sort();
  const source = await Deno.readTextFile(new URL("sdk-node/src/index.ts", root));
  const node = [...source.matchAll(/export (?:class|const|function) (\w+)|export \{([^}]+)\} from/g)]
    .flatMap((m) => (m[1] ? [m[1]] : m[2]!.split(",").map((n) => n.trim()).filter(Boolean)))
    .sort();
  if (JSON.stringify(deno) !== JSON.stringify(node)) throw new Error(`deno exports ${deno.join(", ")}; node exports ${node.join(", ")}`);
});

Deno.test({ name: "a host without --allow-net fails with an error that names the flag", ...opts }, async () => {
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", `--config=${new URL("sdk-deno/deno.json", root).pathname}`, "--allow-env=BRAIN_URL,BRAIN_TOKEN", new URL("examples/lookup/main_deno.ts", root).pathname],
    env: { BRAIN_URL: url, BRAIN_TOKEN: token },
    stdout: "piped", stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(run.stderr);
  if (run.success) throw new Error("expected the run to fail without network permission");
  if (!stderr.includes("--allow-net")) throw new Error(`the error does not name --allow-net:\n${stderr}`);
});

Deno.test({ name: "with only --allow-net and --allow-env, the lookup example runs under Deno", ...opts }, async () => {
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", `--config=${new URL("sdk-deno/deno.json", root).pathname}`, `--allow-net=${new URL(url).host}`, "--allow-env=BRAIN_URL,BRAIN_TOKEN", new URL("examples/lookup/main_deno.ts", root).pathname],
    env: { BRAIN_URL: url, BRAIN_TOKEN: token },
    stdout: "piped", stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(run.stdout);
  if (!run.success || !out.includes("Ada Lovelace")) throw new Error(`lookup failed: ${out}\n${new TextDecoder().decode(run.stderr)}`);
});

Deno.test({ name: "teardown", ...opts }, async () => {
  await brain.close();
  await proxy.close();
  runtime.kill("SIGTERM");
  await runtime.status;
});
