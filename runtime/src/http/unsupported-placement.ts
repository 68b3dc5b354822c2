import { BrainRuntimeError } from "../errors.ts";

/** What a component placement may ask for, as the contract (ComponentPlacement) defines it. */
const PLACEMENT_KINDS = ["host", "component", "descriptor", "http", "http_plain", "managed", "mcp"];
/** The keys of the placements that carry grants (a binding in a brainEnv): any other key is a grant this runtime does not give. */
const BINDING_KEYS: Record<string, readonly string[]> = { component: ["kind", "env", "digest", "filesystem"], managed: ["kind", "env", "runtime", "digest", "executable", "filesystem"] };
const FILESYSTEM_GRANTS: Record<string, readonly string[]> = { workspace: ["read", "write"] };

/**
 * Explains a CreateSessionRequest that failed the contract because it asks this runtime for
 * something it does not support: a placement kind it does not know (another runtime), or a
 * component grant it cannot give (a grant kind besides filesystem.workspace, a workspace mode
 * besides read/write). Returns an `unsupported` error naming it, or undefined when the body is
 * invalid for another reason (then the ordinary `invalid_request` with the schema issues applies).
 * The spec: "A denied grant or unsupported runtime fails explicitly."
 */
export function explainUnsupported(body: unknown): BrainRuntimeError | undefined {
  const tools = (body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return undefined;
  for (const [i, t] of tools.entries()) {
    const name = typeof t?.contract?.name === "string" ? (t.contract.name as string) : `#${i}`;
    const p = t?.placement as Record<string, unknown> | undefined;
    if (p === null || typeof p !== "object" || typeof p.kind !== "string") continue;
    if (!PLACEMENT_KINDS.includes(p.kind)) {
      return new BrainRuntimeError("unsupported", `tool ${name} asks for placement kind "${p.kind}", which this runtime does not support (supported: ${PLACEMENT_KINDS.join(", ")})`, {
        tool: name,
        placement: p.kind,
        supported: PLACEMENT_KINDS,
      });
    }
    const keys = BINDING_KEYS[p.kind];
    if (keys === undefined) continue;
    const env = typeof p.env === "string" ? p.env : "?";
    for (const key of Object.keys(p)) {
      if (keys.includes(key)) continue;
      return new BrainRuntimeError("unsupported", `environment ${env} (tool ${name}) asks for a "${key}" grant, which this runtime does not support (supported: filesystem.workspace read|write)`, {
        tool: name,
        env,
        grant: key,
      });
    }
    const fs = p.filesystem;
    if (fs === undefined || fs === null || typeof fs !== "object") continue;
    for (const [kind, mode] of Object.entries(fs as Record<string, unknown>)) {
      const modes = FILESYSTEM_GRANTS[kind];
      if (modes === undefined) {
        return new BrainRuntimeError("unsupported", `environment ${env} (tool ${name}) asks for a filesystem.${kind} grant, which this runtime does not support (supported: filesystem.workspace)`, {
          tool: name,
          env,
          grant: `filesystem.${kind}`,
        });
      }
      if (!modes.includes(mode as string)) {
        return new BrainRuntimeError("unsupported", `environment ${env} (tool ${name}) asks for filesystem.${kind} "${String(mode)}", which this runtime does not support (supported: ${modes.join(", ")})`, {
          tool: name,
          env,
          grant: `filesystem.${kind}`,
          mode: String(mode),
        });
      }
    }
  }
  return undefined;
}
