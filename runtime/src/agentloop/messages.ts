import type { JournalRecord, ModelMessage, ModelRequest, SessionCreatedRecord } from "@aexhq/brain-protocol";

/**
 * The conversation the Agentloop sends, rebuilt from committed records: user messages, the
 * model's own replies, and tool observations (content when given, else the outcome JSON).
 */
export function buildRequest(created: SessionCreatedRecord["data"], records: JournalRecord[]): ModelRequest {
  const messages: ModelMessage[] = [];
  const modelCallId = new Map<string, string>();
  const hadResult = new Set<string>();
  for (const r of records) {
    switch (r.type) {
      case "message.user":
        messages.push({ role: "user", content: r.data.text });
        break;
      case "model.response":
        if (r.data.origin === undefined && r.data.result) {
          const m: ModelMessage = { role: "assistant", content: r.data.result.text };
          if (r.data.result.toolCalls.length > 0) m.toolCalls = r.data.result.toolCalls;
          messages.push(m);
        }
        break;
      case "tool.call_started":
        modelCallId.set(r.data.callId, r.data.modelCallId);
        break;
      case "tool.result":
        hadResult.add(r.data.callId);
        messages.push({ role: "tool", toolCallId: modelCallId.get(r.data.callId) ?? r.data.callId, content: r.data.content ?? JSON.stringify(r.data.outcome) });
        break;
      case "tool.returned":
        // Every assistant tool call gets an answer in the next request, even a background one.
        if (!hadResult.has(r.data.callId)) {
          messages.push({ role: "tool", toolCallId: modelCallId.get(r.data.callId) ?? r.data.callId, content: JSON.stringify({ status: "running", note: "the tool returned without a result and continues in the background" }) });
        }
        break;
      case "tool.finished":
        if (r.data.status !== "ok" && !hadResult.has(r.data.callId)) {
          const { callId: _c, ...rest } = r.data;
          messages.push({ role: "tool", toolCallId: modelCallId.get(r.data.callId) ?? r.data.callId, content: JSON.stringify(rest) });
        }
        break;
    }
  }
  const request: ModelRequest = { messages };
  if (created.system !== undefined) request.system = created.system;
  if (created.tools.length > 0) {
    request.tools = created.tools.map((t) => ({ name: t.contract.name, description: t.contract.description, inputSchema: t.contract.inputSchema }));
  }
  return request;
}
