import type { WebSocket } from "ws";

interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Returns a function to call before every `ws.send`: the first send of a tick corks the
 * connection's socket and a `process.nextTick` uncorks it, so every frame sent in that tick (the
 * `committed` answers and `invoke`s released by one group commit, typically dozens at load)
 * leaves in one `writev` instead of one syscall per frame. The tick ends before any I/O is
 * polled, so a lone frame is not delayed.
 */
export function tickCorker(ws: WebSocket): () => void {
  // ws keeps its net.Socket in `_socket` (not typed); without one there is nothing to cork.
  const socket = (ws as unknown as { _socket?: Corkable })._socket;
  if (socket === undefined || typeof socket.cork !== "function") return () => {};
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    socket.cork();
    process.nextTick(uncork);
  };
}
