// Tools the managed-host tests call. Plain JavaScript, made with the package's own @aexhq/brain.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { tool } from "@aexhq/brain";
import { z } from "zod";

const recordFile = new URL("./setup-record.json", import.meta.url);
// What the module saw when it was imported: the setup record, if setup had run by then.
const imported = { importedAt: Date.now(), setup: existsSync(recordFile) ? JSON.parse(readFileSync(recordFile, "utf8")) : null };

export const probeOrder = tool({
  name: "probe_order",
  description: "Says whether setup ran before this module was imported.",
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.emit("pid", { pid: process.pid });
    return { ...imported, pid: process.pid, runtime: typeof globalThis.Deno === "undefined" ? "node" : "deno" };
  },
});

export const probeFs = tool({
  name: "probe_fs",
  description: "Reads or writes a file of the session workspace.",
  input: z.object({ op: z.enum(["read", "write", "read_outside"]), path: z.string(), text: z.string().optional() }),
  run: async ({ op, path, text }) => {
    const ws = process.env.BRAIN_WORKSPACE ?? "";
    try {
      if (op === "read") return { ok: true, text: readFileSync(join(ws, path), "utf8") };
      if (op === "read_outside") return { ok: true, text: readFileSync(path, "utf8") };
      writeFileSync(join(ws, path), text ?? "");
      return { ok: true };
    } catch (e) {
      return { ok: false, code: e?.code ?? e?.name ?? "error", message: String(e?.message ?? e) };
    }
  },
});

export const probeWait = tool({
  name: "probe_wait",
  description: "Emits its pid, then waits until its call ends.",
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.emit("pid", { pid: process.pid });
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
  },
});
