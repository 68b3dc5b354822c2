import type { HostInfo, JournalRecord, EventsResponse, PlacedTool, Session, ToolContract } from "@aexhq/brain-protocol";
import type { RuntimeApi } from "./http.ts";
import { LIMITS } from "@aexhq/brain-protocol";
import type { FaultProxy } from "./proxy.ts";
import { RULES, STOP_WATCH_MS, faultProblem, reaches, ruleOf } from "./faults.ts";
import { type Scenario, toolsOf } from "./scenario.ts";
import { firstDifference, groupCalls } from "./journal-check.ts";

export interface ScenarioResult {
  name: string;
  pass: boolean;
  /** The subject's kind cannot take part (the scenario's `subjectKinds`): neither passed nor failed. */
  na?: boolean;
  /** The first difference from the expectation, or the error that stopped the scenario. */
  detail?: string;
  ms: number;
  records?: JournalRecord[];
}

export interface RunContext {
  api: RuntimeApi;
  /** The loopback proxy between a host subject and the runtime, which injects the faults. */
  proxy: FaultProxy;
  /** The runtime's BRAIN_HOST_TIMEOUT_MS (what `registered.hostTimeoutMs` tells the subject). */
  hostTimeoutMs: number;
  /**
   * Registers the subject's host id on the runtime from the runner itself (the subject is replaced,
   * 4409); resolves with the function that closes that connection again.
   */
  replaceHost(): Promise<() => Promise<void>>;
  /** How the subject's tools are placed: on its host id, or (components) in a binding. */
  place(contract: ToolContract): PlacedTool;
  /** Contracts the subject advertises, by tool name. */
  contracts: Map<string, ToolContract>;
  /** Waits until the subject is connected again (after a dropped connection). */
  reconnected(): Promise<void>;
  /**
   * The `drop_connection` action when it is not the proxy's: an MCP server killed (stdio) or
   * restarted (Streamable HTTP). Absent: the proxy drops the host's connection, then `reconnected`.
   */
  dropConnection?(): Promise<void>;
  /**
   * Kills the subject (SIGKILL for a process) and starts it again with the same host identity, as
   * the plain catalogue or as `variant`; resolves once it registered.
   */
  restartSubject(variant?: string): Promise<void>;
  /** Closes the runtime (calls may be open) and starts it again on the same data folder, URL and token; resolves once the subject is connected again. */
  restartRuntime(): Promise<void>;
  timeoutMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function hostContracts(api: RuntimeApi, hostId: string, timeoutMs: number): Promise<HostInfo> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.call<HostInfo>("GET", `/v1/hosts/${encodeURIComponent(hostId)}`);
    if (res.status === 200 && res.body.connected && res.body.tools.length > 0) return res.body;
    if (Date.now() > until) {
      // Say which of the three it was: no connection at all, a connection that went away, or one with no tools.
      const why = res.status === 404
        ? "no register frame with this host id reached the runtime (is it connecting to BRAIN_URL + /v1/hosts/connect with BRAIN_HOST_ID and BRAIN_HOST_SECRET?)"
        : res.status === 200 && !res.body.connected
          ? "it registered, but its connection is closed now"
          : res.status === 200
            ? "it is connected but registered no tools"
            : `GET /v1/hosts/${hostId} answered ${res.status}`;
      throw new Error(`the subject never registered as host ${hostId} within ${timeoutMs} ms: ${why}; its own output is below`);
    }
    await sleep(50);
  }
}

/** Waits until the runtime has noticed that the host's connection is gone. */
export async function waitDisconnected(api: RuntimeApi, hostId: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await api.call<HostInfo>("GET", `/v1/hosts/${encodeURIComponent(hostId)}`)).body.connected) {
    if (Date.now() > until) throw new Error(`host ${hostId} still connected ${timeoutMs} ms after it was stopped`);
    await sleep(20);
  }
}

