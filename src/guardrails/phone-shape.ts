/** One group of digits of a phone candidate, and the separators written before it. */
interface Group {
  /** How many digits, and the number they make (read while the digits are, not sliced out). */
  length: number;
  value: number;
  before: string;
  /** Where the group ends in the text read. */
  end: number;
}

/** What may stand between two groups: one space, dot or dash, or a bracket with one of them. */
const SEPARATORS = new Set([' ', '.', '-', ')', ') ', ')-', '(', ' (', '-(']);

/**
 * How much of a phone candidate (see findPhones) is a phone number: 0 when none is. Its groups
 * are read up to the first separator no phone is written with; trailing groups are dropped while
 * the number is too long. `+` numbers have 8–15 digits; others 10–15 in two groups or more (a
 * lone number is an order id); never a date, a dotted address or version, or a card's layout.
 * Read a character at a time: it runs for every run of digits in what is sent.
 */
export function phoneLength(candidate: string): number {
  const sign = candidate.charCodeAt(0) === 0x2b ? 1 : 0;
  const groups = readGroups(candidate, sign);
  let digits = 0;
  for (const group of groups) digits += group.length;
  let count = groups.length;
  // A number ends where a space follows it: `415-555-0132 415-555-0199` are two.
  while (count > 1 && (digits > 15 || (count < groups.length && groups[count]?.before !== ' ')))
    digits -= (groups[--count] as Group).length;
  if (digits > 15 || (sign ? digits < 8 : digits < 10 || count < 2)) return 0;
  if (looksLikeDate(groups, count) || looksDotted(groups, count) || looksLikeCard(groups)) return 0;
  // From the third on, groups have two digits at least (`+33 6 12 34 56 78`, `1 800 555 0199`,
  // not `12 3 4 5678 9`), unless bracketed (`+49 (0) 30 1234567`).
  for (let i = 2; i < count; i++) {
    const group = groups[i] as Group;
    if (group.length < 2 && !group.before.endsWith('(')) return 0;
  }
  const end = (groups[count - 1] as Group).end;
  return bracketsBalanced(candidate, end) ? end : 0;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function readGroups(text: string, from: number): Group[] {
  const groups: Group[] = [];
  let at = from;
  while (at < text.length) {
    const start = at;
    while (at < text.length && !isDigit(text.charCodeAt(at))) at++;
    const before = text.slice(start, at);
    const fits = groups.length === 0 ? before === '' || before === '(' : SEPARATORS.has(before);
    if (!fits || at === text.length) break;
    const digitsStart = at;
    let value = 0;
    for (let code = text.charCodeAt(at); isDigit(code); code = text.charCodeAt(++at))
      value = value * 10 + code - 0x30;
    groups.push({ length: at - digitsStart, value, before, end: at });
  }
  return groups;
}

/** At most one pair of brackets, around one to four digits: `(415)`, `+44 (0) 20`. */
function bracketsBalanced(text: string, end: number): boolean {
  const open = text.indexOf('(');
  const close = text.indexOf(')');
  if ((open < 0 || open >= end) && (close < 0 || close >= end)) return true;
  if (open < 0 || close < open || close >= end || close - open < 2 || close - open > 5) {
    return false;
  }
  for (let i = open + 1; i < close; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return !occursBetween(text, '(', open + 1, end) && !occursBetween(text, ')', close + 1, end);
}

function occursBetween(text: string, char: string, from: number, end: number): boolean {
  const at = text.indexOf(char, from);
  return at >= 0 && at < end;
}

/** Four digits from 1900 to 2099. */
const isYear = (g: Group) => g.length === 4 && g.value >= 1900 && g.value <= 2099;
const inRange = (g: Group, max: number) => g.length <= 2 && g.value >= 1 && g.value <= max;

/** Three of the first `count` groups that read as a year, a month and a day, in either order. */
function looksLikeDate(groups: readonly Group[], count: number): boolean {
  for (let i = 0; i + 2 < count; i++) {
    const a = groups[i] as Group;
    const b = groups[i + 1] as Group;
    const c = groups[i + 2] as Group;
    if (b.before !== c.before || !inRange(b, 12)) continue;
    if (isYear(a) && inRange(c, 31)) return true;
    if (inRange(a, 31) && isYear(c)) return true;
  }
  return false;
}

/** 13 digits or more in groups of four (the last may be shorter): a card number, Luhn or not. */
function looksLikeCard(groups: readonly Group[]): boolean {
  if (groups.length < 3) return false;
  let digits = 0;
  for (let i = 0; i < groups.length; i++) {
    const length = (groups[i] as Group).length;
    if (i < groups.length - 1 && length !== 4) return false;
    digits += length;
  }
  return digits >= 13;
}

/** The first `count` groups are of one to three digits between dots: an address or a version. */
function looksDotted(groups: readonly Group[], count: number): boolean {
  if (count < 3) return false;
  for (let i = 0; i < count; i++) {
    const group = groups[i] as Group;
    if (group.length > 3 || (i > 0 && group.before !== '.')) return false;
  }
  return true;
}
