// A local MCP server over stdio, as an MCP client (Claude Desktop, an IDE) would start it: it serves
// count_words, and every call is journaled by the Brain runtime at BRAIN_URL (key in BRAIN_TOKEN).
import { serveMcpStdio } from "@aexhq/brain/mcp";
import { countWords } from "./count-words.ts";

await serveMcpStdio({ tools: [countWords()] });
