// Child process for the stdio peer: the echo tool on stdin/stdout.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { mcpEchoServer } from "./echo-server.ts";

await mcpEchoServer().connect(new StdioServerTransport());
