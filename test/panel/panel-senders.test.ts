import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const client = useSignedInAdmin(app);

const senderForm = (changes: Record<string, string>) => ({
  scheme: 'none',
  header: '',
  encoding: 'hex',
  tolerance_s: '',
  secret: '',
  allowed_ips: '',
  allowed_origins: '',
  dedup_mode: 'auto',
  dedup_field: '',
  dedup_window_s: '86400',
  ...changes,
});

describe('the channel editor’s “Who may send”', () => {
  it('offers every scheme with what the sender must set up', async () => {
    const id = await client.createChannel('Repo pushes');
    const html = unescapeHtml((await client.page(`/channels/${id}`)).text);
    expect(html).toContain('Who may send');
    for (const scheme of [
      'none',
      'standard-webhooks',
      'stripe',
      'github',
      'shopify',
      'slack',
      'hmac-sha256',
      'header-secret',
    ]) {
      expect(html).toContain(`<option value="${scheme}"`);
    }
    expect(html).toContain('paste this same secret into the Secret field');
  });

  it('saves a GitHub verification whose secret is never shown again, and the sender must sign', async () => {
    const id = await client.createChannel('GitHub pushes');
    const url = await client.webhookUrl(id);
    const secret = 'panel-github-secret-4242';
    const saved = await client.form(
      `/channels/${id}/senders`,
      senderForm({ scheme: 'github', secret, allowed_ips: '127.0.0.1\n::1' }),
    );
    expect(saved.status).toBe(303);
    const page = await client.page(`/channels/${id}`);
    expect(page.text).not.toContain(secret);
    expect(page.text).toContain('A secret is set');

    expect((await driver.sendEvent(url)).status).toBe(401);
    const body = '{"order":{"id":1}}';
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const signed = await driver.sendEvent(url, body, {
      headers: { 'X-Hub-Signature-256': signature },
    });
    expect(signed.status).toBe(200);

    // saving again without a secret keeps it
    await client.form(
      `/channels/${id}/senders`,
      senderForm({ scheme: 'github', dedup_mode: 'off', allowed_ips: '127.0.0.1\n::1' }),
    );
    expect(
      (await driver.sendEvent(url, body, { headers: { 'X-Hub-Signature-256': signature } })).status,
    ).toBe(200);
    const channel = await driver.api('get', `/channels/${id}`).expect(200);
    expect(channel.body).toMatchObject({
      verification: { scheme: 'github', secret_set: true },
      allowed_ips: ['127.0.0.1', '::1'],
      dedup: { mode: 'off', window_s: 86400 },
    });
  });

  it('shows what is wrong next to the field, and keeps what was typed', async () => {
    const id = await client.createChannel('Half set up');
    const res = await client.form(
      `/channels/${id}/senders`,
      senderForm({
        scheme: 'stripe',
        allowed_ips: '10.0.0.0/8\nnot-an-address',
        dedup_mode: 'payload',
      }),
    );
    expect(res.status).toBe(400);
    const html = unescapeHtml(res.text);
    expect(html).toContain('id="allowed_ips-error"');
    expect(html).toContain('not-an-address');
    const noSecret = await client.form(
      `/channels/${id}/senders`,
      senderForm({ scheme: 'stripe', allowed_ips: '10.0.0.0/8' }),
    );
    expect(noSecret.status).toBe(400);
    expect(unescapeHtml(noSecret.text)).toMatch(/id="secret-error">is required for stripe/);
  });
});

