import type { ServerResponse } from 'node:http';
import type { ReceivingChannel } from './ingest-repo.js';

// A web page on another site (a shop's form, a chat widget) may post to a webhook URL only when
// its channel lists the page's origin; the browser then reads the answer because the receiver
// says, with CORS headers, that this origin may.

/** What a page may send beside the body: the receiver's own headers and Standard Webhooks'. */
const ALLOWED_REQUEST_HEADERS =
  'content-type, prefer, idempotency-key, webhook-id, webhook-timestamp, webhook-signature';
/** Answer headers a page's script may read besides the simple ones. */
const EXPOSED_HEADERS = 'Preference-Applied, Retry-After';
/** How long a browser may keep a preflight's answer: a changed list applies within this. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * The `Access-Control-Allow-Origin` value for a request from `origin` to `channel`: the origin
 * itself when listed (compared as browsers write it: lower case, no default port), `*` when the
 * channel takes any page, undefined when the page may not send.
 */
export function allowOriginFor(channel: ReceivingChannel, origin: string): string | undefined {
  const allowed = channel.allowed_origins;
  if (allowed[0] === '*') return '*';
  const asBrowsersWrite = comparableOrigin(origin);
  return allowed.includes(asBrowsersWrite) ? asBrowsersWrite : undefined;
}

/** Whether the channel takes browser requests at all: an empty list leaves `Origin` unread. */
export function takesBrowserSenders(channel: ReceivingChannel): boolean {
  return channel.allowed_origins.length > 0;
}

/** The headers every answer to an allowed page carries, refusals included. */
export function setCorsHeaders(res: ServerResponse, allowOrigin: string): void {
  res.setHeader('Access-Control-Allow-Origin', allowOrigin);
  res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  res.setHeader('Vary', 'Origin');
}

/** A preflight's `204`: the page may POST with the receiver's headers for the next 10 minutes. */
export function answerPreflight(res: ServerResponse, allowOrigin: string): void {
  setCorsHeaders(res, allowOrigin);
  res.setHeader('Access-Control-Allow-Methods', 'POST');
  res.setHeader('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
  res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_S));
  res.statusCode = 204;
  res.end();
}

/** `Origin` as the channel stores its list: scheme and host in lower case, no default port. */
function comparableOrigin(origin: string): string {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : origin;
  } catch {
    return origin;
  }
}
