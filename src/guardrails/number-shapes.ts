import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import ipaddr from 'ipaddr.js';
import { phoneLength } from './phone-shape.js';
import type { Found } from './found.js';

// Candidates are found by a shape, then kept only when their check holds. The lookbehinds keep
// a match from starting inside a longer word or number (a card's, inside an IBAN's digits).
const CARD = /(?<![\w.-])(?<![A-Za-z]{2}\d{2}[ .-]?)[1-9](?:[ .-]?\d){12,18}(?!\w)/g;
const IBAN = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ .-]?[A-Za-z0-9]){10,40}/g;
const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)/g;
const IPV6 =
  /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?(?![\w:])/g;
const PHONE = /(?<![\w+.-])[+(]?\d[\d ().-]{0,28}\d(?!\w)/g;
const VERSION_BEFORE = /(?:version|release|build|ver\.?|v)\s*[:=]?\s*$/i;

const DIGIT = /\d/;

/** 13–19 digits, grouped or not, passing the Luhn check (a prefix of a longer run, at a group's end). */
export function findCards(text: string): Found[] {
  const found: Found[] = [];
  if (!DIGIT.test(text)) return found;
  for (const m of text.matchAll(CARD)) {
    const value = m[0];
    // The longest run that passes, ending at a digit followed by a separator or the end.
    for (let end = value.length; end > 0; end--) {
      if (end < value.length && /\d/.test(value[end] as string)) continue;
      const digits = value.slice(0, end).replace(/\D/g, '');
      if (digits.length < 13) break;
      if (digits.length <= 19 && luhn(digits)) {
        found.push([m.index, m.index + end]);
        break;
      }
    }
  }
  return found;
}

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

const IBAN_LENGTHS = new Map(
  Object.entries(getCountrySpecifications()).flatMap(([code, spec]) =>
    spec.chars ? [[code, spec.chars] as const] : [],
  ),
);

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
    const length = IBAN_LENGTHS.get(candidate.slice(0, 2).toUpperCase());
    if (length === undefined) continue;
    let chars = 0;
    let end = 0;
    while (end < candidate.length && chars < length) {
      if (/[A-Za-z0-9]/.test(candidate[end] as string)) chars++;
      end++;
    }
    if (chars < length || /[A-Za-z0-9]/.test(candidate[end] ?? '')) continue;
    const iban = candidate.slice(0, end).replace(/[ .-]/g, '').toUpperCase();
    if (isValidIBAN(iban)) found.push([m.index, m.index + end]);
  }
  return found;
}

/** IPv4 (each part at most 255, not a version number) and IPv6 addresses. */
export function findIps(text: string): Found[] {
  const found: Found[] = [];
  if (DIGIT.test(text)) {
    for (const m of text.matchAll(IPV4)) {
      if (!ipaddr.IPv4.isValidFourPartDecimal(m[0])) continue;
      if (VERSION_BEFORE.test(text.slice(Math.max(0, m.index - 12), m.index))) continue;
      found.push([m.index, m.index + m[0].length]);
    }
  }
  if (text.includes(':')) {
    for (const m of text.matchAll(IPV6)) {
      const value = m[0];
      // Two groups at least (`fe80::1`) or the loopback, with a digit: `a::b` in code is no address.
      const groups = value.split(':').filter(Boolean).length;
      if ((groups >= 2 || value === '::1') && DIGIT.test(value) && ipaddr.IPv6.isValid(value)) {
        found.push([m.index, m.index + value.length]);
      }
    }
  }
  return found.sort((a, b) => a[0] - b[0]);
}

/** `+` and 8–15 digits, or 10–15 digits in groups; never a date, an address or a lone number. */
export function findPhones(text: string): Found[] {
  const found: Found[] = [];
  if (!DIGIT.test(text)) return found;
  // A candidate refused whole is skipped whole (the groups of a card or a date are no phone);
  // one whose start is a phone is read again after it: `415-555-0132 415-555-0199` are two.
  const phone = new RegExp(PHONE);
  for (let m = phone.exec(text); m; m = phone.exec(text)) {
    const length = phoneLength(m[0]);
    if (length === 0) continue;
    found.push([m.index, m.index + length]);
    phone.lastIndex = m.index + length;
  }
  return found;
}
