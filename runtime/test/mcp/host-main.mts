// A host process serving the MCP fixture tools with BRAIN_URL / BRAIN_TOKEN: the tests kill it
// (SIGKILL) mid-call to drop a host the way a crash does. Prints "ready" once registered.
import { Brain } from "@aexhq/brain";
import { echo, hang } from "./fixture-tools.ts";

const brain = new Brain();
await brain.serve([echo(), hang()]);
process.stdout.write("ready\n");
