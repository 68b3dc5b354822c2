import type { EnvironmentAuthority, EnvironmentFilesystem, Placement } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../../errors.ts";

/** A workspace grant; undefined = none. `write` includes `read`. */
export type Workspace = EnvironmentFilesystem["workspace"] | undefined;

const RANK = { none: 0, read: 1, write: 2 } as const;

/** Whether `grant` lies within `limit` (none < read < write). */
export function within(grant: Workspace, limit: Workspace): boolean {
  return RANK[grant ?? "none"] <= RANK[limit ?? "none"];
}

/** The Environment control a placement grants: only host placements carry one; absent = none. */
export function authorityOf(placement: Placement): EnvironmentAuthority {
  return placement.kind === "host" ? (placement.environments ?? {}) : {};
}

/**
 * The typed refusal every missing grant gets: `forbidden`, with a message naming the operation and
 * what was missing, and `details.missing` the grant that would have allowed it (as the placement
 * spells it: `environments.call: ["reader"]`), or the server setting (`BRAIN_WORKSPACE_ROOT`).
 */
export function forbidden(operation: string, message: string, missing: string, extra: Record<string, unknown> = {}): BrainRuntimeError {
  // `message` names its argument first when there is one: ctx.environments.call("reader"): ...
  return new BrainRuntimeError("forbidden", `ctx.environments.${operation}${message.startsWith("(") ? "" : ": "}${message}`, { operation, ...extra, missing });
}

/** `environments.call: ["reader"]` as the placement would spell it. */
export function named(grant: "call" | "setup", name: string): string {
  return `environments.${grant}: [${JSON.stringify(name)}]`;
}

export function workspaceGrant(grant: Workspace): string {
  return `environments.create.filesystem.workspace: ${JSON.stringify(grant)}`;
}
