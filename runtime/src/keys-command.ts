import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ApiKey, CreatedApiKey, ErrorBody, KeyLimits, KeyList, UpdateKeyRequest } from "@aexhq/brain-protocol";
import { LIMIT_NAMES } from "./limits/key-limits.ts";

export const KEYS_USAGE = `usage: brain keys create <name> | brain keys list | brain keys revoke <id>
       brain keys limits <id> [<limit>=<n>|none ...]

Talks to a running server: BRAIN_URL (else http://BRAIN_HOST:BRAIN_PORT, 127.0.0.1:3210) with the
operator token (BRAIN_TOKEN, else <BRAIN_DATA_DIR>/operator.token).

brain keys limits sets a key's own limits (none: back to the server-wide default, BRAIN_KEY_MAX_*)
and prints what applies; without assignments it only prints. Limits: ${LIMIT_NAMES.join(", ")}.
Example: brain keys limits 0123456789ab sessions=20 requestsPerSecond=50 streams=none`;

/** `sessions=20 streams=none` as a PATCH body's limits; undefined when an argument is not one. */
function limitAssignments(args: string[]): UpdateKeyRequest["limits"] | undefined {
  const limits: Record<string, number | null> = {};
  for (const arg of args) {
    const m = /^([A-Za-z]+)=(none|\d+)$/.exec(arg);
    if (!m || !(LIMIT_NAMES as string[]).includes(m[1]!)) return undefined;
    limits[m[1]!] = m[2] === "none" ? null : Number(m[2]);
  }
  return limits as UpdateKeyRequest["limits"];
}

/** `sessions=20 streams=5`, or "unlimited". */
function limitsText(limits: KeyLimits | undefined): string {
  const parts = LIMIT_NAMES.filter((n) => limits?.[n] !== undefined).map((n) => `${n}=${limits![n]}`);
  return parts.length === 0 ? "unlimited" : parts.join(" ");
}

/** `brain keys …`: the operator's API keys, through the running server's operator-only routes. */
export async function keysCommand(args: string[], env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const [verb, arg] = args;
  const wants = verb === "create" || verb === "revoke" ? 2 : verb === "list" ? 1 : verb === "limits" ? Math.max(2, args.length) : -1;
  const assignments = verb === "limits" ? limitAssignments(args.slice(2)) : undefined;
  if (wants < 0 || args.length !== wants || (arg !== undefined && arg.trim() === "") || (verb === "limits" && assignments === undefined)) {
    console.error(KEYS_USAGE);
    return 2;
  }
  const url = (env.BRAIN_URL ?? `http://${env.BRAIN_HOST ?? "127.0.0.1"}:${env.BRAIN_PORT ?? "3210"}`).replace(/\/+$/, "");
  const token = env.BRAIN_TOKEN ?? readTokenFile(resolve(env.BRAIN_DATA_DIR ?? "./.brain"));
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      throw new Error(`could not reach the Brain server at ${url} (${(e as Error).message}); is it running? (BRAIN_URL)`, { cause: e });
    }
    const text = await res.text();
    if (!res.ok) {
      const error = (JSON.parse(text) as ErrorBody).error;
      throw new Error(`${res.status} ${error.code}: ${error.message}`);
    }
    return JSON.parse(text) as T;
  };
  if (verb === "create") {
    const k = await call<CreatedApiKey>("POST", "/v1/keys", { name: arg });
    out(k.key);
    console.error(`created key ${k.id} (${k.name}); the line above is its bearer token, shown once: give it to the application as BRAIN_TOKEN`);
  } else if (verb === "list") {
    const { keys } = await call<KeyList>("GET", "/v1/keys");
    // Limits follow the name only when some apply, so the line of an unlimited key reads as before.
    for (const k of keys) out(`${k.id}  ${k.createdAt}  ${k.revokedAt ? `revoked ${k.revokedAt}` : "active"}  ${k.name}${limitsText(k.effectiveLimits) === "unlimited" ? "" : `  limits: ${limitsText(k.effectiveLimits)}`}`);
  } else if (verb === "limits") {
    const id = encodeURIComponent(arg!);
    const k = Object.keys(assignments!).length > 0 ? await call<ApiKey>("PATCH", `/v1/keys/${id}`, { limits: assignments }) : (await call<KeyList>("GET", "/v1/keys")).keys.find((key) => key.id === arg);
    if (k === undefined) throw new Error(`404 not_found: no key ${arg}`);
    out(`${k.id} (${k.name}): ${limitsText(k.effectiveLimits)}`);
    out(`  set on the key: ${limitsText(k.limits) === "unlimited" ? "none (the server-wide defaults apply)" : limitsText(k.limits)}`);
  } else {
    const k = await call<ApiKey>("DELETE", `/v1/keys/${encodeURIComponent(arg!)}`);
    out(`revoked ${k.id} (${k.name}) at ${k.revokedAt}`);
  }
  return 0;
}

function readTokenFile(dataDir: string): string {
  const file = join(dataDir, "operator.token");
  if (!existsSync(file)) throw new Error(`no operator token: set BRAIN_TOKEN, or BRAIN_DATA_DIR to the server's data folder (${file} does not exist)`);
  return readFileSync(file, "utf8").trim();
}
