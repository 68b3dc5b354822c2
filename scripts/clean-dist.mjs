#!/usr/bin/env node
// First step of every package build: removes dist/ so nothing stale (a renamed or deleted module)
// is ever packed. Run from the package folder.
import { rmSync } from "node:fs";
rmSync("dist", { recursive: true, force: true });
