import { InvalidJsonError } from './json-value.js';

/**
 * The read position shared by the pieces of the parser. One small mutable
 * object keeps the hot loops on plain `charCodeAt` calls and integer
 * arithmetic, with no intermediate tokens or result objects.
 */
export class JsonCursor {
  pos = 0;
  readonly end: number;
  /**
   * The last position so far where the text is not as compact JSON would write it (white space,
   * an escape, a repeated key); -1 while there is none. A container that starts after it is
   * written exactly as it renders (see exact-text.ts).
   */
  looseAt = -1;

  constructor(readonly src: string) {
    this.end = src.length;
  }

  /** Skips the four JSON white space characters, and nothing else (RFC 8259, section 2). */
  skipWhitespace(): void {
    const src = this.src;
    let pos = this.pos;
    while (pos < this.end) {
      const c = src.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    if (pos !== this.pos) this.looseAt = pos - 1;
    this.pos = pos;
  }

  /** The error for whatever sits at `at`: a character that does not fit, or the end of the text. */
  unexpected(at: number = this.pos): InvalidJsonError {
    if (at >= this.end)
      return new InvalidJsonError(`Unexpected end of input at position ${at}`, at);
    return new InvalidJsonError(
      `Unexpected character ${describeChar(this.src.charCodeAt(at))} at position ${at}`,
      at,
    );
  }

  fail(message: string, at: number = this.pos): InvalidJsonError {
    return new InvalidJsonError(`${message} at position ${at}`, at);
  }
}

/** Quotes a printable character; names control characters and surrogates by code so messages stay readable. */
function describeChar(code: number): string {
  if (code < 0x20 || code === 0x7f || (code >= 0xd800 && code <= 0xdfff)) {
    return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return `'${String.fromCharCode(code)}'`;
}
