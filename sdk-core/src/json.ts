/** Why a value is not JSON, or undefined when it is plain JSON (the outcome rule "the final value must be JSON"). */
export function notJsonReason(value: unknown, path = "", seen = new Set<object>()): string | undefined {
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
        const reason = notJsonReason(obj[i], `${path}/${i}`, seen);
        if (reason) return reason;
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) return `${at} is an instance of ${obj.constructor?.name ?? "a class"}, not a plain object`;
    for (const key of Object.keys(obj)) {
      const reason = notJsonReason((obj as Record<string, unknown>)[key], `${path}/${key}`, seen);
      if (reason) return reason;
    }
    return undefined;
  } finally {
    seen.delete(obj);
  }
}
