import type { Placeholder } from './compile-template.js';
import { type JsonValue } from './json-value.js';
import { MAX_DEPTH, parsePayload } from './parse-payload.js';
import { resolvePath } from './placeholders.js';
import { renderValue } from './render-template.js';

/** What `{{path}}` finds in a payload: whether a value other than null is there, and its text. */
export interface FoundValue {
  /** Neither absent nor null, as for the placeholders an event reports `missing`. */
  readonly present: boolean;
  /** The text `{{path}}` renders. */
  render(): string;
}

/** A value already in hand (a tree's, a status), found. */
export function foundValue(value: JsonValue | undefined): FoundValue {
  return { present: value !== undefined && value !== null, render: () => renderValue(value) };
}

/** A node of the paths read: the values of the key (or index) `children` name are looked at. */
interface PathNode {
  children: Map<string, PathNode> | undefined;
  /** The children whose key is a canonical array index, by index. */
  indexed: Map<number, PathNode> | undefined;
  /** Where the value at this node is recorded; -1 when no path ends here. */
  slot: number;
  /** The slots of this node and of those under it: a repeated key replaces them all. */
  below: number[];
}

/** Where a placeholder's value is recorded: its nested path, and the top-level key spelled like it. */
interface PathSlots {
  nested: number;
  flat: number;
}

/**
 * The paths of some placeholders (a channel's `accept_when`), made ready once and read from each
 * payload's text with `read`.
 */
export class PayloadPathReader {
  private readonly root = newNode();
  private readonly slots = new Map<string, PathSlots>();
  private slotCount = 0;

  constructor(placeholders: readonly Placeholder[]) {
    for (const placeholder of placeholders) {
      if (this.slots.has(placeholder.path)) continue;
      const nested = this.slotOf(this.nodeAt(placeholder.keys, placeholder.indexes));
      // Senders that post flat objects write dotted names as keys (see resolvePath).
      const flat =
        placeholder.keys.length < 2 ? -1 : this.slotOf(this.nodeAt([placeholder.path], [-1]));
      this.slots.set(placeholder.path, { nested, flat });
    }
    collectSlots(this.root);
  }

  /**
   * The payload read at the placeholders' paths, or refused as `parsePayload` refuses it.
   *
   * V8's `JSON.parse` checks the text (what the plain channel runs); one scan then records where
   * each path's value is written, skipping every other value at the speed of `indexOf` over
   * strings, and checks the nesting. No tree is built: a value is taken from its text when it
   * is read (a number as written; a container as the compact JSON its lossless tree renders).
   * @throws InvalidJsonError for a text parsePayload refuses
   */
  read(raw: string): PayloadPaths {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // A byte-order mark, which JSON.parse refuses and parsePayload takes, or an error to name.
      return new PayloadPaths(raw, this.slots, undefined, parsePayload(raw));
    }
    const scan = new Scan(raw, this.slotCount);
    try {
      scan.value(skipWhitespace(raw, 0, scan), this.root, 0);
    } catch (error) {
      // Valid JSON, nested deeper than parsePayload takes: its error says so, and where.
      if (error === TOO_DEEP) parsePayload(raw);
      throw error;
    }
    return new PayloadPaths(raw, this.slots, { parsed, scan }, undefined);
  }

  private nodeAt(keys: readonly string[], indexes: readonly number[]): PathNode {
    let node = this.root;
    keys.forEach((key, i) => {
      node.children ??= new Map();
      let child = node.children.get(key);
      if (child === undefined) {
        child = newNode();
        node.children.set(key, child);
        const index = indexes[i] ?? -1;
        if (index >= 0) (node.indexed ??= new Map()).set(index, child);
      }
      node = child;
    });
    return node;
  }

  private slotOf(node: PathNode): number {
    if (node.slot < 0) node.slot = this.slotCount++;
    return node.slot;
  }
}

function newNode(): PathNode {
  return { children: undefined, indexed: undefined, slot: -1, below: [] };
}

function collectSlots(node: PathNode): number[] {
  if (node.slot >= 0) node.below.push(node.slot);
  for (const child of node.children?.values() ?? []) node.below.push(...collectSlots(child));
  return node.below;
}

const TOO_DEEP = Symbol('nested deeper than MAX_DEPTH');

