import type { EnvironmentBinding, EnvironmentRequest, PlacedTool } from "@aexhq/brain-protocol";
import type { SessionState } from "../../journal/session.ts";
import { within } from "./authority.ts";
import type { Workspace } from "./authority.ts";

/** One Brain-side binding: its view (what ctx.environments answers) and the tools placed in it. */
export interface Binding {
  readonly view: EnvironmentBinding;
  /** The tools a nested call may run, placed as the binding places them (its env name and grants). */
  readonly tools: readonly PlacedTool[];
}

type ComponentPlacement = Extract<PlacedTool["placement"], { kind: "component" }>;

/**
 * A session's Brain-side Environment bindings: the ones its tools were placed in when it was
 * created (component and descriptor placements, by env name; fixed), and the ones tools created at
 * run time. The latter are the fold of the journal's allowed create/update/delete operations, read
 * once when a resident session first uses Environment control and kept up to date from then on.
 */
export class SessionBindings {
  private static cache = new WeakMap<SessionState, Promise<SessionBindings>>();
  private readonly placed = new Map<string, Binding>();
  private readonly created = new Map<string, Binding>();

  private constructor(private readonly session: SessionState) {
    const byEnv = new Map<string, PlacedTool[]>();
    for (const t of session.created.tools) {
      const p = t.placement;
      if (p.kind !== "component" && p.kind !== "descriptor") continue;
      let tools = byEnv.get(p.env);
      if (tools === undefined) byEnv.set(p.env, (tools = []));
      tools.push(t);
    }
    for (const [name, tools] of byEnv) {
      // The widest grant any of its tools holds (separate grants belong in separate bindings).
      let workspace: Workspace;
      for (const t of tools) {
        const w = t.placement.kind === "component" ? t.placement.filesystem?.workspace : undefined;
        if (!within(w, workspace)) workspace = w;
      }
      this.placed.set(name, { view: view(name, "session", workspace, tools), tools });
    }
    this.replay();
  }

  /** The bindings of a resident session (one object per SessionState: a session paged in again folds its journal again). */
  static of(session: SessionState): Promise<SessionBindings> {
    let b = SessionBindings.cache.get(session);
    if (b === undefined) {
      const bindings = new SessionBindings(session);
      // Every operation of the session waits for the one replay: none changes bindings before it is read.
      SessionBindings.cache.set(session, (b = bindings.replay().then(() => bindings)));
    }
    return b;
  }

  /** The allowed create/update/delete operations of the journal, in order. */
  private async replay(): Promise<void> {
    const requests = new Map<number, EnvironmentRequest>();
    for (const r of await this.session.after(0)) {
      if (r.type === "environment.request") {
        const op = r.data.request.operation;
        if (op === "create" || op === "update" || op === "delete") requests.set(r.sequence, r.data.request);
      } else if (r.type === "environment.response") {
        const request = requests.get(r.data.request);
        requests.delete(r.data.request);
        if (request === undefined || r.data.error !== undefined) continue;
        if (request.operation === "delete") this.created.delete(request.name);
        else if (r.data.result?.binding !== undefined) this.put(r.data.result.binding.name, r.data.result.binding.filesystem?.workspace, r.data.result.binding.tools.map((t) => t.name));
      }
    }
  }

  get(name: string): Binding | undefined {
    return this.placed.get(name) ?? this.created.get(name);
  }

  list(): Binding[] {
    return [...this.placed.values(), ...this.created.values()];
  }

  /** The session's component tool of that name, as it was placed at creation. */
  componentTool(name: string): PlacedTool | undefined {
    return this.session.created.tools.find((t) => t.contract.name === name && t.placement.kind === "component");
  }

  /** The binding a create/update makes (not yet stored): the session's component tools, placed in it with its grant. */
  make(name: string, workspace: Workspace, toolNames: readonly string[]): Binding {
    const tools: PlacedTool[] = [];
    for (const n of toolNames) {
      const t = this.componentTool(n);
      if (t === undefined) continue;
      const from = t.placement as ComponentPlacement;
      const placement: ComponentPlacement = { kind: "component", env: name, digest: from.digest };
      if (workspace !== undefined) placement.filesystem = { workspace };
      tools.push({ contract: t.contract, options: t.options, placement });
    }
    return { view: view(name, "created", workspace, tools), tools };
  }

  /** Stores a created (or updated) binding. */
  put(name: string, workspace: Workspace, toolNames: readonly string[]): Binding {
    const b = this.make(name, workspace, toolNames);
    // An update keeps the binding's place in the creation order (Map.set on an existing key).
    this.created.set(name, b);
    return b;
  }

  delete(name: string): void {
    this.created.delete(name);
  }
}

function view(name: string, source: EnvironmentBinding["source"], workspace: Workspace, tools: readonly PlacedTool[]): EnvironmentBinding {
  const v: EnvironmentBinding = {
    name,
    kind: "brain",
    source,
    tools: tools.map((t) => ({ name: t.contract.name, implementation: t.placement.kind === "descriptor" ? "descriptor" : "component" })),
    state: "ready",
  };
  if (workspace !== undefined) v.filesystem = { workspace };
  return v;
}
