// wasi:clocks/wall-clock for the component worker, with its raw lowerings. Plain JavaScript: it
// runs inside the component worker (see worker.mjs).
//
// preview2-shim's wall clock carries Symbol.for("cabiLower") factories too (jco's "hybrid"
// bindings link them instead of the per-call glue), but they write the datetime at the wrong
// offsets: a guest reading the time (a componentize-js guest's Date.now()) corrupts its memory and
// traps sooner or later. These write datetime { seconds: u64 at +0, nanoseconds: u32 at +8 }.
const CABI_LOWER = Symbol.for("cabiLower");

const now = () => {
  const ms = Date.now();
  return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1_000_000 };
};
const resolution = () => ({ seconds: 0n, nanoseconds: 1_000_000 });
const store = (memory, retptr, { seconds, nanoseconds }) => {
  const view = new DataView(memory.buffer);
  view.setBigUint64(retptr, seconds, true);
  view.setUint32(retptr + 8, nanoseconds, true);
};
now[CABI_LOWER] = ({ memory }) => (retptr) => store(memory, retptr, now());
resolution[CABI_LOWER] = ({ memory }) => (retptr) => store(memory, retptr, resolution());

/** The `wasi:clocks/wall-clock` import object. */
export const wallClock = { now, resolution };