/** Whether an object of a text repeats a key: none, one seen, or to be counted. */
const enum Repeats {
  None,
  Seen,
  Unsure,
}

/** Keys of one object compared with each other; beyond, the parsed keys are counted instead. */
const MAX_KEYS_COMPARED = 32;

/** Whether the `length` characters at `a` and at `b` are the same. */
function sameText(text: string, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) {
    if (text.charCodeAt(a + i) !== text.charCodeAt(b + i)) return false;
  }
  return true;
}

/**
 * One pass over a text JSON.parse has accepted: where each recorded path's value starts and
 * ends, whether a container is written compact, and how many object keys the text writes.
 */
class Scan {
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** Per slot: the value has no JSON white space between its tokens. */
  readonly compact: Uint8Array;
  /** Every key written, repeated ones included. */
  keys = 0;
  /** The last position of white space between tokens so far; -1 while there is none. */
  looseAt = -1;
  /** Whether an object writes a key twice: seen here, or left to counting the parsed keys. */
  repeats: Repeats = Repeats.None;
  /** The keys of the open objects (where each starts, its length), up to `keyTop`... */
  private readonly keyAt: number[] = [];
  private readonly keyLength: number[] = [];
  private keyTop = 0;
  /** ...and per open container, where its own keys start among them. */
  private readonly keysFrom: number[] = [];
  /** The first backslash at or after the last key compared (Infinity: none left). */
  private nextBackslash = -1;

  constructor(
    readonly text: string,
    slots: number,
  ) {
    this.starts = new Int32Array(slots).fill(-1);
    this.ends = new Int32Array(slots);
    this.compact = new Uint8Array(slots);
  }

  /** Reads the value at `i` (its first character) for `node`; returns the position after it. */
  value(i: number, node: PathNode | undefined, depth: number): number {
    const text = this.text;
    // A repeated key: the last value wins, so what an earlier one recorded is forgotten.
    if (node !== undefined) for (const slot of node.below) this.starts[slot] = -1;
    const c = text.charCodeAt(i);
    let end: number;
    if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_DEPTH) throw TOO_DEEP;
      if (c === 0x7b && node?.children !== undefined) end = this.object(i, node, depth + 1);
      else if (c === 0x5b && node?.indexed !== undefined) end = this.array(i, node, depth + 1);
      else end = this.skipContainer(i, depth);
    } else if (c === 0x22) {
      end = stringEnd(text, i) + 1;
    } else {
      end = scalarEnd(text, i);
    }
    if (node !== undefined && node.slot >= 0) {
      this.starts[node.slot] = i;
      this.ends[node.slot] = end;
      this.compact[node.slot] = this.looseAt < i ? 1 : 0;
    }
    return end;
  }

  private object(open: number, node: PathNode, depth: number): number {
    const text = this.text;
    const children = node.children as Map<string, PathNode>;
    let i = skipWhitespace(text, open + 1, this);
    this.opened();
    for (;;) {
      if (text.charCodeAt(i) === 0x7d) break;
      const close = stringEnd(text, i);
      this.keys++;
      this.compareKey(i, close);
      const child = children.get(keyText(text, i, close));
      // Past the key, the white space and the colon, to the member's value.
      i = skipWhitespace(text, skipWhitespace(text, close + 1, this) + 1, this);
      i = skipWhitespace(text, this.value(i, child, depth), this);
      if (text.charCodeAt(i) === 0x2c) i = skipWhitespace(text, i + 1, this);
    }
    this.closed();
    return i + 1;
  }

  private array(open: number, node: PathNode, depth: number): number {
    const text = this.text;
    const indexed = node.indexed as Map<number, PathNode>;
    let i = skipWhitespace(text, open + 1, this);
    if (text.charCodeAt(i) === 0x5d) return i + 1;
    for (let index = 0; ; index++) {
      i = skipWhitespace(text, this.value(i, indexed.get(index), depth), this);
      if (text.charCodeAt(i) === 0x5d) return i + 1;
      i = skipWhitespace(text, i + 1, this);
    }
  }

  /** Steps over a container no path reads inside, counting its keys and checking its nesting. */
  private skipContainer(open: number, depth: number): number {
    const text = this.text;
    let level = 0;
    // The last string stepped over: the key, when a colon follows.
    let stringOpen = 0;
    let stringClose = 0;
    for (let i = open; ; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        stringOpen = i;
        i = stringClose = stringEnd(text, i);
      } else if (c === 0x7b || c === 0x5b) {
        if (depth + ++level > MAX_DEPTH) throw TOO_DEEP;
        this.opened();
      } else if (c === 0x7d || c === 0x5d) {
        this.closed();
        if (--level === 0) return i + 1;
      } else if (c === 0x3a) {
        this.keys++;
        this.compareKey(stringOpen, stringClose);
      } else if (c <= 0x20) {
        this.looseAt = i;
      }
    }
  }

  private opened(): void {
    this.keysFrom.push(this.keyTop);
  }

  private closed(): void {
    this.keyTop = this.keysFrom.pop() as number;
  }

  /**
   * Notes the key written between the quotes at `open` and `close` in its object, and whether
   * the object wrote it before. Past MAX_KEYS_COMPARED keys in one object, or for a key with an
   * escape (two spellings may decode alike), the question is left to counting the parsed keys.
   */
  private compareKey(open: number, close: number): void {
    if (this.repeats !== Repeats.None) return;
    const from = this.keysFrom[this.keysFrom.length - 1] as number;
    const top = this.keyTop;
    if (top - from >= MAX_KEYS_COMPARED || this.backslashFrom(open) < close) {
      this.repeats = Repeats.Unsure;
      return;
    }
    const start = open + 1;
    const length = close - start;
    for (let k = from; k < top; k++) {
      if (
        this.keyLength[k] === length &&
        sameText(this.text, this.keyAt[k] as number, start, length)
      ) {
        this.repeats = Repeats.Seen;
        return;
      }
    }
    this.keyAt[top] = start;
    this.keyLength[top] = length;
    this.keyTop = top + 1;
  }

  private backslashFrom(at: number): number {
    if (this.nextBackslash < at) {
      const found = this.text.indexOf('\\', at);
      this.nextBackslash = found < 0 ? Infinity : found;
    }
    return this.nextBackslash;
  }
}

