/** Where a placed tool runs. Without one, a `run` tool runs in the registering application. */
export type Environment = HostEnvironment | BrainEnvironment | HttpEnvironment;

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
