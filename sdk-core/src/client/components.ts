import type { ErrorBody } from "@aexhq/brain-protocol";
import type { Component } from "../component.ts";
import type { Platform } from "../platform.ts";
import { sha256Hex } from "../digest.ts";
import { rawRequest } from "./http.ts";
import { protocolError } from "../errors.ts";

/**
 * Makes sure the runtime has admitted the component's bytes and returns their digest. Upload is by
 * digest: HEAD first, PUT only when the runtime does not know it, and a successful admission is
 * cached on the Component object per server, so later sessions on that server send nothing.
 */
export async function ensureAdmitted(platform: Platform, base: string, token: string, component: Component): Promise<string> {
  if (component.admittedDigest && component.admittedBy?.has(base)) return component.admittedDigest;
  const bytes = await platform.readFile(component.url);
  const digest = await sha256Hex(bytes);
  const path = `/v1/components/${digest}`;
  const head = await rawRequest(base, token, "HEAD", path);
  if (head.status !== 200) {
    const put = await rawRequest(base, token, "PUT", path, bytes, "application/wasm");
    if (put.status !== 200 && put.status !== 201) {
      const error = (put.body as ErrorBody | undefined)?.error ?? { code: "internal", message: `component upload answered HTTP ${put.status}` };
      throw protocolError({ ...error, message: `component ${component.url.href} was refused: ${error.message}` }, put.status);
    }
  }
  component.admittedDigest = digest;
  (component.admittedBy ??= new Set()).add(base);
  return digest;
}

/** Forgets that `base` admitted the component (it answered that it does not know the bytes). */
export function forgetAdmission(base: string, component: Component): void {
  component.admittedBy?.delete(base);
}