/** Skips JSON white space from `i`, noting where it was; returns the next token's position. */
function skipWhitespace(text: string, i: number, scan: { looseAt: number }): number {
  let c = text.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
    scan.looseAt = i;
    c = text.charCodeAt(++i);
  }
  return i;
}

/** The position of the quote that closes the string opened at `open`. */
function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (text.charCodeAt(close - 1) === 0x5c && isEscaped(text, close)) {
    close = text.indexOf('"', close + 1);
  }
  return close;
}

/** Whether the character at `at` follows an odd run of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let before = at - 1;
  while (text.charCodeAt(before) === 0x5c) before--;
  return (at - 1 - before) % 2 === 1;
}

/** The position after a number or literal starting at `i`. */
function scalarEnd(text: string, i: number): number {
  const end = text.length;
  for (i++; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x5d || c === 0x7d || c <= 0x20) break;
  }
  return i;
}

/** A key as the lossless tree holds it: its escapes decoded. */
function keyText(text: string, open: number, close: number): string {
  const raw = text.slice(open + 1, close);
  return raw.includes('\\') ? (JSON.parse(text.slice(open, close + 1)) as string) : raw;
}

const NOT_FOUND: FoundValue = { present: false, render: () => '' };
const TRUE: FoundValue = { present: true, render: () => 'true' };
const FALSE: FoundValue = { present: true, render: () => 'false' };

// A lone surrogate is written as an escape when rendered, as the lossless tree's rendering does.
const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A payload read at the paths of its reader's placeholders: what `{{path}}` finds and renders,
 * exactly as from the lossless tree `parsePayload` builds (a number as written, `1.0` and
 * `9007199254740993` included; strings decoded; the last of repeated keys), without that tree.
 */
export class PayloadPaths {
  readonly isObject: boolean;
  private duplicateKeys: boolean | undefined = undefined;

  constructor(
    private readonly raw: string,
    private readonly slots: ReadonlyMap<string, PathSlots>,
    private readonly scanned: { parsed: unknown; scan: Scan } | undefined,
    private tree: JsonValue | undefined,
  ) {
    this.isObject = scanned
      ? typeof scanned.parsed === 'object' &&
        scanned.parsed !== null &&
        !Array.isArray(scanned.parsed)
      : tree instanceof Map;
  }

