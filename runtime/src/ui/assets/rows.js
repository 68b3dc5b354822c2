// @ts-check
// The compact row of one timeline item: its icon, what it is, and its state on the right.
import { h, badge, plural, modelLabel, placementLabel, fmtTime, fmtDur, deadlineEl } from "./dom.js";
import { awaitingApproval, callStatusText, wokenByText, turnName } from "./timeline.js";

/** The compact row of one item: [seq, icon, what, right side]. */
export function rowParts(item) {
  switch (item.kind) {
    case "session":
      return ["◆", `Session created · ${modelLabel(item.data.model)} · ${plural(item.data.tools?.length ?? 0, "tool")}`, [h("span", { class: "muted" }, fmtTime(item.at))]];
    case "turn":
      return [
        "▶",
        item.wake ? `${turnName(item)}: ${wokenByText(item)}` : `${turnName(item)}: “${item.text}”`,
        [item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null, badge(item.status === "completed" ? "completed" : item.status, item.status)],
      ];
    case "turnEnd": {
      const name = item.turn ? turnName(item.turn) : `Turn ${item.activation}`;
      return ["■", item.status === "completed" ? `${name} answered: “${item.text}”` : `${name} failed: ${item.error?.code}: ${item.error?.message}`, [badge(item.status)]];
    }
    case "model": {
      const calls = item.result?.toolCalls?.map((t) => t.name) ?? [];
      const what = item.status === "pending" ? "waiting for the model" : item.error ? `${item.error.code}: ${item.error.message}` : calls.length ? `asks for ${calls.length > 3 ? `${calls.slice(0, 3).join(", ")} +${calls.length - 3}` : calls.join(", ")}` : `answers “${item.result?.text ?? ""}”`;
      return [
        "✦",
        `Model call${item.origin ? ` from ${item.tool ?? "a tool"} (ctx.model)` : ""} · ${what}`,
        [
          item.usage ? h("span", { class: "muted", title: "input · output tokens" }, `${item.usage.inputTokens} in · ${item.usage.outputTokens} out`) : null,
          item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null,
          badge(item.status === "error" ? "error" : item.status, item.status === "error" ? `error · ${item.error?.code}` : item.status),
        ],
      ];
    }
    case "tool": {
      const bits = [];
      if (item.events) bits.push(plural(item.events, "event"));
      if (item.results) bits.push(plural(item.results, "result"));
      return [
        "⚙",
        `${item.tool} · ${placementLabel(item.placement)}${bits.length ? ` · ${bits.join(" · ")}` : ""}`,
        [
          item.background ? h("span", { class: "badge bg-tag", title: "still running after its turn ended" }, "background") : null,
          item.status === "running" && typeof item.deadlineAt === "number" ? deadlineEl(item.deadlineAt) : null,
          item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null,
          badge(awaitingApproval(item) ? "approval" : item.status, callStatusText(item)),
        ],
      ];
    }
    case "deleted":
      return ["✕", "Session deleted", [badge("deleted")]];
    default:
      return ["·", item.type, []];
  }
}

