// The conformance catalogue (conformance/CATALOGUE.md) as one brain:tool@0.2.0 component, in
// JavaScript (componentize-js). The invocation carries no tool name, so the runner places every
// catalogue tool on this one file with options `{ "tool": <name> }` and `run` dispatches on it.
// Schemas are checked by the runtime against conformance/catalogue.json before `run` is called.
//
// A component has no signal: on a deadline or a cancel the runtime terminates its worker, so
// "wait ms or until the signal aborts" is a plain wait here. `run` is synchronous, so waiting is
// a wall-clock loop (short in every scenario).
import { emit, emitResult, finish, model, returned } from "brain:tool/host@0.2.0";

const ok = (value) => JSON.stringify({ status: "ok", value });
const error = (code, message, extra = {}) => JSON.stringify({ status: "error", error: { code, message, ...extra } });

/** Errors from WIT `result` imports arrive as thrown values carrying the error payload. */
const payload = (e) => (e && typeof e === "object" && "payload" in e ? e.payload : e);

function wait(ms) {
  const until = Date.now() + Math.min(ms, 60_000);
  while (Date.now() < until) {
    // Busy: a synchronous export cannot yield.
  }
}

// The nearest non-JSON text for each kind a JavaScript value can be but JSON cannot.
const notJson = {
  undefined: '{"status":"ok","value":{"v":undefined}}',
  nan: '{"status":"ok","value":{"v":NaN}}',
  infinity: '{"status":"ok","value":{"v":Infinity}}',
  bigint: '{"status":"ok","value":{"v":10n}}',
  date: '{"status":"ok","value":{"v":new Date(0)}}',
  map: '{"status":"ok","value":{"v":new Map([["a",1]])}}',
  class: '{"status":"ok","value":{"v":new NotPlainData()}}',
};

const malformed = {
  ok_without_value: '{"status":"ok"}',
  error_without_code: '{"status":"error","error":{"message":"m"}}',
  timeout_with_value: '{"status":"timeout","value":1}',
};

const tools = {
  echo: ({ value }) => finish(ok({ value }), undefined),
  fail: ({ code, message, retryable, details }) => {
    const extra = {};
    if (retryable !== undefined) extra.retryable = retryable;
    if (details !== undefined) extra.details = details;
    finish(error(code, message, extra), undefined);
  },
  reserved_data: () => finish(ok({ status: "error", note: "business data" }), undefined),
  // Not a reserved status: ordinary data, so it travels as the value of an ok envelope.
  other_status: () => finish(ok({ status: "done", count: 2 }), undefined),
  malformed: ({ variant }) => finish(malformed[variant], undefined),
  not_json: ({ kind }) => finish(notJson[kind], undefined),
  typed_output: ({ good }) => finish(ok(good ? { n: 1 } : { n: "one" }), undefined),
  typed_error: () => finish(error("nope", "m"), undefined),
  // JSON Schema carries the default but no transform: the guest applies both, as Zod would.
  defaults: ({ name, count, shout }) => {
    const value = { name, count: count ?? 1 };
    if (shout !== undefined) value.shout = shout.toUpperCase();
    finish(ok(value), undefined);
  },
  strict: ({ a }) => finish(ok({ a }), undefined),
  // An ordinary object strips extra properties.
  strip: ({ a }) => finish(ok({ a }), undefined),
  emit_then_finish: ({ count }) => {
    const sequences = [];
    for (let i = 0; i < count; i++) sequences.push(Number(emit("progress", JSON.stringify({ i }))));
    finish(ok({ sequences }), undefined);
  },
  emit_after_finish: () => {
    finish(ok({ done: true }), undefined);
    try {
      emit("late", "{}");
    } catch {
      // Rejected with call_finished, as it must be.
    }
  },
  multi_result: ({ count }) => {
    for (let i = 0; i < count; i++) emitResult(ok({ i }), undefined);
    finish(undefined, undefined);
  },
  with_content: ({ error: isError }) => finish(isError ? error("bad", "bad") : ok({ v: 1 }), "model-facing text"),
  return_then_finish: ({ delayMs }) => {
    emitResult(ok({ phase: "returned" }), undefined);
    returned();
    wait(delayMs);
    finish(ok({ phase: "finished" }), undefined);
  },
  return_nothing: ({ delayMs }) => {
    returned();
    wait(delayMs);
    finish(ok({ late: true }), undefined);
  },
  // Never finishes: stays open until the runtime ends it (deadline, cancel) and kills the worker.
  forget: () => {
    emitResult(ok({ forgot: true }), undefined);
    returned();
    wait(60_000);
  },
  sleep: ({ ms }) => {
    wait(ms);
    finish(ok({ slept: ms }), undefined);
  },
  sleep_then_finish: ({ ms }) => {
    wait(ms);
    finish(ok({ late: true }), undefined);
  },
  big_emit: ({ bytes }) => {
    try {
      emit("blob", JSON.stringify({ s: "x".repeat(bytes) }));
    } catch (e) {
      const code = payload(e)?.code ?? "tool_error";
      finish(error(code, "emit rejected"), undefined);
      return;
    }
    finish(ok({ ok: true }), undefined);
  },
  ask_model: ({ prompt }) => {
    let reply;
    try {
      reply = JSON.parse(model(JSON.stringify({ messages: [{ role: "user", content: prompt }] })));
    } catch (e) {
      finish(error(payload(e)?.code ?? "tool_error", "the model call failed"), undefined);
      return;
    }
    finish(ok({ text: reply.text }), undefined);
  },
};

export function run(invocation) {
  const { tool } = JSON.parse(invocation.options);
  const impl = tools[tool];
  if (impl === undefined) {
    finish(error("not_registered", `this component has no catalogue tool ${JSON.stringify(tool)}`), undefined);
    return;
  }
  impl(JSON.parse(invocation.input));
}
