// Module hooks for test/helpers/no-mcp-sdk.mts: @modelcontextprotocol/sdk cannot be resolved, as in
// an install without the optional package (Node's own error for a missing package).
export async function resolve(specifier, context, next) {
  if (specifier === "@modelcontextprotocol/sdk" || specifier.startsWith("@modelcontextprotocol/sdk/")) {
    const e = new Error(`Cannot find package '@modelcontextprotocol/sdk' imported from ${context.parentURL}`);
    e.code = "ERR_MODULE_NOT_FOUND";
    throw e;
  }
  return next(specifier, context);
}
