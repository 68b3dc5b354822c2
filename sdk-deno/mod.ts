// The Brain SDK for Deno: the same core as @aexhq/brain (sdk-core/, through deno.json imports) bound
// to the Deno platform. Thin wiring only; it exports the same names as sdk-node.
import { BrainClient, type BrainOptions } from "@aexhq/brain-core";
import { denoPlatform } from "./platform.ts";

export { tool, hostEnv, brainEnv, httpEnv, mcpEnv, httpTools, component, Session, BrainError, LimitExceededError, ProtocolError, SdkError, toOutcome } from "@aexhq/brain-core";
export type {
  ToolDefinition, ToolFactory, PlacedToolSpec, ExecutableReference, DeclaredTool, ToolOutput, RunResult, OutputOf, Environment, HostEnvironment, BrainEnvironment, HttpEnvironment, HttpToolsOptions, Component,
  ToolContext, EnvironmentControl, BrainOptions, CloseOptions, CreateSessionOptions, SendOptions, WaitOptions, TurnAnswer, ToolFailure, ListSessionsOptions, SessionsApi, SessionView, SessionList, Outcome, JournalRecord, ModelRequest, ModelResult, ModelConfig, ErrorInfo,
} from "@aexhq/brain-core";
// Approvals (tools placed with approval: "always"; docs/approvals.md).
export type { PendingApproval, ApprovalAnswer, ApprovalHandler, ApprovalHookOptions, ApprovalResponse, Decider } from "@aexhq/brain-core";
// Environment control (ctx.environments, granted by hostEnv({ environments })): docs/environments.md.
export type { EnvironmentAuthority, EnvironmentBinding, EnvironmentSpec, EnvironmentUpdate } from "@aexhq/brain-core";
// MCP servers the operator defines (brain.mcpTools, mcpEnv; docs/mcp.md).
export type { McpEnvironment, McpToolsOptions } from "@aexhq/brain-core";
// The v1 plain-JSON HTTP placements (docs/http-tools.md).
export { http, httpTool } from "@aexhq/brain-core";
export type { PlainHttpEnvironment, HttpToolDefinition } from "@aexhq/brain-core";

/** The upload the SDK makes for brainEnv({ runtime }), for clients that place packaged tools over the HTTP API. */
export { packInstalled } from "./platform.ts";

/** A Brain client: sessions, and the one host connection its tools share. */
export class Brain extends BrainClient {
  constructor(opts: BrainOptions = {}) {
    super(denoPlatform, opts);
  }
}
