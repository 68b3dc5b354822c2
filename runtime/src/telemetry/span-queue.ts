import type { Logger } from "../logger.ts";
import type { EndedSpans, WrittenSpan } from "./written-span.ts";

/**
 * One export request being filled. A span is encoded into it when the span ends, so the span
 * object (and its attributes) dies young instead of waiting, with hundreds of others, to be
 * encoded at export time: that waiting moved them to V8's old generation, the dearest garbage.
 */
export interface SpanBatch {
  add(span: WrittenSpan): void;
  readonly size: number;
}

/** Sends one batch; rejects when the batch is lost (after its own retries). */
export interface SpanExporter<B extends SpanBatch = SpanBatch> {
  batch(): B;
  export(batch: B): Promise<void>;
  shutdown(): Promise<void>;
}

/** The batching defaults of the OpenTelemetry SDK's BatchSpanProcessor (and of OTEL_BSP_*). */
export interface QueueSettings {
  /** Spans held at most, waiting to be sent; a span ending when it is full is dropped (and counted). Default 2048. */
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
 * The span writer's batching processor: `ended` encodes the span into the batch being filled (the
 * call path never waits for the collector), one export runs at a time, a full batch starts one at
 * once and a partial one after the scheduled delay. When the collector is slower than the spans
 * come, the queue fills and further spans are dropped and counted, never buffered without bound;
 * what was dropped or failed is logged at most once a minute, with counts.
 */
export class SpanQueue<B extends SpanBatch> implements EndedSpans {
  private filling: B | undefined;
  private readonly full: B[] = [];
  /** Spans in `filling` and `full`: waiting, not yet handed to the exporter. */
  private waiting = 0;
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Spans dropped because the queue was full, and spans in batches whose export failed, since the start. */
  dropped = 0;
  failed = 0;
  private unlogged = { dropped: 0, failed: 0, error: "" };
  private loggedAt = -Infinity;

  constructor(
    private readonly exporter: SpanExporter<B>,
    private readonly settings: QueueSettings,
    private readonly logger: Logger,
  ) {}

  ended(span: WrittenSpan): void {
    if (this.closed) return;
    if (this.waiting >= this.settings.maxQueueSize) {
      this.dropped++;
      this.unlogged.dropped++;
      return;
    }
    const batch = (this.filling ??= this.exporter.batch());
    try {
      batch.add(span);
    } catch (e) {
      // A span the encoder cannot take is lost alone; the call it describes goes on regardless.
      this.failed++;
      this.unlogged.failed++;
      this.unlogged.error = e instanceof Error ? e.message : String(e);
      return;
    }
    this.waiting++;
    if (batch.size >= this.settings.maxExportBatchSize) {
      this.full.push(batch);
      this.filling = undefined;
    }
    if (this.exporting !== undefined) return;
    if (this.full.length > 0) this.exportNext();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.exportNext(), this.settings.scheduledDelayMs);
      this.timer.unref();
    }
  }

  /** Exports what is queued, batch by batch, and waits for it (shutdown, a test's flush). */
  async flush(): Promise<void> {
    let lost: unknown;
    while (this.exporting !== undefined || this.waiting > 0) {
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

  /** Sends the oldest full batch, or else the one being filled. */
  private exportNext(onError?: (e: unknown) => void): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    let batch = this.full.shift();
    if (batch === undefined) {
      batch = this.filling;
      this.filling = undefined;
    }
    if (batch === undefined || batch.size === 0) return;
    this.waiting -= batch.size;
    const size = batch.size;
    this.exporting = this.exporter.export(batch).then(
      () => this.done(),
      (e: unknown) => {
        this.failed += size;
        this.unlogged.failed += size;
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
    if (this.full.length > 0) this.exportNext();
    else if (this.waiting > 0 && this.timer === undefined) {
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
