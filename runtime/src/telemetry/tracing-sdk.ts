import type { TracerProvider } from "@opentelemetry/api";

/**
 * How the OpenTelemetry SDK is set up when the OTEL_* variables ask for traces (config.ts reads
 * them: tracingFromEnv). Only `@opentelemetry/api` is imported statically anywhere in the
 * runtime; the SDK, the OTLP/HTTP exporter and the resource package are imported here, on demand,
 * so a server with tracing off never loads them (tracingSdkLoads() stays 0, which a test checks).
 */
export interface TracingSettings {
  /** `otlp`: OTLP/HTTP (JSON) to `url`; `console`: spans printed to stdout (local debugging). */
  exporter: "otlp" | "console";
  /** The OTLP/HTTP traces endpoint, e.g. http://127.0.0.1:4318/v1/traces. */
  url: string;
  /** Extra headers for the collector (OTEL_EXPORTER_OTLP_HEADERS / _TRACES_HEADERS); secrets, never logged. */
  headers?: Record<string, string>;
  /** The resource's service.name (OTEL_SERVICE_NAME); default "brain-runtime". */
  serviceName: string;
  /** Further resource attributes (OTEL_RESOURCE_ATTRIBUTES). */
  resourceAttributes?: Record<string, string>;
  /** The fraction of new traces kept (OTEL_TRACES_SAMPLER traceidratio / parentbased_traceidratio); default 1. */
  ratio?: number;
  /** Whether a sampled remote parent (an incoming traceparent) decides (parentbased_*, the default). */
  parentBased?: boolean;
}

let loads = 0;

/** How many times the SDK was loaded in this process (0 while tracing is off). */
export function tracingSdkLoads(): number {
  return loads;
}

/** A tracer provider exporting with a batching span processor; shutdown() flushes what is queued. */
export async function startTracing(settings: TracingSettings, version: string): Promise<{ provider: TracerProvider; shutdown(): Promise<void> }> {
  loads += 1;
  const [sdk, otlp, resources] = await Promise.all([import("@opentelemetry/sdk-trace"), import("@opentelemetry/exporter-trace-otlp-http"), import("@opentelemetry/resources")]);
  const exporter = settings.exporter === "console" ? new sdk.ConsoleSpanExporter() : new otlp.OTLPTraceExporter({ url: settings.url, ...(settings.headers === undefined ? {} : { headers: settings.headers }) });
  const ratio = settings.ratio ?? 1;
  const root = ratio >= 1 ? new sdk.AlwaysOnSampler() : ratio <= 0 ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(ratio);
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ ...settings.resourceAttributes, "service.name": settings.serviceName, "service.version": version }),
    sampler: settings.parentBased === false ? root : new sdk.ParentBasedSampler({ root }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter })],
  });
  return { provider, shutdown: () => provider.shutdown() };
}
