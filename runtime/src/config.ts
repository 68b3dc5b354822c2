import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { BrainOptions } from "./server.ts";
import { BrainRuntimeError } from "./errors.ts";

/** `brain serve` options from the environment (BRAIN_PORT, BRAIN_HOST, BRAIN_DATA_DIR, ...). */
/** BRAIN_COMPONENT_MEMORY_MB: the JS heap and linear memory cap of each component worker (undefined = default). */
export function componentMemoryMb(env: NodeJS.ProcessEnv): number | undefined {
  if (env.BRAIN_COMPONENT_MEMORY_MB === undefined || env.BRAIN_COMPONENT_MEMORY_MB === "") return undefined;
  const mb = Number(env.BRAIN_COMPONENT_MEMORY_MB);
  if (!Number.isInteger(mb) || mb < 16) {
    throw new BrainRuntimeError("invalid_request", `BRAIN_COMPONENT_MEMORY_MB must be an integer of at least 16 (MiB), got ${env.BRAIN_COMPONENT_MEMORY_MB}`);
  }
  return mb;
}

export function configFromEnv(env: NodeJS.ProcessEnv): BrainOptions & { tokenFile?: string } {
  const journal = env.BRAIN_JOURNAL ?? "sqlite";
  if (journal !== "sqlite" && journal !== "memory") throw new BrainRuntimeError("invalid_request", `BRAIN_JOURNAL must be sqlite or memory, got ${journal}`);
  const port = Number(env.BRAIN_PORT ?? 3210);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new BrainRuntimeError("invalid_request", `BRAIN_PORT must be a port number, got ${env.BRAIN_PORT}`);
  const maxEmitted = env.BRAIN_MAX_EMITTED_BYTES === undefined ? undefined : Number(env.BRAIN_MAX_EMITTED_BYTES);
  if (maxEmitted !== undefined && (!Number.isInteger(maxEmitted) || maxEmitted < 0)) throw new BrainRuntimeError("invalid_request", `BRAIN_MAX_EMITTED_BYTES must be a non-negative integer`);
  const maxModelCalls = env.BRAIN_MAX_MODEL_CALLS === undefined ? undefined : Number(env.BRAIN_MAX_MODEL_CALLS);
  if (maxModelCalls !== undefined && (!Number.isInteger(maxModelCalls) || maxModelCalls < 1)) throw new BrainRuntimeError("invalid_request", `BRAIN_MAX_MODEL_CALLS must be a positive integer, got ${env.BRAIN_MAX_MODEL_CALLS}`);
  // Read by the component plugin; checked here too so a typo stops the CLI before anything opens.
  componentMemoryMb(env);
  const dataDir = resolve(env.BRAIN_DATA_DIR ?? "./.brain");
  const opts: BrainOptions & { tokenFile?: string } = { dataDir, journal, port, host: env.BRAIN_HOST ?? "127.0.0.1" };
  if (maxEmitted !== undefined) opts.maxEmittedBytes = maxEmitted;
  if (maxModelCalls !== undefined) opts.maxModelCalls = maxModelCalls;
  if (env.BRAIN_WORKSPACE_ROOT) opts.workspaceRoot = resolve(env.BRAIN_WORKSPACE_ROOT);
  if (env.BRAIN_TOKEN) opts.token = env.BRAIN_TOKEN;
  else {
    const { token, file } = operatorToken(dataDir);
    opts.token = token;
    opts.tokenFile = file;
  }
  return opts;
}

/** The operator token in `<dataDir>/operator.token`, created once with mode 0600. */
export function operatorToken(dataDir: string): { token: string; file: string } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "operator.token");
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  }
  chmodSync(file, 0o600);
  return { token: readFileSync(file, "utf8").trim(), file };
}
