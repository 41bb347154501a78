// What the SDK side of tracing (otlp-spans.ts) gives tracing.ts: spans, started and ended.

export type TraceKind = 'server' | 'client' | 'consumer';
export type Attributes = Record<string, string | number | boolean | null | undefined>;

/** A started span, as the SDK side (otlp-spans.ts) gives it. */
export interface OpenSpan {
  /** This span as a W3C traceparent: what its children name as their parent. */
  readonly traceparent: string;
  readonly traceId: string;
  /** Sampled: the span is recorded and exported. */
  readonly sampled: boolean;
  set(attributes: Attributes): void;
  /** Marks the span failed; `errorType` is a code or class, never a message with content. */
  fail(errorType: string): void;
  end(): void;
}

export interface SpanSource {
  /** `parent` is a W3C traceparent; without one (or an invalid one) the span starts a trace. */
  start(
    name: string,
    kind: TraceKind,
    parent: string | undefined,
    attributes: Attributes,
  ): OpenSpan;
  shutdown(): Promise<void>;
}
