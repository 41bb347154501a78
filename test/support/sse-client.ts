/** One Server-Sent Events message. */
export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/**
 * A text/event-stream read as the browser's EventSource reads it (fields, blank-line ends a
 * message, comments ignored), with a way to wait for the message one expects.
 */
export class SseClient {
  readonly messages: SseMessage[] = [];
  private waiters: (() => void)[] = [];
  private readonly controller = new AbortController();
  status = 0;

  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const client = new SseClient();
    const res = await fetch(url, { headers, signal: client.controller.signal });
    client.status = res.status;
    client.contentType = res.headers.get('content-type') ?? '';
    if (res.body) void client.read(res.body);
    return client;
  }

  contentType = '';

  /** Resolves with the first message (already received or to come) that `test` accepts. */
  async waitFor(test: (message: SseMessage) => boolean, timeoutMs = 15_000): Promise<SseMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(test);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no such message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let message: Partial<SseMessage> = {};
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, end).replace(/\r$/, '');
          buffer = buffer.slice(end + 1);
          if (line === '') {
            if (message.data !== undefined) {
              this.messages.push({ event: 'message', ...message } as SseMessage);
              for (const wake of this.waiters.splice(0)) wake();
            }
            message = {};
          } else if (!line.startsWith(':')) {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data')
              message.data = message.data === undefined ? value : `${message.data}\n${value}`;
            else if (field === 'event') message.event = value;
            else if (field === 'id') message.id = value;
          }
        }
      }
    } catch {
      // closed
    }
  }
}
