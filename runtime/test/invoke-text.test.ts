// A host connection writes `invoke` frames from kept text; what it writes is what JSON.stringify
// writes of the frame, whatever changes from one frame to the next.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { InvokeFrame } from "@aexhq/brain-protocol";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { invokeFrame } from "../src/dispatch/environment.ts";
import type { CallInvocation } from "../src/dispatch/environment.ts";
import { InvokeText } from "../src/hosts/invoke-text.ts";

const tool = (name: string, digest: string, options: Record<string, unknown> = {}): PlacedTool =>
  ({ contract: { name, digest }, options, placement: { kind: "host", hostId: "h" } }) as unknown as PlacedTool;

test("invoke text is JSON.stringify's text of the frame, across sessions, tools, inputs, deadlines and traces", () => {
  const text = new InvokeText();
  const echo = tool("echo", "sha256:" + "a".repeat(64));
  const calls: CallInvocation[] = [
    { callId: "ses_a:1", sessionId: "ses_a", sequence: 1, tool: echo, input: { x: 1 }, deadlineAt: null },
    { callId: "ses_a:2", sessionId: "ses_a", sequence: 2, tool: echo, input: { x: 2, s: "quote \" slash \\ line\n \u2028 é" }, deadlineAt: 1_780_000_000_123 },
    { callId: "ses_a:3", sessionId: "ses_a", sequence: 3, tool: tool("other", "sha256:" + "b".repeat(64), { mode: "fast", n: [1, null, true] }), input: [1, "two"], deadlineAt: null, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    { callId: "ses_b:4", sessionId: "ses_b", sequence: 4, tool: echo, input: null, deadlineAt: null },
    { callId: "ses_b:5", sessionId: "ses_b", sequence: 5, tool: tool("echo", "sha256:" + "c".repeat(64)), input: "text", deadlineAt: 5 },
    { callId: "ses_\"odd\\:6", sessionId: "ses_\"odd\\", sequence: 6, tool: tool("na\"me", "d\\g"), input: { nested: { deeper: [{}] } }, deadlineAt: null },
  ];
  for (const call of calls) {
    const frame = invokeFrame(call);
    assert.is(text.of(frame), JSON.stringify(frame), call.callId);
  }
});

test("a tool's options are written once while the same frozen object comes back; options not frozen are written every time", () => {
  const text = new InvokeText();
  const frozen = tool("echo", "d", Object.freeze({ mode: "fast" }));
  const open = tool("echo", "d", { mode: "slow" });
  const call = (t: PlacedTool, sequence: number): CallInvocation => ({ callId: `ses_a:${sequence}`, sessionId: "ses_a", sequence, tool: t, input: { x: sequence }, deadlineAt: null });
  for (let i = 1; i <= 3; i++) assert.is(text.of(invokeFrame(call(frozen, i))), JSON.stringify(invokeFrame(call(frozen, i))));
  assert.is(text.of(invokeFrame(call(open, 4))), JSON.stringify(invokeFrame(call(open, 4))));
  // The same object, changed since it was written: what goes out is what it holds now.
  (open.options as Record<string, unknown>).mode = "changed";
  const changed = text.of(invokeFrame(call(open, 5)));
  assert.is(changed, JSON.stringify(invokeFrame(call(open, 5))));
  assert.ok(changed.includes('"mode":"changed"'));
  // Numbers as JSON.stringify writes them, the ones it cannot (not finite) included.
  for (const deadlineAt of [0, -0, 1e21, 1_780_000_000_123.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    const frame = invokeFrame({ ...call(frozen, 6), deadlineAt });
    assert.is(text.of(frame), JSON.stringify(frame), String(deadlineAt));
  }
});

test("a traceparent is written as is when it has a traceparent's length, and as JSON.stringify writes it otherwise", () => {
  const text = new InvokeText();
  for (const traceparent of ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", `00-"odd\\${"0".repeat(10)}`, "", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra\n"]) {
    const frame = invokeFrame({ callId: "ses_a:1", sessionId: "ses_a", sequence: 1, tool: tool("echo", "d"), input: 1, deadlineAt: null, traceparent });
    assert.is(text.of(frame), JSON.stringify(frame), traceparent);
  }
});

test("a frame whose input or options are not JSON values is written as JSON.stringify writes it", () => {
  const frame = invokeFrame({ callId: "ses_a:1", sessionId: "ses_a", sequence: 1, tool: tool("echo", "d"), input: undefined, deadlineAt: null });
  assert.is(new InvokeText().of(frame), JSON.stringify(frame));
  assert.not.ok(JSON.stringify(frame).includes('"input"'));
});

test("a frame without a digest (a contract the validators would refuse) is still written as JSON.stringify writes it", () => {
  const text = new InvokeText();
  const frame = invokeFrame({ callId: "ses_a:1", sessionId: "ses_a", sequence: 1, tool: tool("echo", undefined as unknown as string), input: { x: 1 }, deadlineAt: null });
  assert.is(text.of(frame), JSON.stringify(frame));
  assert.not.ok(text.of(frame).includes("undefined"));
});

test("the text names every field the contract's invoke frame has, so a field added to the contract fails here, not silently on the wire", () => {
  const frame = invokeFrame({ callId: "ses_a:1", sessionId: "ses_a", sequence: 1, tool: tool("echo", "d"), input: 1, deadlineAt: 2, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" });
  assert.equal(Object.keys(JSON.parse(new InvokeText().of(frame))).sort(), Object.keys(InvokeFrame.properties).sort());
});

test.run();
