#!/usr/bin/env node
// `brain serve`: runs the built CLI when dist/ exists, else the TypeScript sources through tsx.
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const built = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
if (existsSync(built)) {
  await import(built);
} else {
  const source = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
  // Resolve tsx from this package, not from the caller's working directory.
  const tsx = import.meta.resolve("tsx");
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", tsx, source, ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
