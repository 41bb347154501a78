import http from 'node:http';
import https from 'node:https';
import {
  AddressRefusedError,
  guardedLookup,
  refuseLiteralAddress,
  type AddressPolicy,
} from '../outbound/address-guard.js';
import { DATA_URL } from './image-sources.js';
import { bareMediaType, isImageType, sniffImageType, type ImageType } from './image-types.js';

/** Redirects followed from one image URL; a further one fails the image. */
export const MAX_REDIRECTS = 3;

/** An image read and checked: its type (by header and first bytes alike) and its bytes. */
export interface FetchedImage {
  mediaType: ImageType;
  bytes: Buffer;
}

/**
 * Why an image could not be had. `permanent`: asking again would get the same answer (a 4xx,
 * another type, too large, an address refused), so the event fails at once; otherwise (a
 * timeout, a connection error, a 5xx) the attempt fails and is retried as AI errors are.
 */
export class AttachmentError extends Error {
  override name = 'AttachmentError';

  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface ImageFetcherOptions {
  /** ATTACHMENT_TIMEOUT_MS: one image, from its first lookup to its last byte, redirects included. */
  timeoutMs: number;
  /** ATTACHMENT_MAX_BYTES: no more is read; a larger image is refused. */
  maxBytes: number;
  /** ATTACHMENTS_ALLOW_PRIVATE. */
  allowPrivate: boolean;
}

/** One answer of a hop: a redirect to follow, or the image's body read whole. */
type Hop = { redirect: URL } | FetchedImage;

/**
 * Fetches the images a payload names, as the worker sends them to the model: a GET under the
 * address guard of the outbound client (the host resolved once, the checked address used, at
 * every redirect), at most MAX_REDIRECTS redirects, at most `maxBytes` read, and the type
 * checked by the content type and by the file's first bytes. Data URLs are decoded and checked
 * the same way. Each call opens its own connections (`agent: false`): image hosts are many and
 * seldom asked twice, and no socket outlives its image.
 */
export class ImageFetcher {
  private readonly policy: AddressPolicy;
  private readonly lookup;

  constructor(private readonly options: ImageFetcherOptions) {
    this.policy = { allowPrivate: options.allowPrivate, setting: 'ATTACHMENTS_ALLOW_PRIVATE' };
    this.lookup = guardedLookup(this.policy);
  }

  /** The image at `url` (http, https or data); rejects with an AttachmentError, or `signal.reason`. */
  async fetch(url: string, signal: AbortSignal): Promise<FetchedImage> {
    if (url.startsWith('data:') || url.startsWith('DATA:')) return this.decode(url);
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const aborted = AbortSignal.any([signal, deadline]);
    let target = new URL(url);
    try {
      for (let redirects = 0; ; redirects++) {
        const hop = await this.get(target, aborted);
        if (!('redirect' in hop)) return hop;
        if (redirects === MAX_REDIRECTS)
          throw new AttachmentError(`more than ${MAX_REDIRECTS} redirects`, true);
        target = hop.redirect;
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted)
        throw new AttachmentError(`no answer within ${this.options.timeoutMs} ms`, false);
      if (error instanceof AttachmentError) throw error;
      if (error instanceof AddressRefusedError) throw new AttachmentError(error.message, true);
      const code = (error as { code?: unknown })?.code;
      const reason = typeof code === 'string' ? code : (error as Error).message;
      throw new AttachmentError(`could not reach ${target.host}: ${reason}`, false);
    }
  }

