import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver } from '../support/driver.js';
import { useFakeAi } from '../support/harness.js';
import { runAdmin as admin } from '../support/admin-command.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';
import { ADMIN_EMAIL, ADMIN_ENV, ADMIN_PASSWORD } from '../panel/panel-client.js';

const github = SIGNERS.find((signer) => signer.scheme === 'github') as (typeof SIGNERS)[number];
const newKey = () => randomBytes(32).toString('hex');

/** Everything a user keeps, made through the API on the embedded database. */
async function fillEmbedded(app: TestApp, aiUrl: string) {
  const driver = new Driver(app);
  const api = (method: 'get' | 'post' | 'put' | 'patch', path: string, body?: object) =>
    driver.api(method, path).send(body);
  const provider = await api('post', '/providers', {
    name: 'office-model',
    kind: 'openai',
    base_url: aiUrl,
    api_key: 'sk-copy-provider-key-4242',
  }).expect(201);
  await api('put', '/prices/gpt-fake', { input_per_mtok: 1, output_per_mtok: 2 }).expect(200);
  const channel = await driver.createChannel({
    name: 'Orders',
    template: 'New order {{order.id}}',
    verification: { scheme: 'github', secret: github.secret },
    reply_delivery: { url: 'https://bot:s3cret-pass@replies.example.com/hook' },
    allowed_origins: ['https://shop.example.com'],
    ai: { provider: 'office-model', model: 'gpt-fake', reply_cache_s: 3600 },
  });
  await driver.updateChannel(channel.id, { template: 'Order {{order.id}} arrived' }).expect(200);
  await api('post', '/alerts', {
    name: 'failures',
    condition: { type: 'failure_rate', threshold: 0.5, window_s: 300, min_events: 10 },
    notify: { kind: 'webhook', url: 'https://hooks.example.com/alert?token=alert-token-77' },
  }).expect(201);
  // A tool's headers (sealed whole) and its URL with a query token (sealed as a `url`).
  await api('post', '/tools', {
    name: 'order-tools',
    kind: 'mcp',
    description: 'Order tools',
    url: 'https://mcp.invalid/mcp?key=tool-query-key-5151',
    allowed_tools: ['lookup'],
    headers: { 'X-Tool-Key': 'tool-header-key-6262' },
  }).expect(201);
  const key = await api('post', '/api-keys', { name: 'copied key' }).expect(201);
  for (let id = 1; id <= 30; id++) {
    const body = JSON.stringify({ order: { id } });
    const headers = await github.sign(body, github.secret, nowSeconds());
    expect((await driver.sendEvent(channel.webhook_url, body, { headers })).status).toBe(200);
  }
  await driver.sendEvent(channel.webhook_url, '{"unsigned": true}'); // rejected: 401
  const worker = createWorker(app.ctx);
  const answerAll = async () => {
    while ((await driver.eventsOf(channel.id)).some((e) => e.status === 'pending'))
      await worker.runOnce();
  };
  await answerAll();
  // Order 1 again, once its reply is in: served from the reply cache (cached_from).
  const again = JSON.stringify({ order: { id: 1 } });
  const signed = await github.sign(again, github.secret, nowSeconds());
  expect((await driver.sendEvent(channel.webhook_url, again, { headers: signed })).status).toBe(
    200,
  );
  await answerAll();
  return { channel, provider: provider.body as { id: string }, apiKey: key.body.key as string };
}

/** The events of a channel with what the reply cache keeps of them. */
async function eventRows(app: TestApp, channelId: string) {
  const { rows } = await app.ctx.db.query<{
    id: string;
    status: string;
    payload: string;
    cached_from: string | null;
    request_hash: string | null;
  }>(
    `select id::text, status, payload, cached_from::text, encode(request_hash, 'hex') as request_hash
     from events where channel_id = $1 order by id`,
    [channelId],
  );
  return rows;
}

