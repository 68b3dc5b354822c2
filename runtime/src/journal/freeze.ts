/**
 * Deep-freezes a committed record in place, so nobody holding it (readers, the Agentloop, a caller
 * that built its data) can change history, without copying it. Already-frozen parts (data shared
 * with an earlier record, e.g. a model request quoting earlier tool calls) are not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) freezeObject(value);
  return value;
}

/** Every record is frozen on every commit: scalars are skipped here, without a call each. */
function freezeObject(value: object): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === "object" && v !== null) freezeObject(v);
    }
  } else {
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (typeof v === "object" && v !== null) freezeObject(v);
    }
  }
}
