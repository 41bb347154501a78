import { describe, expect, it } from 'vitest';
import { cutSecrets } from '../../src/secrets/cut-secrets.js';
import { eventually } from '../support/eventually.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';

const KEY = 'sk-proj-escaped-7Hq2Lw9Zx4Vb';
const receiver = useReplyReceiver();
const { app, driver, ai } = useTestApp({
  ai: true,
  env: {
    AI_API_KEY: KEY,
    AI_MAX_ATTEMPTS: '1',
    DELIVERY_ALLOW_PRIVATE: 'true',
    DELIVERY_RETRY_SCHEDULE: '60s',
  },
});

/** `text` with each of `chars` written as a JSON `\uXXXX` escape, as some servers write them. */
const escaped = (text: string, chars: string) =>
  [...text]
    .map((c) => (chars.includes(c) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
    .join('');

/** The stored text of every row of these tables, where a secret would show. */
async function storedRows(...tables: string[]): Promise<string> {
  const texts: string[] = [];
  for (const table of tables) {
    const { rows } = await app.ctx.db.query<{ row: string }>(
      `select t::text as row from ${table} t`,
    );
    texts.push(...rows.map((r) => r.row));
  }
  return texts.join('\n');
}

/** Sends an event, lets the model reply and makes one delivery attempt of each message. */
async function oneAttemptEach(webhookUrl: string): Promise<string> {
  const res = await driver.sendEvent(webhookUrl, { order: { id: 7 } });
  expect(res.status).toBe(200);
  const eventId = res.body.event_id as string;
  await app.ctx.worker?.runOnce();
  await eventually(
    async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const { rows } = await app.ctx.db.query(
        `select 1 from deliveries where event_id = $1 and attempts > 0`,
        [eventId],
      );
      return rows.length > 0;
    },
    { what: 'a delivery attempt' },
  );
  return eventId;
}

describe('secrets are cut out after decoding', () => {
  it("an AI server's error quoting the key with JSON-escaped characters keeps no part of it", async () => {
    ai.enqueue({
      status: 401,
      // JSON as the server wrote it: the key's letters escaped, so the raw text never holds it.
      body: `{"error": {"message": "Incorrect API key provided: ${escaped(KEY, 'pjZ-')}.", "type": "invalid_request_error"}}`,
    });
    const channel = await driver.createChannel();
    const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 1 } });
    await app.ctx.worker?.runOnce();

    const event = await driver.api('get', `/events/${String(sent.body.event_id)}`).expect(200);
    expect(event.body.status).toBe('failed');
    expect(event.body.error).toContain('Incorrect API key provided: [redacted].');
    const stored = await storedRows('events');
    for (const text of [JSON.stringify(event.body), stored]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('7Hq2Lw9Zx4Vb');
      expect(text).not.toContain('\\u0070roj');
    }
  });

  it("a reply URL's Basic credential echoed back in base64 is cut out of last_error and the answer", async () => {
    const [user, password] = ['hook-user', 'hook-pass-Q8r7T6y5'];
    const basic = Buffer.from(`${user}:${password}`).toString('base64');
    const url = receiver.url('/in').replace('http://', `http://${user}:${password}@`);
    const channel = await driver.createChannel({ reply_delivery: { url } });
    receiver.enqueue({
      status: 500,
      body: `{"error": "not accepted", "you_sent": {"authorization": "Basic ${basic}"}}`,
    });
    await oneAttemptEach(channel.webhook_url);

    // The receiver did get the credential: it is what the answer echoed.
    expect(receiver.messages.at(-1)?.headers.authorization).toBe(`Basic ${basic}`);
    const stored = await storedRows('deliveries', 'delivery_attempts');
    expect(stored).toContain('Basic [secret]');
    for (const secret of [basic, basic.replace(/=+$/, ''), password])
      expect(stored).not.toContain(secret);
  });

  it("a reply URL's user name alone, its credential, echoed as it is and as Basic is cut out of last_error and the answer", async () => {
    const user = 'ci-token-4f9a8b7c6d';
    const basic = Buffer.from(`${user}:`).toString('base64');
    const url = receiver.url('/in').replace('http://', `http://${user}@`);
    const channel = await driver.createChannel({ reply_delivery: { url } });
    receiver.enqueue({
      status: 401,
      body: `{"error": "unknown user ${user}", "you_sent": {"authorization": "Basic ${basic}"}}`,
    });
    const eventId = await oneAttemptEach(channel.webhook_url);

    expect(receiver.messages.at(-1)?.headers.authorization).toBe(`Basic ${basic}`);
    const event = await driver.api('get', `/events/${eventId}`).expect(200);
    const lastError = (event.body as { delivery: { last_error: string } }).delivery.last_error;
    expect(lastError).toContain('unknown user [secret]');
    expect(lastError).toContain('Basic [secret]');
    const stored = await storedRows('channels', 'deliveries', 'delivery_attempts');
    for (const text of [JSON.stringify(event.body), stored])
      for (const secret of [user, basic.replace(/=+$/, '')]) expect(text).not.toContain(secret);
  });

  it("a Teams workflow's sig echoed alone in its answer is cut out of last_error and the answer", async () => {
    const sig = 'Zx9TeamsSig4kLm2Qp7Rt0Vw';
    const webhookUrl = receiver.url(
      `/workflows/5c1d/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${sig}`,
    );
    const channel = await driver.createChannel({
      destinations: [{ kind: 'teams', webhook_url: webhookUrl }],
    });
    receiver.enqueue({
      status: 401,
      body: `{"error": {"code": "DirectApiAuthorizationRequired", "message": "The signature '${sig}' (percent-encoded: ${encodeURIComponent(sig).replace('Z', '%5A')}) is not valid."}}`,
    });
    await oneAttemptEach(channel.webhook_url);

    const { rows } = await app.ctx.db.query<{ last_error: string }>(
      `select last_error from deliveries where channel_id = $1`,
      [channel.id],
    );
    expect(rows[0]?.last_error).toContain("The signature '[secret]' (percent-encoded: [secret])");
    const stored = await storedRows('deliveries', 'delivery_attempts');
    expect(stored).not.toContain(sig);
    expect(stored).not.toContain('9TeamsSig4kLm2Qp7Rt0Vw');
  });
});

