import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the image server answers one path. */
export interface ImageAnswer {
  status?: number;
  /** The `Content-Type` header (none when absent). */
  type?: string;
  body?: Buffer;
  /** A `Location` header (a redirect). */
  location?: string;
  /** The body in pieces of 16 KB, without a `Content-Length` (chunked), as some hosts send. */
  chunked?: boolean;
}

/**
 * A loopback HTTP server serving images (and redirects, errors, lies about types) at the paths
 * it is told; it counts the GETs of each path. A path given several answers gives them in turn,
 * the last one for good.
 */
export class ImageServer {
  readonly hits = new Map<string, number>();
  private readonly answers = new Map<string, ImageAnswer[]>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<ImageServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const images = new ImageServer(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    server.on('request', (req, res) => {
      const path = new URL(req.url ?? '/', images.origin).pathname;
      images.hits.set(path, (images.hits.get(path) ?? 0) + 1);
      const queue = images.answers.get(path);
      const answer = (queue && queue.length > 1 ? queue.shift() : queue?.[0]) ?? { status: 404 };
      const headers: Record<string, string> = {};
      if (answer.type) headers['content-type'] = answer.type;
      if (answer.location) headers.location = answer.location;
      res.writeHead(answer.status ?? 200, headers);
      if (!answer.chunked || !answer.body) return res.end(answer.body);
      for (let at = 0; at < answer.body.length; at += 16 * 1024) {
        res.write(answer.body.subarray(at, at + 16 * 1024));
      }
      res.end();
    });
    return images;
  }

  /** Answers GETs of `path` with these answers in turn. */
  serve(path: string, ...answers: ImageAnswer[]): string {
    this.answers.set(path, answers);
    return `${this.origin}${path}`;
  }

  reset(): void {
    this.hits.clear();
    this.answers.clear();
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
