/**
 * `npm run admin -- copy-to` on an embedded database of --events events (100,000): the time it
 * takes, its peak memory (the command's maximum resident set, from GNU time) and whether the
 * counts of both sides are equal. The events are written straight into the embedded database,
 * replied, each with a payload of about 330 bytes, a prompt and a reply, over 10 channels;
 * then the command copies them into a new PostgreSQL database (BENCH_DATABASE_URL's server).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { openPglite } from '../src/db/pglite.js';
import { projectRoot } from '../src/platform/paths.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' } } });
const EVENTS = Number(values.events);

async function fillEmbedded(dataDir: string): Promise<void> {
  const db = await openPglite(dataDir);
  try {
    await migrate(db);
    const workspace = await db.query<{ id: string }>(
      `insert into workspaces (name, is_default, chat_quota) values ('Bench', true, 1000000)
       returning id`,
    );
    const workspaceId = workspace.rows[0]?.id as string;
    const channels = await db.query<{ id: string }>(
      `insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
       select $1, 'Channel ' || n, 'New order {{order.id}}', 'token-' || n, 'hash-' || n
       from generate_series(1, 10) n returning id`,
      [workspaceId],
    );
    const ids = channels.rows.map((row) => row.id);
    const started = performance.now();
    for (let from = 1; from <= EVENTS; from += 10_000) {
      await db.query(
        `insert into events (workspace_id, channel_id, status, payload, prompt, reply, attempts,
                             completed_at, headers, sender_ip)
         select $1::bigint, ($2::bigint[])[1 + n % 10], 'replied',
                '{"event":"order.created","order":{"id":' || n || ',"number":"SO-'
                  || lpad(n::text, 8, '0') || '","total":' || (n % 997)
                  || '.50,"currency":"EUR"},"customer":{"name":"Customer ' || (n % 5000)
                  || '","email":"c' || (n % 50000) || '@example.com","city":"London"}}',
                'New order SO-' || lpad(n::text, 8, '0') || '. Write a one-line thank-you note.',
                'Thank you for your order SO-' || lpad(n::text, 8, '0') || '!', 1, now(),
                '{"content-type":"application/json"}'::jsonb, '203.0.113.7'
         from generate_series($3::bigint, $4::bigint) n`,
        [workspaceId, ids, from, Math.min(from + 9_999, EVENTS)],
      );
    }
    console.log(
      `filled ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await db.close();
  }
}

/** Runs the command under GNU time; its report is the last lines of stderr. */
function copyTo(env: Record<string, string>, url: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(
      '/usr/bin/time',
      [
        '-v',
        process.execPath,
        '--import',
        'tsx',
        join(projectRoot, 'src/auth/admin-cli.ts'),
        'copy-to',
        url,
      ],
      { cwd: projectRoot, env: { PATH: process.env.PATH, ...env } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-copy-bench-'));
const name = `hookprompt_copy_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
try {
  await fillEmbedded(dataDir);
  await admin.query(`create database ${name}`);
  const target = new URL(ADMIN_URL);
  target.pathname = `/${name}`;
  const started = performance.now();
  const run = await copyTo(
    { DATA_DIR: dataDir, TARGET_SECRETS_KEY: randomBytes(32).toString('hex') },
    target.href,
  );
  const seconds = (performance.now() - started) / 1000;
  const peakKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1]);
  console.log(run.stdout.trim());
  console.log(
    `copy-to: exit ${run.code}, ${seconds.toFixed(1)} s, peak memory ${(peakKb / 1024).toFixed(0)} MB` +
      ` (${EVENTS} events; load ${(await import('node:os'))
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})`,
  );
  if (run.code !== 0) console.log(run.stderr);
} finally {
  await admin.query(`drop database if exists ${name}`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}
