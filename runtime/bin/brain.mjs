#!/usr/bin/env node
// `brain serve` (also installed as `brain-runtime`, so `npx @aexhq/brain-runtime serve` names this
// package and never a registry package called `brain`). An installed package always has dist/ (its
// prepack builds it) and runs it in this process, so SIGINT reaches the runtime directly. In a
// checkout without a build, the TypeScript sources run through tsx, a devDependency of the repository.
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const built = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
if (existsSync(built)) {
  await import(built);
} else {
  const source = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
  let tsx;
  try {
    // Resolve tsx from this package, not from the caller's working directory.
    tsx = import.meta.resolve("tsx");
  } catch {
    console.error(`brain: ${built} is missing and tsx is not installed; build the package first (npm run build -w runtime)`);
    process.exit(1);
  }
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", tsx, source, ...process.argv.slice(2)], { stdio: "inherit" });
  // A terminal's Ctrl-C reaches both processes (one process group); the runtime handles it and this
  // process only waits for its exit code. A signal sent to this process alone is passed on.
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => { if (child.exitCode === null) child.kill(signal); });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
