import type { Attributes, TracerProvider } from "@opentelemetry/api";
import type { Logger } from "../logger.ts";
import type { EncodedBatch } from "./otlp-http.ts";
import type { SpanExporter } from "./span-queue.ts";

/**
 * How spans are exported when the OTEL_* variables ask for traces (config.ts reads them:
 * tracingFromEnv): Brain's own span writer (brain-tracer.ts → span-queue.ts → otlp-http.ts), not
 * the OpenTelemetry SDK, whose span objects, processor and OTLP transformer cost a host call about
 * as much CPU again as the call itself (docs/decisions/runtime.md). Only `@opentelemetry/api` is
 * imported statically anywhere in the runtime; the writer's modules are imported here, on demand,
 * so a server with tracing off never loads them (spanWriterLoads() stays 0, which a test checks).
 */
export interface TracingSettings {
  /** `otlp`: OTLP/HTTP to `url`; `console`: spans printed to stdout (local debugging). */
  exporter: "otlp" | "console";
  /** The OTLP/HTTP traces endpoint, e.g. http://127.0.0.1:4318/v1/traces. */
  url: string;
  /** OTLP/HTTP's encoding (OTEL_EXPORTER_OTLP_PROTOCOL): `http/protobuf` (the spec's default) or `http/json`. */
  protocol: "http/protobuf" | "http/json";
  /** Extra headers for the collector (OTEL_EXPORTER_OTLP_HEADERS / _TRACES_HEADERS); secrets, never logged. */
  headers?: Record<string, string>;
  /** How long one export may take, retries included (OTEL_EXPORTER_OTLP_TIMEOUT); default 10 s. */
  timeoutMs?: number;
  /** The resource's service.name (OTEL_SERVICE_NAME); default "brain-runtime". */
  serviceName: string;
  /** Further resource attributes (OTEL_RESOURCE_ATTRIBUTES). */
  resourceAttributes?: Record<string, string>;
  /** The fraction of new traces kept (OTEL_TRACES_SAMPLER traceidratio / parentbased_traceidratio); default 1. */
  ratio?: number;
  /** Whether a parent's sampled flag decides (parentbased_*, the default). */
  parentBased?: boolean;
  /** The batching processor's limits (OTEL_BSP_MAX_QUEUE_SIZE, _MAX_EXPORT_BATCH_SIZE, _SCHEDULE_DELAY). */
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  scheduledDelayMs?: number;
}

/** What startTracing gives the server: the provider for Telemetry, and the flush at close. */
export interface StartedTracing {
  provider: TracerProvider;
  /** Spans dropped so far because the export queue was full, and spans whose export failed. */
  lost(): { dropped: number; failed: number };
  /** Exports what is queued and closes the connection; rejects when the last batch is lost. */
  shutdown(): Promise<void>;
}

let loads = 0;

/** How many times the span writer was loaded in this process (0 while tracing is off). */
export function spanWriterLoads(): number {
  return loads;
}

export async function startTracing(settings: TracingSettings, version: string, logger: Logger): Promise<StartedTracing> {
  loads += 1;
  const [{ BrainTracerProvider }, { SpanQueue, QUEUE_DEFAULTS }] = await Promise.all([import("./brain-tracer.ts"), import("./span-queue.ts")]);
  const resource: Attributes = {
    ...settings.resourceAttributes,
    "service.name": settings.serviceName,
    "service.version": version,
    "telemetry.sdk.name": "@aexhq/brain-runtime",
    "telemetry.sdk.language": "nodejs",
    "telemetry.sdk.version": version,
  };
  let exporter: SpanExporter;
  if (settings.exporter === "console") {
    const { ConsoleSpanExporter } = await import("./console-spans.ts");
    exporter = new ConsoleSpanExporter(resource);
  } else {
    const { OtlpHttpExporter } = await import("./otlp-http.ts");
    const open = (batch: () => EncodedBatch, contentType: string) => new OtlpHttpExporter(settings.url, settings.headers ?? {}, batch, contentType, settings.timeoutMs ?? 10_000, `brain-runtime/${version}`, logger);
    if (settings.protocol === "http/json") {
      const { JsonBatch, jsonResource } = await import("./otlp-json.ts");
      const json = jsonResource(resource);
      exporter = open(() => new JsonBatch(json), "application/json");
    } else {
      const { OtlpProtobuf } = await import("./otlp-protobuf.ts");
      const protobuf = new OtlpProtobuf(resource);
      exporter = open(() => protobuf.batch(), "application/x-protobuf");
    }
  }
  const queue = new SpanQueue(
    exporter,
    {
      maxQueueSize: settings.maxQueueSize ?? QUEUE_DEFAULTS.maxQueueSize,
      maxExportBatchSize: Math.min(settings.maxExportBatchSize ?? QUEUE_DEFAULTS.maxExportBatchSize, settings.maxQueueSize ?? QUEUE_DEFAULTS.maxQueueSize),
      scheduledDelayMs: settings.scheduledDelayMs ?? QUEUE_DEFAULTS.scheduledDelayMs,
    },
    logger,
  );
  const provider = new BrainTracerProvider(queue, { ratio: settings.ratio ?? 1, parentBased: settings.parentBased !== false });
  return { provider, lost: () => ({ dropped: queue.dropped, failed: queue.failed }), shutdown: () => queue.shutdown() };
}
