import type { EnvironmentAnswer, EnvironmentAuthority, EnvironmentRequest, EnvironmentSpec, EnvironmentUpdate, ErrorInfo, PlacedTool } from "@aexhq/brain-protocol";
import type { Dispatcher } from "../../dispatch/dispatcher.ts";
import type { Environment, EnvironmentCaller } from "../../dispatch/environment.ts";
import { BrainRuntimeError, CallRejectedError, toErrorInfo } from "../../errors.ts";
import { authorityOf, forbidden, named, within, workspaceGrant } from "./authority.ts";
import type { Workspace } from "./authority.ts";
import { SessionBindings } from "./bindings.ts";
import type { Binding } from "./bindings.ts";

export interface ControlDeps {
  dispatcher: Dispatcher;
  /** The component Environment, when the server runs one: it admits created bindings' grants (the allow-list). */
  component(): (Environment & { workspaceOf?(sessionId: string): string | undefined }) | undefined;
}

/**
 * ctx.environments (Environment control) for host calls. Every operation is journaled as an
 * `environment.request` (origin = the caller) before anything is decided or done, and answered
 * with an `environment.response` (its result, or the error it was refused with) before the host
 * hears back. Authority is the caller's placement's (HostPlacement.environments), explicit, none by
 * default: every refusal is `forbidden` naming the grant that was missing, and nothing a tool
 * creates ever holds more than its own `create` grant allows.
 */
export class EnvironmentControl {
  constructor(private deps: ControlDeps) {}

  readonly handle = async (caller: EnvironmentCaller, request: EnvironmentRequest): Promise<EnvironmentAnswer> => {
    const session = caller.session;
    const admitted = session.append("environment.request", { origin: caller.callId, request });
    await admitted.committed;
    let answer: EnvironmentAnswer | undefined;
    let error: ErrorInfo | undefined;
    try {
      answer = await this.perform(caller, request, authorityOf(caller.placement));
    } catch (e) {
      error = toErrorInfo(e);
    }
    // In the journal a call's answer names the nested call; its outcome is that call's own records.
    const result = answer === undefined ? undefined : answer.outcome !== undefined ? { callId: answer.callId! } : answer;
    const data = error !== undefined ? { origin: caller.callId, request: admitted.sequence, error } : { origin: caller.callId, request: admitted.sequence, result: result! };
    await session.append("environment.response", data).committed;
    if (error !== undefined) throw CallRejectedError.of(error);
    return answer!;
  };

  private async perform(caller: EnvironmentCaller, request: EnvironmentRequest, authority: EnvironmentAuthority): Promise<EnvironmentAnswer> {
    const bindings = await SessionBindings.of(caller.session);
    switch (request.operation) {
      case "list":
        if (authority.list !== true) throw forbidden("list", "the placement does not grant environments.list", "environments.list");
        return { bindings: bindings.list().map((b) => b.view) };
      case "get": {
        if (authority.list !== true) throw forbidden("get", `(${JSON.stringify(request.name)}): the placement does not grant environments.list`, "environments.list", { binding: request.name });
        return { binding: existing(bindings, request.name).view };
      }
      case "create":
        return { binding: await this.create(caller, bindings, request.spec, authority) };
      case "update":
        return { binding: await this.update(caller, bindings, request.name, request.spec, authority) };
      case "delete": {
        const b = this.mutable(bindings, "delete", request.name, authority);
        bindings.delete(b.view.name);
        return {};
      }
      case "setup":
        // Component and descriptor bindings need no preparation (admitted at upload; set up by the
        // operator): the operation is journaled and answers the binding as it is, ready.
        return { binding: this.usable(bindings, "setup", request.name, authority).view };
      case "call":
        return this.call(caller, bindings, request, authority);
    }
  }

