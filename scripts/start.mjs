// `npm start`: the Brain runtime in the foreground (runtime/src/cli.ts serve through tsx).
// A terminal's Ctrl-C sends SIGINT to the whole foreground process group (npm, this process and the
// runtime): the runtime shuts itself down and this process exits with its exit code. A signal sent
// to this process alone (kill <pid>) is passed on; the runtime ignores a second copy while stopping.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "runtime/src/cli.ts", "serve", ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => { if (child.exitCode === null && child.signalCode === null) child.kill(signal); });
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
