// @modelcontextprotocol/sdk is an optional dependency of the runtime, loaded only when MCP is used:
// without it, a runtime runs sessions as ever, and /v1/mcp and an operator's MCP server answer a
// typed `unavailable` that names the package.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

test("without @modelcontextprotocol/sdk: sessions run; /v1/mcp and an MCP server are unavailable, naming the package", () => {
  // A process of its own, whose module hooks make the package unresolvable.
  const child = fileURLToPath(new URL("./helpers/no-mcp-sdk.mts", import.meta.url));
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", child], { encoding: "utf8", timeout: 60_000 });
  assert.is(run.status, 0, run.stderr);
  const r = JSON.parse(run.stdout.trim().split("\n").pop()!);
  assert.is(r.answered, "completed");
  assert.equal([r.endpoint.status, r.endpoint.code], [503, "unavailable"]);
  assert.match(r.endpoint.message, /the MCP endpoint \(\/v1\/mcp\) needs the package @modelcontextprotocol\/sdk/);
  assert.equal([r.listing.status, r.listing.code], [503, "unavailable"]);
  assert.match(r.listing.message, /MCP server fs needs the package @modelcontextprotocol\/sdk.*npm install @modelcontextprotocol\/sdk/);
});

test("the runtime's package declares the MCP SDK an optional peer, not a dependency", () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  assert.is(pkg.dependencies["@modelcontextprotocol/sdk"], undefined);
  assert.ok(pkg.peerDependencies["@modelcontextprotocol/sdk"]);
  assert.is(pkg.peerDependenciesMeta["@modelcontextprotocol/sdk"].optional, true);
});

test.run();
