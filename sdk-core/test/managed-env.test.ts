// brainEnv({ runtime }) (Brain-managed JS hosts): the runtime side exists, the SDK side (packing and
// uploading the package) does not yet, so asking for it fails at once with a typed `unsupported`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SdkError, brainEnv } from "../src/index.ts";

test("brainEnv({ runtime }) throws SdkError unsupported naming the env and runtime", () => {
  for (const runtime of ["node", "deno"] as const) {
    try {
      brainEnv({ name: "text", runtime });
      assert.unreachable("brainEnv accepted a runtime");
    } catch (e) {
      assert.instance(e, SdkError);
      assert.is((e as SdkError).code, "unsupported");
      assert.match((e as Error).message, new RegExp(`brainEnv text: runtime "${runtime}"`));
      assert.equal((e as SdkError).details, { env: "text", runtime });
    }
  }
  assert.is(brainEnv({ name: "plain" }).kind, "brain");
});

test.run();
