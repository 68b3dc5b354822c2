import type { Logger } from "../../logger.ts";

/** One stream's output of one call, as the worker kept it (guest-output.mjs): its tail and byte count. */
export interface StreamTail {
  text: string;
  bytes: number;
}

/** What a guest printed during one call. */
export interface GuestOutput {
  stdout?: StreamTail;
  stderr?: StreamTail;
}

/**
 * How much of stderr a trapped call's `tool_error` message carries. The message is journaled and
 * shown in /ui (redacted by the journal like every record); the model sees only the outcome, so
 * this stays short: the last lines of a traceback or a panic message.
 */
export const TRAP_STDERR_CHARS = 2000;

/** `message` (a trap) with the tail of what the guest wrote to stderr before it, when it wrote any. */
export function withStderrTail(message: string, output: GuestOutput | undefined): string {
  const err = output?.stderr;
  const text = err?.text.trimEnd();
  if (err === undefined || !text) return message;
  const tail = text.length > TRAP_STDERR_CHARS ? text.slice(text.length - TRAP_STDERR_CHARS) : text;
  const cut = tail.length < text.length || err.bytes > Buffer.byteLength(err.text);
  return `${message}\nstderr${cut ? ` (last ${tail.length} characters of ${err.bytes} bytes)` : ""}:\n${tail}`;
}

/**
 * The guest's output goes to the server's log, one entry per stream per call (stderr at warn,
 * stdout at info), never to the journal. The logger given to Environments redacts the server's secrets.
 */
export function logGuestOutput(logger: Logger | undefined, output: GuestOutput | undefined, fields: Record<string, unknown>): void {
  if (logger === undefined || output === undefined) return;
  if (output.stderr) logger.warn(`component stderr: ${output.stderr.text.trimEnd()}`, { ...fields, bytes: output.stderr.bytes });
  if (output.stdout) logger.info(`component stdout: ${output.stdout.text.trimEnd()}`, { ...fields, bytes: output.stdout.bytes });
}
