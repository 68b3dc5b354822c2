/** BRAIN_MAX_MODEL_CALLS for one activation: the Agentloop's own model calls and its tools' ctx.model requests together. */
export class ModelCallBudget {
  used = 0;
  constructor(readonly max: number) {}
  /** Takes one call if one is left. */
  take(): boolean {
    if (this.used >= this.max) return false;
    this.used += 1;
    return true;
  }
}
