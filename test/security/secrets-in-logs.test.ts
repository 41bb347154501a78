import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { PanelClient, cookieSet } from '../panel/panel-client.js';
import { Driver } from '../support/driver.js';
import { FakeAiServer } from '../support/fake-ai-server.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// A whole session of an admin, a script and senders, logged at the most detailed level: no
// secret any of them used may end up in the log.
const secret = (label: string) => `${label}-${randomBytes(18).toString('base64url')}`;
const ADMIN_API_KEY = secret('admin-api-key');
const ADMIN_EMAIL = 'owner@example.com';
const ADMIN_PASSWORD = secret('admin-password');
const NEW_PASSWORD = secret('new-password');
const AI_API_KEY = secret('sk-ai');

let ai: FakeAiServer;
let app: TestApp;

beforeAll(async () => {
  ai = await FakeAiServer.start();
  app = await startTestApp({
    env: {
      ADMIN_API_KEY,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      ...ai.env(),
      AI_API_KEY,
      AI_MAX_ATTEMPTS: '2',
      WORKER_RETRY_BASE_MS: '0',
      LOG_LEVEL: 'trace',
    },
  });
});

afterAll(async () => {
  await app.close();
  await ai.close();
});

const tokenOf = (webhookUrl: string) => new URL(webhookUrl).pathname.split('/').pop() as string;

