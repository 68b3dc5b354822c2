import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { MetricValueWithName } from "prom-client";

/**
 * What the runtime counts, in Prometheus's model (prom-client): served at `GET /metrics`
 * (telemetry/metrics-route.ts) and listed in docs/observability.md. One registry per runtime, not
 * prom-client's global one, so several runtimes in one process (an embedding application, the
 * tests) each count their own. Best-effort diagnostics: nothing here enters the journal.
 *
 * The gauges are read when scraped (collect), from what the runtime holds anyway, so keeping them
 * costs nothing between scrapes and they cannot drift from the state they describe.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly toolCallSeconds: CallPathHistogram;
  private readonly commitSeconds: CallPathHistogram;
  private readonly commitRecords: CallPathHistogram;
  private readonly commitFailures: Counter<"store">;
  private readonly modelCalls: Counter<"provider" | "outcome">;
  private readonly modelTokens: Counter<"provider" | "kind">;
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpSeconds: Histogram<"method" | "route">;
  private readonly leaseRenewals: Counter<"outcome">;
  private readonly takeovers: Counter<never>;

  constructor(gauges: MetricGauges) {
    const registers = [this.registry];
    this.toolCallSeconds = new CallPathHistogram(
      "brain_tool_call_duration_seconds",
      "From tool.call_started admitted to tool.finished committed, by placement kind and terminal status.",
      ["placement", "status"],
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      this.registry,
    );
    // The calls counter is the duration histogram's count, served under its own name.
    const toolCallSeconds = this.toolCallSeconds;
    this.registry.registerMetric({
      name: "brain_tool_calls_total",
      get: async () => ({ name: "brain_tool_calls_total", help: "Tool calls finished (tool.finished committed), by placement kind and terminal status.", type: "counter", aggregator: "sum", values: toolCallSeconds.counts() }),
      reset: () => undefined,
    } as never);
    this.commitSeconds = new CallPathHistogram(
      "brain_journal_commit_duration_seconds",
      "One group commit of the journal (one transaction), by store.",
      ["store"],
      [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      this.registry,
    );
    this.commitRecords = new CallPathHistogram("brain_journal_commit_records", "Records in one group commit, by store.", ["store"], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], this.registry);
    this.commitFailures = new Counter({ name: "brain_journal_commit_failures_total", help: "Group commits that failed (none of their records was committed), by store.", labelNames: ["store"], registers });
    this.modelCalls = new Counter({ name: "brain_model_calls_total", help: "Model calls answered, by provider and outcome (ok, error, interrupted).", labelNames: ["provider", "outcome"], registers });
    this.modelTokens = new Counter({ name: "brain_model_tokens_total", help: "Tokens the providers reported (model.usage), by provider and kind (input, output).", labelNames: ["provider", "kind"], registers });
    this.httpRequests = new Counter({ name: "brain_http_requests_total", help: "HTTP requests answered, by method, route template and status code.", labelNames: ["method", "route", "status"], registers });
    this.httpSeconds = new Histogram({
      name: "brain_http_request_duration_seconds",
      help: "From a request's arrival to the end of its answer, by method and route template (SSE streams last as long as they are followed).",
      labelNames: ["method", "route"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
      registers,
    });
    this.leaseRenewals = new Counter({ name: "brain_lease_renewals_total", help: "PostgreSQL journal: renewals of this node's lease, by outcome (ok, expired, failed).", labelNames: ["outcome"], registers });
    this.takeovers = new Counter({ name: "brain_session_takeovers_total", help: "PostgreSQL journal: sessions this node took the lease of (from a dead node, or to serve a request).", registers });
    new Gauge({ name: "brain_tool_calls_open", help: "Tool calls started and not finished, held by this runtime.", registers, collect() { this.set(gauges.openCalls()); } });
    new Gauge({ name: "brain_sessions_resident", help: "Sessions held in memory (running, or settled and not paged out yet).", registers, collect() { this.set(gauges.residentSessions()); } });
    new Gauge({ name: "brain_hosts_connected", help: "Host processes connected to this runtime (node) over the host channel.", registers, collect() { this.set(gauges.connectedHosts()); } });
    const spansLost = gauges.spansLost;
    if (spansLost !== undefined) {
      // Counted by the span writer's queue (span-queue.ts), read when scraped.
      this.registry.registerMetric({
        name: "brain_spans_lost_total",
        get: async () => {
          const lost = spansLost();
          return { name: "brain_spans_lost_total", help: "Spans not exported: dropped because the export queue was full, or in a batch whose export failed.", type: "counter", aggregator: "sum", values: [{ labels: { reason: "dropped" }, value: lost.dropped }, { labels: { reason: "failed" }, value: lost.failed }] };
        },
        reset: () => undefined,
      } as never);
    }
  }

  /** A call's tool.finished is committed; `seconds` since its tool.call_started was admitted. */
  toolCallFinished(placement: string, status: string, seconds: number): void {
    this.toolCallSeconds.observe2(placement, status, seconds);
  }

  /** One group commit: committed (`ok`) or not. */
  commit(store: string, records: number, seconds: number, ok: boolean): void {
    if (!ok) return void this.commitFailures.inc({ store });
    this.commitSeconds.observe1(store, seconds);
    this.commitRecords.observe1(store, records);
  }

  modelCall(provider: string, outcome: "ok" | "error" | "interrupted", usage?: { inputTokens: number; outputTokens: number }): void {
    this.modelCalls.inc({ provider, outcome });
    if (usage === undefined) return;
    if (usage.inputTokens > 0) this.modelTokens.inc({ provider, kind: "input" }, usage.inputTokens);
    if (usage.outputTokens > 0) this.modelTokens.inc({ provider, kind: "output" }, usage.outputTokens);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpSeconds.observe({ method, route }, seconds);
  }

  leaseRenewal(outcome: "ok" | "expired" | "failed"): void {
    this.leaseRenewals.inc({ outcome });
  }

  takeover(): void {
    this.takeovers.inc();
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The gauges' sources, read at each scrape. */
export interface MetricGauges {
  openCalls(): number;
  residentSessions(): number;
  connectedHosts(): number;
  /** Spans the runtime's own span writer lost so far (tracing from OTEL_*; absent otherwise). */
  spansLost?(): { dropped: number; failed: number };
}

/** One label set's counts: per bucket (not cumulative), and the sum and count of every observation. */
interface Series {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for the call path (every call's duration, every group commit), served
 * through the same registry and exposition as prom-client's own. prom-client's `observe` builds a
 * labels object, validates it and hashes it to a string at each observation (about a microsecond,
 * three times per host call); here a series is found by its label values in a Map of Maps and a
 * bucket by a short scan, with no allocation after a label set's first observation.
 */
class CallPathHistogram {
  private readonly byFirst = new Map<string, Series | Map<string, Series>>();
  private readonly all: Series[] = [];

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** Observes `value` for a histogram with one label. */
  observe1(a: string, value: number): void {
    let s = this.byFirst.get(a) as Series | undefined;
    if (s === undefined) this.byFirst.set(a, (s = this.add({ [this.labelNames[0]!]: a })));
    this.record(s, value);
  }

  /** Observes `value` for a histogram with two labels. */
  observe2(a: string, b: string, value: number): void {
    let inner = this.byFirst.get(a) as Map<string, Series> | undefined;
    if (inner === undefined) this.byFirst.set(a, (inner = new Map()));
    let s = inner.get(b);
    if (s === undefined) inner.set(b, (s = this.add({ [this.labelNames[0]!]: a, [this.labelNames[1]!]: b })));
    this.record(s, value);
  }

  private add(labels: Record<string, string>): Series {
    const s = { labels, buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 };
    this.all.push(s);
    return s;
  }

  private record(s: Series, value: number): void {
    if (!Number.isFinite(value)) return;
    s.sum += value;
    s.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        s.buckets[i]! += 1;
        return;
      }
    }
  }

  /** Each series' count, as a counter's values. */
  counts(): MetricValueWithName<string>[] {
    return this.all.map((s) => ({ labels: s.labels, value: s.count }));
  }

  /** What the registry reads at a scrape: prom-client's histogram shape (cumulative buckets, +Inf, sum, count). */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: "sum"; values: MetricValueWithName<string>[] }> {
    const values: MetricValueWithName<string>[] = [];
    for (const s of this.all) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: this.bounds[i]!, ...s.labels }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: "histogram", aggregator: "sum", values };
  }

  reset(): void {
    this.byFirst.clear();
    this.all.length = 0;
  }
}
