/**
 * The Brain server, embeddable: `startBrain(options)` and the Environment plugins, model providers
 * and errors an embedder or a plugin author meets. The operator guide is runtime/README.md.
 *
 * @module @aexhq/brain-runtime
 */
export { startBrain, defaultEnvironments } from "./server.ts";
export type { EnvironmentPlugin, EnvironmentSettings, PluginContext } from "./server.ts";
export { componentsPlugin } from "./environments/component/plugin.ts";
export { managedHostsPlugin } from "./environments/managed/plugin.ts";
export { descriptorPlugin } from "./environments/descriptor/plugin.ts";
export { httpToolsPlugin } from "./environments/http/plugin.ts";
export { environmentControlPlugin } from "./environments/control/plugin.ts";
export type { Logger, LogLevel, LogFields } from "./logger.ts";
export { stderrLogger, silentLogger } from "./logger.ts";
export { ComponentEnvironment } from "./environments/component/environment.ts";
export { DescriptorEnvironment } from "./environments/descriptor/environment.ts";
export type { DescriptorEnvironmentConfig } from "./environments/descriptor/environment.ts";
export type { HttpJsonEnvironmentConfig } from "./environments/descriptor/http-json.ts";
export type { McpServerConfig, McpStdioServerConfig, McpHttpServerConfig } from "./environments/mcp/config.ts";
export { HttpToolEnvironment } from "./environments/http/environment.ts";
export { PlainHttpEnvironment } from "./environments/http/plain.ts";
export type { BrainOptions, BrainServer, BrainInternals } from "./server.ts";
export type { Environment, CallInvocation, CallSink, CallHandle } from "./dispatch/environment.ts";
export type { ModelProvider, ModelStreamEvent, ModelCallContext, ReplyHints } from "./models/provider.ts";
export { ModelCallError } from "./models/provider.ts";
export { BrainRuntimeError, CallRejectedError } from "./errors.ts";
export { contractDigest, canonicalJson } from "./hosts/digest.ts";
export { checkOutcome } from "./dispatch/outcome.ts";
export { validateSchema } from "./environments/json-schema.ts";
export type { SchemaIssue } from "./environments/json-schema.ts";
