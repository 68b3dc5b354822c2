// brainEnv({ runtime }) (Brain-managed JS hosts): a runtime of "node" or "deno" rides on the
// environment; a tool without an executable reference (not imported from a package built with
// brain-tools) is refused at the factory call. Placing and uploading: sdk-node/test/managed.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { brainEnv, tool } from "../src/index.ts";

test("brainEnv({ runtime }) carries node or deno; any other runtime is a TypeError", () => {
  for (const runtime of ["node", "deno"] as const) assert.equal(brainEnv({ name: "text", runtime }), { kind: "brain", name: "text", runtime });
  assert.throws(() => brainEnv({ name: "text", runtime: "python" as "node" }), (e: Error) => e instanceof TypeError && /runtime must be "node" or "deno"/.test(e.message));
  assert.equal(brainEnv({ name: "plain" }), { kind: "brain", name: "plain" });
});

test("a tool without executable in a managed brainEnv: TypeError naming brain-tools; with one, the placement carries it", () => {
  const t = tool({ name: "t", description: "d", input: z.object({}), run: async () => ({}) });
  assert.throws(() => t({ env: brainEnv({ name: "text", runtime: "node" }) }), (e: Error) => e instanceof TypeError && /brain-tools/.test(e.message));
  const ref = Object.freeze({ package: "@x/tools", version: "1.0.0", module: ".", export: "t" });
  Object.defineProperty(t, "executable", { value: ref });
  assert.equal(t({ env: brainEnv({ name: "text", runtime: "deno" }) }).executable, ref);
});

test.run();
