import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import type { Platform, WebSocketLike } from "@aexhq/brain-core";
import { corkSendsPerTick } from "./tick-cork.ts";

/** Node's Platform: `ws` for the WebSocket (Node 20 has no global one), process.env, node:fs. */
export const nodePlatform: Platform = {
  connectWebSocket: (url) => corkSendsPerTick(new WebSocket(url, { maxPayload: 8 * 1024 * 1024 })) as unknown as WebSocketLike,
  env: (name) => process.env[name],
  readFile: async (url) => new Uint8Array(await readFile(url.protocol === "file:" ? fileURLToPath(url) : url.pathname)),
};
