// A full collection on demand, for figures that must not carry an earlier step's garbage: the
// process's own gc when started with --expose-gc, else the flag set at run time.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export const gc: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  })();
