import type { ErrorBody } from "@aexhq/brain-protocol";
import type { Platform, PackageUpload } from "../platform.ts";
import type { ExecutableReference } from "../tool.ts";
import { rawRequest } from "./http.ts";
import { protocolError, SdkError } from "../errors.ts";

/** Uploads built by this process, per platform and package@version (building one reads the installed package once). */
const uploads = new WeakMap<Platform, Map<string, Promise<PackageUpload>>>();
/** Servers that admitted a digest (HEAD 200 or PUT 200/201), per digest: later sessions there send nothing. */
const admitted = new Map<string, Set<string>>();

/** The upload of `executable`'s installed package, built once per package@version. */
function uploadOf(platform: Platform, executable: ExecutableReference): Promise<PackageUpload> {
  if (!platform.packageUpload) {
    return Promise.reject(
      new SdkError("unsupported", `tool from ${executable.package}: this platform cannot pack installed packages (Platform.packageUpload), so it cannot place packaged tools in a managed brainEnv; upload the package and place the tool over the HTTP API (docs/managed-hosts.md)`, { package: executable.package }),
    );
  }
  let byKey = uploads.get(platform);
  if (!byKey) uploads.set(platform, (byKey = new Map()));
  const key = `${executable.package}@${executable.version}`;
  let p = byKey.get(key);
  if (!p) {
    p = platform.packageUpload(executable);
    byKey.set(key, p);
    p.catch(() => byKey!.delete(key)); // a failure (not installed yet) is not remembered
  }
  return p;
}

/** Admissions under way, per digest and server: the tools of one package in one session share one HEAD/PUT. */
const admitting = new Map<string, Promise<void>>();

/**
 * Makes sure the server at `base` has admitted the installed package of `executable` and returns
 * its digest: HEAD first, PUT only when the server does not know it; cached per server and digest.
 */
export async function ensurePackage(platform: Platform, base: string, token: string, executable: ExecutableReference): Promise<string> {
  const upload = await uploadOf(platform, executable);
  if (admitted.get(upload.digest)?.has(base)) return upload.digest;
  const key = `${upload.digest} ${base}`;
  let p = admitting.get(key);
  if (!p) {
    p = admit(base, token, executable, upload).finally(() => admitting.delete(key));
    admitting.set(key, p);
  }
  await p;
  return upload.digest;
}

async function admit(base: string, token: string, executable: ExecutableReference, upload: PackageUpload): Promise<void> {
  const path = `/v1/packages/${upload.digest}`;
  const head = await rawRequest(base, token, "HEAD", path);
  if (head.status !== 200) {
    const put = await rawRequest(base, token, "PUT", path, upload.bytes, "application/gzip");
    if (put.status !== 200 && put.status !== 201) {
      const error = (put.body as ErrorBody | undefined)?.error ?? { code: "internal", message: `package upload answered HTTP ${put.status}` };
      throw protocolError({ ...error, message: `package ${executable.package}@${executable.version} was refused: ${error.message}` }, put.status);
    }
  }
  let set = admitted.get(upload.digest);
  if (!set) admitted.set(upload.digest, (set = new Set()));
  set.add(base);
}

/** Forgets that `base` admitted `digest` (it answered that it does not know the package). */
export function forgetPackage(base: string, digest: string): void {
  admitted.get(digest)?.delete(base);
}
