#!/usr/bin/env node
// `brain-conformance --subject ...`: the compiled CLI of the installed package (dist/, built by its
// prepack), or in a checkout without a build the TypeScript sources through tsx.
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const built = fileURLToPath(new URL("../dist/src/cli.js", import.meta.url));
if (existsSync(built)) {
  const { main } = await import(built);
  process.exit(await main(process.argv.slice(2)));
} else {
  const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
  const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", cli, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}