describe.skipIf(!testDatabaseUrl)('npm run admin -- copy-to', () => {
  const ai = useFakeAi();
  const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-copy-'));
  const [sourceKey, targetKey] = [newKey(), newKey()];
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((database) => database.drop())));

  /** The embedded database in DATA_DIR, open only while an app uses it. */
  async function embedded(): Promise<TestDatabase> {
    const db = await openPglite(dataDir);
    return { db, url: undefined, secretsKey: sourceKey, drop: () => db.close() };
  }

  it('moves an embedded installation to PostgreSQL whole: same URLs, secrets, events and counts', async () => {
    let source = await embedded();
    const before = await startTestApp({
      database: source,
      env: { ...ai.env(), ...ADMIN_ENV, PROVIDERS_ALLOW_PRIVATE: 'true' },
    });
    const made = await fillEmbedded(before, ai.baseUrl);
    const sourceEvents = await eventRows(before, made.channel.id);
    await before.close();
    await source.drop();

    const target = await createTestDatabase({ migrated: false });
    databases.push(target);
    const env = { DATA_DIR: dataDir, SECRETS_KEY: sourceKey, TARGET_SECRETS_KEY: targetKey };
    const copied = await admin(['copy-to', target.url as string], env);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    const counts = Object.fromEntries(
      copied.stdout
        .split('\n')
        .map((line) => /^(\w+)\s+(\d+) → (\d+)$/.exec(line))
        .filter((match) => match !== null)
        .map(([, table, from, to]) => [table, [Number(from), Number(to)]]),
    );
    expect(counts).toMatchObject({
      events: [32, 32],
      channels: [1, 1],
      channel_versions: [2, 2],
      providers: [1, 1],
      workspace_prices: [1, 1],
      alerts: [1, 1],
      tools: [1, 1],
      api_keys: [1, 1],
      admins: [1, 1],
    });
    // The audit log comes along whole (each change above made an entry).
    expect(counts.audit_entries?.[0]).toBeGreaterThanOrEqual(7);
    expect(counts.audit_entries?.[1]).toBe(counts.audit_entries?.[0]);
    // Replied events queued their reply deliveries once, in the source; the copy adds none.
    expect(counts.deliveries?.[0]).toBeGreaterThan(0);
    expect(copied.stdout).toMatch(/SECRETS_KEY set to the TARGET_SECRETS_KEY/);
    for (const secret of [sourceKey, targetKey, github.secret, 's3cret-pass'])
      expect(copied.stdout + copied.stderr).not.toContain(secret);

    // Secrets are sealed with the target's key, and only it opens them.
    const { rows } = await target.db.query<{ verification_secret: string; reply_url: string }>(
      `select verification_secret,
              (select url from destinations where channel_id = channels.id and role = 'reply_url')
                as reply_url
       from channels`,
    );
    const byTargetKey = new SecretBox(Buffer.from(targetKey, 'hex'));
    expect(byTargetKey.open(rows[0]?.verification_secret ?? '')).toBe(github.secret);
    expect(byTargetKey.open(rows[0]?.reply_url ?? '')).toBe(
      'https://bot:s3cret-pass@replies.example.com/hook',
    );

    const [tool] = (
      await target.db.query<{ url: string; headers: string }>('select url, headers from tools')
    ).rows;
    expect(byTargetKey.open(tool?.url ?? '')).toBe(
      'https://mcp.invalid/mcp?key=tool-query-key-5151',
    );
    expect(JSON.parse(byTargetKey.open(tool?.headers ?? ''))).toEqual({
      'X-Tool-Key': 'tool-header-key-6262',
    });

    // A server on the target serves the same things.
    const after = await startTestApp({
      database: { ...target, secretsKey: targetKey },
      env: { ...ai.env(), PROVIDERS_ALLOW_PRIVATE: 'true', PUBLIC_BASE_URL: before.baseUrl },
    });
    try {
      const driver = new Driver(after);
      const channel = (await driver.api('get', `/channels/${made.channel.id}`).expect(200)).body;
      expect(channel).toMatchObject({
        webhook_url: made.channel.webhook_url,
        version: 2,
        allowed_origins: ['https://shop.example.com'],
        reply_delivery: { url: 'https://bot@replies.example.com/hook' },
      });
      expect(await eventRows(after, made.channel.id)).toEqual(sourceEvents);
      expect(sourceEvents.filter((e) => e.cached_from !== null)).toHaveLength(1);

      // The copied API key, the admin's password and the webhook URL with its secret work.
      const keyed = await fetch(`${after.baseUrl}/api/v1/channels`, {
        headers: { Authorization: `Bearer ${made.apiKey}` },
      });
      expect(keyed.status).toBe(200);
      expect(await after.ctx.admins.authenticate(ADMIN_EMAIL, ADMIN_PASSWORD)).toMatchObject({
        email: ADMIN_EMAIL,
      });
      const body = JSON.stringify({ order: { id: 99 } });
      const headers = await github.sign(body, github.secret, nowSeconds());
      const url = `${after.baseUrl}${new URL(made.channel.webhook_url).pathname}`;
      const sent = await driver.sendEvent(url, body, { headers });
      expect(sent.status).toBe(200);
      // New rows take ids after the copied ones; the provider's key reaches the model.
      expect(Number(sent.body.event_id)).toBeGreaterThan(Number(sourceEvents.at(-1)?.id));
      ai.requests.length = 0;
      await createWorker(after.ctx).runOnce();
      expect(ai.requests.at(-1)?.headers.authorization).toBe('Bearer sk-copy-provider-key-4242');
      // The copied replies' request hashes came along: order 2 again is served from the cache.
      const repeat = JSON.stringify({ order: { id: 2 } });
      const repeated = await driver.sendEvent(url, repeat, {
        headers: await github.sign(repeat, github.secret, nowSeconds()),
      });
      await createWorker(after.ctx).runOnce();
      const served = await driver.api('get', `/events/${repeated.body.event_id}`).expect(200);
      expect(served.body.cached_from).toBe(
        sourceEvents.find((e) => e.payload === repeat && e.cached_from === null)?.id,
      );
      expect(ai.requests).toHaveLength(1);
    } finally {
      await after.close();
    }

    // Into a database that holds hookprompt data: refused, and nothing changes.
    const again = await admin(['copy-to', target.url as string], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds hookprompt data \(in .*channels.*\)/);
    source = await embedded();
    await source.drop();
  }, 240_000);

  it('needs TARGET_SECRETS_KEY and a PostgreSQL URL', async () => {
    const target = await createTestDatabase({ migrated: false });
    databases.push(target);
    const noKey = await admin(['copy-to', target.url as string], { DATA_DIR: dataDir });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/TARGET_SECRETS_KEY is not set/);
    const notPostgres = await admin(['copy-to', 'mysql://db/x'], {
      DATA_DIR: dataDir,
      TARGET_SECRETS_KEY: targetKey,
    });
    expect(notPostgres.code).toBe(1);
    expect(notPostgres.stderr).toMatch(/must be a PostgreSQL database/);
  });
});
