import type { AiRequest, HistoryTurn } from './ai-provider.js';

/** Ends a text that was cut short. */
export const TRUNCATED_MARK = '…[truncated]';

/** A request cut to the limit, and whether anything had to go. */
export interface FittedRequest {
  request: AiRequest;
  truncated: boolean;
}

/**
 * What one call sends is at most `maxChars` characters (UTF-16 code units) of message text —
 * system prompt, history, prompt — whatever the payload: a template such as `{{.}}` and a long
 * thread would otherwise send megabytes, each paid for. The oldest history pairs go first; then
 * the prompt is cut and marked. A system prompt that would leave the prompt less than half the
 * limit is cut first, to half of it.
 */
export function fitToInputLimit(request: AiRequest, maxChars: number): FittedRequest {
  let system = request.system ?? '';
  let history = request.history;
  let prompt = request.prompt;
  const size = () => system.length + historyChars(history) + prompt.length;
  if (size() <= maxChars) return { request, truncated: false };

  history = newestThatFit(history, maxChars - system.length - prompt.length);
  if (size() > maxChars) {
    const half = Math.floor(maxChars / 2);
    if (system.length > half && system.length + prompt.length > maxChars) {
      system = cut(system, Math.max(half, maxChars - prompt.length));
    }
    prompt = cut(prompt, maxChars - system.length - historyChars(history));
  }
  return {
    request: {
      ...request,
      system: request.system === undefined ? undefined : system,
      history,
      prompt,
    },
    truncated: true,
  };
}

export function historyChars(history: readonly HistoryTurn[]): number {
  let chars = 0;
  for (const turn of history) chars += turn.prompt.length + turn.reply.length;
  return chars;
}

/** The newest turns (kept oldest first) whose texts fit in `room` characters. */
function newestThatFit(history: readonly HistoryTurn[], room: number): readonly HistoryTurn[] {
  let used = 0;
  let first = history.length;
  while (first > 0) {
    const turn = history[first - 1] as HistoryTurn;
    if (used + turn.prompt.length + turn.reply.length > room) break;
    used += turn.prompt.length + turn.reply.length;
    first--;
  }
  return history.slice(first);
}

/** `text` in at most `chars` characters, ending with the mark; never half a surrogate pair. */
export function cut(text: string, chars: number): string {
  if (text.length <= chars) return text;
  let keep = Math.max(0, chars - TRUNCATED_MARK.length);
  const last = text.charCodeAt(keep - 1);
  if (keep > 0 && last >= 0xd800 && last <= 0xdbff) keep--;
  return `${text.slice(0, keep)}${TRUNCATED_MARK}`.slice(0, Math.max(0, chars));
}
