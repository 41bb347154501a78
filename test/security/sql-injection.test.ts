import { beforeAll, describe, expect, it } from 'vitest';
import { PanelClient, ADMIN_ENV } from '../panel/panel-client.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });

// Every filter and id the API and the panel read from a URL, given what attackers type into
// them. The answer must be a refusal (400/404) or an empty or own-workspace result: never a
// 500, never another workspace's data, and the tables stay as they were.
const PAYLOADS = [
  `' or '1'='1`,
  `1' or '1'='1' --`,
  `1; drop table events; --`,
  `1); drop table events; --`,
  `1) or (1=1`,
  `1 or 1=1`,
  `1 union select id, payload from events --`,
  `'; select pg_sleep(5); --`,
  `1::text`,
  `$1`,
  `\\'; delete from events; --`,
  `\u2019 or \u20191\u2019=\u20191`, // right single quotation marks
  `\uFF07 or \uFF071\uFF07=\uFF071`, // fullwidth apostrophes
  `\u02BC or \u02BC1\u02BC=\u02BC1`, // modifier letter apostrophe
  `\u0000`,
  `1\u0000' or '1'='1`,
  `-1`,
  `0`,
  `1.5`,
  `1e3`,
  `99999999999999999999`,
  `9223372036854775808`,
  '9'.repeat(5000),
  `x'${'a'.repeat(6000)}`,
  `2021-01-01T00:00:00Z' or '1'='1`,
  `2021-01-01T00:00`,
];

const THEIR_NAME = 'Their secret channel';
const THEIR_MARK = 'their-private-payload';

let panel: PanelClient;
let ours: ChannelJson;
let theirs: ChannelJson;
let theirEventId: string;

interface TablesSnapshot {
  events: string[];
  channels: string[];
  workspaces: string[];
  apiKeys: string[];
}

async function snapshot(): Promise<TablesSnapshot> {
  const rows = async (sql: string) =>
    (await app.ctx.db.query<{ row: string }>(sql)).rows.map((r) => r.row);
  return {
    events: await rows('select e::text as row from events e order by id'),
    channels: await rows('select c::text as row from channels c order by id'),
    workspaces: await rows('select w::text as row from workspaces w order by id'),
    // last_used_at moves with every API call, so only what identifies a key is compared
    apiKeys: await rows(
      `select concat_ws(' ', id, workspace_id, key_hash, revoked_at) as row from api_keys order by id`,
    ),
  };
}

beforeAll(async () => {
  ours = await driver.createChannel({ name: 'Ours', template: 'Order {{order.id}}' });
  for (let id = 1; id <= 3; id++) await driver.sendEvent(ours.webhook_url, { order: { id } });

  const other = await app.ctx.workspaces.create('Their workspace', 100);
  const { key } = await app.ctx.apiKeys.create(other.id, 'theirs');
  const them = new Driver(app, key);
  theirs = await them.createChannel({ name: THEIR_NAME, template: 'Secret {{mark}}' });
  const sent = await them.sendEvent(theirs.webhook_url, { mark: THEIR_MARK });
  theirEventId = String(sent.body.event_id);

  panel = new PanelClient(app);
  await panel.signIn();
});

interface Probe {
  label: string;
  send: (payload: string) => Promise<{ status: number; text: string }>;
  /** Statuses that are a correct refusal (a 200 must then show nothing of another workspace). */
  refusals: number[];
}

const enc = encodeURIComponent;
const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

const api = (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) =>
  body ? driver.api(method, path).send(body) : driver.api(method, path);

