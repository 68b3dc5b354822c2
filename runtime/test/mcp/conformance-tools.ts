// The fixture tools @modelcontextprotocol/conformance's server scenarios call, declared with tool()
// and served by a real host: names, arguments and behaviour as the scenarios describe them.
import { z } from "zod";
import { tool } from "@aexhq/brain";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const conformanceTools = [
  tool({
    name: "test_simple_text",
    description: "Returns a simple text response.",
    input: z.object({}),
    run: async (_input, ctx) => ctx.finish({ status: "ok", value: null }, { content: "This is a simple text response for testing." }),
  }),
  tool({
    name: "test_error_handling",
    description: "Always fails.",
    input: z.object({}),
    run: async () => {
      throw new Error("This tool intentionally returns an error for testing");
    },
  }),
  tool({
    name: "test_tool_with_logging",
    description: "Sends three log messages while it runs.",
    input: z.object({}),
    run: async (_input, ctx) => {
      await ctx.emit("log", { level: "info", message: "Tool execution started" });
      await sleep(50);
      await ctx.emit("log", { level: "info", message: "Tool processing data" });
      await sleep(50);
      await ctx.emit("log", { level: "info", message: "Tool execution completed" });
      return ctx.finish({ status: "ok", value: null }, { content: "Tool with logging executed successfully" });
    },
  }),
  tool({
    name: "test_tool_with_progress",
    description: "Reports progress 0, 50 and 100 of 100.",
    input: z.object({}),
    run: async (_input, ctx) => {
      for (const progress of [0, 50, 100]) {
        await ctx.emit("progress", { progress, total: 100 });
        if (progress < 100) await sleep(50);
      }
      return ctx.finish({ status: "ok", value: null }, { content: "Tool with progress executed successfully" });
    },
  }),
].map((t) => t());
