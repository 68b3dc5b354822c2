import type { JournalRecord } from "@aexhq/brain-protocol";
import type { JournalStore } from "../journal/store.ts";
import { parseCallId } from "../journal/call-id.ts";
import type { PastCall } from "./dispatcher.ts";

/**
 * Finds a call the dispatcher no longer holds (finished and forgotten, or from before a restart) in
 * the journal: its tool.call_started is the record its id names. Undefined when no such call was
 * ever started; a host's frame for it is then `unknown_call`.
 */
export function pastCallsIn(store: JournalStore): (callId: string) => PastCall | undefined {
  return (callId) => {
    const id = parseCallId(callId);
    if (id === undefined) return undefined;
    let r: JournalRecord | undefined;
    try {
      r = store.read(id.sessionId, id.sequence - 1, id.sequence)[0];
    } catch {
      // A node of several reads only the sessions it holds: a frame for a call of a session another
      // node runs now is answered as for a finished call (`call_finished`), never dispatched here.
      return { placedOn: () => true };
    }
    if (r?.type !== "tool.call_started" || r.data.callId !== callId) return undefined;
    const placement = r.data.placement;
    return {
      placedOn: (hostId, binding) =>
        placement.kind === "host" ? placement.hostId === hostId : placement.kind === "managed" && binding?.sessionId === id.sessionId && binding.env === placement.env,
    };
  };
}
