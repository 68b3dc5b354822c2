import { WebSocket } from "ws";
import { LIMITS, PROTOCOL } from "@aexhq/brain-protocol";
import type { ToolContract } from "@aexhq/brain-protocol";
import type { FaultProxy, FaultRecord } from "./proxy.ts";

/**
 * The PROTOCOL.md rules the fault scenarios check, by name. A failure starts with the rule, so an
 * implementer reading the report knows which paragraph of contract/PROTOCOL.md to read.
 */
export const RULES = {
  resend: 'rule "resend after unavailable" (PROTOCOL.md, Several nodes: "Resending after `unavailable`")',
  final: 'rule "final ends the call" (PROTOCOL.md, How a call ends: "`final`: whether the call goes on")',
  liveness: 'rule "liveness" (PROTOCOL.md, "Reconnecting, liveness, `replaced` and when to stop")',
  attempt: 'rule "connection attempts time out" (PROTOCOL.md, "Reconnecting, liveness, `replaced` and when to stop")',
  stop4401: 'rule "stop on 4401" (PROTOCOL.md, Close codes and "when to stop")',
  stop4409: 'rule "stop on 4409" (PROTOCOL.md, Close codes and "when to stop")',
  noReplay: 'rule "nothing for a call of a lost connection" (PROTOCOL.md, How a call ends: "never replays a frame of an earlier connection")',
} as const;

/** How long the runner watches for a reconnection a host must not make (after 4401 / 4409). */
export const STOP_WATCH_MS = 3000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `count()` reaches `target` (the proxy's upgrades or upgrade attempts), or `ms`; whether it did. */
export async function reaches(count: () => number, target: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (count() < target) {
    if (Date.now() > until) return false;
    await sleep(20);
  }
  return true;
}

/**
 * The runner as a second process with the subject's host identity: it registers on the runtime
 * directly, which replaces the subject's connection (`error` `replaced`, close 4409). Resolves
 * with the socket once `registered` arrived; close it to give the host id back.
 */
export async function registerAs(brainUrl: string, token: string, hostId: string, secret: string, tools: ToolContract[]): Promise<WebSocket> {
  const url = new URL("/v1/hosts/connect", brainUrl);
  url.protocol = "ws:";
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => ws.send(JSON.stringify({ type: "register", ref: 1, protocol: PROTOCOL, token, hostId, secret, tools })));
    ws.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as { type: string; error?: { code: string; message: string } };
      if (frame.type === "registered") resolve();
      else if (frame.type === "error") reject(new Error(`the runner could not register as ${hostId}: ${frame.error?.code}: ${frame.error?.message}`));
    });
    ws.once("error", reject);
  });
  return ws;
}

/** Closes the runner's own connection and resolves once it is closed (restartSubject then waits for the runtime). */
export function closed(ws: WebSocket): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    ws.once("close", () => resolve());
    ws.close();
  });
}

/** The first rule an armed fault's record breaks, or undefined. */
export function faultProblem(r: FaultRecord): string | undefined {
  const { fault, answered, after } = r;
  if (answered === undefined) return `the scenario armed a ${fault.answer} answer for the subject's next ${fault.frame} frame, but none came`;
  if (fault.answer === "unavailable") {
    // The same frame again: its type and every field but the ref, compared in canonical form.
    const resend = after.find((f) => f.body === answered.body);
    if (resend === undefined) return `${RULES.resend}: ${fault.frame} (ref ${JSON.stringify(answered.ref)}) was answered \`unavailable\` (retryable) and never sent again; send the same frame again with a new ref, after ${LIMITS.resendBackoffMs} ms doubling up to ${LIMITS.resendMaxBackoffMs} ms`;
    if (resend.ref === answered.ref) return `${RULES.resend}: ${fault.frame} was sent again with the same ref ${JSON.stringify(answered.ref)}; each ref gets exactly one answer, and \`unavailable\` was it: use a new ref`;
    if (resend.at - answered.at < LIMITS.resendBackoffMs / 2) return `${RULES.resend}: ${fault.frame} was sent again ${resend.at - answered.at} ms after \`unavailable\`; wait ${LIMITS.resendBackoffMs} ms first (then doubling)`;
    return undefined;
  }
  // final_conflict: frames already under way when the answer went out are not the host's fault.
  const late = after.filter((f) => f.at - answered.at > 200);
  if (late.length > 0) return `${RULES.final}: after \`conflict\` with \`final: true\` for its ${fault.frame}, the subject still sent ${late.map((f) => f.type).join(", ")} for call ${answered.callId}; the call is over: stop its work and send nothing more for it`;
  return undefined;
}

/** What a failed journal comparison means when the scenario armed faults: the rule first. */
export function ruleOf(records: FaultRecord[]): string | undefined {
  const r = records[0];
  if (r === undefined) return undefined;
  return r.fault.answer === "unavailable" ? RULES.resend : RULES.final;
}
