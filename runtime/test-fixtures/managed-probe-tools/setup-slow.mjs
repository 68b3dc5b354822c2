// A setup script slower than the deadline the tests give the binding's first call (3 s): the
// runtime prepares at session creation, so that call's deadline does not include it. It leaves the
// same ordering record as setup.mjs.
import { writeFileSync } from "node:fs";
await new Promise((resolve) => setTimeout(resolve, 3000));
writeFileSync(new URL("./setup-record.json", import.meta.url), JSON.stringify({ setupAt: Date.now(), pid: process.pid }));
