/**
 * Deep-freezes a committed record in place, so nobody holding it (readers, the Agentloop, a caller
 * that built its data) can change history, without copying it. Already-frozen parts (data shared
 * with an earlier record, e.g. a model request quoting earlier tool calls) are not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const v of value) deepFreeze(v);
  } else {
    for (const k in value) deepFreeze((value as Record<string, unknown>)[k]);
  }
  return value;
}
