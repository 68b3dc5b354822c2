// An MCP subject (`--subject mcp`, `mcp:<command>`, `mcp-http`, `mcp-http:<command or URL>`): an MCP
// server the runtime uses as an operator-defined server named `conformance`. Over stdio the runtime
// starts it (through src/mcp-stdio-wrapper.mjs, which writes its process group, so the runner can
// kill exactly that server); over Streamable HTTP the runner starts it (or it already runs at a
// URL). The contracts are what GET /v1/mcp-servers/conformance/tools lists, and each tool is placed
// with an McpPlacement.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ErrorBody, McpServerTools, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import type { Logger } from "@aexhq/brain-runtime";
import type { RuntimeApi } from "./http.ts";
import { packageRoot } from "./subject.ts";

/** The name the runner gives the subject among the runtime's MCP servers (McpPlacement.server). */
export const MCP_SERVER = "conformance";

/** The wrapper the runtime starts (src/mcp-stdio-wrapper.mjs, shipped as is): it runs the server in a process group of its own. */
const WRAPPER = join(packageRoot, "src/mcp-stdio-wrapper.mjs");

/**
 * The operator's definition of a stdio subject: Node runs the wrapper, which writes its pid and
 * the server's process group to `pidFile`, then runs the command (a command line through the
 * shell, so quoting, `&&` and assignments work, as for `command:`).
 */
export function stdioServer(command: string[], shell: boolean, pidFile: string, initializeTimeoutMs: number): { command: string; args: string[]; initializeTimeoutMs: number } {
  return { command: process.execPath, args: [WRAPPER, pidFile, shell ? "shell" : "argv", ...command], initializeTimeoutMs };
}

/** The tools the runtime lists for the subject, as contracts by Brain name and MCP names by Brain name. Throws with the runtime's answer. */
export async function mcpContracts(api: RuntimeApi): Promise<{ contracts: Map<string, ToolContract>; mcpNames: Map<string, string> }> {
  const res = await api.call<McpServerTools | ErrorBody>("GET", `/v1/mcp-servers/${MCP_SERVER}/tools`);
  if (res.status !== 200) {
    const error = (res.body as ErrorBody | undefined)?.error;
    throw new Error(`the runtime could not list the MCP server's tools: GET /v1/mcp-servers/${MCP_SERVER}/tools → ${res.status} ${error?.code ?? ""}: ${error?.message ?? JSON.stringify(res.body)}`);
  }
  const listed = res.body as McpServerTools;
  if (listed.tools.length === 0) {
    const skipped = (listed.skipped ?? []).map((s) => `${s.tool}: ${s.reason}`).join("; ");
    throw new Error(`the MCP server lists no tool the runtime can place${skipped ? ` (skipped: ${skipped})` : ""}`);
  }
  return {
    contracts: new Map(listed.tools.map((t) => [t.contract.name, t.contract])),
    mcpNames: new Map(listed.tools.map((t) => [t.contract.name, t.tool])),
  };
}

export function mcpPlacement(contract: ToolContract, mcpNames: Map<string, string>): PlacedTool {
  return { contract, options: {}, placement: { kind: "mcp", server: MCP_SERVER, tool: mcpNames.get(contract.name) ?? contract.name } };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Kills the stdio server the wrapper started (its whole process group, SIGKILL) and waits until
 * the wrapper, the runtime's child, has exited: the runtime sees the server's stdout end, its open
 * calls end `unknown`, and its next use starts the server again.
 */
export async function killStdioServer(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) throw new Error(`the MCP server was never started (no pid in ${pidFile})`);
  const [wrapper, group] = readFileSync(pidFile, "utf8").trim().split(" ").map(Number) as [number, number];
  try {
    process.kill(-group, "SIGKILL");
  } catch {
    // already gone
  }
  const until = Date.now() + 5000;
  while (alive(wrapper)) {
    if (Date.now() > until) throw new Error(`the MCP server (process group ${group}) was killed, but its wrapper (pid ${wrapper}) did not exit`);
    await new Promise((r) => setTimeout(r, 20));
  }
  // The runtime, in this process, hears of the closed pipes on its next turns.
  await new Promise((r) => setTimeout(r, 100));
}

/**
 * The runtime's logger for an MCP stage: what it says about the subject (the server's stderr lines,
 * its connection ending) goes to the subject's output for the report; the rest to `other`.
 */
export function capturingLogger(other: Logger): { logger: Logger; output: () => string } {
  let output = "";
  const entry = (level: keyof Logger) => (message: string, fields?: Record<string, unknown>) => {
    if (fields?.server !== MCP_SERVER) return other[level](message, fields);
    const line = message === "MCP server stderr" && typeof fields.line === "string" ? fields.line : `(brain ${level}: ${message}${typeof fields.reason === "string" ? `: ${fields.reason}` : ""})`;
    output = `${output}${line}\n`.slice(-20_000);
  };
  return { logger: { debug: entry("debug"), info: entry("info"), warn: entry("warn"), error: entry("error") }, output: () => output };
}
