// The shared scenario list (conformance/scenarios) replayed under Deno: the runtime runs as a Node
// subprocess, the catalogue tools run here in Deno through sdk-deno/mod.ts, and every scenario is
// one test. It runs with sdk-deno/deno.json (the task "test" there). The Node side runs the same list through `brain-conformance --subject node`.
import { Brain } from "@aexhq/brain";
import type { ToolContract } from "@aexhq/brain-protocol";
import { catalogueFor } from "../subjects/catalogue-tools.ts";
import { appliesTo, journalOf, loadScenarios } from "../src/scenario.ts";
import { runScenario, hostContracts, waitDisconnected, type RunContext } from "../src/run.ts";
import { RuntimeApi } from "../src/http.ts";
import { FaultProxy } from "../src/proxy.ts";
import { closed, registerAs } from "../src/faults.ts";
import { serveRuntime, stopRuntime } from "../../scripts/deno-runtime.ts";

const root = new URL("../../", import.meta.url);

// The catalogue serves in this process: when a fault scenario stops it for good (4401, 4409), the
// SDK ends a serving client with an unhandled rejection (a serving-only process exits with status 1).
// Here the application is the test, which expects that and restarts the client.
globalThis.addEventListener("unhandledrejection", (e) => {
  const code = (e.reason as { code?: string } | undefined)?.code;
  if (code === "unauthorized" || code === "replaced") e.preventDefault();
});
const token = crypto.randomUUID();
/** As the Node runner (src/cli.ts): the silent-runtime scenario waits for this. */
const HOST_TIMEOUT_MS = 3000;

/** `brain serve` as a Node subprocess; resolves with its URL once it listens. */
function serve(env: Record<string, string>): Promise<{ url: string; child: Deno.ChildProcess }> {
  return serveRuntime({ BRAIN_TOKEN: token, BRAIN_MAX_EMITTED_BYTES: "100000", BRAIN_HOST_TIMEOUT_MS: String(HOST_TIMEOUT_MS), ...env });
}

/**
 * A runtime (memory, or SQLite in a data folder the Node child creates: this suite has no write
 * permission), the proxy in front of it, and the catalogue served in this Deno process.
 */
interface Stage { ctx: RunContext; close(): Promise<void> }

async function startStage(journal: "memory" | "sqlite"): Promise<Stage> {
  const dataDir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/brain-conformance-deno-${crypto.randomUUID()}`;
  const env = journal === "sqlite" ? { BRAIN_JOURNAL: "sqlite", BRAIN_DATA_DIR: dataDir } : { BRAIN_JOURNAL: "memory" };
  let runtime = await serve({ ...env, BRAIN_PORT: "0" });
  const port = new URL(runtime.url).port;
  const proxy = new FaultProxy(new URL(runtime.url));
  const proxyUrl = await proxy.start();
  const api = new RuntimeApi(runtime.url, token);
  const host = { id: `deno-${crypto.randomUUID()}`, secret: crypto.randomUUID() };
  const serveCatalogue = async (variant?: string) => {
    const b = new Brain({ url: proxyUrl, token, host });
    await b.serve(catalogueFor(variant).map((factory) => factory()));
    return b;
  };
  let brain = await serveCatalogue();
  const info = await hostContracts(api, host.id, 10_000);
  const contracts = new Map(info.tools.map((t: ToolContract) => [t.name, t]));
  const ctx: RunContext = {
    api, proxy, contracts,
    hostTimeoutMs: HOST_TIMEOUT_MS,
    replaceHost: async () => {
      const ws = await registerAs(runtime.url, token, host.id, host.secret, [...contracts.values()]);
      return () => closed(ws);
    },
    place: (contract) => ({ contract, options: {}, placement: { kind: "host", hostId: host.id } }),
    reconnected: async () => { await new Promise((r) => setTimeout(r, 50)); await hostContracts(api, host.id, 10_000); },
    // In-process, a restarted application is a new Brain client with the same host identity. The
    // scenarios kill the host (SIGKILL on Node): its connection drops before close() could end the
    // open calls `cancelled`, so they end `unknown` as they do for a killed process.
    restartSubject: async (variant?: string) => {
      proxy.drop();
      await brain.close();
      await waitDisconnected(api, host.id);
      brain = await serveCatalogue(variant);
      await hostContracts(api, host.id, 10_000);
    },
    // The same data folder, port and token; the client reconnects through the proxy by itself.
    restartRuntime: async () => {
      await stopRuntime(runtime.child);
      runtime = await serve({ ...env, BRAIN_PORT: port });
      await hostContracts(api, host.id, 10_000);
    },
    timeoutMs: 15_000,
  };
  return {
    ctx,
    close: async () => {
      await brain.close();
      await proxy.close();
      await stopRuntime(runtime.child);
      if (journal === "sqlite") await new Deno.Command("rm", { args: ["-rf", dataDir] }).output();
    },
  };
}

const stages = new Map<"memory" | "sqlite", Promise<Stage>>();
const stageFor = (journal: "memory" | "sqlite") => {
  let s = stages.get(journal);
  if (!s) stages.set(journal, (s = startStage(journal)));
  return s;
};
const url = (await stageFor("memory")).ctx.api.url;

const opts = { sanitizeOps: false, sanitizeResources: false };
for (const scenario of loadScenarios(new URL("conformance/scenarios", root).pathname)) {
  // The hanging upgrade waits registerTimeoutMs (10 s): left to brain-conformance, as in the Node
  // suite (not registered at all: an ignored test counts as a skip, which fails under CI).
  if (scenario.name === "fault-upgrade-hangs") continue;
  // A scenario for other subjects (an MCP-only one, say) is not this suite's: an ignored test
  // would count as a skip, which fails under CI.
  if (!appliesTo(scenario, "host")) continue;
  Deno.test({ name: scenario.name, ...opts }, async () => {
    const result = await runScenario((await stageFor(journalOf(scenario))).ctx, scenario);
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
  for (const stage of stages.values()) await (await stage).close();
});
