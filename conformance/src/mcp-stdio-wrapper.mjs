// How the conformance runner has the runtime start an MCP stdio subject:
//   node mcp-stdio-wrapper.mjs <pid file> shell "<command line>"
//   node mcp-stdio-wrapper.mjs <pid file> argv <command> [args…]
// The server runs in a process group of its own, with this process's stdin, stdout and stderr (the
// runtime's pipes). The pid file gets "<this pid> <the group>": the runner kills the group (SIGKILL)
// to cut the server off mid-call, whatever the command line started. When the runtime stops the
// server (SIGTERM), the whole group is stopped, not only a shell that would leave its child running.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const [pidFile, mode, ...command] = process.argv.slice(2);
if (pidFile === undefined || (mode !== "shell" && mode !== "argv") || command.length === 0) {
  console.error("usage: mcp-stdio-wrapper.mjs <pid file> shell|argv <command…>");
  process.exit(2);
}
const child = mode === "shell"
  ? spawn(command[0], { shell: true, stdio: "inherit", detached: true })
  : spawn(command[0], command.slice(1), { stdio: "inherit", detached: true });
const group = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone
  }
};
child.on("error", (e) => {
  console.error(`the MCP server command could not be started: ${e.message}`);
  process.exit(127);
});
if (child.pid !== undefined) writeFileSync(pidFile, `${process.pid} ${child.pid}\n`);
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  process.on(signal, () => {
    group("SIGTERM");
    setTimeout(() => group("SIGKILL"), 2000).unref();
  });
}
child.on("exit", (code, signal) => {
  // What the server started goes with it.
  group("SIGKILL");
  process.exit(code ?? (signal === null ? 1 : 128));
});