const PROBES: Probe[] = [
  ...['from', 'to', 'status', 'cursor', 'channel_id', 'limit'].map((name) => ({
    label: `GET /api/v1/events?${name}=`,
    send: (p: string) => api('get', `/events?${query({ [name]: p })}`),
    refusals: [400],
  })),
  {
    label: 'GET /api/v1/events?channel_id=&status=',
    send: (p) => api('get', `/events?${query({ channel_id: theirs.id, status: p })}`),
    refusals: [400],
  },
  {
    label: 'GET /api/v1/events/{id}',
    send: (p) => api('get', `/events/${enc(p)}`),
    refusals: [404],
  },
  {
    label: 'GET /api/v1/channels/{id}',
    send: (p) => api('get', `/channels/${enc(p)}`),
    refusals: [404],
  },
  {
    label: 'PATCH /api/v1/channels/{id}',
    send: (p) => api('patch', `/channels/${enc(p)}`, { name: 'Renamed' }),
    refusals: [404],
  },
  {
    label: 'DELETE /api/v1/channels/{id}',
    send: (p) => api('delete', `/channels/${enc(p)}`),
    refusals: [404],
  },
  {
    label: 'POST /api/v1/channels/{id}/regenerate-url',
    send: (p) => api('post', `/channels/${enc(p)}/regenerate-url`),
    refusals: [404],
  },
  ...['', '/regenerate', '/delete'].map((suffix) => ({
    label: `GET /channels/:id${suffix}`,
    send: (p: string) => panel.page(`/channels/${enc(p)}${suffix}`),
    refusals: [404],
  })),
  ...['', '/preview', '/test', '/disable', '/enable', '/regenerate', '/delete'].map((suffix) => ({
    label: `POST /channels/:id${suffix}`,
    send: (p: string) => panel.form(`/channels/${enc(p)}${suffix}`, { name: 'x', template: 'y' }),
    refusals: [404],
  })),
  {
    label: 'POST /workspace/api-keys/:id/revoke',
    send: (p) => panel.form(`/workspace/api-keys/${enc(p)}/revoke`),
    refusals: [404],
  },
  { label: 'GET /logs/:id', send: (p) => panel.page(`/logs/${enc(p)}`), refusals: [404] },
  {
    label: 'GET /logs?channel=',
    send: (p) => panel.page(`/logs?${query({ channel: p })}`),
    refusals: [404],
  },
  {
    label: 'GET /logs?cursor=',
    send: (p) => panel.page(`/logs?${query({ cursor: p })}`),
    refusals: [400],
  },
  // The page shows every event of the workspace with a note that the value was ignored.
  ...['status', 'from', 'to', 'since'].map((name) => ({
    label: `GET /logs?${name}=`,
    send: (p: string) => panel.page(`/logs?${query({ [name]: p })}`),
    refusals: [],
  })),
];

describe('SQL injection', () => {
  it.each(PROBES)('$label: refused or harmless for every payload', async (probe) => {
    const before = await snapshot();
    const problems: string[] = [];
    for (const payload of PAYLOADS) {
      const res = await probe.send(payload);
      const shown = payload.length > 40 ? `${payload.slice(0, 40)}… (${payload.length})` : payload;
      if (res.status === 200) {
        if (res.text.includes(THEIR_NAME) || res.text.includes(THEIR_MARK))
          problems.push(`${JSON.stringify(shown)}: shows another workspace's data`);
      } else if (!probe.refusals.includes(res.status)) {
        problems.push(`${JSON.stringify(shown)}: ${res.status}`);
      }
    }
    expect(problems).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('a filtered list never returns more than the filter allows', async () => {
    // Values that would widen a query built by pasting text are refused; valid ones are exact.
    const own = await api('get', `/events?${query({ channel_id: ours.id })}`).expect(200);
    expect(own.body.data).toHaveLength(3);
    const foreign = await api('get', `/events?${query({ channel_id: theirs.id })}`).expect(200);
    expect(foreign.body.data).toEqual([]);
    await api('get', `/events/${theirEventId}`).expect(404);
    expect((await panel.page(`/logs?${query({ channel: theirs.id })}`)).status).toBe(404);
    expect((await panel.page(`/logs/${theirEventId}`)).status).toBe(404);
  });

  it('ids and filters that are not even valid percent-encoding are refused', async () => {
    for (const bad of ['%E0%A4%A', '%', '%zz', '%C0%AF', '%ED%A0%80']) {
      const statuses = [
        (await api('get', `/channels/${bad}`)).status,
        (await api('get', `/events/${bad}`)).status,
        (await api('get', `/events?status=${bad}`)).status,
        (await panel.page(`/channels/${bad}`)).status,
        (await panel.page(`/logs/${bad}`)).status,
        (await panel.page(`/logs?channel=${bad}`)).status,
      ];
      expect(
        statuses.every((status) => status === 400 || status === 404),
        `${bad}: ${statuses}`,
      ).toBe(true);
    }
  });

  it('text fields store attack strings literally', async () => {
    for (const payload of PAYLOADS.filter((p) => !p.includes('\u0000') && p.length <= 200)) {
      const created = await api('post', '/channels', { name: payload, template: payload }).expect(
        201,
      );
      const read = await api('get', `/channels/${created.body.id}`).expect(200);
      expect(read.body).toMatchObject({ name: payload, template: payload });
      await api('delete', `/channels/${created.body.id}`).expect(204);
    }
    const renamed = await api('patch', '/workspace', { name: `w' or '1'='1` }).expect(200);
    expect(renamed.body.name).toBe(`w' or '1'='1`);
    const { rows } = await app.ctx.db.query<{ name: string }>('select name from workspaces');
    expect(rows.map((r) => r.name).sort()).toEqual([`Their workspace`, `w' or '1'='1`]);
  });
});
