/**
 * PostgreSQL text cannot hold U+0000, yet JSON allows `\u0000` in strings, so a rendered prompt
 * (or a reply, or an error quoting either) may contain it. Storing it as is would fail the
 * whole update; U+FFFD, the replacement character, keeps the text readable and the event
 * answerable. The raw payload is unaffected: it keeps the escape as the six characters `\u0000`.
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}
