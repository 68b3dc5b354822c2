// The machine's CPU pressure (Linux PSI, /proc/pressure/cpu), for sections whose subject changes
// its behaviour with it: component calls spin on their thread channel only while the 10 s average
// is below 30 % (runtime/src/environments/component/spin-policy.mjs), so a section that starts
// while the previous section's load is still in that average measures the tail of that load.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** The 10 s average of CPU "some" pressure in %, or undefined where the system does not report it. */
export function cpuPressure(): number | undefined {
  try {
    const m = /^some avg10=([0-9.]+)/m.exec(readFileSync("/proc/pressure/cpu", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits, at most `maxMs`, until the pressure's 10 s average is below `below` %, then one more
 * second (the spin policy reads it once a second). Answers the pressure when it stopped waiting and
 * how long it waited, for the section's notes.
 */
export async function settleCpu(below: number, maxMs: number): Promise<{ pressure: number | undefined; waitedMs: number }> {
  const start = performance.now();
  let p = cpuPressure();
  while (p !== undefined && p >= below && performance.now() - start < maxMs) {
    await sleep(500);
    p = cpuPressure();
  }
  if (p !== undefined && p < below) await sleep(1000);
  return { pressure: cpuPressure(), waitedMs: Math.round(performance.now() - start) };
}
