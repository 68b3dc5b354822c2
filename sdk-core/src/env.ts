/** Where a placed tool runs. Without one, a `run` tool runs in the registering application. */
export type Environment = HostEnvironment | BrainEnvironment | HttpEnvironment | PlainHttpEnvironment;

/** A named host process (another application registered with that host id). */
export interface HostEnvironment {
  readonly kind: "host";
  readonly name: string;
}

/** An Environment inside the Brain runtime (components), with its grants. */
export interface BrainEnvironment {
  readonly kind: "brain";
  readonly name: string;
  readonly filesystem?: { readonly workspace: "read" | "write" };
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

const ENV_NAME = /^[a-zA-Z0-9._:-]{1,128}$/;

export function hostEnv(config: { name: string }): HostEnvironment {
  if (typeof config?.name !== "string" || !ENV_NAME.test(config.name)) throw new TypeError(`hostEnv: invalid name ${JSON.stringify(config?.name)}`);
  return Object.freeze({ kind: "host", name: config.name });
}

export function brainEnv(config: { name: string; filesystem?: { workspace: "read" | "write" } }): BrainEnvironment {
  if (typeof config?.name !== "string" || !ENV_NAME.test(config.name)) throw new TypeError(`brainEnv: invalid name ${JSON.stringify(config?.name)}`);
  const ws = config.filesystem?.workspace;
  if (config.filesystem !== undefined && ws !== "read" && ws !== "write") throw new TypeError(`brainEnv ${config.name}: filesystem.workspace must be "read" or "write"`);
  return Object.freeze({ kind: "brain", name: config.name, ...(config.filesystem ? { filesystem: Object.freeze({ workspace: ws! }) } : {}) });
}

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
