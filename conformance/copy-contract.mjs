#!/usr/bin/env node
// Copies the contract files conformance/README.md links (PROTOCOL.md first: what an implementer
// reads) into conformance/contract/, so the published package ships them and its README's links
// resolve inside an installed package. Run by the build (so by prepack); the copies are not
// committed (conformance/.gitignore): contract/ at the repository root is the source.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The contract files the package ships; conformance/README.md links each as contract/<file>. */
export const SHIPPED_CONTRACT_FILES = ["PROTOCOL.md", "tool.wit", "digest-vectors.json", "conformance-report.schema.json", "conformance-scenario.schema.json"];

const here = fileURLToPath(new URL(".", import.meta.url));
const from = join(here, "../contract");
const to = join(here, "contract");
mkdirSync(to, { recursive: true });
for (const file of SHIPPED_CONTRACT_FILES) {
  // Only a changed file is written, so an unchanged contract leaves the package's mtimes alone.
  const source = readFileSync(join(from, file));
  if (!existsSync(join(to, file)) || !source.equals(readFileSync(join(to, file)))) copyFileSync(join(from, file), join(to, file));
}
