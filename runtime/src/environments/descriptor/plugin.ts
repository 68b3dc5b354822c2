import { environmentPlugins } from "../plugins.ts";
import type { BrainInternals } from "../plugins.ts";
import { DescriptorEnvironment } from "./environment.ts";

/**
 * Plugs the descriptor Environment into startBrain, with the operator's named environments
 * (startBrain's `descriptorEnvironments`; the CLI reads BRAIN_HTTP_ENVIRONMENTS). It is installed
 * even with none defined, so a placement naming an undefined environment is refused by name.
 */
export function installDescriptors(internals: BrainInternals): DescriptorEnvironment {
  const env = new DescriptorEnvironment(internals.descriptorEnvironments);
  internals.environments.set("descriptor", env);
  return env;
}

environmentPlugins.push((internals) => {
  installDescriptors(internals);
});
