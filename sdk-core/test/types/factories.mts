// Type test, compiled by tsc in sdk-core/test/types.test.ts (never run). A factory whose options
// schema has required fields cannot be called without them; each `@ts-expect-error` line must fail
// to compile (tsc reports an unused directive otherwise), and the lines without one must compile.
import { z } from "zod";
import { tool, hostEnv } from "../../src/index.ts";

const run = async () => undefined;
const required = tool({ name: "lookup", description: "d", input: z.object({}), options: z.object({ prefix: z.string() }), run });
const optional = tool({ name: "opt", description: "d", input: z.object({}), options: z.object({ prefix: z.string().optional() }), run });
const defaulted = tool({ name: "def", description: "d", input: z.object({}), options: z.object({ prefix: z.string().default("x:") }), run });
const none = tool({ name: "none", description: "d", input: z.object({}), run });

// @ts-expect-error: prefix is required, so the config is too
required();
// @ts-expect-error: an empty config lacks prefix
required({});
// @ts-expect-error: env alone lacks prefix
required({ env: hostEnv({ name: "app" }) });
// @ts-expect-error: prefix must be a string
required({ prefix: 1 });
required({ prefix: "customer:" });
required({ prefix: "customer:", env: hostEnv({ name: "app" }) });

optional();
optional({});
optional({ prefix: "p" });
defaulted(); // a defaulted option is optional as given (z.input)
none();
none({ env: hostEnv({ name: "app" }) });
// @ts-expect-error: no options schema, no options
none({ prefix: "p" });
