/** One group of digits of a phone candidate, and the separators written before it. */
interface Group {
  digits: string;
  before: string;
  /** Where the group ends in the text read. */
  end: number;
}

const GROUP = /([ ().-]*)(\d+)/g;
/** What may stand between two groups: one space, dot or dash, or a bracket with one of them. */
const SEPARATOR = /^(?:[ .-]|\)[ -]?|[ -]?\()$/;

/**
 * How much of a phone candidate (see findPhones) is a phone number: 0 when none is. Its groups
 * are read up to the first separator no phone is written with; trailing groups are dropped while
 * the number is too long. `+` numbers have 8–15 digits; others 10–15 in two groups or more (a
 * lone number is an order id); never a date, a dotted address or a version.
 */
export function phoneLength(candidate: string): number {
  const sign = candidate.startsWith('+') ? 1 : 0;
  const groups = readGroups(candidate.slice(sign));
  let digits = groups.reduce((n, group) => n + group.digits.length, 0);
  let count = groups.length;
  // A number ends where a space follows it: `415-555-0132 415-555-0133` are two.
  while (count > 1 && (digits > 15 || (count < groups.length && groups[count]?.before !== ' ')))
    digits -= (groups[--count] as Group).digits.length;
  if (digits > 15 || (sign ? digits < 8 : digits < 10 || count < 2)) return 0;
  const kept = groups.slice(0, count);
  if (looksLikeDate(kept) || looksDotted(kept) || looksLikeCard(groups)) return 0;
  // From the third on, groups have two digits at least (`+33 6 12 34 56 78`, `1 800 555 0199`,
  // not `12 3 4 5678 9`), unless bracketed (`+49 (0) 30 1234567`).
  const short = (group: Group) => group.digits.length < 2 && !group.before.endsWith('(');
  if (kept.slice(2).some(short)) return 0;
  const end = sign + (kept.at(-1) as Group).end;
  return bracketsBalanced(candidate.slice(0, end)) ? end : 0;
}

function readGroups(text: string): Group[] {
  const groups: Group[] = [];
  for (const m of text.matchAll(GROUP)) {
    const [, before = '', digits = ''] = m;
    const fits = groups.length === 0 ? before === '' || before === '(' : SEPARATOR.test(before);
    if (!fits) break;
    groups.push({ digits, before, end: m.index + m[0].length });
  }
  return groups;
}

/** At most one pair of brackets, around one to four digits: `(415)`, `+44 (0) 20`. */
function bracketsBalanced(text: string): boolean {
  const open = text.indexOf('(');
  const close = text.indexOf(')');
  if (open < 0 && close < 0) return true;
  return (
    open >= 0 &&
    close > open &&
    text.indexOf('(', open + 1) < 0 &&
    text.indexOf(')', close + 1) < 0 &&
    /^\(\d{1,4}\)$/.test(text.slice(open, close + 1))
  );
}

const YEAR = /^(?:19|20)\d\d$/;
const MONTH = /^(?:0?[1-9]|1[0-2])$/;
const DAY = /^(?:0?[1-9]|[12]\d|3[01])$/;

/** Three groups that read as a year, a month and a day, in either order. */
function looksLikeDate(groups: readonly Group[]): boolean {
  for (let i = 0; i + 2 < groups.length; i++) {
    const [a, b, c] = [groups[i], groups[i + 1], groups[i + 2]] as [Group, Group, Group];
    if (b.before !== c.before) continue;
    if (YEAR.test(a.digits) && MONTH.test(b.digits) && DAY.test(c.digits)) return true;
    if (DAY.test(a.digits) && MONTH.test(b.digits) && YEAR.test(c.digits)) return true;
  }
  return false;
}

/** 13 digits or more in groups of four (the last may be shorter): a card number, Luhn or not. */
function looksLikeCard(groups: readonly Group[]): boolean {
  const digits = groups.reduce((n, group) => n + group.digits.length, 0);
  return (
    digits >= 13 &&
    groups.length >= 3 &&
    groups.slice(0, -1).every((group) => group.digits.length === 4)
  );
}

/** Groups of one to three digits between dots: an address (valid or not) or a version. */
function looksDotted(groups: readonly Group[]): boolean {
  return (
    groups.length >= 3 &&
    groups.slice(1).every((group) => group.before === '.') &&
    groups.every((group) => group.digits.length <= 3)
  );
}
