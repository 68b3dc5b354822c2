// A finish frame's text is written out without serializing the frame object: it must be the text JSON.stringify writes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { frameText } from "../src/host/frame-text.ts";

test("a finish frame's text is JSON.stringify's, with or without outcome and content", () => {
  const frames: Array<Record<string, unknown> & { type: string }> = [
    { type: "finish", callId: "ses_0123456789abcdef0123:45", outcome: { status: "ok", value: { x: 1 } }, ref: 7 },
    { type: "finish", callId: "ses_a:1", ref: 0 },
    { type: "finish", callId: "ses_a:2", outcome: { status: "ok", value: "quote \" slash \\ line\n \u2028 é" }, content: "shown \"text\"", ref: 123456789 },
    { type: "finish", callId: "ses_a:3", outcome: { status: "error", error: { code: "tool_error", message: "no" } }, ref: 2 },
    { type: "finish", callId: "odd\"id\\", outcome: { status: "cancelled", message: "closing" }, ref: 3 },
    { type: "finish", callId: "ses_a:4", outcome: undefined, content: undefined, ref: 4 },
  ];
  for (const f of frames) assert.is(frameText(f), JSON.stringify(f));
});

test("other frames are serialized as they are", () => {
  const emit = { type: "emit", callId: "ses_a:1", kind: "progress", data: { n: 1 }, ref: 5 };
  assert.is(frameText(emit), JSON.stringify(emit));
  const register = { type: "register", ref: 1, protocol: "brain.host/0.2", token: "t", hostId: "h", secret: "s", tools: [] };
  assert.is(frameText(register), JSON.stringify(register));
});

test.run();
