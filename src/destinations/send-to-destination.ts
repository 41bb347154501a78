import { renderTemplate, type JsonValue } from '../template/index.js';
import type { DestinationKind, DestinationSettings } from './destination-schemas.js';
import type {
  DestinationMessage,
  DestinationSender,
  SendOptions,
  SendOutcome,
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

/**
 * Sends one rendered message to one destination, once (no retry here: the caller's queue
 * retries on its schedule), and says what came of it. The destination's templated fields
 * (`chat_id`, `thread_ts` ...) are rendered over `options.payload`. Rejects only when
 * `options.signal` aborts; every other failure is an outcome.
 */
export function sendToDestination(
  deps: SenderDeps,
  settings: DestinationSettings,
  message: DestinationMessage,
  options: SendOptions = {},
): Promise<SendOutcome> {
  const payload = options.payload ?? EMPTY;
  const fields: Record<string, string> = {};
  for (const [name, template] of Object.entries(settings.fields))
    fields[name] = renderTemplate(template, payload).trim();
  return SENDERS[settings.kind].send({
    settings,
    fields,
    message,
    deps,
    partsDone: options.partsDone ?? 0,
    signal: options.signal,
    now: options.now ?? new Date(),
  });
}
