// Whether this machine can build the Rust components (examples/inspect-rust, the conformance
// catalogue in conformance/component-rust): Debian's rustc (BRAIN_RUSTC, default /usr/bin/rustc)
// with the wasm32-unknown-unknown std (libstd-rust-dev-wasm32). Suites whose tests need a Rust-built
// component ask rustUnavailable() once and register those tests as skipped (uvu test.skip, Deno
// ignore) when it returns a reason, and print the reason with skipNotice() so that the root
// `npm test` can say in its closing line how many were skipped and why. Under CI=true the root
// runner counts every skip as a failure: .ci/run installs the toolchain, so CI runs them all.
//
// BRAIN_RUSTC=/nonexistent npm test   # what a machine without rustc sees
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

export const RUSTC = process.env.BRAIN_RUSTC ?? "/usr/bin/rustc";

/** The prefix of the line skipNotice prints; scripts/test.mjs collects these lines. */
export const SKIP_MARK = "brain-test-skip:";

let cached;
/** Undefined when the Rust components can be built here; otherwise why not (one line). */
export function rustUnavailable() {
  if (cached !== undefined) return cached || undefined;
  cached = "";
  if (!existsSync(RUSTC)) {
    cached = `no rustc at ${RUSTC}; install Debian's rustc, libstd-rust-dev-wasm32 and lld-14 (.ci/run does)`;
  } else {
    const r = spawnSync(RUSTC, ["--print", "sysroot"], { encoding: "utf8" });
    const sysroot = r.status === 0 ? r.stdout.trim() : undefined;
    if (!sysroot) cached = `${RUSTC} --print sysroot failed; install Debian's rustc (.ci/run does)`;
    else if (!existsSync(join(sysroot, "lib", "rustlib", "wasm32-unknown-unknown"))) {
      cached = `${RUSTC} has no wasm32-unknown-unknown std; install Debian's libstd-rust-dev-wasm32 (.ci/run does)`;
    }
  }
  return cached || undefined;
}

/** Prints the line the root runner reads: `brain-test-skip: <count> Rust-built test(s) in <where>: <reason>`. */
export function skipNotice(count, where, reason) {
  console.log(`${SKIP_MARK} ${count} Rust-built test${count === 1 ? "" : "s"} in ${where}: ${reason}`);
}
