import type { EnvironmentPlugin } from "../plugin.ts";
import { DescriptorEnvironment } from "./environment.ts";

/**
 * The descriptor Environment, with the operator's named environments (startBrain's
 * `descriptorEnvironments`; the CLI reads BRAIN_HTTP_ENVIRONMENTS). It is installed even with none
 * defined, so a placement naming an undefined environment is refused by name.
 */
export const descriptorPlugin: EnvironmentPlugin = {
  name: "descriptor",
  install(ctx) {
    ctx.provide("descriptor", new DescriptorEnvironment(ctx.settings.descriptorEnvironments));
  },
};
