/** A WebAssembly component implementing brain:tool@0.2.0, loaded from a URL when a session is created. */
export interface Component {
  readonly kind: "component";
  readonly url: URL;
  /** The bytes' digest, once a runtime admitted them. */
  admittedDigest?: string;
  /**
   * The servers (base URLs) that admitted these bytes, so later sessions on them skip the upload; a
   * server that answers it does not know them (another server, a restarted in-memory one) gets them again.
   */
  admittedBy?: Set<string>;
}

/**
 * A WebAssembly component tool's implementation: `tool({ ..., implementation: component(url) })`.
 * The bytes are read from `url` (a `file:` or `http(s):` URL) and uploaded when a session first
 * places one of its tools.
 */
export function component(url: URL | string): Component {
  const parsed = url instanceof URL ? url : new URL(url);
  return { kind: "component", url: parsed };
}

export function isComponent(value: unknown): value is Component {
  return typeof value === "object" && value !== null && (value as Component).kind === "component" && (value as Component).url instanceof URL;
}
