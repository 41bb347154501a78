import type { AiRequest } from '../ai/ai-provider.js';
import { toAiSettings, type AiSettings } from '../ai/ai-settings.js';
import { EventGuard, type GuardState } from '../guardrails/event-guard.js';
import type { ImageSource } from '../attachments/image-sources.js';
import type { ReadyRequest } from './event-request.js';
import type { RoundsState } from './tool-rounds.js';

/**
 * An attempt's conversation, stored while its event waits for an operator's decision
 * (`events.conversation`) and taken up again as it was: the request as sent (rendered,
 * guarded and fitted), the channel's settings it began with, its spotlight tag and redaction
 * numbering, and the rounds so far with the round that waits. Plain JSON; never shown.
 * Images are not stored: only where they come from, fetched again when the event goes on.
 */
export interface ParkedConversation {
  settings: AiSettings;
  request: AiRequest;
  images?: ImageSource[];
  missing: string[];
  inputTruncated: boolean;
  guard: GuardState | null;
  state: RoundsState;
}

/** The conversation of a ready request at the point `state` reached. */
export function parkConversation(ready: ReadyRequest, state: RoundsState): ParkedConversation {
  return {
    settings: ready.settings,
    request: { ...ready.request, images: undefined },
    images: ready.images,
    missing: ready.missing,
    inputTruncated: ready.inputTruncated,
    guard: ready.guard?.state() ?? null,
    state,
  };
}

/** The ready request of a stored conversation: nothing rendered or drawn again. */
export function takeUpConversation(parked: ParkedConversation): ReadyRequest {
  const settings = toAiSettings(parked.settings);
  return {
    kind: 'ready',
    request: parked.request,
    images: parked.images ?? [],
    settings,
    guard: EventGuard.of(settings, parked.guard ?? undefined),
    missing: parked.missing,
    inputTruncated: parked.inputTruncated,
  };
}
