// The runtime's `committed` frames read without the router: only the runtime's own form, which is valid by construction.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readCommitted } from "../src/host/committed-frame.ts";

test("a committed frame as the runtime writes it is read", () => {
  const text = JSON.stringify({ type: "committed", ref: 12, callId: "ses_0123456789abcdef0123:45", sequence: 46 });
  assert.equal(readCommitted(text), { ref: 12, callId: "ses_0123456789abcdef0123:45", sequence: 46 });
  assert.equal(readCommitted(`{"type":"committed","ref":0,"callId":"c","sequence":1}`), { ref: 0, callId: "c", sequence: 1 });
});

test("anything else is left to the router (which validates it)", () => {
  const other = [
    `{"type":"committed","ref":-1,"callId":"c","sequence":1}`,
    `{"type":"committed","ref":1,"callId":"c","sequence":0}`,
    `{"type":"committed","ref":1.5,"callId":"c","sequence":1}`,
    `{"type":"committed","ref":01,"callId":"c","sequence":1}`,
    `{"type":"committed","ref":1,"callId":"c\\"x","sequence":1}`,
    `{"type":"committed","ref":1,"callId":"c\\u0041","sequence":1}`,
    `{"type":"committed","ref":1,"callId":"c","sequence":1,"extra":true}`,
    `{"type":"committed","ref":1234567890123456,"callId":"c","sequence":1}`,
    `{"type": "committed","ref":1,"callId":"c","sequence":1}`,
    `{"ref":1,"type":"committed","callId":"c","sequence":1}`,
    `{"type":"cancel","callId":"c","status":"timeout"}`,
    `{"type":"committed","ref":1,"callId":"c","sequence":1}x`,
  ];
  for (const text of other) assert.is(readCommitted(text), undefined, text);
});

test.run();
