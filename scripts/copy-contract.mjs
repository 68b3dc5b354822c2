#!/usr/bin/env node
// Copies contract/tool.wit into sdk-node/contracts/ so that `@aexhq/brain/contracts/tool.wit` is a
// real file in the published package. The copy is committed too; scripts/test/imports.test.mjs
// fails if it ever differs from the contract byte for byte.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(root, "contract/tool.wit");
const to = join(root, "sdk-node/contracts/tool.wit");
mkdirSync(dirname(to), { recursive: true });
// Only a changed contract is written: a fresh mtime on the copy would make sdk-node look newer than
// its dist/ to scripts/prepack.mjs, which would then rebuild it for every package that depends on it.
if (!existsSync(to) || !readFileSync(from).equals(readFileSync(to))) {
  copyFileSync(from, to);
  console.log(`copied contract/tool.wit -> sdk-node/contracts/tool.wit`);
}
