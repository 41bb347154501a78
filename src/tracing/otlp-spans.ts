import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes as OtelAttributes,
  type Span,
} from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../platform/config.js';
import type { Attributes, OpenSpan, SpanSource, TraceKind } from './span-source.js';

// The OpenTelemetry SDK side of tracing, imported by tracing.ts only when an endpoint is set.

const KINDS: Record<TraceKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  consumer: SpanKind.CONSUMER,
};

/**
 * Spans exported in batches over OTLP/HTTP to the configured endpoint. No context manager and no
 * global provider: each span is given its parent as a traceparent (tracing.ts keeps them), so
 * nothing else in the process is patched or traced.
 */
export function otlpSpanSource(settings: TracingSettings & { tracesUrl: string }): SpanSource {
  const Exporter = settings.protocol === 'http/json' ? JsonExporter : ProtobufExporter;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new Exporter({ url: settings.tracesUrl }))],
  });
  const tracer = provider.getTracer('hookprompt');
  return {
    start(name, kind, parent, attributes) {
      const parentContext = parent ? parseTraceParent(parent) : null;
      const context = parentContext
        ? trace.setSpanContext(ROOT_CONTEXT, parentContext)
        : ROOT_CONTEXT;
      const span = tracer.startSpan(
        name,
        { kind: KINDS[kind], attributes: defined(attributes) },
        context,
      );
      return openSpan(span);
    },
    shutdown: () => provider.shutdown(),
  };
}

function openSpan(span: Span): OpenSpan {
  const { traceId, spanId, traceFlags } = span.spanContext();
  const flags = traceFlags.toString(16).padStart(2, '0');
  return {
    traceparent: `00-${traceId}-${spanId}-${flags}`,
    traceId,
    sampled: span.isRecording(),
    set: (attributes) => span.setAttributes(defined(attributes)),
    fail: (errorType) => {
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    },
    end: () => span.end(),
  };
}

/** The attributes that have a value: OpenTelemetry drops undefined ones with a warning. */
function defined(attributes: Attributes): OtelAttributes {
  const kept: OtelAttributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) kept[key] = value;
  }
  return kept;
}
