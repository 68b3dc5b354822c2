// One HTTP request of the fault tests (the crash loop, the verification runner): JSON in and out,
// with a timeout, and a network failure answered as status 0 (a node died or paused under it)
// instead of thrown, so a load driver can count it and go on.
export type TimedReply = { status: number; body: any; error?: string };

export async function timedRequest(url: string, token: string, method: string, path: string, body?: unknown, timeoutMs = 20_000): Promise<TimedReply> {
  try {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed };
  } catch (e) {
    return { status: 0, body: undefined, error: e instanceof Error ? `${e.message}${e.cause ? ` (${String((e.cause as Error).message ?? e.cause)})` : ""}` : String(e) };
  }
}
