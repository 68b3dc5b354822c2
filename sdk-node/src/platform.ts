import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import type { Platform, WebSocketLike } from "@aexhq/brain-core";
import { corkSendsPerTick } from "./tick-cork.ts";
import { plainMessages } from "./plain-messages.ts";
import { packInstalled } from "./packages.ts";

/** Callbacks of open clients, run once when the process is about to exit on its own. */
const idleExit = new Set<() => void>();
let listening = false;

/** Node's Platform: `ws` for the WebSocket (Node 20 has no global one), process.env, node:fs. */
export const nodePlatform: Platform = {
  connectWebSocket: (url) => plainMessages(corkSendsPerTick(new WebSocket(url, { maxPayload: 8 * 1024 * 1024 }))) as unknown as WebSocketLike,
  env: (name) => process.env[name],
  readFile: async (url) => new Uint8Array(await readFile(url.protocol === "file:" ? fileURLToPath(url) : url.pathname)),
  // The installed package of a packaged tool, for a Brain-managed host (brainEnv({ runtime })).
  packageUpload: (executable) => packInstalled(executable),
  // ws keeps its net.Socket in `_socket` (not typed), set before "open".
  keepAlive: (ws, keep) => {
    const socket = (ws as unknown as { _socket?: { ref(): void; unref(): void } })._socket;
    if (socket) keep ? socket.ref() : socket.unref();
  },
  unrefTimer: (timer) => void (timer as { unref?: () => void }).unref?.(),
  // One "beforeExit" listener for every client (tests open many), not one each.
  onIdleExit: (fn) => {
    if (!listening) {
      listening = true;
      process.on("beforeExit", () => {
        for (const f of [...idleExit]) f();
      });
    }
    idleExit.add(fn);
    return () => void idleExit.delete(fn);
  },
};
