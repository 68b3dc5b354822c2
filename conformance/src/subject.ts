import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

export const repoRoot = join(import.meta.dirname, "../..");
/**
 * Run from source (this checkout: src/subject.ts, subjects through tsx with the brain-source
 * condition) or from the installed package (dist/src/subject.js, subjects as plain compiled modules
 * that import the installed @aexhq/brain).
 */
const fromSource = import.meta.url.endsWith(".ts");
/** The package folder: conformance/ here, node_modules/@aexhq/brain-conformance/ when installed. */
export const packageRoot = fromSource ? join(import.meta.dirname, "..") : join(import.meta.dirname, "../..");
const deno = join(repoRoot, "node_modules/.bin/deno");
const catalogue = fromSource ? join(packageRoot, "subjects/catalogue.ts") : join(packageRoot, "dist/subjects/catalogue.js");
const httpCatalogue = fromSource ? join(packageRoot, "subjects/http-catalogue.ts") : join(packageRoot, "dist/subjects/http-catalogue.js");
const mcpCatalogue = fromSource ? join(packageRoot, "subjects/mcp-catalogue.ts") : join(packageRoot, "dist/subjects/mcp-catalogue.js");
const nodeArgv = (file: string) => (fromSource ? [process.execPath, "--conditions=brain-source", "--import", "tsx", file] : [process.execPath, file]);

export interface SubjectSpec {
  kind: "node" | "deno" | "command" | "component" | "http" | "packaged" | "mcp";
  label: string;
  argv: string[];
  shell: boolean;
  /**
   * An MCP server: `stdio` (the runtime starts `argv` as the operator's server), `http` (the runner
   * starts `argv` with BRAIN_CONFORMANCE_HTTP_PORT and the runtime reaches it at /mcp), or `url`
   * (a Streamable HTTP server already running; `argv` is empty).
   */
  mcp?: { transport: "stdio" } | { transport: "http" } | { transport: "url"; url: string };
}

/** The environment variable naming the loopback port an HTTP subject listens on. */
export const HTTP_PORT_ENV = "BRAIN_CONFORMANCE_HTTP_PORT";

/** The environment variable naming the catalogue variant a subject is started as. */
export const VARIANT_ENV = "BRAIN_CONFORMANCE_VARIANT";

/** `node`, `deno`, `command:"<shell command>"`, `component:<file.wasm>`, `http…`, `packaged-…` or `mcp…`, as given to --subject. */
export function parseSubject(arg: string): SubjectSpec {
  if (arg === "node") {
    return { kind: "node", label: "node", shell: false, argv: nodeArgv(catalogue) };
  }
  if (arg === "deno") {
    if (!fromSource) throw new Error("the deno subject runs the catalogue from a Brain checkout (npm run conformance -- --subject deno); use command:\"deno run ...\" for your own Deno host");
    // The minimal permissions a host needs: the network (to reach Brain) and its BRAIN_* variables.
    return {
      kind: "deno", label: "deno", shell: false,
      argv: [deno, "run", "--quiet", `--config=${join(repoRoot, "sdk-deno/deno.json")}`, "--allow-net", `--allow-env=BRAIN_URL,BRAIN_TOKEN,BRAIN_HOST_ID,BRAIN_HOST_SECRET,${VARIANT_ENV}`, catalogue],
    };
  }
  if (arg.startsWith("command:")) return { kind: "command", label: arg, shell: true, argv: [arg.slice("command:".length)] };
  // HTTP tools (brain.http/0.2): a process listening on 127.0.0.1:$BRAIN_CONFORMANCE_HTTP_PORT.
  if (arg === "http") return { kind: "http", label: "http", shell: false, argv: nodeArgv(httpCatalogue) };
  if (arg.startsWith("http-command:")) return { kind: "http", label: arg, shell: true, argv: [arg.slice("http-command:".length)] };
  // An MCP server: the reference catalogue (mcp, mcp-http) or your own (mcp:<command>, mcp-http:<command or URL>).
  if (arg === "mcp") return { kind: "mcp", label: arg, shell: false, argv: nodeArgv(mcpCatalogue), mcp: { transport: "stdio" } };
  if (arg === "mcp-http") return { kind: "mcp", label: arg, shell: false, argv: nodeArgv(mcpCatalogue), mcp: { transport: "http" } };
  if (arg.startsWith("mcp:") && arg.length > "mcp:".length) return { kind: "mcp", label: arg, shell: true, argv: [arg.slice("mcp:".length)], mcp: { transport: "stdio" } };
  if (arg.startsWith("mcp-http:") && arg.length > "mcp-http:".length) {
    const rest = arg.slice("mcp-http:".length);
    if (/^https?:\/\//.test(rest)) return { kind: "mcp", label: arg, shell: false, argv: [], mcp: { transport: "url", url: rest } };
    return { kind: "mcp", label: arg, shell: true, argv: [rest], mcp: { transport: "http" } };
  }
  // A component is no process: the runner uploads the file and places the catalogue tools on it.
  if (arg.startsWith("component:")) return { kind: "component", label: arg, shell: false, argv: [arg.slice("component:".length)] };
  // The catalogue as a package served by a Brain-managed host; argv[0] is the runtime.
  if (arg === "packaged-node" || arg === "packaged-deno") {
    if (!fromSource) throw new Error(`the ${arg} subject packs the catalogue from a Brain checkout (npm run conformance -- --subject ${arg})`);
    return { kind: "packaged", label: arg, shell: false, argv: [arg.slice("packaged-".length)] };
  }
  throw new Error(`unknown subject ${JSON.stringify(arg)}: use node, deno, command:"<shell command>", component:<file.wasm>, http, http-command:"<shell command>", packaged-node, packaged-deno, mcp, mcp:"<shell command>", mcp-http or mcp-http:"<shell command or URL>"`);
}

export interface SubjectIdentity { hostId: string; secret: string }

export interface RunningSubject { hostId: string; identity: SubjectIdentity; process: ChildProcess; output: () => string; stop(signal?: NodeJS.Signals): Promise<void> }

/**
 * Starts the subject; pass `identity` to start it again as the same host (a restarted application)
 * and `variant` to start it as a catalogue variant (BRAIN_CONFORMANCE_VARIANT).
 */
export function startSubject(spec: SubjectSpec, brainUrl: string, token: string, identity?: SubjectIdentity, variant?: string, extraEnv: Record<string, string> = {}): RunningSubject {
  const { hostId, secret } = identity ?? { hostId: `conformance-${randomBytes(4).toString("hex")}`, secret: randomBytes(24).toString("hex") };
  const env: NodeJS.ProcessEnv = { ...process.env, BRAIN_URL: brainUrl, BRAIN_TOKEN: token, BRAIN_HOST_ID: hostId, BRAIN_HOST_SECRET: secret, ...extraEnv };
  delete env[VARIANT_ENV];
  if (variant !== undefined) env[VARIANT_ENV] = variant;
  const child = spec.shell
    ? spawn(spec.argv[0]!, { shell: true, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
    : spawn(spec.argv[0]!, spec.argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    hostId,
    identity: { hostId, secret },
    process: child,
    output: () => output,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) {
        try { process.kill(-child.pid!, signal); } catch { /* already gone */ }
        const killer = setTimeout(() => { try { process.kill(-child.pid!, "SIGKILL"); } catch { /* gone */ } }, 2000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
}
