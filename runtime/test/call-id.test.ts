// A call id names its session and its tool.call_started record; one module makes and reads it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { callIdOf, isCallOf, parseCallId } from "../src/journal/call-id.ts";

test("a call id is made and read back; anything else is not a call id", () => {
  assert.is(callIdOf("ses_ab12", 7), "ses_ab12:7");
  assert.equal(parseCallId("ses_ab12:7"), { sessionId: "ses_ab12", sequence: 7 });
  for (const bad of ["", "ses_ab12", ":7", "ses_ab12:", "ses_ab12:0", "ses_ab12:-1", "ses_ab12:1.5", "ses_ab12:07", "ses_ab12:x"]) {
    assert.is(parseCallId(bad), undefined, JSON.stringify(bad));
  }
  assert.ok(isCallOf("ses_ab12:7", "ses_ab12"));
  assert.not.ok(isCallOf("ses_ab123:7", "ses_ab12"), "a session whose id starts like another's is another session");
  assert.not.ok(isCallOf("ses_ab12", "ses_ab12"));
});

test.run();