describe('the one rule for cutting secrets', () => {
  const key = 'sk-ant-api03-Secret0123456789';

  it('finds a value written as it is, JSON-escaped, escaped three times over, percent-encoded or as HTML references', () => {
    const forms = [
      key,
      escaped(key, 'sk-3'),
      JSON.stringify(JSON.stringify({ message: escaped(key, 'S') })),
      encodeURIComponent(key).replace('S', '%53'),
      key.replace('S', '&#x53;').replace('0', '&#48;'),
      key.replaceAll('-', '\\u002D'),
    ];
    for (const form of forms) {
      const cut = cutSecrets(`before ${form} after`, { values: [key] });
      expect(cut, form).not.toMatch(/Secret|0123456789|api03/);
      expect(cut, form).toContain('before ');
      expect(cut, form).toContain(' after');
    }
  });

  it('keeps a JSON text valid where a secret is cut out of one of its strings', () => {
    const body = `{"error":{"message":"bad key ${escaped(key, 'kS')}","code":401}}`;
    const parsed = JSON.parse(cutSecrets(body, { values: [key] }, '[redacted]')) as {
      error: { message: string };
    };
    expect(parsed.error.message).toBe('bad key [redacted]');
  });

  it("cuts a URL's password, its Basic credential and its query values, and leaves its host and path", () => {
    const url = 'https://bot:p%40ss-W0rd-9@hooks.example.com/in/orders?token=tok-12345678&v=2';
    const basic = Buffer.from('bot:p@ss-W0rd-9').toString('base64');
    const text = `POST https://hooks.example.com/in/orders?v=2 Basic ${basic} token tok-12345678 p@ss-W0rd-9`;
    expect(cutSecrets(text, { urls: [url] })).toBe(
      'POST https://hooks.example.com/in/orders?v=2 Basic [secret] token [secret] [secret]',
    );
  });

  it("cuts a secret URL whole: itself, its path's token and each of its query's values", () => {
    const url = 'https://chat.example.com/api/webhooks/42/hook-token-abcdef?sig=Sig-0123456789';
    const text = `${url} | /api/webhooks/42/hook-token-abcdef | sig Sig-0123456789 | chat.example.com`;
    expect(cutSecrets(text, { values: [url] })).toBe(
      '[secret] | /[secret] | sig [secret] | chat.example.com',
    );
  });
});
