import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookToken } from '../../src/channels/webhook-token.js';
import {
  ADMIN_EMAIL,
  ADMIN_ENV,
  ADMIN_PASSWORD,
  PanelClient,
  cookieSet,
} from '../panel/panel-client.js';
import { Driver } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const tokenOf = (webhookUrl: string) => new URL(webhookUrl).pathname.split('/').pop() as string;

const { app, driver } = useTestApp({ env: ADMIN_ENV });

/** Every row of every table, as text: where a stored secret would show up. */
async function everythingStored(): Promise<string[]> {
  const { rows: tables } = await app.ctx.db.query<{ name: string }>(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const texts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await app.ctx.db.query<{ row: string }>(
      `select t::text as row from "${name}" t`,
    );
    texts.push(...rows.map((r) => `${name}: ${r.row}`));
  }
  return texts;
}

describe('webhook tokens', () => {
  it('carry at least 128 bits of randomness: 1000 are URL-safe, 32 characters (192 bits), all different', () => {
    const tokens = Array.from({ length: 1000 }, () => newWebhookToken());
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(24);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
    // Each of the 64 symbols turns up about equally often (500 times in 32 000 characters):
    // a generator that favoured some would leave fewer bits than its length promises.
    const counts = new Map<string, number>();
    for (const char of tokens.join('')) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(64);
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(350);
      expect(count).toBeLessThan(650);
    }
  });

  it('are issued that way by the API, and looked up by their SHA-256', async () => {
    const channel = await driver.createChannel();
    const token = tokenOf(channel.webhook_url);
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const { rows } = await app.ctx.db.query<{ webhook_token_hash: string }>(
      'select webhook_token_hash from channels where id = $1',
      [channel.id],
    );
    expect(rows[0]?.webhook_token_hash).toBe(sha256(token));

    // The receiver finds the channel by the hash column alone: it follows the hash when it
    // changes, and ignores the token column that is kept for showing the URL again.
    const other = newWebhookToken();
    await app.ctx.db.query(
      `update channels set webhook_token_hash = $2, webhook_token = 'shown-only' where id = $1`,
      [channel.id, sha256(other)],
    );
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(404);
    expect((await driver.sendEvent(`${app.baseUrl}/hooks/${other}`)).status).toBe(200);
    expect((await driver.sendEvent(`${app.baseUrl}/hooks/shown-only`)).status).toBe(404);
  });

  it('must match exactly: a token differing in any one character, its case, or its length is 404', async () => {
    const channel = await driver.createChannel();
    const token = tokenOf(channel.webhook_url);
    const near = new Set<string>();
    for (let i = 0; i < token.length; i++) {
      const char = token[i] as string;
      const replacement = char === 'A' ? 'B' : 'A';
      near.add(token.slice(0, i) + replacement + token.slice(i + 1));
      const flipped = char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase();
      if (flipped !== char) near.add(token.slice(0, i) + flipped + token.slice(i + 1));
    }
    near.add(token.slice(0, -1));
    near.add(`${token}A`);
    near.add(token.slice(1));
    for (const guess of near) {
      const res = await driver.sendEvent(`${app.baseUrl}/hooks/${guess}`);
      expect(res.status, guess).toBe(404);
      expect(res.body.code).toBe('channel_not_found');
    }
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    expect(await driver.eventsOf(channel.id)).toHaveLength(1);
  });
});

describe('secrets at rest', () => {
  it('keeps API keys, passwords and session cookies only as hashes', async () => {
    const panel = new PanelClient(app);
    const signIn = await panel.signIn();
    const session = cookieSet(signIn, 'hookprompt_session') as string;
    const created = await panel.form('/workspace/api-keys', { name: 'Stored hashed' });
    const key = /id="new-api-key" class="secret-box" value="([^"]+)"/.exec(created.text)?.[1];
    expect(key).toMatch(/^hp_[A-Za-z0-9_-]{43}$/);
    await new Driver(app, key).api('get', '/workspace').expect(200);

    const { rows: keys } = await app.ctx.db.query<Record<string, unknown>>(
      `select * from api_keys where name = 'Stored hashed'`,
    );
    expect(keys).toHaveLength(1);
    for (const [column, value] of Object.entries(keys[0] as object))
      expect(String(value), column).not.toBe(key);
    expect(keys[0]?.key_hash).toBe(sha256(key as string));

    const { rows: admins } = await app.ctx.db.query<{ password_hash: string }>(
      'select password_hash from admins where email = $1',
      [ADMIN_EMAIL],
    );
    // argon2id with at least OWASP's baseline cost: 19 MiB of memory, 2 passes.
    const hash = admins[0]?.password_hash as string;
    expect(hash).toMatch(/^\$argon2id\$v=19\$/);
    expect(Number(/[$,]m=(\d+)/.exec(hash)?.[1])).toBeGreaterThanOrEqual(19_456);
    expect(Number(/[$,]t=(\d+)/.exec(hash)?.[1])).toBeGreaterThanOrEqual(2);

    const { rows: sessions } = await app.ctx.db.query<{ token_hash: string }>(
      'select token_hash from admin_sessions',
    );
    expect(sessions.map((s) => s.token_hash)).toContain(sha256(session));

    const stored = await everythingStored();
    for (const [name, value] of [
      ['API key', key as string],
      ['admin password', ADMIN_PASSWORD],
      ['session cookie', session],
    ] as const) {
      expect(
        stored.filter((row) => row.includes(value)),
        `${name} stored as it is`,
      ).toEqual([]);
    }
  });
});