  private async create(caller: EnvironmentCaller, bindings: SessionBindings, spec: EnvironmentSpec, authority: EnvironmentAuthority) {
    if (authority.create === undefined) throw forbidden("create", `(${JSON.stringify(spec.name)}): the placement does not grant environments.create`, "environments.create", { binding: spec.name });
    const workspace = await this.checkSpec(caller, bindings, "create", spec.name, spec, authority);
    // Checked after the admission (which may read a component from the database): a create of the same name meanwhile wins.
    if (bindings.get(spec.name) !== undefined) throw new BrainRuntimeError("conflict", `ctx.environments.create: the session already has a binding named ${JSON.stringify(spec.name)}`, { binding: spec.name });
    return bindings.put(spec.name, workspace, spec.tools ?? []).view;
  }

  private async update(caller: EnvironmentCaller, bindings: SessionBindings, name: string, spec: EnvironmentUpdate, authority: EnvironmentAuthority) {
    this.mutable(bindings, "update", name, authority);
    const workspace = await this.checkSpec(caller, bindings, "update", name, spec, authority);
    // Again after the admission's wait: a delete meanwhile is not undone by this update.
    this.mutable(bindings, "update", name, authority);
    return bindings.put(name, workspace, spec.tools ?? []).view;
  }

  /**
   * What a create/update may ask for: no Brain-managed runtime yet; grants within the caller's
   * `create` authority and the server's allow-list; tools that are component tools of the session.
   * Returns the workspace grant.
   */
  private async checkSpec(caller: EnvironmentCaller, bindings: SessionBindings, operation: "create" | "update", name: string, spec: EnvironmentUpdate, authority: EnvironmentAuthority): Promise<Workspace> {
    if (spec.runtime !== undefined) {
      throw new BrainRuntimeError("unsupported", `ctx.environments.${operation}(${JSON.stringify(name)}): Brain-managed ${spec.runtime} hosts (brainEnv({ runtime: "${spec.runtime}" })) are not supported by this runtime yet`, { binding: name, runtime: spec.runtime });
    }
    const workspace = spec.filesystem?.workspace;
    const limit = authority.create?.filesystem?.workspace;
    if (!within(workspace, limit)) {
      throw forbidden(operation, `(${JSON.stringify(name)}): filesystem.workspace "${workspace}" is more than the placement's environments.create allows (${limit === undefined ? "no filesystem grant" : `"${limit}"`}); a tool cannot create more authority than it holds`, workspaceGrant(workspace), { binding: name });
    }
    const tools: PlacedTool[] = [];
    for (const t of spec.tools ?? []) {
      const tool = bindings.componentTool(t);
      if (tool === undefined) throw new BrainRuntimeError("invalid_request", `ctx.environments.${operation}(${JSON.stringify(name)}): ${t} is not a component tool of this session (a binding holds the session's component tools, placed again with its grants)`, { binding: name, tool: t });
      tools.push(tool);
    }
    const component = this.deps.component();
    if (component === undefined && (tools.length > 0 || workspace !== undefined)) {
      throw new BrainRuntimeError("unsupported", `ctx.environments.${operation}(${JSON.stringify(name)}): this runtime runs without the component environment`, { binding: name });
    }
    if (workspace !== undefined && component?.workspaceOf?.(caller.session.id) === undefined) {
      throw forbidden(operation, `(${JSON.stringify(name)}): filesystem.workspace "${workspace}" is outside the server's allow-list: this server has no workspace root (BRAIN_WORKSPACE_ROOT)`, "BRAIN_WORKSPACE_ROOT", { binding: name });
    }
    // The component Environment admits each placement as it would at session creation (its
    // digest is admitted, the workspace exists): what a session could not be created with, a
    // binding cannot be made with.
    for (const t of bindings.make(name, workspace, spec.tools ?? []).tools) {
      // Several nodes: a component uploaded through another node is read and admitted here first.
      const refused = await component!.admit(t, caller.session.id, caller.session.created.owner);
      if (refused !== undefined) throw BrainRuntimeError.of({ ...refused, message: `ctx.environments.${operation}(${JSON.stringify(name)}): ${refused.message}` });
    }
    return workspace;
  }

