import { LIMITS } from "@aexhq/brain-protocol";

/**
 * JSON nesting limits, checked on the text before anything recursive (JSON.stringify, validators,
 * deepFreeze, the journal) touches the value. Part of the runtime's floor beside errors.ts, so
 * every layer that reads outside JSON (HTTP bodies, host frames, component and model output) uses
 * the same check and the same limit, `LIMITS.maxJsonDepth` from the contract.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_ARRAY = 91;
const OPEN_OBJECT = 123;
const CLOSE_ARRAY = 93;
const CLOSE_OBJECT = 125;

/**
 * The deepest nesting of arrays and objects in a JSON text (the outermost is 1; a scalar is 0),
 * counted in one pass without parsing and without recursion; brackets inside strings do not count.
 * Stops as soon as the depth passes `stopAbove` and returns that depth. The text need not be valid
 * JSON: malformed text is counted as far as its brackets go (the parser refuses it afterwards).
 */
export function jsonTextDepth(text: string, stopAbove: number = Infinity): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: find the next quote not escaped by an odd run of backslashes.
      for (;;) {
        const close = text.indexOf('"', i + 1);
        if (close < 0) return max;
        let slashes = 0;
        for (let j = close - 1; j > i && text.charCodeAt(j) === BACKSLASH; j--) slashes++;
        i = close;
        if (slashes % 2 === 0) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth += 1;
      if (depth > max) {
        max = depth;
        if (max > stopAbove) return max;
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth -= 1;
    }
  }
  return max;
}

/**
 * The nesting depth of a parsed value (the outermost array or object is 1), walked with an explicit
 * stack; stops once it passes `stopAbove`. For values that did not come from text this runtime read.
 */
export function jsonValueDepth(value: unknown, stopAbove: number = Infinity): number {
  if (typeof value !== "object" || value === null) return 0;
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > max) {
      max = d;
      if (max > stopAbove) return max;
    }
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push([child, d + 1]);
  }
  return max;
}

/** The message for `what` (e.g. "request body") nested deeper than the limit; it names the limit. */
export function tooDeepMessage(what: string, limit: number = LIMITS.maxJsonDepth): string {
  return `${what} nests arrays/objects deeper than maxJsonDepth (${limit})`;
}

/** Details that go with a too-deep error: which limit, and its value. */
export function tooDeepDetails(limit: number = LIMITS.maxJsonDepth): { limit: "maxJsonDepth"; max: number } {
  return { limit: "maxJsonDepth", max: limit };
}

/** undefined when `text` nests at most `limit` deep, else the message naming the limit. */
export function checkJsonTextDepth(text: string, what: string, limit: number = LIMITS.maxJsonDepth): string | undefined {
  // Each level needs an opening bracket, so a text no longer than the limit cannot exceed it.
  if (text.length <= limit) return undefined;
  return jsonTextDepth(text, limit) > limit ? tooDeepMessage(what, limit) : undefined;
}
