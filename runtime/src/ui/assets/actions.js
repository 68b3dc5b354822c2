// @ts-check
// Acting on a session through the ordinary API: the login's anti-forgery token on every action, a
// confirmation where an action destroys something, and the Approve / Deny controls of a waiting call.
import { h } from "./dom.js";
import { ApiError } from "./api.js";

/** The login's anti-forgery token: the server puts it in the page's HTML, and bridges an action only with it. */
export const CSRF = document.querySelector('meta[name="brain-csrf"]')?.getAttribute("content") ?? "";

/**
 * One action through the ordinary API (POST or DELETE under /v1/sessions/…), with the login cookie
 * and its anti-forgery token; resolves with the JSON answer, rejects with an ApiError.
 */
export async function act(method, path, body, headers = {}) {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { accept: "application/json", "x-brain-csrf": CSRF, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status === 401) {
    location.reload();
    throw new ApiError(401, "unauthorized", "signed out");
  }
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, answer?.error?.code ?? "error", answer?.error?.message ?? res.statusText);
  return answer;
}

/** A modal confirmation (a <dialog>): resolves true when the person confirms. Focus returns where it was. */
export function confirmAction(question, confirmLabel) {
  return new Promise((resolve) => {
    const before = /** @type {HTMLElement | null} */ (document.activeElement);
    const keep = h("button", { type: "button", id: "confirm-keep", value: "keep" }, "Keep");
    const yes = h("button", { type: "button", id: "confirm-yes", class: "danger", value: "yes" }, confirmLabel);
    const dialog = h("dialog", { id: "confirm", "aria-labelledby": "confirm-q" }, h("p", { id: "confirm-q" }, question), h("div", { class: "dialog-buttons" }, keep, yes));
    const done = (ok) => {
      dialog.close();
      dialog.remove();
      before?.focus?.();
      resolve(ok);
    };
    keep.addEventListener("click", () => done(false));
    yes.addEventListener("click", () => done(true));
    dialog.addEventListener("cancel", (e) => {
      e.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    keep.focus();
  });
}

/** Who made a decision, as its record says. */
export function deciderLabel(by) {
  if (!by) return "—";
  return by.kind === "operator" ? "the operator" : `key ${by.name ?? by.keyId} (${by.keyId})`;
}

/** Reasons typed for calls awaiting approval, kept across redraws of the panels that show them. */
export const reasons = new Map();

/**
 * Approve and Deny for one call awaiting approval, with an optional reason (journaled; for a denial
 * the model reads it). The clicks are handled by the session page (data-approve / data-deny).
 */
export function approvalControls(c) {
  const id = `reason-${c.seq}`;
  const reason = h("input", { type: "text", id, class: "reason", placeholder: "Reason (optional; the model reads a denial's)", value: reasons.get(c.callId) ?? "", dataset: { reasonFor: c.callId } });
  reason.addEventListener("input", () => reasons.set(c.callId, reason.value));
  return h(
    "div",
    { class: "approval", dataset: { approvalFor: c.callId } },
    h("label", { for: id, class: "sr-only" }, `Reason for ${c.tool} (${c.callId})`),
    reason,
    h("button", { type: "button", class: "approve", dataset: { approve: c.callId } }, "Approve"),
    h("button", { type: "button", class: "danger", dataset: { deny: c.callId } }, "Deny"),
  );
}