describe('the channel editor’s web pages that may send', () => {
  it('saves the origins as browsers write them, and a page elsewhere is refused', async () => {
    const id = await client.createChannel('Chat widget');
    const url = await client.webhookUrl(id);
    const saved = await client.form(
      `/channels/${id}/senders`,
      senderForm({ allowed_origins: 'HTTPS://Shop.Example.com\nhttp://localhost:5173' }),
    );
    expect(saved.status).toBe(303);
    const channel = await driver.api('get', `/channels/${id}`).expect(200);
    expect(channel.body.allowed_origins).toEqual([
      'https://shop.example.com',
      'http://localhost:5173',
    ]);
    const html = unescapeHtml((await client.page(`/channels/${id}`)).text);
    expect(html).toMatch(/id="allowed_origins"[^>]*>https:\/\/shop\.example\.com\nhttp:/);

    const fromShop = await driver.sendEvent(url, undefined, {
      headers: { Origin: 'https://shop.example.com' },
    });
    expect(fromShop.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
    const elsewhere = await driver.sendEvent(url, undefined, {
      headers: { Origin: 'https://elsewhere.example' },
    });
    expect(elsewhere.body.code).toBe('origin_not_allowed');
    const list = (await client.page(`/logs?channel=${id}`)).text;
    expect(list).toMatch(/badge-rejected"[^>]*>Rejected 403<\/span>/);
  });

  it('shows a path or a second entry beside "*" next to the field', async () => {
    const id = await client.createChannel('Widget typo');
    for (const allowed_origins of ['https://shop.example.com/chat', '*\nhttps://a.example']) {
      const res = await client.form(`/channels/${id}/senders`, senderForm({ allowed_origins }));
      expect(res.status, allowed_origins).toBe(400);
      const html = unescapeHtml(res.text);
      expect(html).toContain('id="allowed_origins-error"');
      expect(html).toContain(allowed_origins.split('\n')[0]);
    }
  });
});

describe('Brain Logs', () => {
  it('shows headers (credentials redacted), the sender address, the size and the duplicate count', async () => {
    const id = await client.createChannel('Logged');
    const url = await client.webhookUrl(id);
    const headers = {
      'webhook-id': 'msg_logged',
      Authorization: 'Bearer panel-credential-1',
      'X-Trace': 'trace-77',
    };
    const first = await driver.sendEvent(url, { order: { id: 5 } }, { headers });
    await driver.sendEvent(url, { order: { id: 5 } }, { headers });
    const html = unescapeHtml((await client.page(`/logs/${first.body.event_id}`)).text);
    expect(html).toContain('Request headers');
    expect(html).toMatch(/<code>authorization<\/code><\/th><td><code>\[redacted\]<\/code>/);
    expect(html).toContain('trace-77');
    expect(html).not.toContain('panel-credential-1');
    expect(html).toContain('<dt>Sender address</dt><dd>127.0.0.1</dd>');
    expect(html).toContain('<dt>Size</dt><dd>18 bytes</dd>');
    expect(html).toMatch(/<dt>Duplicates answered<\/dt><dd class="event-duplicates"[^>]*>1<\/dd>/);
  });

  it('explains signature and address refusals', async () => {
    const id = await client.createChannel('Locked');
    const url = await client.webhookUrl(id);
    await client.form(`/channels/${id}/senders`, senderForm({ allowed_ips: '10.0.0.0/8' }));
    const refused = await driver.sendEvent(url);
    expect(refused.body.code).toBe('sender_not_allowed');
    const list = (await client.page(`/logs?channel=${id}`)).text;
    expect(list).toMatch(/badge-rejected"[^>]*>Rejected 403<\/span>/);
    expect(list).toContain('<span class="c-outcome">sender not allowed</span>');
    const [addressEvent] = (await driver.eventsOf(id)).map((e) => String(e.id));
    const address = unescapeHtml((await client.page(`/logs/${addressEvent}/panel`)).text);
    expect(address).toContain("the sender's address is not in the channel's allowed addresses");

    // Each failed signature keeps the exact cause its sender was told, not only the code.
    const secret = 'whsec-for-the-log';
    await client.form(`/channels/${id}/senders`, senderForm({ scheme: 'github', secret }));
    const unsigned = await driver.sendEvent(url);
    const badly = await driver.sendEvent(
      url,
      { order: 1 },
      {
        headers: { 'X-Hub-Signature-256': `sha256=${'0'.repeat(64)}` },
      },
    );
    expect(unsigned.body.code).toBe('signature_invalid');
    expect(badly.body.code).toBe('signature_invalid');
    expect(unsigned.body.detail).not.toBe(badly.body.detail);
    const events = (await driver.eventsOf(id)).map((e) => String(e.id));
    for (const [eventId, answer] of [
      [events[1], unsigned],
      [events[2], badly],
    ] as const) {
      const detail = unescapeHtml((await client.page(`/logs/${eventId}`)).text);
      expect(detail).toContain(
        `HTTP 401 <code>signature_invalid</code>):</strong> ${answer.body.detail}`,
      );
    }
  });
});
