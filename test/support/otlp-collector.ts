import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, its attributes flattened. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** The `service.name` of the resource the span came with. */
  serviceName: string | undefined;
}

export const SPAN_KIND = { server: 2, client: 3, consumer: 5 } as const;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpJsonExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: (Omit<CollectedSpan, 'attributes' | 'serviceName'> & {
        attributes?: OtlpAttribute[];
      })[];
    }[];
  }[];
}

/**
 * A loopback OTLP/HTTP traces collector, as a real one answers (`POST /v1/traces`, 200 with an
 * empty export response). JSON exports are decoded into spans; protobuf ones are kept as bytes
 * (their strings and ids are readable in them as they are).
 */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Every export: its content type and its raw body. */
  readonly exports: { contentType: string; body: Buffer }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpCollector> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const collector = new OtlpCollector(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const contentType = req.headers['content-type'] ?? '';
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        collector.exports.push({ contentType, body });
        if (contentType.startsWith('application/json')) {
          collector.spans.push(...decode(JSON.parse(body.toString('utf8')) as OtlpJsonExport));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else {
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        }
      });
    });
    return collector;
  }

  /** Every byte received, for looking for what must (or must not) have been exported. */
  allBytes(): Buffer {
    return Buffer.concat(this.exports.map((e) => e.body));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function decode(exported: OtlpJsonExport): CollectedSpan[] {
  return (exported.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = flatten(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: flatten(span.attributes),
        serviceName: resource['service.name'] as string | undefined,
      })),
    );
  });
}

function flatten(attributes: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  const flat: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    flat[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.boolValue ??
      '';
  }
  return flat;
}
