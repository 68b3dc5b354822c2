import { BrainRuntimeError } from "../errors.ts";

/** The MCP SDK: an optional dependency of the runtime, loaded only when MCP is used (docs/mcp.md). */
export const MCP_SDK_PACKAGE = "@modelcontextprotocol/sdk";

/** Whether `e` says the MCP SDK package is not installed (Node's resolution error naming it). */
function missing(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" && e.message.includes(`'${MCP_SDK_PACKAGE}`);
}

/**
 * Loads a module that imports the MCP SDK (the runtime's two MCP wire files, loaded only by dynamic
 * import): when the package is not installed, a typed `unavailable` naming it and how to install it,
 * for `what` (the MCP endpoint, or an operator's MCP server).
 */
export async function loadMcp<T>(load: () => Promise<T>, what: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (!missing(e)) throw e;
    throw new BrainRuntimeError(
      "unavailable",
      `${what} needs the package ${MCP_SDK_PACKAGE}, an optional dependency of @aexhq/brain-runtime that is not installed here: install it beside the runtime (npm install ${MCP_SDK_PACKAGE}@^1.32.2)`,
      { package: MCP_SDK_PACKAGE },
      false,
      { cause: e },
    );
  }
}
