import type { Logger } from "../logger.ts";
import type { EndedSpans, WrittenSpan } from "./written-span.ts";

/** Sends one batch of ended spans; rejects when the batch is lost (after its own retries). */
export interface SpanExporter {
  export(spans: WrittenSpan[]): Promise<void>;
  shutdown(): Promise<void>;
}

/** The batching defaults of the OpenTelemetry SDK's BatchSpanProcessor (and of OTEL_BSP_*). */
export interface QueueSettings {
  /** Spans held at most; a span ending when it is full is dropped (and counted). Default 2048. */
  maxQueueSize: number;
  /** Spans per export request at most; a full batch is sent at once. Default 512. */
  maxExportBatchSize: number;
  /** How long a batch that is not full waits before it is sent, in ms. Default 5000. */
  scheduledDelayMs: number;
}

export const QUEUE_DEFAULTS: QueueSettings = { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMs: 5000 };

/** How often, at most, a failed export or dropped spans are logged. */
const LOG_EVERY_MS = 60_000;

/**
 * The span writer's batching processor: `ended` only appends to an array (the call path never
 * waits for the collector), one export runs at a time, a full batch starts one at once and a
 * partial one after the scheduled delay. When the collector is slower than the spans come, the
 * queue fills and further spans are dropped and counted, never buffered without bound; what was
 * dropped or failed is logged at most once a minute, with counts.
 */
export class SpanQueue implements EndedSpans {
  private queue: WrittenSpan[] = [];
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Spans dropped because the queue was full, and spans in batches whose export failed, since the start. */
  dropped = 0;
  failed = 0;
  private unlogged = { dropped: 0, failed: 0, error: "" };
  private loggedAt = -Infinity;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly settings: QueueSettings,
    private readonly logger: Logger,
  ) {}

  ended(span: WrittenSpan): void {
    if (this.closed) return;
    if (this.queue.length >= this.settings.maxQueueSize) {
      this.dropped++;
      this.unlogged.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.exporting !== undefined) return;
    if (this.queue.length >= this.settings.maxExportBatchSize) this.exportNext();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.exportNext(), this.settings.scheduledDelayMs);
      this.timer.unref();
    }
  }

  /** Exports what is queued, batch by batch, and waits for it (shutdown, a test's flush). */
  async flush(): Promise<void> {
    let lost: unknown;
    while (this.exporting !== undefined || this.queue.length > 0) {
      if (this.exporting === undefined) this.exportNext((e) => (lost = e));
      await this.exporting;
    }
    this.report(true);
    if (lost !== undefined) throw lost;
  }

  async shutdown(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.exporter.shutdown();
    }
  }

  private exportNext(onError?: (e: unknown) => void): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue.length <= this.settings.maxExportBatchSize ? this.queue : this.queue.slice(0, this.settings.maxExportBatchSize);
    this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
    this.exporting = this.exporter.export(batch).then(
      () => this.done(),
      (e: unknown) => {
        this.failed += batch.length;
        this.unlogged.failed += batch.length;
        this.unlogged.error = e instanceof Error ? e.message : String(e);
        onError?.(e);
        this.done();
      },
    );
  }

  private done(): void {
    this.exporting = undefined;
    this.report();
    if (this.closed) return;
    // What came in meanwhile: a full batch goes now, a partial one after the delay.
    if (this.queue.length >= this.settings.maxExportBatchSize) this.exportNext();
    else if (this.queue.length > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => this.exportNext(), this.settings.scheduledDelayMs);
      this.timer.unref();
    }
  }

  private report(now_ = false): void {
    const { dropped, failed, error } = this.unlogged;
    if (dropped === 0 && failed === 0) return;
    const now = Date.now();
    if (now - this.loggedAt < LOG_EVERY_MS && !now_) return;
    this.loggedAt = now;
    this.unlogged = { dropped: 0, failed: 0, error: "" };
    if (failed > 0) this.logger.warn("tracing: spans could not be exported", { spans: failed, error });
    if (dropped > 0) this.logger.warn("tracing: spans dropped, the export queue was full", { spans: dropped, maxQueueSize: this.settings.maxQueueSize });
  }
}
