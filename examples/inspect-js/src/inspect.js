// The `inspect` tool as a brain:tool@0.2.0 component, in JavaScript (componentize-js).
//
// Input {path}, options {depth}. It reads the granted workspace through the WASI preopen named
// "/workspace" (present only when the binding has a `filesystem.workspace` grant): a directory
// is listed down to `depth` levels, a file reports its size. `writable` says whether a file can be
// created in the workspace (it probes with a create + unlink, so nothing is left behind); under a
// read grant the create fails inside the guest.
import { emit, finish, telemetry } from "brain:tool/host@0.2.0";
import { getDirectories } from "wasi:filesystem/preopens@0.2.10";

const PREOPEN = "/workspace";

/** Errors from WIT `result` imports arrive as thrown values carrying the error payload. */
function payload(e) {
  return e && typeof e === "object" && "payload" in e ? e.payload : e;
}

function fail(code, message) {
  finish(JSON.stringify({ status: "error", error: { code, message } }), undefined);
}

/** The path relative to the preopen; absolute paths must live under /workspace. */
function relative(path) {
  let p = path;
  if (p === PREOPEN || p === PREOPEN + "/") return ".";
  if (p.startsWith(PREOPEN + "/")) p = p.slice(PREOPEN.length + 1);
  else if (p.startsWith("/")) return undefined;
  p = p.replace(/^(\.\/)+/, "");
  return p === "" ? "." : p;
}

function typeName(t) {
  return t === "regular-file" ? "file" : t;
}

function list(dir, depth) {
  const out = [];
  const stream = dir.readDirectory();
  for (;;) {
    const entry = stream.readDirectoryEntry();
    if (entry === undefined) break;
    const item = { name: entry.name, type: typeName(entry.type) };
    if (entry.type === "regular-file") item.size = Number(dir.statAt({}, entry.name).size);
    if (entry.type === "directory" && depth > 1) {
      const child = dir.openAt({}, entry.name, { directory: true }, { read: true });
      item.entries = list(child, depth - 1);
    }
    out.push(item);
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out;
}

function writable(root) {
  const probe = `.brain-inspect-probe-${Date.now().toString(36)}`;
  try {
    root.openAt({}, probe, { create: true, exclusive: true }, { write: true });
  } catch {
    return false;
  }
  try {
    root.unlinkFileAt(probe);
  } catch {
    // The probe is left behind only if the workspace changed under us; report what we saw.
  }
  return true;
}

export function run(invocation) {
  const input = JSON.parse(invocation.input);
  const options = JSON.parse(invocation.options);
  const depth = options.depth ?? 1;
  telemetry("debug", `inspect-js: ${input.path} depth ${depth}`);

  const preopen = getDirectories().find(([, name]) => name === PREOPEN);
  if (preopen === undefined) return fail("no_workspace", "this binding has no filesystem grant");
  const root = preopen[0];

  const rel = relative(input.path);
  if (rel === undefined || rel.split("/").includes("..")) {
    return fail("outside_workspace", `${input.path} is outside ${PREOPEN}`);
  }

  const eventSequence = Number(emit("inspect_started", JSON.stringify({ path: input.path })));

  let stat;
  try {
    stat = root.statAt({}, rel);
  } catch (e) {
    return fail("not_found", `${input.path}: ${payload(e)}`);
  }
  const value = { path: input.path, type: typeName(stat.type), writable: writable(root), eventSequence };
  if (stat.type === "regular-file") value.size = Number(stat.size);
  if (stat.type === "directory") {
    // Opened even for "." : preview2-shim cannot list a preopen descriptor itself.
    const dir = root.openAt({}, rel, { directory: true }, { read: true });
    value.entries = list(dir, depth);
  }
  finish(JSON.stringify({ status: "ok", value }), undefined);
}
