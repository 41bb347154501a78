import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ALERT_MESSAGE } from '../../src/alerts/notify-destination.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';

const receiver = useReplyReceiver();
// Loopback notify URLs are refused, as they are by default.
const { app, driver } = useTestApp();
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});
beforeEach(async () => {
  await app.ctx.db.query('delete from alerts');
});

const NOTIFY = { kind: 'webhook', url: 'https://alerts.example.com/hookprompt' };
/** A notify as the API shows it: with the message chat destinations get. */
const SHOWN_NOTIFY = { ...NOTIFY, message: DEFAULT_ALERT_MESSAGE };
const FAILURES = {
  type: 'failure_rate',
  channel_id: '',
  threshold: 0.25,
  window_s: 300,
  min_events: 10,
};

const create = (body: Record<string, unknown>) => driver.api('post', '/alerts').send(body);

/** The field paths a 400 names. */
async function refusedPaths(body: Record<string, unknown>): Promise<string[]> {
  const res = await create(body);
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  return (res.body.errors as { path: string }[]).map((error) => error.path);
}

describe('the alerts API', () => {
  it('creates, lists, reads, changes and deletes an alert', async () => {
    const condition = { ...FAILURES, channel_id: channel.id };
    const created = await create({ name: 'Orders failing', condition, notify: NOTIFY });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Orders failing',
      condition,
      notify: SHOWN_NOTIFY,
      enabled: true,
      for_s: 0,
      state: 'ok',
      since: null,
      last_value: null,
    });
    const id = created.body.id as string;
    expect((await driver.api('get', '/alerts').expect(200)).body).toEqual({ data: [created.body] });
    expect((await driver.api('get', `/alerts/${id}`).expect(200)).body).toEqual(created.body);

    const changed = await driver
      .api('patch', `/alerts/${id}`)
      .send({ enabled: false, condition: { type: 'queue_age', seconds: 120 } })
      .expect(200);
    expect(changed.body).toMatchObject({
      name: 'Orders failing',
      enabled: false,
      condition: { type: 'queue_age', seconds: 120 },
      notify: SHOWN_NOTIFY,
    });

    await driver.api('delete', `/alerts/${id}`).expect(204);
    await driver.api('get', `/alerts/${id}`).expect(404);
    await driver.api('delete', `/alerts/${id}`).expect(404);
    await driver.api('patch', `/alerts/nope`).send({ enabled: true }).expect(404);
  });

  it('accepts each of the five conditions', async () => {
    const conditions = [
      { type: 'failure_rate', threshold: 0.5, window_s: 600, min_events: 5 },
      { type: 'rejections', channel_id: channel.id, count: 10, window_s: 60 },
      { type: 'delivery_failed' },
      { type: 'queue_age', seconds: 300 },
      { type: 'budget', percent: 80 },
    ];
    for (const condition of conditions)
      expect((await create({ name: condition.type, condition, notify: NOTIFY })).status).toBe(201);
    const listed = (await driver.api('get', '/alerts').expect(200)).body.data as {
      condition: unknown;
    }[];
    expect(listed.map((alert) => alert.condition)).toEqual(conditions);
  });

  it('refuses invalid alerts, naming the fields', async () => {
    expect(
      await refusedPaths({ condition: { type: 'budget', percent: 80 }, notify: NOTIFY }),
    ).toEqual(['name']);
    expect(
      await refusedPaths({ name: 'x', condition: { type: 'no-such-type' }, notify: NOTIFY }),
    ).toEqual(['condition.type']);
    expect(
      await refusedPaths({
        name: 'x',
        condition: { type: 'failure_rate', threshold: 2, window_s: 300 },
        notify: NOTIFY,
      }),
    ).toEqual(['condition.threshold', 'condition.min_events']);
    expect(
      await refusedPaths({
        name: 'x',
        condition: { type: 'rejections', count: 5, window_s: 60, channel_id: '999999' },
        notify: NOTIFY,
      }),
    ).toEqual(['condition.channel_id']);
    expect(
      await refusedPaths({
        name: 'x',
        condition: { type: 'budget', percent: 80 },
        notify: { kind: 'webhook', url: 'ftp://example.com/' },
      }),
    ).toEqual(['notify.url']);
  });

  it('takes any destination kind as notify, its secret sealed and shown only as set', async () => {
    const hook = 'https://hooks.slack.com/services/T0/B0/secret-part-0123';
    const created = await create({
      name: 'To Slack',
      condition: { type: 'budget', percent: 80 },
      notify: { kind: 'slack', webhook_url: hook, message: '{{alert.name}} is {{state}}' },
    });
    expect(created.status).toBe(201);
    expect(created.body.notify).toEqual({
      kind: 'slack',
      url_set: true,
      channel: null,
      thread_ts: null,
      message: '{{alert.name}} is {{state}}',
    });
    expect(created.text).not.toContain('secret-part');
    const { rows } = await app.ctx.db.query<{ notify: unknown; notify_secret: string }>(
      'select notify, notify_secret from alerts where id = $1',
      [created.body.id],
    );
    expect(JSON.stringify(rows[0]?.notify)).not.toContain('secret-part');
    expect(rows[0]?.notify_secret).toMatch(/^enc:v1:/);

    // Sent back without its secret, the same kind keeps it; another kind must bring its own.
    const id = created.body.id as string;
    const kept = await driver
      .api('patch', `/alerts/${id}`)
      .send({ notify: { kind: 'slack', message: 'Changed' } })
      .expect(200);
    expect(kept.body.notify).toMatchObject({ url_set: true, message: 'Changed' });
    const telegram = await driver
      .api('patch', `/alerts/${id}`)
      .send({ notify: { kind: 'telegram', chat_id: '42' } });
    expect(telegram.status).toBe(400);
    expect(telegram.body.errors).toEqual([
      { path: 'notify.bot_token', message: 'is needed for a telegram notify' },
    ]);
    expect(
      await refusedPaths({
        name: 'x',
        condition: { type: 'budget', percent: 80 },
        notify: { kind: 'teams' },
      }),
    ).toEqual(['notify.webhook_url']);
    expect(
      await refusedPaths({
        name: 'x',
        condition: { type: 'budget', percent: 80 },
        notify: { kind: 'pager' },
      }),
    ).toEqual(['notify.kind']);
  });

  it('refuses a notify URL on this host unless DELIVERY_ALLOW_PRIVATE is set', async () => {
    const res = await create({
      name: 'x',
      condition: { type: 'budget', percent: 80 },
      notify: { kind: 'webhook', url: receiver.url('/alerts') },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^notify\.url: refused: .*DELIVERY_ALLOW_PRIVATE=true/);
  });

  it('gives the workspace one alert secret, the same every time, kept from other workspaces', async () => {
    const first = await driver.api('get', '/alerts/secret').expect(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    expect((await driver.api('get', '/alerts/secret').expect(200)).body).toEqual(first.body);
    // Stored sealed: the database holds no trace of it.
    const { rows } = await app.ctx.db.query<{ alert_secret: string }>(
      'select alert_secret from workspaces where alert_secret is not null',
    );
    expect(rows[0]?.alert_secret).toMatch(/^enc:v1:/);
    expect(app.logText()).not.toContain(first.body.secret);

    const { rows: other } = await app.ctx.db.query<{ id: string }>(
      `insert into workspaces (name, chat_quota) values ('Other', 10) returning id`,
    );
    const otherDriver = new Driver(app, (await app.ctx.apiKeys.create(other[0]!.id, 'other')).key);
    const theirs = await otherDriver.api('get', '/alerts/secret').expect(200);
    expect(theirs.body.secret).not.toBe(first.body.secret);

    const mine = await create({
      name: 'mine',
      condition: { type: 'delivery_failed' },
      notify: NOTIFY,
    });
    await otherDriver.api('get', `/alerts/${mine.body.id as string}`).expect(404);
    expect((await otherDriver.api('get', '/alerts').expect(200)).body).toEqual({ data: [] });
    const refused = await otherDriver.api('post', '/alerts').send({
      name: 'x',
      condition: { type: 'delivery_failed', channel_id: channel.id },
      notify: NOTIFY,
    });
    expect(refused.status).toBe(400);
  });

  it('holds at most 100 alerts a workspace: the next create is 409 limit_reached, also when sent at once', async () => {
    const workspace = app.ctx.defaultWorkspaceId;
    // 97 stored as the API would store them; the last places are taken through the API.
    await app.ctx.db.query(
      `insert into alerts (workspace_id, name, condition, notify)
       select $1, 'Alert ' || n, '{"type": "queue_age", "seconds": 60}', $2
       from generate_series(1, 97) n`,
      [workspace, JSON.stringify(NOTIFY)],
    );
    const body = (name: string) => ({
      name,
      condition: { type: 'queue_age', seconds: 60 },
      notify: NOTIFY,
    });
    await create(body('98th')).expect(201);
    // Four at once for the last two places: two are created, two refused.
    const racing = await Promise.all(['a', 'b', 'c', 'd'].map((name) => create(body(name))));
    expect(racing.map((res) => res.status).sort()).toEqual([201, 201, 409, 409]);
    const refused = await create(body('101st'));
    expect(refused.status).toBe(409);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      status: 409,
      code: 'limit_reached',
      type: 'urn:hookprompt:problem:limit_reached',
      limit: 100,
    });
    expect(refused.body.detail).toMatch(/at most 100 alerts/);
    const listed = (await driver.api('get', '/alerts').expect(200)).body.data as { id: string }[];
    expect(listed).toHaveLength(100);

    // A place freed is a place to take; changing an alert is never refused.
    await driver.api('patch', `/alerts/${listed[0]!.id}`).send({ name: 'renamed' }).expect(200);
    await driver.api('delete', `/alerts/${listed[1]!.id}`).expect(204);
    await create(body('again')).expect(201);
  });
});
