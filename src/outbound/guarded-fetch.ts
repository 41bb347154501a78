import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { guardedLookup, refuseLiteralAddress, type AddressPolicy } from './address-guard.js';

/** What libraries that take a `fetch` of their own call (the MCP SDK's transports). */
export type FetchFunction = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose answers have no body: a Response refuses one for them. */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for a library that speaks to a URL admins typed in (an MCP server): the address
 * checked at connect time as the outbound client does (one resolution, the checked address
 * used), redirects never followed (a 3xx is handed back as it is), and every connection it
 * opened ended by `close()`. The answer's body streams (Server-Sent Events stay open until the
 * server or `close()` ends them).
 */
export function guardedFetch(policy: AddressPolicy): { fetch: FetchFunction; close: () => void } {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 4 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 4 }),
  };
  const lookup = guardedLookup(policy);
  const fetch: FetchFunction = (url, init = {}) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        return reject(new Error('only http:// and https:// URLs can be called'));
      try {
        refuseLiteralAddress(target.hostname, policy);
      } catch (error) {
        return reject(error as Error);
      }
      const body = typeof init.body === 'string' ? init.body : undefined;
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const transport = target.protocol === 'https:' ? https : http;
      const req = transport.request(target, {
        method: init.method ?? 'GET',
        headers,
        agent: agents[target.protocol],
        lookup,
        signal: init.signal ?? undefined,
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of [value ?? []].flat()) answerHeaders.append(name, one);
        }
        const stream = NO_BODY.has(status)
          ? (res.resume(), null)
          : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
        resolve(new Response(stream, { status, headers: answerHeaders }));
      });
      req.end(body);
    });
  return {
    fetch,
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
