import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});

/** A compact order of about `bytes`, as a large shop order is sent. */
function largeOrder(id: number, bytes: number): string {
  const item = (i: number) => ({ sku: `sku-${i}`, qty: 1, title: 'Punch cards, pack of 100' });
  const count = Math.ceil(bytes / JSON.stringify(item(99_999)).length);
  return JSON.stringify({
    type: 'order.created',
    id,
    items: Array.from({ length: count }, (_, i) => item(i)),
  });
}

/** A socket to the app and everything it is answered, once it is. */
function openSocket(): { socket: Socket; answer: Promise<string>; received: Promise<void> } {
  const { port } = new URL(app.baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  let text = '';
  let firstBytes: () => void = () => {};
  const received = new Promise<void>((resolve) => (firstBytes = resolve));
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    firstBytes();
  });
  const answer = new Promise<string>((resolve, reject) => {
    socket.on('end', () => resolve(text)).on('error', reject);
  });
  return { socket, answer, received };
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

describe('large bodies', () => {
  it('answers /healthz while large webhooks that arrived with it still wait to be checked, and stores them all', async () => {
    const path = new URL(channel.webhook_url).pathname;
    const bodies = [1, 2, 3].map((id) => Buffer.from(largeOrder(id, 400 * 1024)));
    // Each body but its last byte: the server has read the rest before the last bytes arrive.
    const senders = bodies.map((body) => {
      const sender = openSocket();
      sender.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      sender.socket.write(body.subarray(0, -1));
      return sender;
    });
    const health = openSocket();
    await new Promise((resolve) => health.socket.once('connect', resolve));
    await new Promise((resolve) => setTimeout(resolve, 200));

    // The three last bytes and the health check reach the server together: it reads them in one
    // poll of its sockets.
    bodies.forEach((body, i) => senders[i]?.socket.write(body.subarray(-1)));
    health.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');

    await health.received;
    // Answered while large bodies still wait for their turn: not held behind all three checks.
    expect(app.ctx.ingest.bodyTurns.waitingCount).toBeGreaterThan(0);
    expect(statusOf(await health.answer)).toBe(200);

    const answers = await Promise.all(senders.map((sender) => sender.answer));
    expect(answers.map(statusOf)).toEqual([200, 200, 200]);
    const ids = answers.map((answer) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
    for (const [i, { event_id }] of ids.entries()) {
      const event = await driver.api('get', `/events/${event_id}`).expect(200);
      expect(event.body.payload).toBe(bodies[i]?.toString());
    }
  });
});
