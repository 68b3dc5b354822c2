import { createHash } from "node:crypto";
import { contractDigestText } from "@aexhq/brain-protocol";
import type { DigestInput, ErrorInfo, ToolContract } from "@aexhq/brain-protocol";

// The canonical form (RFC 8785) is implemented once, in @aexhq/brain-protocol (generated/digest.ts);
// the runtime only hashes it synchronously with node:crypto instead of Web Crypto's async digest.
export { canonicalJson } from "@aexhq/brain-protocol";

/** The contract digest: lowercase hex SHA-256 of the JCS form of {name, inputSchema, outputSchema, optionsSchema}, absent schemas as null. */
export function contractDigest(contract: DigestInput): string {
  return createHash("sha256").update(contractDigestText(contract)).digest("hex");
}

/**
 * The refusal of a `register` frame one of whose contracts carries a digest that is not the
 * digest of its schemas (`digest_mismatch`, naming the tool and both digests), or undefined.
 */
export function digestMismatch(tools: readonly ToolContract[]): ErrorInfo | undefined {
  for (const t of tools) {
    const expected = contractDigest(t);
    if (t.digest !== expected) {
      return {
        code: "digest_mismatch",
        message: `tool ${t.name}: digest ${t.digest} is not the SHA-256 of the RFC 8785 (JCS) form of {name, inputSchema, outputSchema, optionsSchema}, which is ${expected}; nothing in this register frame was registered`,
        details: { tool: t.name, digest: t.digest, expected },
      };
    }
  }
  return undefined;
}
