import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ApiKey, CreatedApiKey, ErrorBody, KeyList } from "@aexhq/brain-protocol";

export const KEYS_USAGE = `usage: brain keys create <name> | brain keys list | brain keys revoke <id>

Talks to a running server: BRAIN_URL (else http://BRAIN_HOST:BRAIN_PORT, 127.0.0.1:3210) with the
operator token (BRAIN_TOKEN, else <BRAIN_DATA_DIR>/operator.token).`;

/** `brain keys …`: the operator's API keys, through the running server's operator-only routes. */
export async function keysCommand(args: string[], env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const [verb, arg] = args;
  const wants = verb === "create" || verb === "revoke" ? 2 : verb === "list" ? 1 : -1;
  if (wants < 0 || args.length !== wants || (arg !== undefined && arg.trim() === "")) {
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
    for (const k of keys) out(`${k.id}  ${k.createdAt}  ${k.revokedAt ? `revoked ${k.revokedAt}` : "active"}  ${k.name}`);
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
