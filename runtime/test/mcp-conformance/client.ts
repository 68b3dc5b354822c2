// The client under test for @modelcontextprotocol/conformance's client scenarios: Brain's MCP
// client, as an application meets it. The conformance CLI runs this with the scenario's server URL
// as the last argument (and MCP_CONFORMANCE_SCENARIO); it starts an embedded runtime whose operator
// defines that URL as MCP server "subject", lists its tools (initialize, tools/list), places them
// in a scripted session and calls the scenario's tool through a turn. Exit 0 when every call ended
// ok, 1 otherwise (with the journal's outcome on stderr).
import { fileURLToPath } from "node:url";
import { startBrain } from "../../src/index.ts";

// uvu imports every file under test/: run only as the program the conformance CLI starts.
if (process.argv[1] === fileURLToPath(import.meta.url)) await main();

async function main(): Promise<void> {

  const url = process.argv.at(-1)!;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  // What each scenario's server expects to be called with; scenarios with no call only connect.
  const CALLS: Record<string, { name: string; input: unknown }[]> = {
    tools_call: [{ name: "add_numbers", input: { a: 5, b: 3 } }],
    "sse-retry": [{ name: "test_reconnection", input: {} }],
    "elicitation-sep1034-client-defaults": [{ name: "test_client_elicitation_defaults", input: {} }],
  };

  const brain = await startBrain({ journal: "memory", port: 0, token: "conformance", mcpServers: { subject: { url } } });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${brain.url}${path}`, { method, headers: { authorization: "Bearer conformance", "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  let code = 0;
  try {
    const listed = await call("GET", "/v1/mcp-servers/subject/tools");
    const calls = CALLS[scenario] ?? [];
    if (calls.length > 0) {
      const tools = calls.map((c) => {
        const t = listed.tools.find((x: { tool: string }) => x.tool === c.name);
        if (t === undefined) throw new Error(`the server lists no tool ${c.name}`);
        return { contract: t.contract, options: {}, placement: { kind: "mcp", server: "subject", tool: c.name } };
      });
      const session = await call("POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: calls }, { text: "done" }] }, tools });
      await call("POST", `/v1/sessions/${session.id}/messages`, { text: "go", wait: true });
      const { records } = await call("GET", `/v1/sessions/${session.id}/events`);
      const ends = records.filter((r: { type: string }) => r.type === "tool.finished");
      if (ends.length !== calls.length || ends.some((r: { data: { status: string } }) => r.data.status !== "ok")) {
        process.stderr.write(`calls did not end ok: ${JSON.stringify(records.filter((r: { type: string }) => r.type.startsWith("tool.")))}\n`);
        code = 1;
      }
    }
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    code = 1;
  } finally {
    await brain.close();
  }
  process.exit(code);
}
