// A real npm registry on loopback for tests: verdaccio (a devDependency) started as a subprocess
// with its storage in a temp folder and no uplinks, so it serves only what the test publishes.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const VERDACCIO = fileURLToPath(new URL("../../../node_modules/verdaccio/bin/verdaccio", import.meta.url));

export interface LocalRegistry {
  url: string;
  /** A .npmrc with the publish token (for `npm publish --userconfig`). */
  npmrc: string;
  /** `npm publish` of a tarball or folder to this registry (no lifecycle scripts). */
  publish(target: string): void;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts verdaccio in `dir` (config, storage, htpasswd) and registers a publishing user. */
export async function startLocalRegistry(dir: string): Promise<LocalRegistry> {
  mkdirSync(join(dir, "storage"), { recursive: true });
  const config = join(dir, "config.yaml");
  writeFileSync(config, [
    `storage: ${join(dir, "storage")}`,
    "auth:",
    "  htpasswd:",
    `    file: ${join(dir, "htpasswd")}`,
    "uplinks: {}",
    "packages:",
    "  '**':",
    "    access: $all",
    "    publish: $authenticated",
    "logs: { type: stdout, format: pretty, level: error }",
    "",
  ].join("\n"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [VERDACCIO, "--config", config, "--listen", `127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
  child.stderr!.on("data", (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/-/ping`);
      if (r.ok) break;
    } catch {
      // Not listening yet.
    }
    if (child.exitCode !== null || Date.now() > until) throw new Error(`verdaccio did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // npm's adduser, by hand: verdaccio's htpasswd plugin registers the user and answers its token.
  const res = await fetch(`${url}/-/user/org.couchdb.user:brain-test`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "brain-test", password: "brain-test-password", type: "user", roles: [], date: new Date().toISOString() }),
  });
  const body = (await res.json()) as { token?: string };
  if (!res.ok || !body.token) throw new Error(`verdaccio adduser: ${res.status} ${JSON.stringify(body)}`);
  const npmrc = join(dir, "npmrc");
  writeFileSync(npmrc, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${body.token}\n`);
  return {
    url,
    npmrc,
    publish(target: string) {
      execFileSync("npm", ["publish", target, "--registry", `${url}/`, "--userconfig", npmrc, "--ignore-scripts", "--access", "public", "--tag", "latest", "--no-provenance"], {
        cwd: dir,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, npm_config_cache: join(dir, "npm-cache") },
        timeout: 120_000,
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
