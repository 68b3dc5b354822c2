// A throwaway PostgreSQL server for tests: initdb into a temporary folder and pg_ctl start on a free
// loopback port, as the `postgres` user when the tests run as root (PostgreSQL refuses root). The
// binaries are Debian's (`.ci/run` installs `postgresql` when they are missing).
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export interface PgCluster {
  /** postgres://brain@127.0.0.1:PORT/postgres (trust authentication on loopback only). */
  url: string;
  /** Stops the server (immediate mode) and removes its folder. */
  stop(): Promise<void>;
  /**
   * Restarts the server on the same port and data: `immediate` is a crash (recovery replays its
   * WAL), `fast` a clean shutdown that ends every connection. `downMs` keeps it down that long.
   * Asynchronous, so the caller's hosts and clients go on running meanwhile. Resolves with how long
   * `pg_ctl stop` and `pg_ctl start` (until the server accepts connections: crash recovery) took.
   * `onStopped` is called once the server is down: what a test of the outage waits for (the stop
   * itself can take a second on a loaded machine).
   */
  restart(mode: "immediate" | "fast", downMs?: number, onStopped?: () => void): Promise<{ stopMs: number; startMs: number }>;
}

/** The folder holding initdb and pg_ctl: BRAIN_PG_BIN, else the newest /usr/lib/postgresql/N/bin. */
export function pgBinDir(): string | undefined {
  if (process.env.BRAIN_PG_BIN) return process.env.BRAIN_PG_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(root, versions[0]!, "bin");
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface PgClusterOptions {
  /**
   * PostgreSQL's default durability (fsync on; synchronous_commit is on either way), as users run it:
   * every commit waits for its WAL to reach the disk. Off by default: a throwaway server for tests,
   * whose own process is never killed by them (the runtime's is), need not flush. The bench's nodes
   * mode runs durable.
   */
  durable?: boolean;
}

export async function startPgCluster(opts: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (bin === undefined) throw new Error("PostgreSQL server binaries not found (apt-get install postgresql, or set BRAIN_PG_BIN)");
  const dir = mkdtempSync(join(tmpdir(), "brain-pg-"));
  const data = join(dir, "data");
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const run = (tool: string, args: string[]) => {
    const cmd = asRoot ? "runuser" : join(bin, tool);
    const full = asRoot ? ["-u", "postgres", "--", join(bin, tool), ...args] : args;
    return execFileSync(cmd, full, { stdio: ["ignore", "pipe", "pipe"] }).toString();
  };
  run("initdb", ["-D", data, "-U", "brain", "--auth=trust", "-E", "UTF8", "--no-instructions"]);
  const port = await freePort();
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=${opts.durable ? "on" : "off"} -c max_connections=100`;
  const startArgs = ["-D", data, "-l", join(dir, "log"), "-o", options, "-w", "-t", "60", "start"];
  run("pg_ctl", startArgs);
  const runAsync = (tool: string, args: string[]) =>
    promisify(execFile)(asRoot ? "runuser" : join(bin, tool), asRoot ? ["-u", "postgres", "--", join(bin, tool), ...args] : args);
  let stopped = false;
  return {
    url: `postgres://brain@127.0.0.1:${port}/postgres`,
    async restart(mode, downMs = 0, onStopped) {
      const t0 = performance.now();
      await runAsync("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]);
      const stopMs = performance.now() - t0;
      onStopped?.();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      const t1 = performance.now();
      await runAsync("pg_ctl", startArgs);
      return { stopMs, startMs: performance.now() - t1 };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
