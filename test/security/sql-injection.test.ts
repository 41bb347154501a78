import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { PanelClient, ADMIN_ENV } from '../panel/panel-client.js';
import { appRoutes } from '../support/app-routes.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';
import {
  ID_ROUTES,
  NOT_ID_ROUTES,
  ROW_ID_PARTS,
  routeShape,
  type Answer,
  type PathPart,
} from './id-routes.js';

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

// Ids that are not a row id in every way one can be wrong: these must never reach SQL (a `::bigint`
// of one fails the statement: a 500), and answer as an unknown id does.
const MALFORMED_IDS = ['abc', '01', '+1', ' 1', '1 ', '\uFF11', '0x10', ...PAYLOADS];

describe('row ids in a path', () => {
  /** A real record of each kind, for the parts of a path that are not the one malformed. */
  const valid = {} as Record<PathPart, string>;

  beforeAll(async () => {
    const walked = await driver.createChannel({
      name: 'Walked',
      template: 'Walked {{x}}',
      destinations: [{ kind: 'webhook', url: 'https://example.com/walked', enabled: false }],
    });
    const sent = await driver.sendEvent(walked.webhook_url, { x: 1 });
    const trial = await driver
      .api('post', `/channels/${walked.id}/trials`)
      .send({ events: { last: 1 } })
      .expect(202);
    const stored = await driver.api('get', `/channels/${walked.id}`).expect(200);
    Object.assign(valid, {
      channel: walked.id,
      event: String(sent.body.event_id),
      trial: String(trial.body.id),
      destination: String(stored.body.destinations[0].id),
      token: walked.webhook_url.slice(walked.webhook_url.lastIndexOf('/') + 1),
      version: '1',
    });
  });

  it('walks every route with a parameter in its path', () => {
    const served = appRoutes(createApp(app.ctx))
      .filter((route) => route.path.includes('{'))
      .map(routeShape);
    const walked = [...ID_ROUTES.map((route) => route.route), ...NOT_ID_ROUTES];
    expect(served.filter((route) => !walked.includes(route))).toEqual([]);
    expect(walked.filter((route) => !served.includes(route))).toEqual([]);
  });

  it.each(ID_ROUTES)('$route: a malformed id is not found, and changes nothing', async (walk) => {
    const before = await snapshot();
    const problems: string[] = [];
    const [method = '', path = ''] = walk.route.split(' ');
    for (const [index, part] of walk.parts.entries()) {
      if (!ROW_ID_PARTS.includes(part)) continue;
      const expected = walk.answers[index] as Answer;
      for (const id of MALFORMED_IDS) {
        let at = 0;
        const url = path.replace(/\{\}/g, () => {
          const value = at === index ? id : valid[walk.parts[at] as PathPart];
          at++;
          return enc(value);
        });
        const res = await send(method, url, walk.body);
        if (!answers(res, expected)) {
          const shown = id.length > 40 ? `${id.slice(0, 40)}… (${id.length})` : id;
          problems.push(
            `${JSON.stringify(shown)} as part ${index}: ${res.status} ${detailOf(res)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
    // A refusal changes nothing.
    if (Object.values(walk.answers).every((answer) => (answer?.status ?? 0) >= 400))
      expect(await snapshot()).toEqual(before);
  });
});

describe('row ids in a query string or a body', () => {
  // The panel trims what a form or a query gives (` 1` is channel 1 there): those are left out.
  const ids = MALFORMED_IDS.filter((id) => id === id.trim());
  // A JSON body may give an id as a number: these are not row ids either.
  const numbers = [-1, 0, 1.5, 1e21, 2 ** 63, Number.MAX_SAFE_INTEGER + 2];
  let channelId: string;
  let eventId: string;

  beforeAll(async () => {
    const channel = await driver.createChannel({ name: 'Fields', template: 'Fields {{x}}' });
    channelId = channel.id;
    eventId = String((await driver.sendEvent(channel.webhook_url, { x: 1 })).body.event_id);
  });

  const channelIdRefused: Answer = { status: 400, detail: 'channel_id: must be a channel id' };
  const FIELDS: {
    label: string;
    send: (id: string | number) => Promise<{ status: number; text: string; type: string }>;
    answer: Answer;
    /** For a JSON body: what the id answers given as a number. */
    numbers?: (id: number) => Answer;
  }[] = [
    ...['/events', '/events/export', '/events/stream'].map((path) => ({
      label: `GET /api/v1${path}?channel_id=`,
      send: (id: string | number) => api('get', `${path}?${query({ channel_id: String(id) })}`),
      answer: channelIdRefused,
    })),
    {
      label: 'POST /api/v1/events/replay {channel_id}',
      send: (id) => api('post', '/events/replay', { channel_id: id, dry_run: true }),
      answer: channelIdRefused,
      numbers: () => ({ status: 400, detail: 'channel_id: Invalid input' }),
    },
    {
      label: 'POST /api/v1/channels/{id}/trials {events: {ids}}',
      send: (id) => api('post', `/channels/${channelId}/trials`, { events: { ids: [id] } }),
      answer: { status: 400, detail: 'events.ids.0: must be an event id' },
      numbers: () => ({ status: 400, detail: 'events: Invalid input' }),
    },
    {
      label: 'POST /api/v1/alerts {condition: {channel_id}}',
      send: (id) =>
        api('post', '/alerts', {
          name: 'Fails',
          condition: { type: 'delivery_failed', channel_id: id },
          notify: { kind: 'webhook', url: 'https://alerts.example.com/hook' },
        }),
      answer: { status: 400, detail: 'condition.channel_id: must be a channel id' },
      numbers: (id) => ({
        status: 400,
        detail: `condition.channel_id: ${
          id > Number.MAX_SAFE_INTEGER
            ? `must be at most ${Number.MAX_SAFE_INTEGER}`
            : Number.isInteger(id)
              ? 'must be a channel id'
              : 'Invalid input'
        }`,
      }),
    },
    {
      label: 'PATCH /api/v1/channels/{id} {destinations: [{id}]}',
      send: (id) =>
        api('patch', `/channels/${channelId}`, {
          destinations: [{ id, kind: 'webhook', url: 'https://example.com/hook' }],
        }),
      answer: { status: 400, detail: 'destinations.0.id: must be a destination id' },
    },
    {
      label: 'GET /logs?channel=',
      send: (id) => panel.page(`/logs?${query({ channel: String(id) })}`),
      answer: { status: 404, detail: 'This channel does not exist.' },
    },
    {
      label: 'GET /logs?delivery_to=',
      send: (id) => panel.page(`/logs?${query({ delivery_to: String(id) })}`),
      answer: { status: 200, shows: 'showing every target.' },
    },
    {
      // A channel that cannot exist matches no event, like an unknown one.
      label: 'GET /logs/export?channel=',
      send: (id) => panel.page(`/logs/export?${query({ format: 'jsonl', channel: String(id) })}`),
      answer: { status: 200, text: '' },
    },
    {
      label: 'POST /logs/{id}/deliver-again destination_id=',
      send: (id) => panel.form(`/logs/${eventId}/deliver-again`, { destination_id: String(id) }),
      answer: { status: 404, detail: 'This destination does not exist.' },
    },
    {
      label: 'GET /channels/{id}?sample_event=',
      send: (id) => panel.page(`/channels/${channelId}?${query({ sample_event: String(id) })}`),
      answer: { status: 404, detail: 'This event does not exist.' },
    },
  ];

  it.each(FIELDS)('$label: a malformed id answers as before', async (field) => {
    const before = await snapshot();
    const problems: string[] = [];
    const probes = [
      ...ids.map((id) => [id, field.answer] as const),
      ...numbers.flatMap((id) => (field.numbers ? [[id, field.numbers(id)] as const] : [])),
    ];
    for (const [id, expected] of probes) {
      const res = await field.send(id);
      const shown = typeof id === 'string' && id.length > 40 ? `${id.slice(0, 40)}…` : id;
      if (!answers(res, expected))
        problems.push(`${JSON.stringify(shown)}: ${res.status} ${detailOf(res)}`);
    }
    expect(problems).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });
});

/** Whether a response is the expected answer: its status, and its detail or text. */
function answers(res: { status: number; text: string; type: string }, expected: Answer): boolean {
  if (res.status !== expected.status) return false;
  if (expected.text !== undefined) return res.text === expected.text;
  if (expected.shows !== undefined) return res.text.includes(expected.shows);
  return detailOf(res) === expected.detail;
}

/** The words of a refusal: a problem's `detail`, or what the panel's error page says. */
function detailOf(res: { text: string; type: string }): string | undefined {
  if (/^text\/html/.test(res.type))
    return /<div class="error-code">\d+<\/div>\s*<h1>[^<]*<\/h1>\s*<p>([^<]*)<\/p>/.exec(
      res.text,
    )?.[1];
  return (JSON.parse(res.text || '{}') as { detail?: string }).detail;
}

/** One request as its caller would make it: the API with a key, the panel signed in. */
function send(method: string, path: string, body: Record<string, unknown> | undefined) {
  if (path.startsWith('/api/') || path.startsWith('/hooks/')) {
    const verb = method === 'all' ? 'get' : (method as 'get' | 'post' | 'patch' | 'delete');
    const req = request(app.baseUrl)[verb](path);
    if (path.startsWith('/api/')) req.set('Authorization', `Bearer ${TEST_ADMIN_KEY}`);
    return body ? req.send(body) : req;
  }
  if (method === 'get') return panel.page(path);
  return panel.form(path, (body ?? {}) as Record<string, string>);
}
