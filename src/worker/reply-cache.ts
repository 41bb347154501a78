import { asksForJson } from '../ai/ai-settings.js';
import type { CallTarget } from '../ai/fallback-runner.js';
import { requestHash } from '../reply-cache/request-hash.js';
import type { ReadyRequest } from './event-request.js';
import type { CachedReply } from './queue-reply-cache.js';
import { storableText } from './storable-text.js';

/** What the cache compares for every event drawn under the spotlight in place of its tag. */
const ANY_SPOTLIGHT_TAG = 'data-spotlight';

/**
 * The hash of the request an event's first call would send (see requestHash): the whole request
 * as guarded and fitted to the input limit (system prompt, history, prompt, anything the request
 * carries such as images, the response format, temperature and max tokens), the provider and
 * model it would be sent to, and the tools it would offer. Compared after redaction: values
 * that redact alike hash alike. The spotlight's tag is drawn per event, so it is compared as
 * one fixed tag: requests that differ only in it are the same request.
 */
export function replyCacheHash(ready: ReadyRequest, target: CallTarget): string {
  const { request, settings, guard } = ready;
  const tag = guard?.spotlightTag;
  const sent = {
    ...request,
    provider: target.provider,
    model: target.model ?? null,
    tools: settings.tools,
    max_tool_rounds: settings.tools.length ? settings.max_tool_rounds : undefined,
  };
  return requestHash(sent, tag ? (text) => text.replaceAll(tag, ANY_SPOTLIGHT_TAG) : undefined);
}

/** The cached reply as this event gets it: its placeholders put back with this event's values. */
export function servedReply(ready: ReadyRequest, cached: CachedReply): string {
  const { guard, request } = ready;
  const restored = guard
    ? guard.restore(cached.reply, asksForJson(request.responseFormat))
    : cached.reply;
  return storableText(restored);
}

/** The reply as the model wrote it, kept beside the stored one only when the two differ. */
export function unrestoredReply(modelText: string, stored: string): string | null {
  const asWritten = storableText(modelText);
  return asWritten === stored ? null : asWritten;
}
