// MCP both ways (`npm run example:mcp`): serve.ts serves Brain tools to MCP clients (over /v1/mcp
// and over stdio), then client.ts places an MCP server's tools in a Brain session. Each runs its
// own embedded runtime; a failure of either fails the example.
await import("./serve.ts");
const served = process.exitCode;
await import("./client.ts");
if (served) process.exitCode = served;
export {};
