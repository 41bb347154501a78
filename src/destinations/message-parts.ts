/** Telegram's longest message, in UTF-16 code units. */
export const TELEGRAM_MAX_TEXT = 4096;
/** Discord's longest `content`. */
export const DISCORD_MAX_CONTENT = 2000;

/**
 * A text cut into parts of at most `limit` UTF-16 code units, in order: each cut at the last
 * line break that fits, else the last space, else at the limit (never inside a surrogate pair).
 * The line break or space cut at is dropped; parts of nothing but white space are left out.
 */
export function splitText(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    // A separator right after the limit still lets the whole first `limit` units go together.
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf('\n');
    if (cut <= 0) cut = window.lastIndexOf(' ');
    let skip = 1;
    if (cut <= 0) {
      cut = isHighSurrogate(rest.charCodeAt(limit - 1)) ? limit - 1 : limit;
      skip = 0;
    }
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut + skip);
  }
  parts.push(rest);
  return parts.filter((part) => part.trim() !== '');
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
