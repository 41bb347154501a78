import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';

const { app, driver } = useTestApp();

const body = '{"order":{"id":7,"total":"19.90"}}';

describe.each(SIGNERS)('a channel verified with $scheme', (signer) => {
  let url: string;
  let channelId: string;

  beforeAll(async () => {
    const channel = await driver.createChannel({
      name: `Signed ${signer.scheme}`,
      verification: { ...signer.verification, secret: signer.secret },
    });
    url = channel.webhook_url;
    channelId = channel.id;
  });

  const send = async (headers: Record<string, string>, text = body) =>
    driver.sendEvent(url, text, { headers });

  it('accepts a request signed by the real sender library (200)', async () => {
    const res = await send(await signer.sign(body, signer.secret, nowSeconds()));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'received' });
  });

  it('refuses another secret, a missing header, a changed byte and a stale timestamp (401 saying which)', async () => {
    const signed = await signer.sign(body, signer.secret, nowSeconds());
    const cases: [string, Promise<Awaited<ReturnType<typeof send>>>, RegExp][] = [
      [
        'wrong secret',
        signer.sign(body, signer.otherSecret, nowSeconds()).then((h) => send(h)),
        /match|does not hold/,
      ],
      [
        'missing header',
        send(
          Object.fromEntries(
            Object.entries(signed).filter(([n]) => n.toLowerCase() !== signer.signatureHeader),
          ),
        ),
        /header is missing/i,
      ],
    ];
    if (signer.scheme !== 'header-secret') {
      cases.push(['one byte changed', send(signed, body.replace('19.90', '19.91')), /match/]);
    }
    if (signer.timestamped) {
      cases.push([
        'stale timestamp',
        signer.sign(body, signer.secret, nowSeconds() - 600).then((h) => send(h)),
        /outside the tolerance of 300 s/,
      ]);
    }
    for (const [what, pending, detail] of cases) {
      const res = await pending;
      expect(res.status, what).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body, what).toMatchObject({ status: 401, code: 'signature_invalid' });
      expect(String(res.body.detail), what).toMatch(detail);
    }
    const events = await driver.eventsOf(channelId);
    expect(events.filter((e) => e.status === 'rejected').map((e) => e.error)).toEqual(
      cases.map(() => 'signature_invalid'),
    );
  });
});

describe('the verification secret', () => {
  it('is write-only: the channel shows secret_set, never the secret, in any answer or log line', async () => {
    const secret = 'gh-secret-0123456789-do-not-show';
    const created = await driver
      .api('post', '/channels')
      .send({ name: 'GitHub', template: 'x', verification: { scheme: 'github', secret } })
      .expect(201);
    expect(created.body.verification).toEqual({ scheme: 'github', secret_set: true });
    const read = await driver.api('get', `/channels/${created.body.id}`).expect(200);
    const list = await driver.api('get', '/channels').expect(200);
    for (const text of [created.text, read.text, list.text, app.logText()]) {
      expect(text).not.toContain(secret);
    }
  });

  it('is kept by a PATCH of verification without secret, and replaced by one with it', async () => {
    const github = SIGNERS.find((s) => s.scheme === 'github')!;
    const channel = await driver.createChannel({
      verification: { scheme: 'github', secret: github.secret },
    });
    const patched = await driver
      .updateChannel(channel.id, { name: 'Renamed', verification: { scheme: 'github' } })
      .expect(200);
    expect(patched.body.verification).toEqual({ scheme: 'github', secret_set: true });
    const signed = await github.sign(body, github.secret, nowSeconds());
    expect((await driver.sendEvent(channel.webhook_url, body, { headers: signed })).status).toBe(
      200,
    );

    await driver
      .updateChannel(channel.id, { verification: { scheme: 'github', secret: github.otherSecret } })
      .expect(200);
    expect((await driver.sendEvent(channel.webhook_url, body, { headers: signed })).status).toBe(
      401,
    );
  });

  it('is required by every scheme but none, and must fit the scheme', async () => {
    for (const verification of [
      { scheme: 'stripe' },
      { scheme: 'hmac-sha256', secret: 's3cret' },
      { scheme: 'header-secret', secret: 's3cret' },
      { scheme: 'github', secret: 's', header: 'X-Sig' },
      { scheme: 'standard-webhooks', secret: 'not base64 !!' },
      { scheme: 'github', secret: 's', tolerance_s: 60 },
      { scheme: 'rot13', secret: 's' },
    ]) {
      const res = await driver
        .api('post', '/channels')
        .send({ name: 'Bad', template: 'x', verification });
      expect(res.status, JSON.stringify(verification)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.detail).toMatch(/^verification\./);
    }
  });

  it('honours tolerance_s', async () => {
    const stripe = SIGNERS.find((s) => s.scheme === 'stripe')!;
    const channel = await driver.createChannel({
      verification: { scheme: 'stripe', secret: stripe.secret, tolerance_s: 900 },
    });
    const tenMinutesOld = await stripe.sign(body, stripe.secret, nowSeconds() - 600);
    const res = await driver.sendEvent(channel.webhook_url, body, { headers: tenMinutesOld });
    expect(res.status).toBe(200);
  });
});

describe('a header-secret channel', () => {
  it('keeps the secret header on the event only as [redacted]', async () => {
    const channel = await driver.createChannel({
      verification: { scheme: 'header-secret', header: 'X-Hook-Key', secret: 'key-value-42' },
    });
    const res = await driver.sendEvent(channel.webhook_url, body, {
      headers: { 'X-Hook-Key': 'key-value-42' },
    });
    expect(res.status).toBe(200);
    const event = await driver.api('get', `/events/${res.body.event_id}`).expect(200);
    expect(event.body.headers['x-hook-key']).toBe('[redacted]');
    expect(event.text).not.toContain('key-value-42');
    expect(app.logText()).not.toContain('key-value-42');
  });
});

describe('the check order', () => {
  it('answers 403 channel_disabled before 401, and 401 before 415 and 400', async () => {
    const github = SIGNERS.find((s) => s.scheme === 'github')!;
    const channel = await driver.createChannel({
      verification: { scheme: 'github', secret: github.secret },
    });
    expect(
      (await driver.sendEvent(channel.webhook_url, 'not json', { contentType: 'text/plain' }))
        .status,
    ).toBe(401);
    const signed = await github.sign('not json', github.secret, nowSeconds());
    expect(
      (
        await driver.sendEvent(channel.webhook_url, 'not json', {
          contentType: 'text/plain',
          headers: signed,
        })
      ).status,
    ).toBe(415);
    await driver.updateChannel(channel.id, { enabled: false }).expect(200);
    expect((await driver.sendEvent(channel.webhook_url)).body.code).toBe('channel_disabled');
  });
});
