import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * What the proxy does with the bytes: `pass` relays them; `swallow` keeps every connection open
 * and drops everything in both directions (a peer that accepts TCP and never answers, or is
 * paused); `reset` resets every connection, open or new (a peer that is gone).
 */
export type ProxyMode = 'pass' | 'swallow' | 'reset';

/**
 * A loopback TCP proxy in front of a real server, so a test can make that server misbehave for
 * one client alone without touching it (a Redis shared with other tests, for instance).
 */
export class TcpProxy {
  private readonly pairs = new Set<[Socket, Socket]>();
  private readonly server: Server;
  port = 0;

  private constructor(
    target: { host: string; port: number },
    private mode: ProxyMode,
  ) {
    this.server = createServer((client) => this.accept(client, target));
  }

  static async start(target: { host: string; port: number }, mode: ProxyMode = 'pass') {
    const proxy = new TcpProxy(target, mode);
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    proxy.port = (proxy.server.address() as AddressInfo).port;
    return proxy;
  }

  /** `redis://127.0.0.1:<port>` and the like. */
  url(scheme: string): string {
    return `${scheme}://127.0.0.1:${this.port}`;
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === 'reset') for (const pair of this.pairs) this.reset(pair);
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) this.reset(pair);
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.mode === 'reset') return void client.resetAndDestroy();
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const relay = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (this.mode === 'pass') to.write(chunk);
      });
    relay(client, upstream);
    relay(upstream, client);
    for (const socket of pair) {
      socket.on('error', () => undefined);
      socket.on('close', () => this.reset(pair));
    }
  }

  private reset(pair: [Socket, Socket]): void {
    if (!this.pairs.delete(pair)) return;
    for (const socket of pair) if (!socket.destroyed) socket.resetAndDestroy();
  }
}
