// @ts-check
// Reads of the ordinary HTTP API with the login cookie (the /ui bridge fills in the credential).

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
export async function api(path) {
  const res = await fetch(path, { headers: { accept: "application/json" }, credentials: "same-origin" });
  if (res.status === 401) {
    // The login expired (or its key was deleted): the page itself shows the login form.
    location.reload();
    throw new ApiError(401, "unauthorized", "signed out");
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, body?.error?.code ?? "error", body?.error?.message ?? res.statusText);
  return body;
}


/** Whether the login is the operator's (the server says so in the page's HTML): hosts and keys pages, owners' names. */
export const OPERATOR = document.querySelector('meta[name="brain-principal"]')?.getAttribute("content") === "operator";

/** @type {Promise<Map<string, string>> | undefined} */
let names;
/**
 * API keys' names by id (GET /v1/keys, the operator's), read once per page load; empty for an API
 * key's login, which may not list keys (and sees only its own sessions anyway).
 * @returns {Promise<Map<string, string>>}
 */
export function keyNames() {
  names ??= OPERATOR
    ? api("/v1/keys").then(
        (r) => new Map(r.keys.map((/** @type {{ id: string, name: string }} */ k) => [k.id, k.name])),
        () => new Map(), // the rows then show the owner's id instead of its name
      )
    : Promise.resolve(new Map());
  return names;
}

/** Forgets the names read (the keys page read them afresh). @param {Map<string, string>} fresh */
export function knownKeyNames(fresh) {
  names = Promise.resolve(fresh);
}