/** A request line with an absolute URL, as some clients and proxies send it. */
function postAbsoluteForm(baseUrl: string, path: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${baseUrl}${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 2\r\nConnection: close\r\n\r\n{}',
      );
    });
    let answer = '';
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.on('end', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

it('no token, key, password, cookie or CSRF token used in a full session appears in the log', async () => {
  const secrets: Record<string, string> = {
    ADMIN_API_KEY,
    'admin password': ADMIN_PASSWORD,
    'new admin password': NEW_PASSWORD,
    AI_API_KEY,
  };
  const admin = new Driver(app, ADMIN_API_KEY);

  // A script creates a channel with ADMIN_API_KEY; senders post to it, well and badly.
  const orders = await admin.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
  secrets['first webhook token'] = tokenOf(orders.webhook_url);
  const token = secrets['first webhook token'];
  expect((await admin.sendEvent(orders.webhook_url, { order: { id: 1 } })).status).toBe(200);
  expect((await admin.sendEvent(orders.webhook_url, '{"order":')).status).toBe(400);
  expect(
    (await admin.sendEvent(orders.webhook_url, 'a=1', { contentType: 'text/plain' })).status,
  ).toBe(415);
  expect((await admin.sendEvent(orders.webhook_url, {}, { method: 'GET' })).status).toBe(405);
  // The same token in URLs that routing accepts, or that a sender joined badly.
  expect((await admin.sendEvent(`${app.baseUrl}/HOOKS/${token}`)).status).toBe(200);
  expect((await admin.sendEvent(`${app.baseUrl}/hooks/${token}?source=shop`)).status).toBe(200);
  expect((await admin.sendEvent(`${app.baseUrl}//hooks/${token}`)).status).toBe(404);
  expect((await admin.sendEvent(`${app.baseUrl}/hooks//${token}`)).status).toBe(404);
  expect(await postAbsoluteForm(app.baseUrl, `/hooks/${token}`)).toBe('HTTP/1.1 200 OK');

  // The admin signs in (after one wrong try), opens pages, and creates an API key.
  const panel = new PanelClient(app);
  secrets['sign-in form cookie'] = cookieSet(await panel.page('/login'), 'hookprompt_login') ?? '';
  expect((await panel.signIn(ADMIN_EMAIL, `${ADMIN_PASSWORD}-wrong`)).status).toBe(401);
  const signedIn = await panel.signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
  expect(signedIn.status).toBe(303);
  secrets['session cookie'] = cookieSet(signedIn, 'hookprompt_session') as string;
  secrets['CSRF token'] = panel.csrf;
  const created = await panel.form('/workspace/api-keys', { name: 'Deploy script' });
  expect(created.status).toBe(201);
  const panelKey = /id="new-api-key" class="secret-box" value="([^"]+)"/.exec(created.text)?.[1];
  secrets['panel-created API key'] = panelKey as string;

  // A script uses the panel-created key; a mistyped key is refused.
  const script = new Driver(app, panelKey);
  const signups = await script.createChannel({ name: 'Signups', template: 'Hi {{name}}' });
  secrets['second webhook token'] = tokenOf(signups.webhook_url);
  await script.updateChannel(signups.id, { template: 'Hello {{name}}' }).expect(200);
  await script.api('get', '/events?status=pending').expect(200);
  await new Driver(app, `${panelKey}x`).api('get', '/channels').expect(401);
  expect((await script.sendEvent(signups.webhook_url, { name: 'Ada' })).status).toBe(200);

  // The URL is regenerated by the API and by the panel; the old URLs answer 404.
  const renewed = await admin.api('post', `/channels/${orders.id}/regenerate-url`).expect(200);
  secrets['regenerated webhook token (API)'] = tokenOf(renewed.body.webhook_url);
  expect((await admin.sendEvent(orders.webhook_url)).status).toBe(404);
  expect((await panel.form(`/channels/${signups.id}/regenerate`)).status).toBe(303);
  const panelUrl = await panel.webhookUrl(signups.id);
  secrets['regenerated webhook token (panel)'] = tokenOf(panelUrl);
  expect((await admin.sendEvent(signups.webhook_url)).status).toBe(404);
  expect((await admin.sendEvent(panelUrl, { name: 'Grace' })).status).toBe(200);
  expect(
    (await panel.form(`/channels/${signups.id}/test`, { sample: '{"name":"Linus"}' })).status,
  ).toBe(200);

  // The worker asks the model: refused once (quoting the key), failing once, answering after.
  ai.enqueue(
    { status: 401, body: { error: { message: `Incorrect API key provided: ${AI_API_KEY}` } } },
    { status: 500, body: `upstream error for key ${AI_API_KEY}` },
  );
  const worker = createWorker(app.ctx);
  while ((await worker.runOnce()) > 0);
  expect(ai.requests.every((r) => r.headers.authorization === `Bearer ${AI_API_KEY}`)).toBe(true);
  const statuses = await app.ctx.db.query<{ status: string }>(
    `select distinct status from events order by status`,
  );
  expect(statuses.rows.map((row) => row.status)).toEqual(['failed', 'rejected', 'replied']);

  // Pages that show all of it, a password change, and sign-out.
  for (const path of ['/channels', `/channels/${orders.id}`, '/logs', '/logs/1', '/workspace'])
    expect((await panel.page(path)).status, path).toBe(200);
  const changed = await panel.form('/account/password', {
    current_password: ADMIN_PASSWORD,
    new_password: NEW_PASSWORD,
    confirm_password: NEW_PASSWORD,
  });
  expect(changed.status).toBe(303);
  expect((await panel.form('/logout')).status).toBe(303);

  // Finally the database goes away: errors are logged with their details, still without secrets.
  // (the channel-change listener first, or closing would wait for it)
  await app.ctx.ingest.stop();
  await app.ctx.db.close();
  expect((await admin.sendEvent(renewed.body.webhook_url)).status).toBe(503);
  await request(app.baseUrl)
    .get('/api/v1/channels')
    .set('Authorization', `Bearer ${panelKey}`)
    .expect(500);
  await request(app.baseUrl)
    .get('/channels')
    .set('Cookie', `hookprompt_session=${secrets['session cookie']}`)
    .expect(500);

  const log = app.logText();
  // The log did record the session: requests, sign-in, key creation, AI failures, storage errors.
  for (const line of [
    '"url":"/hooks/[redacted]"',
    'admin signed in',
    'API key created in the panel',
    'event failed',
    'webhook event could not be stored',
  ])
    expect(log).toContain(line);
  for (const [name, value] of Object.entries(secrets)) {
    expect(value.length, name).toBeGreaterThanOrEqual(16);
    expect(log.includes(value), `${name} is in the log`).toBe(false);
  }
});
