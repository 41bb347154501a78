import type { IncomingMessage, ServerResponse } from 'node:http';
import parseUrl from 'parseurl';
import proxyAddr from 'proxy-addr';
import type { WebhookReceiver } from './webhook-receiver.js';

/** The Express app's own compiled settings, so a webhook is read exactly as Express reads it. */
export interface ExpressReading {
  /** `app.get('trust proxy fn')`: which hops may name the sender (TRUST_PROXY). */
  trustProxy: (address: string, hop: number) => boolean;
  /** `app.get('query parser fn')`; undefined when query parsing is off. */
  parseQuery: ((query: string) => unknown) | undefined;
}

/**
 * `/hooks/<token>`, with an optional trailing slash, as the router's `/:token` matches it. Only
 * tokens that read the same decoded are taken (ours are URL-safe base64); a URL that needs
 * decoding, or any other spelling the router would accept, is left to Express.
 */
const WEBHOOK_PATH = /^\/hooks\/([A-Za-z0-9_-]+)\/?$/;

/**
 * Webhooks without Express: `POST /hooks/<token>` is answered by the receiver directly. Express's
 * router and middleware were a large share of a webhook's CPU (bench/HISTORY.md), and the
 * receiver needs none of them. The request log is written as for every other request.
 * Returns false, touching nothing, for any other request: the caller gives it to Express.
 */
export function webhookFastPath(
  receiver: WebhookReceiver,
  reading: ExpressReading,
  logRequest?: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { trustProxy, parseQuery } = reading;
  return (req, res) => {
    if (req.method !== 'POST') return false;
    // Parsed once per request: Express's own parseurl finds this result on the request.
    const url = parseUrl(req);
    const token = url?.pathname ? WEBHOOK_PATH.exec(url.pathname)?.[1] : undefined;
    if (token === undefined) return false;
    logRequest?.(req, res);
    void receiver.serve({
      req,
      res,
      token,
      query: parseQuery ? parseQuery(String(url?.query ?? '')) : {},
      senderIp: senderAddress(req, trustProxy),
    });
    return true;
  };
}

/**
 * The sender's address as Express's `req.ip` reads it. Without an X-Forwarded-For header that is
 * the socket's peer whatever TRUST_PROXY says, which is taken directly: proxy-addr would build
 * and walk its list of hops for it all the same, on every webhook.
 */
function senderAddress(
  req: IncomingMessage,
  trustProxy: ExpressReading['trustProxy'],
): string | undefined {
  return req.headers['x-forwarded-for'] === undefined
    ? req.socket.remoteAddress
    : proxyAddr(req, trustProxy);
}