  /** A binding update/delete may change: created at run time, with grants within the caller's `create`. */
  private mutable(bindings: SessionBindings, operation: "update" | "delete", name: string, authority: EnvironmentAuthority): Binding {
    if (authority.create === undefined) throw forbidden(operation, `(${JSON.stringify(name)}): the placement does not grant environments.create`, "environments.create", { binding: name });
    const b = existing(bindings, name);
    if (b.view.source === "session") {
      throw new BrainRuntimeError("conflict", `ctx.environments.${operation}(${JSON.stringify(name)}): the session was created with this binding (its tools' placements); only bindings created at run time change`, { binding: name });
    }
    const grant = b.view.filesystem?.workspace;
    if (!within(grant, authority.create.filesystem?.workspace)) {
      throw forbidden(operation, `(${JSON.stringify(name)}): the binding holds filesystem.workspace "${grant}", more than the placement's environments.create allows`, workspaceGrant(grant), { binding: name });
    }
    return b;
  }

  /**
   * A binding setup/call may use: named in the placement's `setup`/`call`, or created at run time
   * with grants within its `create` (one it could have created itself).
   */
  private usable(bindings: SessionBindings, operation: "setup" | "call", name: string, authority: EnvironmentAuthority): Binding {
    const byName = authority[operation]?.includes(name) === true;
    if (!byName && authority.create === undefined) throw forbidden(operation, `(${JSON.stringify(name)}): the placement does not grant ${named(operation, name)}`, named(operation, name), { binding: name });
    const b = existing(bindings, name);
    if (byName) return b;
    if (b.view.source === "session") {
      throw forbidden(operation, `(${JSON.stringify(name)}): the session was created with this binding, and the placement does not grant ${named(operation, name)}`, named(operation, name), { binding: name });
    }
    if (!within(b.view.filesystem?.workspace, authority.create!.filesystem?.workspace)) {
      throw forbidden(operation, `(${JSON.stringify(name)}): the binding holds filesystem.workspace "${b.view.filesystem?.workspace}", more than the placement's environments.create allows, and the placement does not grant ${named(operation, name)}`, named(operation, name), { binding: name });
    }
    return b;
  }

  /**
   * A nested call: journaled like any call (tool.call_started with `origin` = the caller), in the
   * caller's activation (its emission and model-call budgets), with the earlier of the requested
   * deadline and the caller's; answered with its Outcome once it finished. The caller's end
   * cancels it.
   */
  private async call(caller: EnvironmentCaller, bindings: SessionBindings, request: Extract<EnvironmentRequest, { operation: "call" }>, authority: EnvironmentAuthority): Promise<EnvironmentAnswer> {
    const b = this.usable(bindings, "call", request.name, authority);
    const tool = b.tools.find((t) => t.contract.name === request.tool);
    if (tool === undefined) throw new BrainRuntimeError("not_found", `ctx.environments.call(${JSON.stringify(request.name)}): binding ${request.name} has no tool ${request.tool} (it has ${b.view.tools.map((t) => t.name).join(", ") || "none"})`, { binding: request.name, tool: request.tool });
    if (caller.signal.aborted) throw new CallRejectedError("call_finished", `call ${caller.callId} already finished`);
    const deadlineAt = earliest(request.deadlineAt ?? null, caller.deadlineAt);
    const [nested] = this.deps.dispatcher.start(caller.session, caller.activation, [{ tool, input: request.input, deadlineAt, origin: caller.callId }], caller.owner);
    const ended = new Promise<never>((_, reject) => {
      const stop = () => {
        void nested!.terminate("cancelled", { message: `the calling call ${caller.callId} ended` });
        reject(new CallRejectedError("call_finished", `call ${caller.callId} ended while its nested call ${nested!.callId} ran; that call was cancelled`));
      };
      if (caller.signal.aborted) stop();
      else caller.signal.addEventListener("abort", stop, { once: true });
    });
    ended.catch(() => {
      // Handled: the race below reports it; this keeps the branch that loses the race from being an unhandled rejection.
    });
    const outcome = await Promise.race([nested!.outcome(), ended]);
    return { callId: nested!.callId, outcome };
  }
}

function existing(bindings: SessionBindings, name: string): Binding {
  const b = bindings.get(name);
  if (b === undefined) throw new BrainRuntimeError("not_found", `no Environment binding ${JSON.stringify(name)} in this session`, { binding: name });
  return b;
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
