import type { JournalRecord, ModelMessage, ModelRequest, SessionCreatedRecord } from "@aexhq/brain-protocol";

const RUNNING_NOTE = JSON.stringify({ status: "running", note: "the tool returned without a result and continues in the background" });

/**
 * The conversation the Agentloop sends, built from committed records in sequence order: user
 * messages, the model's own replies, and tool observations (content when given, else the outcome
 * JSON). This is the rule contract/PROTOCOL.md gives readers of a `model.request` that names its
 * conversation by reference (`conversation.through`), so it must not change without the contract.
 * Messages are only ever appended, so the conversation through any earlier sequence is a prefix.
 */
export class Conversation {
  /** The last record added. */
  through = 0;
  readonly messages: ModelMessage[] = [];
  private modelCallId = new Map<string, string>();
  private hadResult = new Set<string>();
  /** Open nested calls (tool.call_started with `origin`): they and their records add nothing. */
  private nested = new Set<string>();

  add(r: JournalRecord): void {
    this.through = r.sequence;
    if (this.nested.size > 0 && (r.type === "tool.result" || r.type === "tool.returned" || r.type === "tool.finished") && this.nested.has(r.data.callId)) {
      if (r.type === "tool.finished") this.nested.delete(r.data.callId);
      return;
    }
    switch (r.type) {
      case "message.user":
        this.messages.push({ role: "user", content: r.data.text });
        break;
      case "model.response":
        if (r.data.origin === undefined && r.data.result) {
          const m: ModelMessage = { role: "assistant", content: r.data.result.text };
          if (r.data.result.toolCalls.length > 0) m.toolCalls = r.data.result.toolCalls;
          this.messages.push(m);
        }
        break;
      case "tool.call_started":
        if (r.data.origin !== undefined || r.data.modelCallId === undefined) this.nested.add(r.data.callId);
        else this.modelCallId.set(r.data.callId, r.data.modelCallId);
        break;
      case "tool.result":
        this.hadResult.add(r.data.callId);
        this.tool(r.data.callId, r.data.content ?? JSON.stringify(r.data.outcome));
        break;
      case "tool.returned":
        // Every assistant tool call gets an answer in the next request, even a background one.
        if (!this.hadResult.has(r.data.callId)) this.tool(r.data.callId, RUNNING_NOTE);
        break;
      case "tool.finished": {
        const had = this.hadResult.has(r.data.callId);
        if (r.data.status !== "ok" && !had) {
          const { callId: _c, ...rest } = r.data;
          this.tool(r.data.callId, JSON.stringify(rest));
        }
        // A finished call gets no further message: its bookkeeping can go.
        this.hadResult.delete(r.data.callId);
        this.modelCallId.delete(r.data.callId);
        break;
      }
    }
  }

  private tool(callId: string, content: string): void {
    this.messages.push({ role: "tool", toolCallId: this.modelCallId.get(callId) ?? callId, content });
  }

  /** The request with the first `count` messages (all by default); messages are copied, the conversation keeps growing. */
  request(created: SessionCreatedRecord["data"], count = this.messages.length): ModelRequest {
    const request: ModelRequest = { messages: this.messages.slice(0, count) };
    if (created.system !== undefined) request.system = created.system;
    if (created.tools.length > 0) {
      request.tools = created.tools.map((t) => ({ name: t.contract.name, description: t.contract.description, inputSchema: t.contract.inputSchema }));
    }
    return request;
  }
}

/** The request built from `records` (a session's records from sequence 1, in order). */
export function buildRequest(created: SessionCreatedRecord["data"], records: JournalRecord[]): ModelRequest {
  const c = new Conversation();
  for (const r of records) c.add(r);
  return c.request(created);
}

/**
 * Fills in the `request` of the Agentloop's model.request records, which name their conversation
 * by reference (`conversation.through`), for readers that asked for `expand=requests`. Records must
 * be given in order from sequence 1; the conversation through any sequence is a prefix of the
 * messages, so only the message count at each sequence is kept.
 */
export class RequestExpander {
  private conversation = new Conversation();
  /** Message count after each sequence (index = sequence). */
  private lengths: number[] = [0];

  constructor(private created: SessionCreatedRecord["data"]) {}

  /** The last sequence given. */
  get through(): number {
    return this.conversation.through;
  }

  next(r: JournalRecord): JournalRecord {
    this.conversation.add(r);
    this.lengths[r.sequence] = this.conversation.messages.length;
    if (r.type !== "model.request" || r.data.request !== undefined || r.data.conversation === undefined) return r;
    const count = this.lengths[r.data.conversation.through];
    return { ...r, data: { ...r.data, request: this.conversation.request(this.created, count) } };
  }
}
