import type { InvokeFrame } from "@aexhq/brain-protocol";

/** The length of a version-00 W3C traceparent, `00-<32 hex>-<16 hex>-<2 hex>`. */
const TRACEPARENT_LENGTH = 55;

/**
 * The text of `invoke` frames on one host connection: what `JSON.stringify(frame)` writes for a
 * frame built by `invokeFrame` (its keys in that order), without walking the frame. The parts that
 * repeat call after call (the session id, the tool's name and digest) are kept as text from the
 * previous frame; the call's own parts (its id, sequence, input, options, deadline, trace) are
 * serialized each time. Serializing the whole frame was ~0.9 µs of a sequential call (bench §1),
 * most of it the digest and the frame's shape, the same every time.
 */
export class InvokeText {
  private sessionId: string | undefined;
  private sessionJson = "";
  private tool: string | undefined;
  private digest: string | undefined;
  private toolJson = "";
  private options: unknown;
  private optionsJson = "";

  of(frame: InvokeFrame): string {
    // Not JSON values (never so from invokeFrame): JSON.stringify would leave the key out.
    if (frame.input === undefined || frame.options === undefined || typeof frame.digest !== "string") return JSON.stringify(frame);
    if (frame.sessionId !== this.sessionId) {
      this.sessionId = frame.sessionId;
      this.sessionJson = JSON.stringify(frame.sessionId);
    }
    if (frame.tool !== this.tool || frame.digest !== this.digest) {
      this.tool = frame.tool;
      this.digest = frame.digest;
      this.toolJson = `,"tool":${JSON.stringify(frame.tool)},"digest":${JSON.stringify(frame.digest)}`;
    }
    // The placed tool's options are one frozen object for all its calls: written once while they last.
    if (frame.options !== this.options || !Object.isFrozen(frame.options)) {
      this.options = frame.options;
      this.optionsJson = JSON.stringify(frame.options);
    }
    // Written as JSON.stringify writes them: a finite number's own text (what a template gives),
    // null, and every string escaped.
    const text = `{"type":"invoke","callId":${JSON.stringify(frame.callId)},"sessionId":${this.sessionJson},"sequence":${numberJson(frame.sequence)}${this.toolJson},"input":${JSON.stringify(frame.input)},"options":${this.optionsJson},"deadlineAt":${frame.deadlineAt === null ? "null" : numberJson(frame.deadlineAt)}`;
    const tp = frame.traceparent;
    if (tp === undefined) return `${text}}`;
    // A traceparent of the contract's pattern (55 characters, hex digits and dashes: all that
    // Telemetry.traceparent makes) needs no escaping, and JSON.stringify would first flatten the
    // concatenation it is and then copy it again, ~150 bytes of garbage a traced call. Any other
    // length goes through JSON.stringify (its length is known without reading the characters).
    return tp.length === TRACEPARENT_LENGTH ? `${text},"traceparent":"${tp}"}` : `${text},"traceparent":${JSON.stringify(tp)}}`;
  }
}

/** JSON.stringify's text of a number, without its call for a finite one. */
function numberJson(n: number): string {
  return Number.isFinite(n) ? `${n}` : JSON.stringify(n);
}
