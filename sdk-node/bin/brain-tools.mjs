#!/usr/bin/env node
// `brain-tools`: the publishing helper (src/brain-tools/cli.ts). An installed package always has
// dist/ (its prepack builds it). In a checkout without a build, the TypeScript sources run through
// tsx, a devDependency of the repository.
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const built = fileURLToPath(new URL("../dist/brain-tools/cli.js", import.meta.url));
if (existsSync(built)) {
  await import(built);
} else {
  const source = fileURLToPath(new URL("../src/brain-tools/cli.ts", import.meta.url));
  let tsx;
  try {
    tsx = import.meta.resolve("tsx");
  } catch {
    console.error(`brain-tools: ${built} is missing and tsx is not installed; build the package first (npm run build -w sdk-node)`);
    process.exit(1);
  }
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", tsx, source, ...process.argv.slice(2)], { stdio: "inherit" });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
