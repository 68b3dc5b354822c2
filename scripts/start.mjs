// `npm start`: the Brain runtime in the foreground (runtime/src/cli.ts serve through tsx).
// Signals are forwarded so Ctrl-C shuts the server down cleanly.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "runtime/src/cli.ts", "serve", ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
