// brainEnv({ runtime }) from the Deno SDK: packing an installed package is Node-only for now (the
// Deno platform has no packageUpload), so placing a packaged tool in a managed brainEnv fails at
// session creation with SdkError `unsupported`, before anything is sent.
import { Brain, SdkError, brainEnv, tool } from "@aexhq/brain";
import { z } from "zod";

Deno.test("a packaged tool in a managed brainEnv: SdkError unsupported naming Node and the HTTP API", async () => {
  const t = tool({ name: "t", description: "d", input: z.object({}), run: () => ({}) });
  Object.defineProperty(t, "executable", { value: Object.freeze({ package: "@x/tools", version: "1.0.0", module: ".", export: "t" }) });
  const brain = new Brain({ url: "http://127.0.0.1:9", token: "t" });
  try {
    await brain.sessions.create({ model: { provider: "scripted", script: [] }, tools: [t({ env: brainEnv({ name: "text", runtime: "deno" }) })] });
    throw new Error("created");
  } catch (e) {
    if (!(e instanceof SdkError) || e.code !== "unsupported" || !/Node only/.test(e.message) || !/@x\/tools/.test(e.message)) throw e;
  } finally {
    await brain.close();
  }
});
