/** A WebAssembly component implementing brain:tool@0.2.0, loaded from a URL when a session is created. */
export interface Component {
  readonly kind: "component";
  readonly url: URL;
  /** Set once the runtime admitted these bytes (by digest), so later sessions skip the upload. */
  admittedDigest?: string;
}

export function component(url: URL | string): Component {
  const parsed = url instanceof URL ? url : new URL(url);
  return { kind: "component", url: parsed };
}

export function isComponent(value: unknown): value is Component {
  return typeof value === "object" && value !== null && (value as Component).kind === "component" && (value as Component).url instanceof URL;
}