  /** What `{{placeholder}}` finds; each call reads afresh (callers keep what they read). */
  find(placeholder: Placeholder): FoundValue {
    const slots = this.slots.get(placeholder.path);
    const scan = this.scanned?.scan;
    if (scan === undefined || slots === undefined) {
      return foundValue(resolvePath(this.lossless(), placeholder));
    }
    let slot = slots.nested;
    if (scan.starts[slot] === -1 && slots.flat >= 0) slot = slots.flat;
    const start = scan.starts[slot] as number;
    if (start === -1) return NOT_FOUND;
    const end = scan.ends[slot] as number;
    const text = this.raw;
    switch (text.charCodeAt(start)) {
      case 0x22: {
        const value = text.slice(start + 1, end - 1);
        if (!value.includes('\\')) return { present: true, render: () => value };
        const decoded = JSON.parse(text.slice(start, end)) as string;
        return { present: true, render: () => decoded };
      }
      case 0x6e:
        return NOT_FOUND;
      case 0x74:
        return TRUE;
      case 0x66:
        return FALSE;
      case 0x7b:
      case 0x5b:
        return {
          present: true,
          render: () => this.containerText(placeholder, start, end, scan.compact[slot] === 1),
        };
      default: {
        const number = text.slice(start, end);
        return { present: true, render: () => number };
      }
    }
  }

  /** The compact JSON the lossless tree renders for the container written at [start, end). */
  private containerText(
    placeholder: Placeholder,
    start: number,
    end: number,
    compact: boolean,
  ): string {
    // Of repeated keys only the last value is rendered: rare enough to leave to the tree.
    if (this.hasDuplicateKeys()) return renderValue(resolvePath(this.lossless(), placeholder));
    const written = this.raw.slice(start, end);
    const backslash = written.includes('\\');
    const surrogates = SURROGATE.test(written);
    if (compact && !backslash && !(surrogates && LONE_SURROGATE.test(written))) return written;
    return compactJson(written, backslash || surrogates);
  }

  /** Whether an object of the text writes a key twice: keys written against keys parsed. */
  private hasDuplicateKeys(): boolean {
    if (this.duplicateKeys === undefined) {
      const scanned = this.scanned as { parsed: unknown; scan: Scan };
      const { repeats, keys } = scanned.scan;
      this.duplicateKeys =
        repeats === Repeats.Unsure ? keys !== keysOf(scanned.parsed) : repeats === Repeats.Seen;
      // Counted once: the parsed value is not needed any more.
      scanned.parsed = undefined;
    }
    return this.duplicateKeys;
  }

  private lossless(): JsonValue {
    this.tree ??= parsePayload(this.raw);
    return this.tree;
  }
}

/** How many keys the objects of a parsed value hold, all levels counted. */
function keysOf(value: unknown): number {
  const open: unknown[] = typeof value === 'object' && value !== null ? [value] : [];
  let count = 0;
  while (open.length > 0) {
    const next = open.pop() as object;
    const members: unknown[] = Array.isArray(next) ? next : Object.values(next);
    if (!Array.isArray(next)) count += members.length;
    for (const member of members) {
      if (typeof member === 'object' && member !== null) open.push(member);
    }
  }
  return count;
}

/**
 * A container's text without white space between tokens, its strings written as the lossless
 * tree renders them (escapes decoded and written again only where JSON needs one): the tree's
 * rendering when no object repeats a key. `strings` is false when no string needs rewriting.
 */
function compactJson(text: string, strings: boolean): string {
  const parts: string[] = [];
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const close = stringEnd(text, i);
      if (strings) {
        const literal = text.slice(i, close + 1);
        if (literal.includes('\\') || LONE_SURROGATE.test(literal)) {
          parts.push(text.slice(run, i), JSON.stringify(JSON.parse(literal)));
          run = close + 1;
        }
      }
      i = close;
    } else if (c <= 0x20) {
      parts.push(text.slice(run, i));
      while (text.charCodeAt(i + 1) <= 0x20) i++;
      run = i + 1;
    }
  }
  parts.push(text.slice(run));
  return parts.join('');
}
