import type WebSocket from "ws";

interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Wraps `ws.send` so that every frame sent in one tick leaves in one `writev`: the first send of a
 * tick corks the socket and a `process.nextTick` uncorks it. A host answering many calls at once
 * (one `finish` per `invoke` released by a group commit) otherwise pays one syscall per frame; the
 * tick ends before I/O is polled, so a lone frame is not delayed. The runtime does the same on its
 * side (runtime/src/hosts/tick-cork.ts; the layering keeps the two packages apart).
 */
export function corkSendsPerTick(ws: WebSocket): WebSocket {
  const send = ws.send.bind(ws) as (data: string) => void;
  let corked: Corkable | undefined;
  const uncork = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  (ws as unknown as { send: (data: string) => void }).send = (data: string) => {
    // ws keeps its net.Socket in `_socket` (not typed); before open there is nothing to cork.
    const socket = (ws as unknown as { _socket?: Corkable })._socket;
    if (corked === undefined && socket !== undefined && typeof socket.cork === "function") {
      corked = socket;
      socket.cork();
      process.nextTick(uncork);
    }
    send(data);
  };
  return ws;
}
