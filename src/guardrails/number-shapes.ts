import { getCountrySpecifications } from 'ibantools';
import ipaddr from 'ipaddr.js';
import { phoneLength } from './phone-shape.js';
import type { Found } from './found.js';

// Candidates are found by a shape, then kept only when their check holds. The lookbehinds keep
// a match from starting inside a longer word or number (a card's, inside an IBAN's digits).
const CARD = /(?<![\w.-])(?<![A-Za-z]{2}\d{2}[ .-]?)[1-9](?:[ .-]?\d){12,18}(?!\w)/g;
const IBAN = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ .-]?[A-Za-z0-9]){10,40}/g;
const PHONE = /(?<![\w+.-])[+(]?\d[\d ().-]{0,28}\d(?!\w)/g;
const VERSION_BEFORE = /(?:version|release|build|ver\.?|v)\s*[:=]?\s*$/i;

const DIGIT = /\d/;

/** 13–19 digits, grouped or not, passing the Luhn check (a prefix of a longer run, at a group's end). */
export function findCards(text: string): Found[] {
  const found: Found[] = [];
  if (!DIGIT.test(text)) return found;
  for (const m of text.matchAll(CARD)) {
    const value = m[0];
    const digits = value.replace(/\D/g, '');
    // The longest run that passes, ending at a digit followed by a separator or the end.
    let count = digits.length;
    for (let end = value.length; end > 0 && count >= 13; end--) {
      if (!isDigitCode(value.charCodeAt(end - 1))) continue;
      const atGroupEnd = end === value.length || !isDigitCode(value.charCodeAt(end));
      if (atGroupEnd && count <= 19 && luhn(digits, count)) {
        found.push([m.index, m.index + end]);
        break;
      }
      count--;
    }
  }
  return found;
}

/** The Luhn check over the first `length` digits of `digits` (all of them by default). */
export function luhn(digits: string, length = digits.length): boolean {
  let sum = 0;
  for (let i = length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

const isAlnum = (c: number) => isWordChar(c) && c !== 0x5f;

/**
 * Each country's IBAN length and account format, from ibantools' maintained table, compiled once
 * (its own isValidIBAN builds the format's RegExp again on every call).
 */
const IBAN_COUNTRIES = new Map(
  Object.entries(getCountrySpecifications()).flatMap(([code, spec]) =>
    spec.chars && spec.bban_regexp
      ? [[code, { length: spec.chars, bban: new RegExp(spec.bban_regexp) }] as const]
      : [],
  ),
);

/** An IBAN (upper case, no separators) of its country's format whose mod-97 check holds. */
function isValidIban(iban: string): boolean {
  const country = IBAN_COUNTRIES.get(iban.slice(0, 2));
  if (!country || iban.length !== country.length || !country.bban.test(iban.slice(4))) return false;
  // The number made of BBAN, country and check digits (letters as 10–35) leaves 1 mod 97.
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < moved.length; i++) {
    const code = moved.charCodeAt(i);
    const value = code <= 0x39 ? code - 0x30 : code - 0x37;
    remainder = (remainder * (value > 9 ? 100 : 10) + value) % 97;
  }
  return remainder === 1;
}

/**
 * IBANs passing their country's length, format and mod-97 check, grouped or not. A candidate
 * may run on into the next word; the IBAN is its first `length` characters, ending where a
 * group ends.
 */
export function findIbans(text: string): Found[] {
  const found: Found[] = [];
  if (!DIGIT.test(text)) return found;
  for (const m of text.matchAll(IBAN)) {
    const candidate = m[0];
    const length = IBAN_COUNTRIES.get(candidate.slice(0, 2).toUpperCase())?.length;
    if (length === undefined) continue;
    let chars = 0;
    let end = 0;
    while (end < candidate.length && chars < length) {
      if (isAlnum(candidate.charCodeAt(end))) chars++;
      end++;
    }
    if (chars < length || isAlnum(candidate.charCodeAt(end))) continue;
    const iban = candidate.slice(0, end).replace(/[ .-]/g, '').toUpperCase();
    if (isValidIban(iban)) found.push([m.index, m.index + end]);
  }
  return found;
}

/**
 * IPv4 (each part at most 255, not a version number) and IPv6 addresses. Read from each dot and
 * colon outwards over the characters an address is made of, not by a pattern tried at every
 * position: JSON text has a colon on every line.
 */
export function findIps(text: string): Found[] {
  const found: Found[] = [];
  if (DIGIT.test(text)) addressesAround(text, '.', isV4Char, 7, isIpv4, found);
  if (text.includes(':')) addressesAround(text, ':', isV6Char, 3, isIpv6, found);
  return found.sort((a, b) => a[0] - b[0]);
}

function addressesAround(
  text: string,
  anchor: string,
  isPart: (code: number) => boolean,
  shortest: number,
  isAddress: (value: string, text: string, start: number) => boolean,
  found: Found[],
): void {
  for (let at = text.indexOf(anchor); at >= 0;) {
    let start = at;
    while (start > 0 && isPart(text.charCodeAt(start - 1))) start--;
    let read = at + 1;
    while (read < text.length && isPart(text.charCodeAt(read))) read++;
    // A sentence may end right after an address.
    let end = read;
    while (end > start && text.charCodeAt(end - 1) === 0x2e) end--;
    const bounded = !isWordChar(text.charCodeAt(start - 1)) && !isWordChar(text.charCodeAt(end));
    if (end - start >= shortest && bounded) {
      const value = text.slice(start, end);
      if (isAddress(value, text, start)) found.push([start, end]);
    }
    at = text.indexOf(anchor, read);
  }
}

function digitCount(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) if (isDigitCode(value.charCodeAt(i))) n++;
  return n;
}

/** How many times the character `code` occurs in `value`. */
function count(value: string, code: number): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) === code) n++;
  return n;
}

