/** Where a placed tool runs. Without one, a `run` tool runs in the registering application. */
export type Environment = HostEnvironment | BrainEnvironment | HttpEnvironment | PlainHttpEnvironment | McpEnvironment;

/**
 * A host process: another application registered with host id `name`, or (no name) the registering
 * application itself. `environments` grants its tools Environment control (`ctx.environments`).
 */
export interface HostEnvironment {
  readonly kind: "host";
  /** The host id; undefined = the application that creates the session. */
  readonly name: string | undefined;
  readonly environments?: EnvironmentAuthority;
}

/**
 * What a host tool may do through `ctx.environments`; nothing by default (every operation is then
 * refused `forbidden`, naming the grant that is missing).
 * - `list`: list() and get(name) of the session's Brain-side bindings.
 * - `create`: create bindings, and update/delete/setup/call those created at run time, with grants
 *   at most `create.filesystem` (absent: no grant). A tool cannot create more authority than it holds.
 * - `setup`, `call`: the binding names it may set up and call tools in.
 */
export interface EnvironmentAuthority {
  readonly list?: boolean;
  readonly create?: { readonly filesystem?: { readonly workspace: "read" | "write" } };
  readonly setup?: readonly string[];
  readonly call?: readonly string[];
}

/**
 * An Environment inside the Brain runtime, with its grants: components and descriptors, or (with
 * `runtime`) a Brain-managed Node or Deno host process that runs packaged `run` tools (tools
 * imported from a package built with `brain-tools`; the SDK uploads the installed package).
 */
export interface BrainEnvironment {
  readonly kind: "brain";
  readonly name: string;
  readonly filesystem?: { readonly workspace: "read" | "write" };
  /** A Brain-managed host process of this runtime (docs/managed-hosts.md); absent for components and descriptors. */
  readonly runtime?: "node" | "deno";
}

/** An application endpoint that serves `run` tools over HTTP (the Application tool extension; `httpTools` on that side). */
export interface HttpEnvironment {
  readonly kind: "http";
  /** The endpoint's URL (also its name). */
  readonly name: string;
  readonly url: string;
}

/**
 * A plain-JSON endpoint (the v1 `http()` placement, kept for existing users): Brain POSTs each
 * call's input to `url` and the 2xx JSON answer is the tool's value. The endpoint is anyone's
 * server; the tool needs no `run` here, only its contract.
 */
export interface PlainHttpEnvironment {
  readonly kind: "http_plain";
  /** The endpoint's URL (also its name). */
  readonly name: string;
  readonly url: string;
}

/**
 * An MCP server the Brain server's operator defines by name (BRAIN_MCP_SERVERS): a tool placed here
 * is that server's tool of the same name (or, from `brain.mcpTools`, of its MCP name). Its contract
 * must be the server's advertised schemas: `brain.mcpTools` gives exactly those.
 */
export interface McpEnvironment {
  readonly kind: "mcp";
  /** The operator's name for the server. */
  readonly name: string;
}

const ENV_NAME = /^[a-zA-Z0-9._:-]{1,128}$/;

/** `mcpEnv({ name })`: the operator's MCP server `name`. Throws a TypeError for a bad name. */
export function mcpEnv(config: { name: string }): McpEnvironment {
  if (typeof config?.name !== "string" || !ENV_NAME.test(config.name)) throw new TypeError(`mcpEnv: invalid name ${JSON.stringify(config?.name)}`);
  return Object.freeze({ kind: "mcp", name: config.name });
}

/**
 * `hostEnv({ name })`: a named host process. `hostEnv({ environments })` (no name): the registering
 * application, with Environment control for the tools placed with it.
 */
export function hostEnv(config: { name?: string; environments?: EnvironmentAuthority }): HostEnvironment {
  if (typeof config !== "object" || config === null) throw new TypeError("hostEnv takes { name?, environments? }");
  if (config.name !== undefined && (typeof config.name !== "string" || !ENV_NAME.test(config.name))) throw new TypeError(`hostEnv: invalid name ${JSON.stringify(config.name)}`);
  if (config.name === undefined && config.environments === undefined) throw new TypeError("hostEnv: give a name (a host id), environments (Environment control for this application's tools), or both");
  const environments = config.environments === undefined ? undefined : authority(config.environments);
  return Object.freeze({ kind: "host", name: config.name, ...(environments ? { environments } : {}) });
}

