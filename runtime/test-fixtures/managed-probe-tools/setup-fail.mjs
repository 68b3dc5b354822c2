// A setup script that fails (the tests point brain.setup here): every call gets its error, once.
import { appendFileSync } from "node:fs";
appendFileSync(new URL("./setup-runs.log", import.meta.url), "ran\n");
console.error("probe setup: cannot prepare (on purpose)");
process.exit(3);
