#!/usr/bin/env node
// `npx brain-conformance --subject ...`: runs the TypeScript CLI through tsx from this checkout.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", cli, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(r.status ?? 1);
