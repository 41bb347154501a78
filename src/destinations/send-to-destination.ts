import { renderTemplate, type JsonValue } from '../template/index.js';
import type { DestinationKind, DestinationSettings } from './destination-schemas.js';
import type {
  DestinationMessage,
  DestinationSender,
  DestinationOutcome,
  SendOptions,
  SenderDeps,
} from './destination-sender.js';
import { discordSender } from './discord-sender.js';
import { slackSender } from './slack-sender.js';
import { teamsSender } from './teams-sender.js';
import { telegramSender } from './telegram-sender.js';
import { webhookSender } from './webhook-sender.js';

/** The one sender of each kind. */
export const SENDERS: Readonly<Record<DestinationKind, DestinationSender>> = {
  webhook: webhookSender,
  slack: slackSender,
  telegram: telegramSender,
  discord: discordSender,
  teams: teamsSender,
};

const EMPTY: JsonValue = new Map();
/** As long as a reply URL may be. */
const TARGET_MAX_CHARS = 2000;

/**
 * Sends one rendered message to one destination, once (no retry here: the caller's queue
 * retries on its schedule), and says what came of it and where it went. The destination's
 * templated fields (`chat_id`, `thread_ts` ...) are rendered over `options.payload`. Rejects
 * only when `options.signal` aborts; every other failure is an outcome.
 */
export async function sendToDestination(
  deps: SenderDeps,
  settings: DestinationSettings,
  message: DestinationMessage,
  options: SendOptions = {},
): Promise<DestinationOutcome> {
  const payload = options.payload ?? EMPTY;
  const fields: Record<string, string> = {};
  for (const [name, template] of Object.entries(settings.fields))
    fields[name] = renderTemplate(template, payload).trim();
  const sender = SENDERS[settings.kind];
  const outcome = await sender.send({
    settings,
    fields,
    message,
    deps,
    partsDone: options.partsDone ?? 0,
    signal: options.signal,
    now: options.now ?? new Date(),
  });
  return { ...outcome, target: shownTarget(sender.target({ settings, fields, deps })) };
}

/** A target as stored: a field rendered from the payload may be long, or hold a NUL. */
function shownTarget(target: string | null): string | null {
  if (target === null) return null;
  const text = target.replaceAll('\u0000', '\uFFFD');
  return text.length > TARGET_MAX_CHARS ? `${text.slice(0, TARGET_MAX_CHARS)}…` : text;
}
