/** Runtimes a Brain-managed JS host can be started with. */
export const MANAGED_RUNTIMES = ["node", "deno"] as const;
export type ManagedRuntime = (typeof MANAGED_RUNTIMES)[number];
