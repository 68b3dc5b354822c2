import type WebSocket from "ws";

/**
 * Makes `ws.onmessage` a plain "message" listener. For `onmessage`, ws emulates the WHATWG
 * EventTarget with a MessageEvent built for every message (~700 bytes a host call, with its
 * `committed` answer), and the host connection reads only `data`. The handler still gets an object
 * with `data` (the text, or a binary message's Buffer), as WebSocketLike says; null stops delivery.
 */
export function plainMessages(ws: WebSocket): WebSocket {
  let handler: ((ev: { data: unknown }) => void) | null = null;
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (handler !== null) handler({ data: isBinary ? data : data.toString() });
  });
  Object.defineProperty(ws, "onmessage", {
    get: () => handler,
    set: (h: unknown) => void (handler = typeof h === "function" ? (h as (ev: { data: unknown }) => void) : null),
    configurable: true,
    enumerable: true,
  });
  return ws;
}
