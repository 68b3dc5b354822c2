import type { JournalRecord } from "@aexhq/brain-protocol";
import type { RecordStore } from "../journal/store.ts";
import { parseCallId } from "../journal/call-id.ts";
import type { PastCallLookup } from "./dispatcher.ts";

/**
 * Finds a call the dispatcher no longer holds (finished and forgotten, or from before a restart) in
 * the journal: its tool.call_started is the record its id names. Undefined when no such call was
 * ever started; a host's frame for it is then `unknown_call`.
 */
export function pastCallsIn(store: RecordStore): PastCallLookup {
  return async (callId) => {
    const id = parseCallId(callId);
    if (id === undefined) return undefined;
    const r: JournalRecord | undefined = (await store.read(id.sessionId, id.sequence - 1, id.sequence))[0];
    if (r?.type !== "tool.call_started" || r.data.callId !== callId) return undefined;
    const placement = r.data.placement;
    return {
      placedOn: (hostId, binding) =>
        placement.kind === "host" ? placement.hostId === hostId : placement.kind === "managed" && binding?.sessionId === id.sessionId && binding.env === placement.env,
    };
  };
}
