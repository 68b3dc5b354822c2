// A test fixture (componentize-js): one raw WASI filesystem operation per invocation on the
// binding's "/workspace" preopen, so tests can try what a hostile guest would.
//
// Input {op, path, data?, target?}: op "read" (open + read the whole file), "write" (create or
// truncate, then write `data`), "mkdir", "symlink" (symlink-at target -> path), "readlink",
// "stat" (following symlinks), "list". Finishes ok with {op, value} or error with code
// "wasi:<error-code>" (the WASI error the guest saw).
import { finish } from "brain:tool/host@0.2.0";
import { getDirectories } from "wasi:filesystem/preopens@0.2.10";

const payload = (e) => (e && typeof e === "object" && "payload" in e ? e.payload : e);

function op(root, input) {
  const follow = { symlinkFollow: true };
  switch (input.op) {
    case "read": {
      const f = root.openAt(follow, input.path, {}, { read: true });
      const [bytes] = f.read(1n << 20n, 0n);
      return new TextDecoder().decode(bytes);
    }
    case "write": {
      const f = root.openAt(follow, input.path, { create: true, truncate: true }, { write: true });
      return Number(f.write(new TextEncoder().encode(input.data ?? ""), 0n));
    }
    case "mkdir":
      root.createDirectoryAt(input.path);
      return true;
    case "symlink":
      root.symlinkAt(input.target, input.path);
      return true;
    case "readlink":
      return root.readlinkAt(input.path);
    case "stat":
      return root.statAt(follow, input.path).type;
    case "list": {
      const dir = root.openAt(follow, input.path, { directory: true }, { read: true });
      const stream = dir.readDirectory();
      const names = [];
      for (let e = stream.readDirectoryEntry(); e !== undefined; e = stream.readDirectoryEntry()) names.push(e.name);
      return names.sort();
    }
    default:
      throw "unknown-op";
  }
}

export function run(invocation) {
  const input = JSON.parse(invocation.input);
  const preopen = getDirectories().find(([, name]) => name === "/workspace");
  if (preopen === undefined) return finish(JSON.stringify({ status: "error", error: { code: "no_workspace", message: "no preopen" } }), undefined);
  try {
    const value = op(preopen[0], input);
    finish(JSON.stringify({ status: "ok", value: { op: input.op, value } }), undefined);
  } catch (e) {
    const code = payload(e);
    finish(JSON.stringify({ status: "error", error: { code: `wasi:${typeof code === "string" ? code : String(code?.message ?? code)}`, message: `${input.op} ${input.path}` } }), undefined);
  }
}
