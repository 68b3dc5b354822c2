// The package's setup script: the runtime runs it once per binding, before the host imports the
// tools. It leaves an ordering record that the module reads when it is imported.
import { writeFileSync } from "node:fs";
writeFileSync(new URL("./setup-record.json", import.meta.url), JSON.stringify({ setupAt: Date.now(), pid: process.pid }));
