export { startBrain, environmentPlugins } from "./server.ts";
// Registers the component Environment (brain:tool@0.2.0 components) and PUT /v1/components/:digest.
import "./environments/component/plugin.ts";
// Registers Brain-managed JS hosts (placement kind "managed") and PUT /v1/packages/:digest.
import "./environments/managed/plugin.ts";
export { ComponentEnvironment } from "./environments/component/environment.ts";
// Registers the descriptor Environment (the operator's named http_json environments).
import "./environments/descriptor/plugin.ts";
export { DescriptorEnvironment } from "./environments/descriptor/environment.ts";
export type { DescriptorEnvironmentConfig } from "./environments/descriptor/environment.ts";
export type { HttpJsonEnvironmentConfig } from "./environments/descriptor/http-json.ts";
// Registers the HTTP tool Environment (the Application tool extension) and its callback route.
import "./environments/http/plugin.ts";
export { HttpToolEnvironment } from "./environments/http/environment.ts";
export { PlainHttpEnvironment } from "./environments/http/plain.ts";
// Installs ctx.environments (Environment control) for host calls.
import "./environments/control/plugin.ts";
export type { BrainOptions, BrainServer, BrainInternals } from "./server.ts";
export type { Environment, CallInvocation, CallSink, CallHandle } from "./dispatch/environment.ts";
export type { ModelProvider, ModelStreamEvent, ModelCallContext, ReplyHints } from "./models/provider.ts";
export { ModelCallError } from "./models/provider.ts";
export { BrainRuntimeError, CallRejectedError } from "./errors.ts";
export { contractDigest, canonicalJson } from "./hosts/digest.ts";
export { checkOutcome } from "./dispatch/outcome.ts";
export { validateSchema } from "./environments/json-schema.ts";
export type { SchemaIssue } from "./environments/json-schema.ts";