const isDigitCode = (c: number) => c >= 0x30 && c <= 0x39;
const isHexCode = (c: number) =>
  isDigitCode(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isV4Char = (c: number) => isDigitCode(c) || c === 0x2e;
const isV6Char = (c: number) => isHexCode(c) || c === 0x3a || c === 0x2e;
/** Letters, digits and `_` (NaN, before the start or past the end, is none). */
const isWordChar = (c: number) =>
  isDigitCode(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;

/** Four parts of one to three digits, each at most 255; not after `version`, `v` and such. */
function isIpv4(value: string, text: string, start: number): boolean {
  if (count(value, 0x2e) !== 3) return false;
  const parts = value.split('.');
  if (parts.length !== 4) return false;
  for (const part of parts)
    if (part.length === 0 || part.length > 3 || Number(part) > 255) return false;
  return !VERSION_BEFORE.test(text.slice(Math.max(0, start - 12), start));
}

/**
 * Eight groups, or fewer around one `::`, with a digit and two groups at least (`fe80::1`) or
 * the loopback: `a::b` in code and `10:30:45` are no addresses. The shape is checked before
 * ipaddr.js is asked, which throws (slowly) for what it refuses.
 */
function isIpv6(value: string): boolean {
  // Most values read around a colon are a time or a JSON number (`":19.99`): two colons at least.
  const colons = count(value, 0x3a);
  if (colons < 2 || !DIGIT.test(value)) return false;
  const compressed = value.includes('::');
  const embedsV4 = value.includes('.');
  if (!compressed && colons !== (embedsV4 ? 6 : 7)) return false;
  if (compressed && colons < 2) return false;
  const groups = value.split(':').filter(Boolean).length;
  return (groups >= 2 || value === '::1') && ipaddr.IPv6.isValid(value);
}

/** `+` and 8–15 digits, or 10–15 digits in groups; never a date, an address or a lone number. */
export function findPhones(text: string): Found[] {
  const found: Found[] = [];
  if (!DIGIT.test(text)) return found;
  // A candidate refused whole is skipped whole (the groups of a card or a date are no phone);
  // one whose start is a phone is read again after it: `415-555-0132 415-555-0199` are two.
  const phone = new RegExp(PHONE);
  for (let m = phone.exec(text); m; m = phone.exec(text)) {
    // Fewer than 8 digits (`+` and 8 is the shortest phone): no phone, whatever its groups.
    if (m[0].length < 9 || digitCount(m[0]) < 8) continue;
    const length = phoneLength(m[0]);
    if (length === 0) continue;
    found.push([m.index, m.index + length]);
    phone.lastIndex = m.index + length;
  }
  return found;
}
