/** Wording and time formats shared by the panel's pages (passed to every view as `fmt`). */

const pad = (n: number) => String(n).padStart(2, '0');

/** `2024-05-01 10:30:05 UTC`: the panel shows and takes every time in UTC. */
export function utcTime(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = new Date(value);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;
}

/** `05-01 10:30:05`: a list row's time, the date without its year (all UTC, as everywhere). */
export function shortTime(value: string | Date): string {
  return utcTime(value).slice(5, 19);
}

/** The value a `datetime-local` input shows for an instant, read as UTC. */
export function dateTimeLocalValue(value: Date | undefined): string {
  if (!value) return '';
  return value.toISOString().slice(0, 19);
}

/** "3 min ago", for recent activity at a glance; the exact time goes in a tooltip. */
export function ago(value: string | Date | null | undefined, now = new Date()): string {
  if (!value) return '';
  const seconds = Math.round((now.getTime() - new Date(value).getTime()) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

const SPANS: [string, string, number][] = [
  ['a day', 'days', 86_400_000],
  ['an hour', 'hours', 3_600_000],
  ['a minute', 'minutes', 60_000],
  ['a second', 'seconds', 1000],
];

/** "about a day", "about 6 hours": a length of time in round words, for texts that follow a setting. */
export function aboutSpan(ms: number): string {
  for (const [one, many, size] of SPANS) {
    if (ms < size) continue;
    const count = Math.round(ms / size);
    return `about ${count === 1 ? one : `${count} ${many}`}`;
  }
  return 'less than a second';
}

export const STATUS_LABELS: Record<string, string> = {
  pending: 'Pending',
  processing: 'Processing',
  awaiting_approval: 'Awaiting approval',
  replied: 'Replied',
  skipped: 'Skipped',
  failed: 'Failed',
  rejected: 'Rejected',
  filtered: 'Filtered',
};

export const STATUS_HINTS: Record<string, string> = {
  pending: 'Received; waiting for the AI.',
  processing: 'The AI is working on it.',
  awaiting_approval: 'The model asked for a tool that needs a person: approve or deny the call.',
  replied: 'The AI replied.',
  skipped: 'The prompt rendered empty, so the AI was not asked.',
  failed: 'The AI could not reply, even after retries.',
  rejected: 'The receiver refused the request; the sender got an error.',
  filtered: "The payload did not meet the channel's accept_when, so the AI was not asked.",
};

/** Why the receiver refused a request, in words a sender can act on. */
const REFUSALS: Record<string, string> = {
  channel_disabled:
    'Refused: the channel is disabled (the sender got 403). Enable it in the Channels editor.',
  quota_exceeded:
    "Refused: the workspace has used this month's chat quota (the sender got 403). Raise the quota or reset usage on the Workspace page.",
  budget_exceeded:
    "Refused: the workspace has spent this month's AI budget (the sender got 403). Raise the budget on the Workspace page.",
  invalid_json: 'Refused: the body is not valid JSON (the sender got 400).',
  payload_not_object:
    'Refused: the body is JSON but not an object; send an object such as {"order": {"id": 1}} (the sender got 400).',
  unsupported_media_type:
    "Refused: the body was not sent as JSON; send it with Content-Type: application/json (the sender got 415; with curl: -H 'Content-Type: application/json').",
  payload_too_large:
    'Refused: the body is larger than the size limit, BODY_LIMIT (the sender got 413); a compressed body counts at its decoded size. Only its first 64 KB is kept here.',
  invalid_wait:
    'Refused: ?wait= was not a positive whole number of seconds, such as ?wait=10 (the sender got 400).',
  sender_not_allowed:
    "Refused: the sender's address is not in the channel's allowed addresses (the sender got 403). Add it under “Who may send” in the channel editor.",
  origin_not_allowed:
    "Refused: a web page on an origin not in the channel's allowed origins sent it (the sender got 403). Add the page's origin under “Who may send” in the channel editor.",
  signature_invalid:
    "Refused: the request was not signed as the channel's verification asks — wrong secret, missing header or an old timestamp (the sender got 401). Compare the secret on both sides.",
  invalid_encoding:
    'Refused: the body does not decode as its Content-Encoding says (the sender got 400).',
};

/** The HTTP status each refusal answered the sender with, shown beside "Rejected" in the list. */
const REFUSAL_STATUS: Record<string, number> = {
  channel_disabled: 403,
  quota_exceeded: 403,
  budget_exceeded: 403,
  sender_not_allowed: 403,
  origin_not_allowed: 403,
  invalid_json: 400,
  payload_not_object: 400,
  invalid_wait: 400,
  invalid_encoding: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  signature_invalid: 401,
  idempotency_key_reused: 422,
};

export function refusalStatus(code: string | null): number | null {
  return (code && REFUSAL_STATUS[code]) || null;
}

/** A reply delivery's state (see src/deliveries/delivery-states.ts), in words. */
export const DELIVERY_LABELS: Record<string, string> = {
  pending: 'Delivery pending',
  delivered: 'Delivered',
  failed: 'Delivery failed',
  held: 'Delivery held',
  skipped: 'Not sent',
};

export function refusal(code: string | null): string {
  if (!code) return 'Refused.';
  return REFUSALS[code] ?? `Refused: ${code}.`;
}

/** `512 B`, `3.4 KB`, `1.2 MB`: a payload's size at a glance. */
export function byteSize(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KB`;
  return `${(count / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * `$0.0042`, `$12.50`: an amount in USD to the cent, and smaller amounts to two significant
 * digits (a single call often costs a fraction of a cent); `—` when unknown.
 */
export function usd(amount: number | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  if (amount === 0) return '$0';
  if (amount >= 0.01) return `$${amount.toFixed(2)}`;
  return `$${amount.toPrecision(2)}`;
}

/**
 * A sum of known costs beside calls whose cost is unknown (no price for the model, or no usage
 * reported): `$1.20` when every cost is known, `at least $1.20` when some are not, `unknown`
 * when none is — never `$0` for calls nobody priced.
 */
export function usdAtLeast(known: number | null | undefined, unknownCalls: number): string {
  if (unknownCalls === 0) return usd(known ?? 0);
  return known ? `at least ${usd(known)}` : 'unknown';
}

/** What an event's calls cost, as a list row shows it; empty when it made no call. */
export function eventCost(event: {
  cost_usd: number | null;
  attempts: number;
  calls?: readonly { cost_usd: number | null }[] | null;
}): string {
  const calls = event.calls ?? [];
  const unknown = calls.filter((call) => call.cost_usd === null).length;
  if (event.cost_usd === null) return event.attempts > 0 || unknown > 0 ? 'unknown' : '';
  return usdAtLeast(event.cost_usd, unknown);
}

export const fmt = {
  utcTime,
  shortTime,
  byteSize,
  usd,
  usdAtLeast,
  eventCost,
  ago,
  refusal,
  refusalStatus,
  statusLabel: (s: string) => STATUS_LABELS[s] ?? s,
  statusHint: (s: string) => STATUS_HINTS[s] ?? '',
  deliveryLabel: (s: string) => DELIVERY_LABELS[s] ?? s,
};
