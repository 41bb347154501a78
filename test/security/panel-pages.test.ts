import request from 'supertest';
import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ENV, PanelClient, csrfIn, inlineCode } from '../panel/panel-client.js';
import { useTestApp } from '../support/harness.js';

// Stored XSS in channel names, templates and payloads is covered page by page in
// test/panel/panel-xss.test.ts; this file checks the headers of every page and the values a
// page reflects from its own URL or form.
const SCRIPT = '<script>alert(1)</script>';
const ATTRIBUTE = '"><img src=x onerror=alert(2)>';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
let panel: PanelClient;
let channelId: string;
let eventId: string;

beforeAll(async () => {
  panel = new PanelClient(app);
  await panel.signIn();
  channelId = await panel.createChannel(SCRIPT, `${SCRIPT} {{x}}`);
  const sent = await driver.sendEvent(await panel.webhookUrl(channelId), { x: SCRIPT });
  eventId = String(sent.body.event_id);
});

function directives(res: Response): Map<string, string[]> {
  const csp = String(res.headers['content-security-policy'] ?? '');
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name as string, values]),
  );
}

function expectLockedDown(res: Response, label: string): void {
  const csp = directives(res);
  expect(csp.get('script-src'), label).toEqual(["'self'"]);
  expect(csp.get('frame-ancestors'), label).toEqual(["'none'"]);
  expect(csp.get('object-src'), label).toEqual(["'none'"]);
  expect(csp.get('base-uri'), label).toEqual(["'none'"]);
  expect(String(res.headers['content-security-policy']), label).not.toMatch(/unsafe-(inline|eval)/);
  expect(['DENY', 'SAMEORIGIN'], label).toContain(res.headers['x-frame-options']);
  expect(res.headers['x-content-type-options'], label).toBe('nosniff');
}

describe('every panel page', () => {
  it('forbids inline script and framing, whatever its status', async () => {
    const pages: [string, () => Promise<Response>][] = [
      ['sign-in page', () => request(app.baseUrl).get('/login')],
      ['channels', () => panel.page('/channels')],
      ['new channel', () => panel.page('/channels/new')],
      ['channel editor', () => panel.page(`/channels/${channelId}`)],
      ['regenerate confirmation', () => panel.page(`/channels/${channelId}/regenerate`)],
      ['delete confirmation', () => panel.page(`/channels/${channelId}/delete`)],
      [
        'preview',
        () => panel.form(`/channels/${channelId}/preview`, { template: 'x', sample: '{}' }),
      ],
      ['Brain Logs', () => panel.page('/logs')],
      ['event page', () => panel.page(`/logs/${eventId}`)],
      ['workspace', () => panel.page('/workspace')],
      ['new API key', () => panel.form('/workspace/api-keys', { name: 'Headers' })],
      ['new workspace', () => panel.page('/workspaces/new')],
      ['account', () => panel.page('/account')],
      ['404 page', () => panel.page('/channels/999999')],
      ['unknown page', () => panel.page('/no-such-page')],
      ['refused form (CSRF)', () => panel.form('/workspace', { _csrf: 'forged', name: 'x' })],
    ];
    for (const [label, open] of pages) {
      const res = await open();
      expect(res.headers['content-type'], label).toMatch(/^text\/html/);
      expectLockedDown(res, label);
      expect(inlineCode(res.text), label).toEqual([]);
    }
  });
});

describe('values a page shows back from its URL or form', () => {
  it('are escaped: Brain Logs filters, sign-in e-mail and next, error pages', async () => {
    const filter = new URLSearchParams({ from: SCRIPT, to: ATTRIBUTE, status: SCRIPT });
    const login = await request(app.baseUrl).get(`/login?next=${encodeURIComponent(ATTRIBUTE)}`);
    const loginCookie = String(login.headers['set-cookie']?.[0] ?? '').split(';')[0] as string;
    const pages: [string, Response][] = [
      ['Brain Logs filters', await panel.page(`/logs?${filter}`)],
      ['Brain Logs cursor', await panel.page(`/logs?cursor=${encodeURIComponent(SCRIPT)}`)],
      ['channel id', await panel.page(`/channels/${encodeURIComponent(SCRIPT)}`)],
      ['unknown page', await panel.page(`/${encodeURIComponent(SCRIPT)}`)],
      ['sign-in next', login],
      [
        'failed sign-in',
        await request(app.baseUrl)
          .post('/login')
          .set('Cookie', loginCookie)
          .type('form')
          .send({ _csrf: csrfIn(login.text), email: SCRIPT, password: 'wrong', next: ATTRIBUTE }),
      ],
      ['channel form', await panel.form('/channels', { name: '', template: SCRIPT })],
      ['workspace form', await panel.form('/workspace', { name: SCRIPT, chat_quota: ATTRIBUTE })],
    ];
    for (const [label, res] of pages) {
      expect(res.status, label).toBeLessThan(500);
      expect(res.text, label).not.toContain(SCRIPT);
      expect(res.text, label).not.toContain('<img src=x');
      expect(res.text, label).not.toContain('onerror=alert(2)>');
      expectLockedDown(res, label);
    }
  });
});
