import { RegisterFrame } from "@aexhq/brain-protocol";
import { SdkError } from "../errors.ts";

// The contract's own limits (RegisterFrame), so the SDK and the runtime never disagree on them.
const SECRET_MIN = RegisterFrame.properties.secret.minLength ?? 16;
const ID_PATTERN = new RegExp(RegisterFrame.properties.hostId.pattern ?? "^[a-zA-Z0-9._:-]{1,128}$");

/**
 * A host identity given by the application, checked at `new Brain` rather than at the first
 * registration (where a short secret surfaced as `invalid RegisterFrame: /secret …` from
 * `sessions.create`). `from` names where it came from, so the error says what to fix.
 */
export function checkedHost(host: { id: string; secret: string }, from: "host" | "BRAIN_HOST_ID/BRAIN_HOST_SECRET"): { id: string; secret: string } {
  if (typeof host !== "object" || host === null) throw new SdkError("invalid_host", `${from}: give { id, secret }`);
  const { id, secret } = host;
  if (typeof id !== "string" || !ID_PATTERN.test(id)) {
    throw new SdkError("invalid_host", `${from}: the host id ${JSON.stringify(id)} must be 1 to 128 letters, digits, '.', '_', ':' or '-'`, { field: "id" });
  }
  if (typeof secret !== "string" || secret.length < SECRET_MIN) {
    const got = typeof secret === "string" ? `${secret.length} character${secret.length === 1 ? "" : "s"}` : typeof secret;
    throw new SdkError("invalid_host", `${from}: the host secret must be at least ${SECRET_MIN} characters (got ${got}); it proves this is the same host when it reconnects or reattaches, so keep it with the id`, { field: "secret", minLength: SECRET_MIN });
  }
  return { id, secret };
}
