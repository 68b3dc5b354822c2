import type { EnvironmentPlugin } from "./plugin.ts";
import { componentsPlugin } from "./component/plugin.ts";
import { managedHostsPlugin } from "./managed/plugin.ts";
import { descriptorPlugin } from "./descriptor/plugin.ts";
import { httpToolsPlugin } from "./http/plugin.ts";
import { environmentControlPlugin } from "./control/plugin.ts";
import { mcpPlugin } from "./mcp/plugin.ts";

/**
 * The Environments a runtime has unless told otherwise (host placements are built in): components,
 * Brain-managed hosts, the operator's descriptor environments and MCP servers, HTTP tools, and Environment control
 * (last: it drives the component Environment). `startBrain({ environments: [...defaultEnvironments(), mine] })`
 * adds one.
 */
export function defaultEnvironments(): EnvironmentPlugin[] {
  return [componentsPlugin, managedHostsPlugin, descriptorPlugin, mcpPlugin, httpToolsPlugin, environmentControlPlugin];
}
