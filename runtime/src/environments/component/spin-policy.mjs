// Whether a thread waiting on the component channel may spin before it sleeps. Both sides ask:
// the worker (channel-worker.mjs) and the main thread (channel.ts). Plain JavaScript, like
// worker.mjs, because worker threads do not run the tsx loader; spin-policy.d.mts types it.
//
// Spinning saves a kernel wake-up per crossing while the machine has a core to spare (a quiet
// 2-core VM: back-to-back Rust calls ~400 -> ~165 µs p50). When other processes keep the cores
// busy it costs more than it saves: the spinning thread takes CPU time from the thread that is to
// answer, so the answer comes later, not sooner. Linux reports that contention as CPU pressure
// (PSI, /proc/pressure/cpu): while the share of time in which some runnable task waited for a CPU
// (its 10 s average) is at or above PRESSURE_LIMIT %, no one spins. Measured on this 2-core VM
// (back-to-back Rust calls p50, alternating blocks of both): pressure 26 %: 179 µs spinning, 308 µs
// not; 42-58 %: 480-750 µs spinning, 280-510 µs not; ~97 %: 690-900 µs spinning, 290-520 µs not.
// Without PSI (another OS, a kernel without it) spinning stays on.
import { readFileSync } from "node:fs";

const PRESSURE_LIMIT = 30;
/** How often the pressure is read again (ms); a read is one small file read. */
const RECHECK_MS = 1000;

let checkedAt = -Infinity;
let allowed = true;

/** Whether spinning is allowed now (CPU pressure below PRESSURE_LIMIT, or not known). */
export function spinAllowed() {
  const now = performance.now();
  if (now - checkedAt >= RECHECK_MS) {
    checkedAt = now;
    allowed = pressure() < PRESSURE_LIMIT;
  }
  return allowed;
}

/** The 10 s average of CPU "some" pressure in %, or 0 when the system does not report it. */
function pressure() {
  try {
    const m = /^some avg10=([0-9.]+)/m.exec(readFileSync("/proc/pressure/cpu", "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
