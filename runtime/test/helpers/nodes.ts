// Runtime nodes as real subprocesses (`cli.ts serve`) sharing one PostgreSQL database, for the
// tests of several nodes: they are killed with SIGKILL and stopped with SIGSTOP like real servers.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const runtimeDir = fileURLToPath(new URL("../..", import.meta.url));
const live = new Set<ChildProcess>();

export interface NodeProcess {
  child: ChildProcess;
  url: string;
  token: string;
  /** Everything it printed so far. */
  output(): string;
}

/** A fresh database on the cluster; its URL. */
export async function freshDatabase(clusterUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return clusterUrl.replace(/\/postgres$/, `/${name}`);
}

/** Rows of one statement on `database`, over a connection of its own (what a test reads or sets behind the nodes' backs). */
export async function queryRows(database: string, text: string, params: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: database });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}

/** Starts one node on `database`; resolves once it listens. */
export function startNode(database: string, token: string, env: Record<string, string> = {}): Promise<NodeProcess> {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", "serve"], {
    cwd: runtimeDir,
    env: { ...process.env, BRAIN_JOURNAL: database, BRAIN_DATA_DIR: mkdtempSync(join(tmpdir(), "brain-node-")), BRAIN_PORT: "0", BRAIN_TOKEN: token, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  child.on("exit", () => live.delete(child));
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  return new Promise((resolve, reject) => {
    // A node that does not listen in time is killed, so a caller that tries again leaves no stray process.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no listening line in 30 s: ${out}`));
    }, 30000);
    const onData = () => {
      const m = /brain listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        resolve({ child, url: m[1]!, token, output: () => out });
      }
    };
    child.stdout!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

export function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** Kills every node still running (test.after). */
export async function killAll(): Promise<void> {
  for (const c of [...live]) {
    c.kill("SIGCONT");
    await kill9(c);
  }
}

/** The environment the tests of several nodes start nodes with: a short lease, and hosts never timed out by pings. */
export function nodeEnv(leaseMs: number): Record<string, string> {
  return { BRAIN_LEASE_MS: String(leaseMs), BRAIN_HOST_TIMEOUT_MS: "60000" };
}

/** Nodes node-a and node-b on a fresh database `name` of the cluster at `clusterUrl`. */
export async function twoNodes(clusterUrl: string, name: string, token: string, leaseMs: number): Promise<{ db: string; a: NodeProcess; b: NodeProcess }> {
  const db = await freshDatabase(clusterUrl, name);
  const a = await startNode(db, token, { ...nodeEnv(leaseMs), BRAIN_NODE_ID: "node-a" });
  const b = await startNode(db, token, { ...nodeEnv(leaseMs), BRAIN_NODE_ID: "node-b" });
  return { db, a, b };
}

/** A runtime node seen as the API helpers' `Brain` (its URL and the operator token). */
export function asBrain(node: { url: string }, token: string): { url: string; token: string } {
  return { url: node.url, token };
}
