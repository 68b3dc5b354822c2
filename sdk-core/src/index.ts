/**
 * The platform-neutral SDK (Web APIs only) that `@aexhq/brain` (Node) and the Deno module bind to
 * their platform: tools, the client, the host connection, `ctx`, outcome rules.
 *
 * @module @aexhq/brain-core
 */
// The runtime-neutral SDK. Runtime adapters (sdk-node, sdk-deno) bind `Brain` to their Platform and
// re-export the rest unchanged.
export { tool } from "./tool.ts";
export type { ToolDefinition, ToolFactory, FactoryCall, PlacedToolSpec, ExecutableReference, DeclaredTool, RunResult, OutputOf } from "./tool.ts";
export type { ToolOutput } from "./outcome.ts";
export { hostEnv, brainEnv, httpEnv, mcpEnv } from "./env.ts";
export type { Environment, HostEnvironment, BrainEnvironment, HttpEnvironment, EnvironmentAuthority, McpEnvironment } from "./env.ts";
export type { McpToolsOptions } from "./client/mcp-tools.ts";
export { httpTools } from "./http/handler.ts";
export { http } from "./env.ts";
export type { PlainHttpEnvironment } from "./env.ts";
export { httpTool } from "./http/plain-tool.ts";
export type { HttpToolDefinition } from "./http/plain-tool.ts";
export type { HttpToolsOptions } from "./http/handler.ts";
export { component } from "./component.ts";
export type { Component } from "./component.ts";
export type { ToolContext, EnvironmentControl } from "./context.ts";
export { BrainClient } from "./client/brain.ts";
export type { BrainOptions, CloseOptions, CreateSessionOptions, ListSessionsOptions, SessionsApi } from "./client/brain.ts";
export { Session } from "./client/session.ts";
export type { SendOptions, WaitOptions } from "./client/session.ts";
export type { TurnAnswer, ToolFailure } from "./client/answers.ts";
export type { PendingApproval, ApprovalAnswer, ApprovalHandler, ApprovalHookOptions } from "./client/approvals.ts";
export { BrainError, LimitExceededError, ProtocolError, SdkError } from "./errors.ts";
export { toOutcome } from "./outcome.ts";
export type { Platform, WebSocketLike, PackageUpload } from "./platform.ts";
// Packing an installed package for brainEnv({ runtime }); each SDK binds it to its file system.
export { packInstalledWith } from "./pack.ts";
export type { PackageFiles, PackOptions } from "./pack.ts";
export type { Session as SessionView, SessionList } from "@aexhq/brain-protocol";
export type { ApprovalResponse, Decider } from "@aexhq/brain-protocol";
export type { Outcome, JournalRecord, ModelRequest, ModelResult, ModelConfig, ErrorInfo, EnvironmentBinding, EnvironmentSpec, EnvironmentUpdate } from "@aexhq/brain-protocol";