/** Checks and freezes an EnvironmentAuthority; anything unknown is a TypeError here, not a refusal later. */
function authority(a: EnvironmentAuthority): EnvironmentAuthority {
  const where = "hostEnv: environments";
  if (typeof a !== "object" || a === null || Array.isArray(a)) throw new TypeError(`${where} must be an object ({ list?, create?, setup?, call? })`);
  const unknown = Object.keys(a).filter((k) => !["list", "create", "setup", "call"].includes(k));
  if (unknown.length > 0) throw new TypeError(`${where}: unknown grant ${unknown.join(", ")} (grants: list, create, setup, call)`);
  const out: { list?: boolean; create?: EnvironmentAuthority["create"]; setup?: readonly string[]; call?: readonly string[] } = {};
  if (a.list !== undefined) {
    if (typeof a.list !== "boolean") throw new TypeError(`${where}.list must be true or false`);
    out.list = a.list;
  }
  if (a.create !== undefined) {
    const c = a.create;
    if (typeof c !== "object" || c === null || Array.isArray(c) || Object.keys(c).some((k) => k !== "filesystem")) throw new TypeError(`${where}.create must be {} or { filesystem: { workspace: "read" | "write" } }`);
    const ws = c.filesystem?.workspace;
    if (c.filesystem !== undefined && ((ws !== "read" && ws !== "write") || Object.keys(c.filesystem).length !== 1)) throw new TypeError(`${where}.create.filesystem must be { workspace: "read" | "write" }`);
    out.create = Object.freeze(c.filesystem === undefined ? {} : { filesystem: Object.freeze({ workspace: ws! }) });
  }
  for (const key of ["setup", "call"] as const) {
    const names = a[key];
    if (names === undefined) continue;
    if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || !ENV_NAME.test(n))) throw new TypeError(`${where}.${key} must be an array of binding names (brainEnv names)`);
    out[key] = Object.freeze([...new Set(names)]);
  }
  return Object.freeze(out);
}

/**
 * A placement inside Brain: a component's binding, or a Brain-managed host (`runtime: "node" | "deno"`)
 * running a packaged tool; `filesystem` grants the session workspace. Throws a TypeError naming the
 * bad field.
 */
export function brainEnv(config: { name: string; filesystem?: { workspace: "read" | "write" }; runtime?: "node" | "deno" }): BrainEnvironment {
  if (typeof config?.name !== "string" || !ENV_NAME.test(config.name)) throw new TypeError(`brainEnv: invalid name ${JSON.stringify(config?.name)}`);
  if (config.runtime !== undefined && config.runtime !== "node" && config.runtime !== "deno") {
    throw new TypeError(`brainEnv ${config.name}: runtime must be "node" or "deno" (a Brain-managed host), got ${JSON.stringify(config.runtime)}`);
  }
  const ws = config.filesystem?.workspace;
  if (config.filesystem !== undefined && ws !== "read" && ws !== "write") throw new TypeError(`brainEnv ${config.name}: filesystem.workspace must be "read" or "write"`);
  return Object.freeze({
    kind: "brain",
    name: config.name,
    ...(config.filesystem ? { filesystem: Object.freeze({ workspace: ws! }) } : {}),
    ...(config.runtime !== undefined ? { runtime: config.runtime } : {}),
  });
}

/**
 * A placement on an HTTP endpoint of the application that serves tools with `httpTools()` over the
 * Application tool extension (`brain.http/0.2`). Throws a TypeError for a URL that is not absolute http(s).
 */
export function httpEnv(config: { url: string }): HttpEnvironment {
  let url: URL;
  try {
    url = new URL(config?.url);
  } catch {
    throw new TypeError(`httpEnv: url must be an absolute http(s) URL, got ${JSON.stringify(config?.url)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`httpEnv: url must be http or https, got ${url.protocol}`);
  return Object.freeze({ kind: "http", name: url.href, url: url.href });
}

/**
 * Places a tool at a plain-JSON endpoint: `lookup({ env: http({ url }) })`. Any declared tool fits,
 * including one declared with only its contract (no run, no implementation); its `run`, if it has
 * one, is not called here.
 */
export function http(config: { url: string }): PlainHttpEnvironment {
  if (typeof config !== "object" || config === null) throw new TypeError("http() takes { url }");
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new TypeError(`http: url must be an absolute http(s) URL, got ${JSON.stringify(config.url)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`http: url must be http or https, got ${url.protocol}`);
  if (url.username !== "" || url.password !== "") throw new TypeError("http: url may not carry credentials (user:password@)");
  return Object.freeze({ kind: "http_plain", name: url.href, url: url.href });
}
