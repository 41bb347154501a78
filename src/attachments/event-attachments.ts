import type { ChatImage } from '../ai/ai-provider.js';
import { AttachmentError, type ImageFetcher } from './image-fetcher.js';
import type { ImageSource } from './image-sources.js';

/** What an event says of one image it named (event field `attachments`); never the image itself. */
export interface Attachment {
  path: string;
  /** Without its query and fragment (they may hold a signature); null for a data URL. */
  url: string | null;
  media_type: string | null;
  bytes: number | null;
  status: 'ok' | 'error';
  error: string | null;
}

/** The images of one attempt: sent, or why not (the first failure in path order). */
export interface FetchedAttachments {
  images: ChatImage[];
  attachments: Attachment[];
  failure?: { permanent: boolean; message: string };
}

/**
 * Fetches an event's images side by side, each once. A permanent failure of any of them fails
 * the event (`attachment_failed: …`), a passing one only the attempt; the attachments say what
 * became of each image either way. The images are base64 once here: the request holds them in
 * a plain form ({media_type, data}) that each provider's body and a comparison can use as is.
 * @throws `signal.reason` when the worker shuts down meanwhile
 */
export async function fetchAttachments(
  fetcher: ImageFetcher,
  sources: readonly ImageSource[],
  signal: AbortSignal,
): Promise<FetchedAttachments> {
  const settled = await Promise.allSettled(
    sources.map((source) => fetcher.fetch(source.url, signal)),
  );
  if (signal.aborted) throw signal.reason;
  const images: ChatImage[] = [];
  const attachments: Attachment[] = [];
  let failure: FetchedAttachments['failure'];
  settled.forEach((outcome, i) => {
    const source = sources[i] as ImageSource;
    const url = shownUrl(source.url);
    if (outcome.status === 'fulfilled') {
      const { mediaType, bytes } = outcome.value;
      images.push({ media_type: mediaType, data: bytes.toString('base64') });
      attachments.push({
        path: source.path,
        url,
        media_type: mediaType,
        bytes: bytes.length,
        status: 'ok',
        error: null,
      });
      return;
    }
    const error = outcome.reason as unknown;
    if (!(error instanceof AttachmentError)) throw error;
    attachments.push({
      path: source.path,
      url,
      media_type: null,
      bytes: null,
      status: 'error',
      error: error.message,
    });
    const message = `${source.path}: ${error.message}`;
    if (!failure || (error.permanent && !failure.permanent))
      failure = { permanent: error.permanent, message };
  });
  return { images, attachments, failure };
}

/** The message an event fails with for a failure, permanent or not. */
export function attachmentFailureMessage(failure: { permanent: boolean; message: string }) {
  return failure.permanent
    ? `attachment_failed: ${failure.message}`
    : `An image could not be fetched: ${failure.message}.`;
}

/** A URL as an event shows it: no query, no fragment, no credentials; null for a data URL. */
export function shownUrl(url: string): string | null {
  if (/^data:/i.test(url)) return null;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.replace(/[?#].*$/s, '');
  }
}