  /** One GET: a redirect's next URL (checked like the first), or the body read and checked. */
  private get(target: URL, signal: AbortSignal): Promise<Hop> {
    if (target.protocol !== 'http:' && target.protocol !== 'https:')
      throw new AttachmentError(`a redirect to ${target.protocol} (only http and https)`, true);
    refuseLiteralAddress(target.hostname, this.policy);
    const transport = target.protocol === 'https:' ? https : http;
    return new Promise<Hop>((resolve, reject) => {
      const req = transport.request(target, {
        method: 'GET',
        headers: { accept: 'image/png, image/jpeg, image/gif, image/webp' },
        agent: false,
        lookup: this.lookup,
        signal,
      });
      req.on('error', reject);
      req.on('response', (res) => {
        // Rejected before the answer is cut off: its 'aborted' must not be the reason given.
        const fail = (message: string, permanent: boolean) => {
          reject(new AttachmentError(message, permanent));
          res.destroy();
        };
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location !== undefined) {
          res.resume();
          let next: URL;
          try {
            next = new URL(res.headers.location, target);
          } catch {
            return fail(`answered ${status} with an unusable Location`, true);
          }
          return resolve({ redirect: next });
        }
        if (status < 200 || status >= 300) return fail(`answered ${status}`, status < 500);
        const type = bareMediaType(res.headers['content-type']);
        if (!isImageType(type))
          return fail(
            `answered ${type ? `type ${type}` : 'without a content type'}, not an image`,
            true,
          );
        const announced = Number(res.headers['content-length']);
        if (announced > this.options.maxBytes) return fail(this.tooLarge(), true);
        // With its length announced, the image is read into one buffer of that size as it comes:
        // the chunks read are not held beside a copy of them all (memory per image in flight).
        const whole =
          Number.isSafeInteger(announced) && announced >= 0
            ? Buffer.allocUnsafe(announced)
            : undefined;
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          if (read + chunk.length > this.options.maxBytes) return fail(this.tooLarge(), true);
          if (whole && read + chunk.length <= whole.length) chunk.copy(whole, read);
          else chunks.push(chunk);
          read += chunk.length;
        });
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('the answer was cut off')));
        res.on('end', () => {
          try {
            const bytes =
              whole && read === whole.length && !chunks.length
                ? whole
                : collected(whole, chunks, read);
            resolve(checked(type, bytes));
          } catch (error) {
            reject(error as Error);
          }
        });
      });
      req.end();
    });
  }

  /** A data URL's image, checked as a fetched one is; its size is judged before it is decoded. */
  private decode(url: string): FetchedImage {
    const match = DATA_URL.exec(url);
    if (!match) throw new AttachmentError('not a base64 data URL of an image', true);
    const type = (match[1] ?? '').toLowerCase();
    if (!isImageType(type)) throw new AttachmentError(`type ${type}, not an accepted image`, true);
    const encoded = url.length - match[0].length;
    if (Math.floor((encoded * 3) / 4) > this.options.maxBytes + 2)
      throw new AttachmentError(this.tooLarge(), true);
    const bytes = Buffer.from(url.slice(match[0].length), 'base64');
    if (bytes.length > this.options.maxBytes) throw new AttachmentError(this.tooLarge(), true);
    return checked(type, bytes);
  }

  private tooLarge(): string {
    return `larger than ATTACHMENT_MAX_BYTES (${this.options.maxBytes} bytes)`;
  }
}

/**
 * The bytes read when they were not the length announced: those copied into `whole` (its
 * start), then the chunks that did not fit.
 */
function collected(whole: Buffer | undefined, chunks: Buffer[], read: number): Buffer {
  if (!whole) return Buffer.concat(chunks, read);
  const fitted = read - chunks.reduce((bytes, chunk) => bytes + chunk.length, 0);
  return Buffer.concat([whole.subarray(0, fitted), ...chunks], read);
}

/** The image, when its first bytes are of the type it was given as. */
function checked(type: ImageType, bytes: Buffer): FetchedImage {
  const sniffed = sniffImageType(bytes);
  if (sniffed !== type) {
    const found = sniffed ? `those of ${sniffed}` : 'not those of an accepted image';
    throw new AttachmentError(`sent as ${type}, but its first bytes are ${found}`, true);
  }
  return { mediaType: type, bytes };
}