/** Runs one scenario against a connected subject and compares the journal with its expectation. */
export async function runScenario(ctx: RunContext, s: Scenario): Promise<ScenarioResult> {
  const started = Date.now();
  const fail = (detail: string, records?: JournalRecord[]): ScenarioResult => ({ name: s.name, pass: false, detail, ms: Date.now() - started, records });
  const tools: PlacedTool[] = [];
  for (const name of toolsOf(s)) {
    const contract = ctx.contracts.get(name);
    if (!contract) return fail(`the subject does not advertise tool ${name}`);
    const placed = ctx.place(contract);
    // The scenario's Environment control authority goes on host placements (the only ones that carry one).
    if (s.environments !== undefined && placed.placement.kind === "host") placed.placement = { ...placed.placement, environments: s.environments };
    // Calls of a tool the scenario names in `approval` wait for an approve_call / deny_call action.
    tools.push(s.approval?.includes(name) ? { ...placed, approval: "always" } : placed);
  }
  let variant: string | undefined;
  const session = await ctx.api.ok<Session>("POST", "/v1/sessions", {
    model: { provider: "scripted", script: s.script },
    tools,
    ...(s.deadlineMs !== undefined ? { deadlineMs: s.deadlineMs } : {}),
  });
  // Armed before the message: the subject may send the frame the moment its call starts.
  const faults = ctx.proxy.arm(s.faults ?? []);
  /** Rules a fault action found broken; the scenario goes on (and cleans up), then fails with the first. */
  const broken: string[] = [];
  try {
    await ctx.api.ok("POST", `/v1/sessions/${session.id}/messages`, { text: `conformance: ${s.name}` });
    const records: JournalRecord[] = [];
    const pending = [...(s.actions ?? [])];
    // The time actions take (a restart, a fault's watch) does not count against the scenario.
    let deadline = Date.now() + ctx.timeoutMs;
    let settledAt: number | undefined;
    let sentSecond = false;
    for (;;) {
      const page = await ctx.api.ok<EventsResponse>("GET", `/v1/sessions/${session.id}/events?after=${records.at(-1)?.sequence ?? 0}`);
      records.push(...page.records);
      for (const action of [...pending]) {
        const trigger = records.find((r) => r.type === action.when);
        if (!trigger) continue;
        pending.splice(pending.indexOf(action), 1);
        const acting = Date.now();
        await sleep(action.delayMs ?? 0);
        if (action.do === "drop_connection") {
          if (ctx.dropConnection) await ctx.dropConnection();
          else {
            ctx.proxy.drop();
            await ctx.reconnected();
          }
        } else if (action.do === "stall_connection") {
          const before = ctx.proxy.upgrades;
          ctx.proxy.stall();
          if (!(await reaches(() => ctx.proxy.upgrades, before + 1, ctx.hostTimeoutMs + 5000))) {
            broken.push(`${RULES.liveness}: the runtime went silent (nothing passed, pings included) and the subject did not connect again within hostTimeoutMs ${ctx.hostTimeoutMs} ms + 5 s; with nothing heard for a third of hostTimeoutMs send a ping frame, with nothing for all of it drop the connection and reconnect`);
            ctx.proxy.drop();
          }
          await ctx.reconnected();
        } else if (action.do === "hang_upgrade") {
          const before = ctx.proxy.attempts;
          ctx.proxy.hangNext(1);
          if (!(await reaches(() => ctx.proxy.attempts, before + 2, LIMITS.registerTimeoutMs + 8000))) {
            broken.push(`${RULES.attempt}: ${ctx.proxy.attempts === before ? "the subject did not try to connect again after its connection dropped" : `the subject's WebSocket upgrade went unanswered and it did not give up and try again within registerTimeoutMs ${LIMITS.registerTimeoutMs} ms + 8 s`}`);
            ctx.proxy.drop();
          }
          await ctx.reconnected();
        } else if (action.do === "close_unauthorized" || action.do === "replace_host") {
          const before = ctx.proxy.attempts;
          const release = action.do === "replace_host" ? await ctx.replaceHost() : (ctx.proxy.closeAll(4401, "unauthorized", "conformance fault: wrong token or secret"), async () => {});
          await sleep(STOP_WATCH_MS);
          const again = ctx.proxy.attempts - before;
          if (again > 0) {
            const [rule, code] = action.do === "replace_host" ? [RULES.stop4409, "4409 (replaced)"] : [RULES.stop4401, "4401 (unauthorized)"];
            broken.push(`${rule}: after close ${code} the subject connected again ${again} time(s) within ${STOP_WATCH_MS} ms; stop, report the error and do not reconnect`);
          }
          await release();
          await ctx.restartSubject();
        } else if (action.do === "restart_subject") {
          variant = action.variant;
          await ctx.restartSubject(variant);
        } else if (action.do === "restart_runtime") {
          await ctx.restartRuntime();
        } else if (action.do === "approve_call" || action.do === "deny_call") {
          const approval = trigger.type === "tool.call_started" ? trigger.data.approval : undefined;
          if (approval === undefined) return fail(`${action.do}: its trigger ${JSON.stringify(trigger)} is no tool.call_started awaiting approval (is the tool in the scenario's \`approval\`?)`, records);
          const body = { decision: action.do === "approve_call" ? "approve" : "deny", inputDigest: approval.inputDigest, ...(action.reason !== undefined ? { reason: action.reason } : {}) };
          await ctx.api.ok("POST", `/v1/sessions/${session.id}/calls/${trigger.sequence}/approval`, body);
        } else {
          const callId = (trigger.data as { callId?: string }).callId;
          await ctx.api.ok("POST", `/v1/sessions/${session.id}/cancel`, callId ? { callId } : {});
        }
        deadline += Date.now() - acting;
      }
      if (s.secondMessage && !sentSecond && pending.length === 0 && turnEnds(records) >= 1 && calls(records).every((c) => c.records.some((r) => r.type === "tool.finished"))) {
        sentSecond = true;
        await ctx.api.ok("POST", `/v1/sessions/${session.id}/messages`, { text: `conformance: ${s.name} (second message)` });
      }
      if (done(s, records)) {
        const settle = Math.max(0, ...s.expect.calls.map((c) => c.settleMs ?? 0), 50);
        settledAt ??= Date.now() + settle;
        if (Date.now() >= settledAt) break;
      }
      if (Date.now() > deadline) {
        // A call left open because a fault's rule was broken (no resend): the rule says why.
        const problem = faults.map(faultProblem).find((p) => p !== undefined);
        if (problem) return fail(problem, records);
      }
      if (Date.now() > deadline) return fail(`timed out after ${ctx.timeoutMs} ms waiting for the turn and every call to end; last record ${JSON.stringify(records.at(-1))}`, records);
      await sleep(20);
    }
    if (broken.length > 0) return fail(broken[0]!, records);
    const stale = ctx.proxy.stale[0];
    if (stale !== undefined) return fail(`${RULES.noReplay}: the subject sent ${stale.type} for call ${stale.callId} on its connection #${stale.sentOn}, but the call was invoked on connection #${stale.invokedOn}, which was lost; abort a call's work when its connection closes`, records);
    for (const r of faults) {
      const problem = faultProblem(r);
      if (problem) return fail(problem, records);
    }
    const diff = firstDifference(s, records);
    // With a fault armed, a journal that differs is that rule broken: say which first.
    const rule = ruleOf(faults);
    if (diff) return fail(rule ? `${rule}: ${diff}` : diff, records);
    return { name: s.name, pass: true, ms: Date.now() - started, records };
  } finally {
    ctx.proxy.arm([]);
    await ctx.api.call("DELETE", `/v1/sessions/${session.id}`);
    // A variant lasts for one scenario: the next one sees the plain catalogue again.
    if (variant !== undefined) await ctx.restartSubject();
  }
}

/** The turn ended (and the wake turn, if expected), and every call has its tool.finished. */
function turnEnds(records: JournalRecord[]): number {
  return records.filter((r) => r.type === "turn.completed" || r.type === "turn.failed").length;
}

const calls = groupCalls;

function done(s: Scenario, records: JournalRecord[]): boolean {
  if (turnEnds(records) < 1 + (s.expect.waitForWake ? 1 : 0) + (s.secondMessage ? 1 : 0)) return false;
  const all = calls(records);
  return all.length >= s.expect.calls.length && all.every((c) => c.records.some((r) => r.type === "tool.finished"));
}
