/** How much of a refused or filtered request's body its event keeps: the first 64 KB. */
export const REJECTED_BODY_BYTES = 65_536;

/**
 * The start of a refused body as text PostgreSQL can store, at most REJECTED_BODY_BYTES of UTF-8.
 * Refused bodies may be any bytes; text holds neither NUL nor invalid UTF-8, so both become
 * U+FFFD in the copy kept. `truncated` says that part of the body is not kept.
 */
export function keptBody(
  bytes: Buffer,
  received = bytes.length,
): { text: string; truncated: boolean } {
  const head = bytes.subarray(0, REJECTED_BODY_BYTES);
  let text = head.toString('utf8').replaceAll('\u0000', '\uFFFD');
  // Each invalid byte became three bytes of U+FFFD: cut again, at a character boundary.
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length > REJECTED_BODY_BYTES) {
    let end = REJECTED_BODY_BYTES;
    while (end > 0 && ((encoded[end] as number) & 0xc0) === 0x80) end--;
    text = encoded.subarray(0, end).toString('utf8');
  }
  return { text, truncated: received > head.length };
}
