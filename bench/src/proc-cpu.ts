// CPU time of processes from /proc (Linux): a node's (`/proc/<pid>/stat` utime + stime, every thread
// of it), a PostgreSQL server's (the postmaster, its live children, and cutime + cstime: the children
// it already reaped, so a backend that ended inside a window still counts), this process's, and the
// machine's (/proc/stat), to say which process a multi-node figure was limited by.
import { readFileSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";

let ticksPerS: number | undefined;
function hz(): number {
  if (ticksPerS === undefined) {
    try {
      ticksPerS = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
    } catch {
      ticksPerS = 100;
    }
  }
  return ticksPerS;
}

/** The fields of /proc/<pid>/stat after the command name (field 3 onwards, so index 0 is `state`). */
function statFields(pid: number | "self"): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** utime + stime of a process (all its threads), in seconds; with `children`, plus cutime + cstime. */
export function processCpuS(pid: number | "self", children = false): number {
  const f = statFields(pid);
  if (f === undefined) return NaN;
  // utime, stime, cutime, cstime are fields 14–17 of stat: indexes 11–14 here.
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / hz();
}

function ppidOf(pid: number): number | undefined {
  const f = statFields(pid);
  return f === undefined ? undefined : Number(f[1]);
}

/** The postmaster of the PostgreSQL server listening on `port` (its command line holds `-p <port>`). */
export function postmasterOf(port: number): number | undefined {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let cmd: string[];
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (!/(^|\/)postgres$/.test(cmd[0] ?? "")) continue;
    const i = cmd.indexOf("-p");
    if (i >= 0 && cmd[i + 1] === String(port) && ppidOf(Number(name)) !== undefined) {
      // The postmaster, not one of its children (their command lines are rewritten, without -p).
      return Number(name);
    }
  }
  return undefined;
}

/** CPU seconds of a PostgreSQL server so far: postmaster (with its reaped children) + every live child. */
export function pgServerCpuS(postmaster: number): number {
  let total = processCpuS(postmaster, true);
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid !== postmaster && ppidOf(pid) === postmaster) {
      const c = processCpuS(pid);
      if (Number.isFinite(c)) total += c;
    }
  }
  return total;
}

/** The machine's CPU seconds so far (all cores): busy (user, nice, system, irq, softirq), steal (taken by the hypervisor), and all. */
export function machineCpuS(): { busy: number; steal: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line;
  const busy = user + nice + system + irq + softirq;
  return { busy: busy / hz(), steal: steal / hz(), total: (busy + idle + iowait + steal) / hz() };
}
