import { BrainRuntimeError } from "../../errors.ts";

/** BRAIN_COMPONENT_MEMORY_MB: the JS heap and linear memory cap of each component worker (undefined = default). */
export function componentMemoryMb(env: NodeJS.ProcessEnv): number | undefined {
  if (env.BRAIN_COMPONENT_MEMORY_MB === undefined || env.BRAIN_COMPONENT_MEMORY_MB === "") return undefined;
  const mb = Number(env.BRAIN_COMPONENT_MEMORY_MB);
  if (!Number.isInteger(mb) || mb < 16) {
    throw new BrainRuntimeError("invalid_request", `BRAIN_COMPONENT_MEMORY_MB must be an integer of at least 16 (MiB), got ${env.BRAIN_COMPONENT_MEMORY_MB}`);
  }
  return mb;
}
