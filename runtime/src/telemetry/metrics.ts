import { Counter, Gauge, Histogram, Registry } from "prom-client";

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
  private readonly toolCalls: Counter<"placement" | "status">;
  private readonly toolCallSeconds: Histogram<"placement" | "status">;
  private readonly commitSeconds: Histogram<"store">;
  private readonly commitRecords: Histogram<"store">;
  private readonly commitFailures: Counter<"store">;
  private readonly modelCalls: Counter<"provider" | "outcome">;
  private readonly modelTokens: Counter<"provider" | "kind">;
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpSeconds: Histogram<"method" | "route">;
  private readonly leaseRenewals: Counter<"outcome">;
  private readonly takeovers: Counter<never>;

  constructor(gauges: MetricGauges) {
    const registers = [this.registry];
    this.toolCalls = new Counter({ name: "brain_tool_calls_total", help: "Tool calls finished (tool.finished committed), by placement kind and terminal status.", labelNames: ["placement", "status"], registers });
    this.toolCallSeconds = new Histogram({
      name: "brain_tool_call_duration_seconds",
      help: "From tool.call_started admitted to tool.finished committed, by placement kind and terminal status.",
      labelNames: ["placement", "status"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.commitSeconds = new Histogram({
      name: "brain_journal_commit_duration_seconds",
      help: "One group commit of the journal (one transaction), by store.",
      labelNames: ["store"],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.commitRecords = new Histogram({ name: "brain_journal_commit_records", help: "Records in one group commit, by store.", labelNames: ["store"], buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], registers });
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
  }

  /** A call's tool.finished is committed; `seconds` since its tool.call_started was admitted. */
  toolCallFinished(placement: string, status: string, seconds: number): void {
    this.toolCalls.inc({ placement, status });
    this.toolCallSeconds.observe({ placement, status }, seconds);
  }

  /** One group commit: committed (`ok`) or not. */
  commit(store: string, records: number, seconds: number, ok: boolean): void {
    if (!ok) return void this.commitFailures.inc({ store });
    this.commitSeconds.observe({ store }, seconds);
    this.commitRecords.observe({ store }, records);
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
}
