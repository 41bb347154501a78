import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { Driver } from '../support/driver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const redisUrl = process.env.TEST_REDIS_URL || undefined;

/**
 * A loopback TCP relay in front of Redis that the test can cut and restore, so Redis "goes away"
 * for this app alone (the real Redis is shared with other tests).
 */
class RedisRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 6379), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          this.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Drops every connection and refuses new ones, as a Redis that stopped would. */
  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server?.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

describe.skipIf(!redisUrl)(
  'Redis goes away while senders post (needs TEST_REDIS_URL: rate limits counted in Redis)',
  () => {
    let relay: RedisRelay;
    let app: TestApp;

    beforeAll(async () => {
      relay = new RedisRelay(new URL(redisUrl as string));
      await relay.start();
      app = await startTestApp({
        env: {
          ...ADMIN_ENV,
          REDIS_URL: `redis://127.0.0.1:${relay.port}`,
          RATE_LIMIT_PER_CHANNEL: '3',
          // Other test files count the same sender address in the same Redis: only the channel
          // limit is under test, so the per-sender limit is set out of reach.
          RATE_LIMIT_PER_IP: '100000000',
          RATE_LIMIT_WINDOW_MS: '600000',
        },
      });
    });

    afterAll(async () => {
      await app.close();
      await relay.cut();
    });

    it('answers every webhook at once without the rate limit, stores them all, and limits again once Redis is back', async () => {
      const driver = new Driver(app);
      const channel = await driver.createChannel();
      const statuses = async (count: number) => {
        const answers: number[] = [];
        for (let i = 0; i < count; i++)
          answers.push((await driver.sendEvent(channel.webhook_url)).status);
        return answers;
      };

      // Redis up: the per-channel limit of 3 holds.
      expect(await statuses(4)).toEqual([200, 200, 200, 429]);

      await relay.cut();
      const SENT_DURING_OUTAGE = 20;
      const started = performance.now();
      const during = await statuses(SENT_DURING_OUTAGE);
      const elapsedMs = performance.now() - started;
      // No limit can be counted, so none is enforced: senders are answered, events stored.
      expect(during).toEqual(Array(SENT_DURING_OUTAGE).fill(200));
      const ready = await fetch(`${app.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ database: 'ok', redis: 'unavailable' });
      // Signing in to the panel (whose failed attempts are counted in Redis too) still works.
      expect((await new PanelClient(app).signIn()).status).toBe(303);
      expect(app.logText()).toContain('redis is not answering');
      const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/hookprompt_rate_limit_fail_open_total\{limit="channel"\} [1-9]/);

      await relay.start();
      if (!app.ctx.redis?.isReady)
        await once(app.ctx.redis as NonNullable<typeof app.ctx.redis>, 'ready');
      // The count kept in Redis from before the outage applies again.
      expect(await statuses(1)).toEqual([429]);

      const stored = await driver.eventsOf(channel.id);
      expect(stored).toHaveLength(3 + SENT_DURING_OUTAGE);
      console.log(
        `Redis outage: sent ${SENT_DURING_OUTAGE} during it, answered 200 to ${during.filter((s) => s === 200).length} in ${Math.round(elapsedMs)} ms in all, stored ${stored.length - 3} of them; limit enforced again after reconnecting`,
      );
    });
  },
);
