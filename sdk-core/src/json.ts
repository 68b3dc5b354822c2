/** Why a value is not JSON, or undefined when it is plain JSON (the outcome rule "the final value must be JSON"). */
export function notJsonReason(value: unknown): string | undefined {
  // Every result and emission is checked: the common case, plain JSON, is answered without building
  // a path string per key; the reason (with its path) is worked out only for a value that fails.
  return isPlainJson(value, 0) ? undefined : reasonAt(value, "", new Set<object>());
}

/**
 * Plain JSON, checked without allocating. Past a depth of 64 it gives up (false) and lets `reasonAt`
 * decide, which also tells a cycle from a deep value.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > 64) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isPlainJson(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function reasonAt(value: unknown, path: string, seen: Set<object>): string | undefined {
  const at = path || "/";
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${at} is ${value}, which is not a finite number`;
    case "undefined":
      return `${at} is undefined`;
    case "bigint":
      return `${at} is a BigInt`;
    case "function":
    case "symbol":
      return `${at} is a ${typeof value}`;
  }
  if (value === null) return undefined;
  const obj = value as object;
  if (seen.has(obj)) return `${at} is a cycle`;
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        if (!(i in obj)) return `${path}/${i} is a hole in an array`;
        const reason = reasonAt(obj[i], `${path}/${i}`, seen);
        if (reason) return reason;
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) return `${at} is an instance of ${obj.constructor?.name ?? "a class"}, not a plain object`;
    for (const key of Object.keys(obj)) {
      const reason = reasonAt((obj as Record<string, unknown>)[key], `${path}/${key}`, seen);
      if (reason) return reason;
    }
    return undefined;
  } finally {
    seen.delete(obj);
  }
}
