// @ts-check
// The details panel of the selected item; for a tool call its whole life (intent, decision, events,
// results, Environment operations, end), its trace, and Cancel or Approve / Deny while it is open.
import { h, badge, modelLabel, placementLabel, fmtTime, fmtDur, payload, deadlineEl } from "./dom.js";
import { api } from "./api.js";
import { approvalControls, deciderLabel } from "./actions.js";
import { awaitingApproval, callStatusText, wokenByText, turnName } from "./timeline.js";

/** The detail panel of one item. */
export function detailOf(item, timeline) {
  const facts = (pairs) => h("dl", { class: "facts" }, ...pairs.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  const key = (s) => `${item.seq}:${s}`;
  switch (item.kind) {
    case "session":
      return [
        h("h2", {}, "Session created"),
        facts([["At", fmtTime(item.at)], ["Model", modelLabel(item.data.model)], item.data.deadlineMs !== undefined && ["Default deadline", fmtDur(item.data.deadlineMs)], ["Tools", (item.data.tools ?? []).map((t) => `${t.contract.name} (${placementLabel(t.placement)})`).join(", ") || "none"]]),
        item.data.system !== undefined ? [h("h2", {}, "System prompt"), payload(item.data.system, key("system"), "system prompt")] : null,
        h("h2", {}, "Model"),
        payload(item.data.model, key("model"), "model"),
        h("h2", {}, "Tools"),
        payload(item.data.tools ?? [], key("tools"), "tools"),
      ];
    case "turn":
    case "turnEnd": {
      const t = item.kind === "turn" ? item : item.turn ?? item;
      return [
        h("h2", {}, turnName(t)),
        facts([["State", badge(t.status)], ["Started", fmtTime(t.at)], t.endAt && ["Ended", fmtTime(t.endAt)], t.endAt && ["Duration", fmtDur(t.endAt - t.at)], ["Cause", t.wake ? `${wokenByText(t)} (a wake: the activation's turn ${t.n})` : "a user message"]]),
        t.text !== undefined ? [h("h2", {}, "User message"), payload(t.text, key("text"), "user message")] : null,
        t.answer !== undefined ? [h("h2", {}, "Answer"), payload(t.answer, key("answer"), "answer")] : null,
        t.error ? [h("h2", {}, "Error"), payload(t.error, key("error"), "error")] : null,
      ];
    }
    case "model":
      return [
        h("h2", {}, item.origin ? `Model call from ${item.tool ?? item.origin}` : "Model call (Agentloop)"),
        facts([
          ["State", badge(item.status === "error" ? "error" : item.status, item.status === "error" ? `error · ${item.error?.code}` : item.status)],
          ["Request", `#${item.seq} at ${fmtTime(item.at)}`],
          item.endAt && ["Response", `#${item.responseSeq} at ${fmtTime(item.endAt)}`],
          item.endAt && ["Duration", fmtDur(item.endAt - item.at)],
          item.usage && ["Usage", `${item.usage.inputTokens} input tokens · ${item.usage.outputTokens} output tokens`],
          item.result?.stopReason && ["Stop reason", item.result.stopReason],
          item.origin && ["Asked by call", h("span", { class: "mono" }, item.origin)],
          item.conversation && ["Conversation", `records 1–${item.conversation.through} of this session (the request is not copied; GET …/events?expand=requests rebuilds it)`],
        ]),
        item.request ? [h("h2", {}, "Request"), payload(item.request, key("request"), "model request")] : null,
        item.result ? [h("h2", {}, "Result"), payload(item.result, key("result"), "model result")] : null,
        item.error ? [h("h2", {}, "Error"), payload(item.error, key("error"), "model error")] : null,
      ];
    case "tool":
      return toolDetail(item, facts, key);
    case "deleted":
      return [h("h2", {}, "Session deleted"), facts([["At", fmtTime(item.at)]])];
    default:
      return [h("h2", {}, item.type), payload(item.data, key("data"))];
  }
}

/** A session's calls' trace ids (GET /ui/traces/<session>), fetched once per session and again for a call it did not know yet. */
const traceLists = new Map();

/** The Trace fact of a call: its trace id, linked to the operator's trace viewer when the server names one. */
function traceEl(callId) {
  const sessionId = callId.slice(0, callId.lastIndexOf(":"));
  const el = h("span", { class: "mono", id: "call-trace" }, "…");
  const fetchList = () => {
    const p = api(`/ui/traces/${encodeURIComponent(sessionId)}`).catch(() => ({ traces: {} }));
    traceLists.set(sessionId, p);
    return p;
  };
  const known = traceLists.get(sessionId);
  (known ?? fetchList())
    .then((list) => (list.traces[callId] === undefined && known !== undefined ? fetchList() : list))
    .then((list) => {
      const id = list.traces[callId];
      if (id === undefined) el.replaceChildren(h("span", { class: "muted" }, "none (tracing is off, or the call is not a recent one of this server)"));
      else el.replaceChildren(list.url ? h("a", { href: list.url.replace("{traceId}", id), target: "_blank", rel: "noopener" }, id) : id);
    });
  return el;
}

function toolDetail(c, facts, key) {
  const life = h("ol", { class: "life", "aria-label": "The call's life" });
  const step = (cls, title, at, seq, ...body) => life.append(h("li", { class: cls }, h("div", { class: "life-head" }, h("strong", {}, title), h("span", { class: "t" }, `#${seq} · ${fmtTime(at)} · +${fmtDur(at - c.at)}`)), ...body));
  for (const s of c.life) {
    if (s.type === "intent" && c.approval) step("ok", "Intent committed, awaiting approval", s.at, s.seq, h("div", { class: "help" }, `Nothing is sent until a person approves this call with this input (digest ${c.approval.inputDigest.slice(0, 16)}…).`));
    else if (s.type === "intent") step("ok", `Intent committed, sent to ${placementLabel(c.placement)}`, s.at, s.seq, h("div", { class: "help" }, "The runtime sends the invoke once, right after this commit; it is never re-sent."));
    else if (s.type === "decision") {
      const approved = s.decision === "approve";
      step(approved ? "ok" : "bad", `${approved ? "Approved" : "Denied"} by ${deciderLabel(s.decidedBy)}${approved ? `, sent to ${placementLabel(c.placement)}` : ""}`, s.at, s.seq, s.reason ? h("div", {}, `Reason: ${s.reason}`) : null, approved ? h("div", { class: "help" }, "The runtime sends the invoke once, right after this commit; it is never re-sent.") : null);
    }
    else if (s.type === "event") step("", `Event “${s.kind}”`, s.at, s.seq, payload(s.data, key(`event-${s.seq}`), `event ${s.kind}`));
    else if (s.type === "result") step(s.outcome?.status === "ok" ? "ok" : "bad", `Result · ${s.outcome?.status ?? "?"}`, s.at, s.seq, payload(s.outcome, key(`result-${s.seq}`), "result outcome"), s.content !== undefined ? [h("div", { class: "help" }, "content (what the model reads):"), payload(s.content, key(`content-${s.seq}`), "result content")] : null);
    else if (s.type === "returned") step("", "Returned", s.at, s.seq, h("div", { class: "help" }, c.status === "running" ? "run() ended without finishing: the call continues in the background." : "run() ended before the call finished."));
    else if (s.type === "environment") {
      const what = `ctx.environments.${s.request?.operation ?? "?"}${s.request?.name !== undefined ? ` ${s.request.name}` : s.request?.spec?.name !== undefined ? ` ${s.request.spec.name}` : ""}`;
      const state = s.status === "pending" ? "waiting" : s.status === "ok" ? (s.result?.callId ? `nested call ${s.result.callId}` : "done") : `refused · ${s.error?.code ?? "?"}`;
      step(s.status === "error" ? "bad" : s.status === "ok" ? "ok" : "", `${what} · ${state}`, s.at, s.seq, payload(s.request, key(`env-${s.seq}`), "environment request"), s.error ? payload(s.error, key(`env-error-${s.seq}`), "error") : null);
    } else if (s.type === "finished") step(s.status === "ok" ? "ok" : "bad", `Finished · ${s.status}${s.error ? ` · ${s.error.code}` : ""}`, s.at, s.seq, s.message ? h("div", {}, s.message) : null, s.error ? payload(s.error, key(`error-${s.seq}`), "error") : null);
  }
  if (c.status === "running") life.append(h("li", { class: "open" }, h("div", { class: "life-head" }, h("strong", {}, awaitingApproval(c) ? "Waiting for a decision" : "Open"), typeof c.deadlineAt === "number" ? deadlineEl(c.deadlineAt) : h("span", { class: "muted" }, "no deadline"))));
  return [
    h("h2", {}, `Tool call ${c.tool}`),
    awaitingApproval(c) ? approvalControls(c) : c.status === "running" ? h("div", { class: "actions" }, h("button", { type: "button", class: "danger", dataset: { cancelCall: c.callId } }, "Cancel this call")) : null,
    facts([
      ["State", [badge(c.status, callStatusText(c)), c.background ? [" ", h("span", { class: "badge bg-tag" }, "background")] : null]],
      ["Call id", h("span", { class: "mono" }, c.callId)],
      c.origin ? ["Started by", [h("span", { class: "mono" }, c.origin), " (ctx.environments.call: a nested call, not the model's)"]] : ["Model call id", h("span", { class: "mono" }, c.modelCallId)],
      ["Runs on", placementLabel(c.placement)],
      c.approval && ["Approval", c.approval.decision ? `${c.approval.decision === "approve" ? "approved" : "denied"} by ${deciderLabel(c.approval.decidedBy)}${c.approval.reason ? `: ${c.approval.reason}` : ""}` : c.status === "running" ? "awaiting a decision" : `never decided (the call ended ${c.status})`],
      ["Turn", String(c.activation)],
      ["Trace", traceEl(c.callId)],
      ["Started", fmtTime(c.at)],
      ["Deadline", typeof c.deadlineAt === "number" ? [fmtTime(c.deadlineAt), c.status === "running" ? [" (", deadlineEl(c.deadlineAt), ")"] : null] : "none"],
      c.endAt && ["Duration", fmtDur(c.endAt - c.at)],
      c.background && ["Background", "its turn ended while it was still running"],
    ]),
    h("h2", {}, "Input"),
    payload(c.input, key("input"), "input"),
    h("h2", {}, "Life"),
    life,
    c.modelCalls?.length ? [h("h2", {}, "Its model calls (ctx.model)"), h("ul", {}, ...c.modelCalls.map((m) => h("li", {}, `#${m.seq} · ${m.status}${m.usage ? ` · ${m.usage.inputTokens} in / ${m.usage.outputTokens} out` : ""}${m.endAt ? ` · ${fmtDur(m.endAt - m.at)}` : ""}`)))] : null,
  ];
}


