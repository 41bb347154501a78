import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Queryable } from '../../src/db/database.js';

/**
 * The ways a secret could be written down: as it is, and its bytes in base64, base64url and hex;
 * for a Standard Webhooks secret (`whsec_…`) also the key it carries. Hex in lower case: the dump
 * is searched in lower case for it.
 */
export function secretForms(secret: string): string[] {
  const bytes = [Buffer.from(secret)];
  if (secret.startsWith('whsec_')) bytes.push(Buffer.from(secret.slice(6), 'base64'));
  return [
    secret,
    ...bytes.flatMap((b) => [b.toString('base64'), b.toString('base64url'), b.toString('hex')]),
  ];
}

/** Where a secret shows up in `text`, by the name of its form; empty when nowhere. */
export function foundIn(text: string, secret: string): string[] {
  const lower = text.toLowerCase();
  return secretForms(secret).filter((form) =>
    /^[0-9a-f]+$/.test(form) ? lower.includes(form) : text.includes(form),
  );
}

const run = promisify(execFile);

/**
 * Everything the database holds, as text: `pg_dump` of a PostgreSQL database; on the embedded
 * one, every row of every table as PostgreSQL writes it (bytea as hex, json as text).
 */
export async function databaseDump(db: Queryable, url: string | undefined): Promise<string> {
  if (url) return (await run('pg_dump', ['--no-owner', url], { maxBuffer: 256 << 20 })).stdout;
  const { rows: tables } = await db.query<{ name: string }>(
    `select table_schema || '.' || table_name as name from information_schema.tables
     where table_schema not in ('pg_catalog', 'information_schema')
       and table_type = 'BASE TABLE'`,
  );
  const texts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await db.query<{ row: string }>(`select t::text as row from ${name} t`);
    texts.push(...rows.map((r) => `${name}: ${r.row}`));
  }
  return texts.join('\n');
}
