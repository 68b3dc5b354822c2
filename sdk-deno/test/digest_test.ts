// The contract digest vectors (contract/digest-vectors.json) under Deno: the same module
// (@aexhq/brain-protocol's digest.ts, RFC 8785 through `canonicalize`, Web Crypto SHA-256) the
// runtime and the Node SDK use gives the contract's canonical forms and digests here too.
import { contractDigest, contractDigestText } from "@aexhq/brain-protocol";

interface Vector { name: string; contract: string; canonical: string; digest: string }
const { vectors } = JSON.parse(await Deno.readTextFile(new URL("../../contract/digest-vectors.json", import.meta.url))) as { vectors: Vector[] };

for (const v of vectors) {
  Deno.test(`digest vector ${v.name}: canonical form and digest under Deno`, async () => {
    const c = JSON.parse(v.contract);
    const text = contractDigestText(c);
    if (text !== v.canonical) throw new Error(`canonical form differs:\n${text}\n${v.canonical}`);
    const digest = await contractDigest(c);
    if (digest !== v.digest) throw new Error(`digest ${digest}, expected ${v.digest}`);
  });
}
