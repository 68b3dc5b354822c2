// Entry of the child process bench section 6 runs in (memory.ts): measures, prints the Section as JSON.
import { measureMemory } from "./memory.ts";
import type { BenchConfig } from "./config.ts";

const cfg = JSON.parse(process.argv[2]!) as BenchConfig;
process.stdout.write(JSON.stringify(await measureMemory(cfg)));
