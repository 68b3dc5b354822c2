import type { ModelRequest } from "@aexhq/brain-protocol";
import type { SessionState } from "../journal/session.ts";
import { Conversation } from "./messages.ts";

/**
 * The Agentloop's conversations for providers that read them (real models; the scripted model
 * never does). Bounded by count, least recently used out: a conversation that fell out is rebuilt
 * from the session's own records when its session next calls the model, and one in the cache is
 * extended by the records committed since.
 */
export class ConversationCache {
  private entries = new Map<string, Conversation>();

  constructor(readonly max = 32) {}

  /** The request built from the session's records 1..`through`. */
  async request(session: SessionState, through: number): Promise<ModelRequest> {
    let c = this.entries.get(session.id);
    this.entries.delete(session.id);
    if (c === undefined || c.through > through) c = new Conversation();
    const records = await session.after(c.through, through);
    // Taken out while the store was read, each reader extends its own: the last one back is kept.
    for (const r of records) if (r.sequence > c.through) c.add(r);
    this.entries.set(session.id, c);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return c.request(session.created);
  }

  drop(sessionId: string): void {
    this.entries.delete(sessionId);
  }

  get size(): number {
    return this.entries.size;
  }
}
