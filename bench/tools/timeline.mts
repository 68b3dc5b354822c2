// A wall-clock timeline of §1's sequential call (one session), from stamps at each socket write
// (before and after the writev), each socket read (when the bytes reach the stream), and each group
// commit: µs at p50 per part. Patches net.Socket in this process only; not a benchmark (the stamps cost).
//   J=memory|sqlite-normal H=raw|sdk N=20000 node --import tsx bench/tools/timeline.mts
import net from "node:net";
import { startFixture } from "../src/fixture.ts";
import type { HostKind, JournalKind } from "../src/fixture.ts";

const journal = (process.env.J ?? "memory") as JournalKind;
const host = (process.env.H ?? "sdk") as HostKind;
const n = Number(process.env.N ?? 20000);
const f = await startFixture({ journal, host, sessions: 1 });
const port = Number(new URL(f.url).port);
type Ev = [number, string];
let events: Ev[] = [];
let on = false;
const side = (s: net.Socket) => (s.localPort === port ? "R" : "H");
const proto = net.Socket.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
// _write and _writev both end in _writeGeneric.
for (const m of ["_writeGeneric"]) {
  const orig = proto[m]!;
  proto[m] = function (this: net.Socket, ...a: unknown[]) {
    if (!on) return orig.apply(this, a);
    const s = side(this);
    events.push([performance.now(), `${s}w0`]);
    const r = orig.apply(this, a);
    events.push([performance.now(), `${s}w1`]);
    return r;
  };
}
const push = proto.push!;
proto.push = function (this: net.Socket, ...a: unknown[]) {
  if (on && a[0] !== null) events.push([performance.now(), `${side(this)}r`]);
  return push.apply(this, a);
};
const store = f.internals.store as unknown as { commitBatch(r: unknown[]): void };
const commit = store.commitBatch.bind(store);
store.commitBatch = (r: unknown[]) => {
  if (on) events.push([performance.now(), `c${r.length}`]);
  commit(r);
  if (on) events.push([performance.now(), `C${r.length}`]);
};
for (let i = 0; i < 3000; i++) await f.call(0);
on = true;
for (let i = 0; i < n; i++) {
  events.push([performance.now(), "start"]);
  await f.call(0);
  events.push([performance.now(), "done"]);
}
on = false;
// One call: start, c1 C1 (intent), Rw0 Rw1 (committed + invoke), Hr, Hw0 Hw1 (finish), Rr, c2 C2, done.
const want = ["start", "c1", "C1", "Rw0", "Rw1", "Hr", "Hw0", "Hw1", "Rr", "c2", "C2", "done"];
const parts = new Map<string, number[]>();
let whole: number[] = [];
let i = 0;
let matched = 0;
while (i < events.length) {
  if (events[i]![1] !== "start") { i++; continue; }
  const seq = events.slice(i, i + want.length);
  if (seq.map((e) => e[1]).join() === want.join()) {
    matched++;
    for (let k = 1; k < want.length; k++) {
      const key = `${want[k - 1]}→${want[k]}`;
      let a = parts.get(key);
      if (!a) parts.set(key, (a = []));
      a.push((seq[k]![0] - seq[k - 1]![0]) * 1000);
    }
    whole.push((seq[want.length - 1]![0] - seq[0]![0]) * 1000);
    i += want.length;
  } else i++;
}
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const names: Record<string, string> = {
  "start→c1": "Dispatcher.start → the intent's commit begins",
  "c1→C1": "the intent's commit",
  "C1→Rw0": "intent committed → the runtime's writev (previous committed + invoke)",
  "Rw0→Rw1": "the runtime's writev (syscall, loopback delivery)",
  "Rw1→Hr": "→ the host's socket read",
  "Hr→Hw0": "host: frames read → its writev (finish)",
  "Hw0→Hw1": "the host's writev",
  "Hw1→Rr": "→ the runtime's socket read",
  "Rr→c2": "runtime: finish read → the result and finish commit begins",
  "c2→C2": "the result and finish commit",
  "C2→done": "committed → tool.finished observed (the bench's waiter)",
};
console.log(`${journal}/${host}: ${matched} of ${n} calls matched; whole call p50 ${p50(whole).toFixed(1)} µs (instrumented)`);
for (const [k, a] of parts) console.log(`  ${p50(a).toFixed(1).padStart(6)} µs  ${names[k] ?? k}`);
await f.close();
