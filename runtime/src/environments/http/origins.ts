import type { ErrorInfo } from "@aexhq/brain-protocol";

/**
 * Why this server does not call `url` for tool `tool`, or undefined. The operator allows the
 * origins (`scheme://host[:port]`) Brain sends HTTP tool calls to (BRAIN_HTTP_TOOL_ORIGINS); both
 * HTTP placements (the Application tool extension and plain-JSON endpoints) are held to it, since
 * either makes the server send requests where a session creator points it.
 */
export function endpointProblem(tool: string, url: string, allowedOrigins: readonly string[]): ErrorInfo | undefined {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return { code: "invalid_request", message: `tool ${tool}: ${url} is not a URL` };
  }
  if (!allowedOrigins.includes(origin)) {
    return { code: "forbidden", message: `tool ${tool}: this server does not call HTTP tools at ${origin} (the operator allows origins with BRAIN_HTTP_TOOL_ORIGINS)` };
  }
  return undefined;
}
