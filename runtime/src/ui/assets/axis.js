// @ts-check
// The session's time axis: turns, model calls and tool calls as bars on one time scale.
import { h, fmtTime, fmtDur } from "./dom.js";
import { awaitingApproval, callStatusText, turnName } from "./timeline.js";

/** Bars drawn at most (the most recent ones): the axis of a long session shows its latest work. */
const AXIS_MAX_BARS = 400;
const LANE_H = 14;

/**
 * The session's time axis: each turn, model call and tool call as a bar from its start to its end
 * on one time scale, open ones growing to now, calls that ran side by side on lanes of their own,
 * and a background call's part after its turn ended hatched. The compact list beside it stays the
 * accessible view (the bars are not in the tab order); a click on a bar selects its row.
 */
export class TimeAxis {
  constructor(onPick) {
    this.bars = h("div", { class: "axis-bars", "aria-hidden": "true" });
    this.scale = h("div", { class: "axis-scale" });
    this.note = h("span", { class: "muted" });
    const key = (cls, text) => h("span", { class: "axis-key" }, h("span", { class: `swatch ${cls}` }), text);
    this.el = h(
      "section",
      { id: "axis", class: "axis", "aria-label": "Time axis" },
      h("div", { class: "axis-head" }, h("strong", {}, "Time"), key("k-turn", "turns"), key("k-model", "model calls"), key("k-tool s-ok", "tool calls, side by side on lanes"), key("k-tool background", "after its turn ended"), this.note),
      this.bars,
      this.scale,
    );
    this.bars.addEventListener("click", (e) => {
      const bar = e.target.closest?.("[data-index]");
      if (bar) onPick(Number(bar.dataset.index));
    });
  }

  /** Whether anything on the axis is still open (it grows with the clock). */
  get live() {
    return this.open;
  }

  draw(t) {
    const all = t.spans;
    const items = all.slice(-AXIS_MAX_BARS);
    this.note.textContent = items.length < all.length ? `the last ${items.length} of ${all.length} turns and calls` : "";
    if (items.length === 0) return void this.bars.replaceChildren();
    const now = Date.now();
    const endOf = (i) => i.endAt ?? (i.status === "running" || i.status === "pending" ? now : i.at);
    this.open = items.some((i) => i.endAt === undefined && (i.status === "running" || i.status === "pending"));
    const t0 = Math.min(...items.map((i) => i.at));
    const t1 = Math.max(t0 + 1, ...items.map(endOf));
    const x = (ms) => ((ms - t0) / (t1 - t0)) * 100;
    // Lanes: turns on the first, then model calls, then tool calls, each group packed so that what
    // overlaps in time sits on lanes of its own.
    let lane = 0;
    const bars = [];
    for (const kind of ["turn", "model", "tool"]) {
      const ends = [];
      for (const i of items.filter((x) => x.kind === kind)) {
        let l = ends.findIndex((end) => end <= i.at);
        if (l < 0) l = ends.push(0) - 1;
        ends[l] = endOf(i) + 1;
        bars.push(this.bar(i, lane + l, x, endOf(i)));
      }
      lane += Math.max(ends.length, 0);
    }
    this.bars.style.height = `${lane * LANE_H}px`;
    this.bars.replaceChildren(...bars);
    this.scale.replaceChildren(h("span", {}, fmtTime(t0)), h("span", {}, `+${fmtDur(t1 - t0)}`));
  }

  bar(i, lane, x, end) {
    const status = i.kind === "tool" && awaitingApproval(i) ? "approval" : i.status;
    const name = i.kind === "turn" ? turnName(i) : i.kind === "model" ? `model call #${i.seq}` : `${i.tool} ${i.callId}`;
    const left = x(i.at);
    const bar = h("div", {
      class: `bar k-${i.kind} s-${status}${i.background ? " background" : ""}`,
      style: `left:${left}%;width:max(${x(end) - left}%, 3px);top:${lane * LANE_H}px`,
      title: `${name} · ${fmtDur(end - i.at)} · ${i.kind === "tool" ? callStatusText(i) : status}${i.background ? " · background: it outlived its turn" : ""}`,
      dataset: { index: String(i.index), axisKind: i.kind, axisCall: i.callId, axisTurn: i.kind === "turn" ? String(i.seq) : undefined },
    });
    // A background call: the part after its turn ended is hatched.
    if (i.background && i.turnEndAt !== undefined && end > i.turnEndAt) {
      const from = ((i.turnEndAt - i.at) / Math.max(1, end - i.at)) * 100;
      bar.append(h("span", { class: "past-turn", style: `left:${from}%` }));
    }
    return bar;
  }
}

