/**
 * PostgreSQL text cannot hold U+0000, yet JSON allows `\u0000` in strings, so a rendered prompt
 * (or a reply, or an error quoting either) may contain it. Storing it as is would fail the
 * whole update; U+FFFD, the replacement character, keeps the text readable and the event
 * answerable. The raw payload is unaffected: it keeps the escape as the six characters `\u0000`.
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** The most of a refused reply an event keeps, in UTF-16 code units (8 KB of plain text). */
export const REJECTED_REPLY_KEPT = 8192;

/**
 * A reply refused as `reply_invalid` as the event keeps it (`rejected_reply`, migrations/0032):
 * its first 8 KB, enough to see why it did not fit, with `…` when cut, so a model that rambles
 * to its token limit does not swell the row of every event it fails.
 */
export function storableRejectedReply(text: string): string {
  if (text.length <= REJECTED_REPLY_KEPT) return storableText(text);
  // Never cut a surrogate pair in two: half a character is not valid text.
  const end = /[\uD800-\uDBFF]/.test(text[REJECTED_REPLY_KEPT - 1] ?? '')
    ? REJECTED_REPLY_KEPT - 1
    : REJECTED_REPLY_KEPT;
  return `${storableText(text.slice(0, end))}…`;
}
