import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Queryable } from '../db/database.js';
import { room } from '../platform/writable-room.js';
import { scanEvents } from './events-scan.js';
import { toEventJson, type EventJson } from '../events/event-object.js';
import type { EventRow } from '../events/event-row.js';
import type { EventConditions } from './events-where.js';

export type ExportFormat = 'jsonl' | 'csv';

/** The CSV columns, in order: the event object without its nested history. */
export const CSV_COLUMNS = [
  'id',
  'channel_id',
  'received_at',
  'status',
  'payload',
  'prompt',
  'reply',
  'error',
  'attempts',
  'completed_at',
] as const satisfies readonly (keyof EventJson)[];

export const EXPORT_TYPES: Record<ExportFormat, string> = {
  jsonl: 'application/jsonl; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

const BATCH = 500;

/** Where events come from, and how a batch of rows becomes API event objects. */
export interface ExportSource {
  db: Queryable;
  present(rows: EventRow[]): Promise<EventJson[]>;
}

/**
 * Writes every event of the filter to `out`, newest first, one batch of rows in memory at a
 * time; waits whenever `out` is full, so a slow download holds back the reading instead of
 * filling memory. Resolves once everything is written (the caller ends `out`).
 */
export async function exportEvents(
  source: ExportSource,
  conditions: EventConditions,
  format: ExportFormat,
  out: Writable,
): Promise<number> {
  const write = async (chunk: string) => {
    if (out.destroyed) return;
    if (!out.write(chunk)) await room(out);
  };
  // A cell a spreadsheet would read as a formula (=, +, -, @, a tab or a carriage return first)
  // is written with a leading ': payloads and replies come from outsiders.
  const csv =
    format === 'csv'
      ? stringify({ header: true, columns: [...CSV_COLUMNS], escape_formulas: true })
      : undefined;
  // The CSV writer is a stream of its own: its output is passed on as it comes.
  const piped = csv ? forward(csv, write) : undefined;
  let count = 0;
  const emit = async (rows: EventRow[]) => {
    // CSV only needs the row itself; JSON Lines carry the whole event object (delivery too).
    const events = csv ? rows.map((row) => toEventJson(row)) : await source.present(rows);
    for (const event of events) {
      if (out.destroyed) return;
      if (csv) {
        if (!csv.write(CSV_COLUMNS.map((column) => event[column] ?? ''))) await once(csv, 'drain');
      } else {
        await write(`${JSON.stringify(event)}\n`);
      }
      count++;
    }
  };
  let batch: EventRow[] = [];
  for await (const row of scanEvents(source.db, conditions, { batchSize: BATCH })) {
    // The download was cancelled: stop reading.
    if (out.destroyed) break;
    batch.push(row);
    if (batch.length === BATCH) {
      await emit(batch);
      batch = [];
    }
  }
  if (batch.length && !out.destroyed) await emit(batch);
  if (csv) {
    csv.end();
    await piped;
  }
  return count;
}

async function forward(
  csv: AsyncIterable<Buffer | string>,
  write: (chunk: string) => Promise<void>,
) {
  for await (const chunk of csv) await write(String(chunk));
}
