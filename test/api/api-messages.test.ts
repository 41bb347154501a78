import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';

const { app, driver } = useTestApp();

// zod's own wording, which says nothing to someone calling the API
const MACHINE_WORDS =
  /Invalid input|expected \w+, received|Too (small|big)|Unrecognized key|Invalid option|Invalid ISO/;

// bytes, so that fetch adds no Content-Type of its own
async function post(path: string, text: string, contentType?: string) {
  const body = new TextEncoder().encode(text);
  const headers: Record<string, string> = { Authorization: `Bearer ${TEST_ADMIN_KEY}` };
  if (contentType) headers['Content-Type'] = contentType;
  const res = await fetch(`${app.baseUrl}/api/v1${path}`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the management API explains refused requests in words a user understands', () => {
  it('asks for JSON when a form is sent (curl -d without a Content-Type header)', async () => {
    const res = await post(
      '/channels',
      'name=Orders&template=Hi',
      'application/x-www-form-urlencoded',
    );
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
    expect(res.body.detail).toMatch(/^Send JSON/);
    expect(res.body.detail).toContain('Content-Type: application/json');
  });

  it('reads a JSON body sent without any Content-Type, as the receiver does', async () => {
    const res = await post('/channels', JSON.stringify({ name: 'No header', template: 'Hi' }));
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('No header');
  });

  it('names the fields a body lacks', async () => {
    const res = await driver.api('post', '/channels').expect(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.detail).toBe('name: is required; template: is required');
  });

  it('explains ISO 8601 times, and how to write + in a URL', async () => {
    // an unencoded + arrives as a space
    const res = await driver.api('get', '/events?from=2026-11-23T10:00:00+01:00').expect(400);
    expect(res.body.detail).toMatch(/^from: must be an ISO 8601 time such as 2026-11-23T10:00:00Z/);
    expect(res.body.detail).toContain('%2B');
    await driver.api('get', '/events?from=2026-11-23T10:00:00%2B01:00').expect(200);
    await driver.api('get', '/events?from=2026-11-23').expect(200);
  });

  it('names an unknown query parameter and the known ones', async () => {
    const res = await driver.api('get', '/events?channel=1').expect(400);
    expect(res.body.detail).toContain('"channel" is not a known name');
    expect(res.body.detail).toContain('channel_id');
  });

  it('uses no machine wording for any invalid request', async () => {
    const channel = await driver.createChannel();
    const requests = [
      driver.api('post', '/channels').send({}),
      driver.api('post', '/channels').send({ name: '', template: 'x' }),
      driver.api('post', '/channels').send({ name: 'a'.repeat(201), template: 'x' }),
      driver.api('post', '/channels').send({ name: 5, template: ['x'] }),
      driver.api('post', '/channels').send({ name: 'a', template: 'x', enabled: 'yes' }),
      driver.api('post', '/channels').send({ name: 'a', template: 'x', colour: 'red' }),
      driver.api('patch', `/channels/${channel.id}`).send({ enabled: null }),
      driver.api('patch', '/workspace').send({ chat_quota: -1 }),
      driver.api('patch', '/workspace').send({ chat_quota: 1.5 }),
      driver.api('patch', '/workspace').send({ chat_quota: '10' }),
      driver.api('patch', '/workspace').send({ chats_used: 3 }),
      driver.api('patch', '/workspace').send({ name: '' }),
      driver.api('get', '/events?limit=0'),
      driver.api('get', '/events?limit=ten'),
      driver.api('get', '/events?status=bogus'),
      driver.api('get', '/events?from=yesterday'),
      driver.api('get', '/events?to=2021-02-30T00:00:00Z'),
      driver.api('get', '/events?channel_id=abc'),
      driver.api('get', '/events?cursor='),
      driver.api('get', '/events?unknown=x'),
    ];
    for (const res of await Promise.all(requests)) {
      expect(res.status, res.text).toBe(400);
      const detail = String(res.body.detail);
      expect(detail, detail).not.toMatch(MACHINE_WORDS);
      for (const error of res.body.errors as { message: string }[])
        expect(error.message).toMatch(/^(must|is|can|")/);
    }
  });

  it('says which values a field accepts', async () => {
    const status = await driver.api('get', '/events?status=bogus').expect(400);
    expect(status.body.detail).toContain('status: must be one of "pending"');
    const type = await driver.api('post', '/channels').send({ name: 'a', template: 7 }).expect(400);
    expect(type.body.detail).toBe('template: must be text (a JSON string), not a whole number');
    const quota = await driver.setWorkspace({ chat_quota: 1.5 }).expect(400);
    expect(quota.body.detail).toBe('chat_quota: must be a whole number, not 1.5');
  });
});
