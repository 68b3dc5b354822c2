// The contract digest and the canonical form (RFC 8785) live in @aexhq/brain-protocol, shared with
// the runtime; see contract/PROTOCOL.md "Contract digests".
export { contractDigest, sha256Hex } from "@aexhq/brain-protocol";
