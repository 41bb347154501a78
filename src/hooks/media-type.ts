import contentType from 'content-type';

/** JSON, any `application/*+json`, or no Content-Type at all (read as JSON). */
export function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined || header.trim() === '') return true;
  try {
    const { type } = contentType.parse(header);
    return type === 'application/json' || /^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
  } catch {
    return false;
  }
}

/** A form-encoded body with a `payload` field: what GitHub sends unless told to send JSON. */
export function isFormWithPayload(header: string | undefined, bytes: Buffer): boolean {
  try {
    if (contentType.parse(header ?? '').type !== 'application/x-www-form-urlencoded') return false;
  } catch {
    return false;
  }
  return new URLSearchParams(bytes.toString('latin1')).has('payload');
}
