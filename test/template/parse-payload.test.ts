import { describe, expect, it } from 'vitest';
import {
  InvalidJsonError,
  checkPayload,
  JsonNumber,
  MAX_DEPTH,
  isJsonObject,
  parsePayload,
  toJsonText,
  type JsonValue,
} from '../../src/template/index.js';

function member(value: JsonValue, key: string): JsonValue | undefined {
  if (!isJsonObject(value)) throw new Error('not an object');
  return value.get(key);
}

function parseError(text: string): InvalidJsonError {
  try {
    parsePayload(text);
  } catch (error) {
    if (error instanceof InvalidJsonError) return error;
    throw error;
  }
  throw new Error(`accepted: ${text.slice(0, 40)}`);
}

describe('parsePayload: valid documents', () => {
  it('builds Maps, arrays, strings, JsonNumbers, booleans and null', () => {
    const value = parsePayload('{"s":"x","n":-1.50e+3,"t":true,"f":false,"z":null,"a":[1],"o":{}}');
    expect(isJsonObject(value)).toBe(true);
    expect(member(value, 's')).toBe('x');
    expect(member(value, 'n')).toEqual(new JsonNumber('-1.50e+3'));
    expect(member(value, 't')).toBe(true);
    expect(member(value, 'f')).toBe(false);
    expect(member(value, 'z')).toBe(null);
    expect(member(value, 'a')).toEqual([new JsonNumber('1')]);
    expect(isJsonObject(member(value, 'o') ?? null)).toBe(true);
  });

  it('keeps key order, integer-like keys included', () => {
    const value = parsePayload('{"b":1,"2":2,"a":3,"1":4}');
    expect(isJsonObject(value) && [...value.keys()]).toEqual(['b', '2', 'a', '1']);
  });

  it('lets the last of duplicate keys win, at the first position', () => {
    const value = parsePayload('{"a":1,"b":2,"a":3}');
    expect(toJsonText(value)).toBe('{"a":3,"b":2}');
  });

  it('keeps number text exactly', () => {
    for (const text of [
      '0',
      '-0',
      '9007199254740993',
      '1.50',
      '1e400',
      '1E+2',
      '-0.0e-0',
      '123456789012345678901234567890',
    ]) {
      expect(parsePayload(text)).toEqual(new JsonNumber(text));
    }
    expect(new JsonNumber('1.50').toNumber()).toBe(1.5);
    expect(String(new JsonNumber('1.50'))).toBe('1.50');
  });

  it('accepts top-level scalars', () => {
    expect(parsePayload('"s"')).toBe('s');
    expect(parsePayload('null')).toBe(null);
    expect(parsePayload('true')).toBe(true);
    expect(parsePayload('[]')).toEqual([]);
    expect(isJsonObject(parsePayload('[]'))).toBe(false);
    expect(isJsonObject(parsePayload('"s"'))).toBe(false);
  });

  it('allows JSON white space around and between tokens', () => {
    const value = parsePayload(' \t\r\n{ "a" :\n[ 1 ,\t2 ] , "b" : { } }\r\n ');
    expect(toJsonText(value)).toBe('{"a":[1,2],"b":{}}');
  });

  it('decodes every escape, lone surrogates and \\u0000 included', () => {
    expect(parsePayload('"\\"\\\\\\/\\b\\f\\n\\r\\t"')).toBe('"\\/\b\f\n\r\t');
    expect(parsePayload('"\\u0000"')).toBe('\u0000');
    expect(parsePayload('"\\ud800"')).toBe('\ud800');
    expect(parsePayload('"\\uDC00x"')).toBe('\udc00x');
    expect(parsePayload('"\\ud83d\\ude00"')).toBe('😀');
    expect(parsePayload('"\\u00E9\\u00e9"')).toBe('éé');
    expect(parsePayload('"raw \u007f \u2028 \ud800"')).toBe('raw \u007f \u2028 \ud800');
  });

  it('treats __proto__, constructor and prototype as plain keys', () => {
    const value = parsePayload('{"__proto__":{"x":1},"constructor":2,"prototype":3}');
    expect(isJsonObject(value) && [...value.keys()]).toEqual([
      '__proto__',
      'constructor',
      'prototype',
    ]);
    expect(Object.getPrototypeOf(value)).toBe(Map.prototype);
    expect(member(value, 'constructor')).toEqual(new JsonNumber('2'));
  });

  it(`accepts nesting up to ${MAX_DEPTH} levels`, () => {
    expect(MAX_DEPTH).toBe(1000);
    expect(() => parsePayload('['.repeat(1000) + ']'.repeat(1000))).not.toThrow();
    expect(() => parsePayload('{"a":'.repeat(1000) + '1' + '}'.repeat(1000))).not.toThrow();
    expect(() => parsePayload('[{"a":'.repeat(499) + '[[]]' + '}]'.repeat(499))).not.toThrow();
  });
});

// Every entry is text that JSON.parse rejects too (checked below).
const invalid: [name: string, text: string][] = [
  ['empty input', ''],
  ['only white space', ' \n\t'],
  ['truncated object', '{'],
  ['truncated array', '[1,2'],
  ['truncated member', '{"a":1'],
  ['truncated after colon', '{"a":'],
  ['truncated after key', '{"a"'],
  ['truncated string', '"abc'],
  ['truncated escape', '"abc\\'],
  ['truncated unicode escape', '"\\u12'],
  ['truncated true', 'tru'],
  ['truncated null', 'nul'],
  ['truncated false', 'fals'],
  ['trailing comma in array', '[1,]'],
  ['trailing comma in object', '{"a":1,}'],
  ['leading comma', '[,1]'],
  ['double comma', '[1,,2]'],
  ['missing comma', '[1 2]'],
  ['missing comma between members', '{"a":1 "b":2}'],
  ['missing colon', '{"a" 1}'],
  ['unquoted key', '{a:1}'],
  ['number key', '{1:1}'],
  ['single-quoted key', "{'a':1}"],
  ['single-quoted string', "'x'"],
  ['leading zero', '01'],
  ['leading zero, negative', '-01'],
  ['double zero', '00'],
  ['leading zero in array', '[01]'],
  ['plus sign', '+1'],
  ['leading dot', '.5'],
  ['negative leading dot', '-.5'],
  ['trailing dot', '1.'],
  ['dot before exponent', '1.e3'],
  ['lone minus', '-'],
  ['empty exponent', '1e'],
  ['signed empty exponent', '1e+'],
  ['hex number', '0x10'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['negative Infinity', '-Infinity'],
  ['undefined', 'undefined'],
  ['raw newline in string', '"a\nb"'],
  ['raw tab in string', '"\t"'],
  ['raw NUL in string', '"\u0000"'],
  ['raw U+001F in string', '"\u001f"'],
  ['bad escape \\x', '"\\x41"'],
  ['bad escape \\a', '"\\a"'],
  ["bad escape \\'", '"\\\'"'],
  ['bad escape \\U', '"\\U0041"'],
  ['bad hex digit', '"\\u12G4"'],
  ['trailing garbage', '{} x'],
  ['two values', '1 2'],
  ['two arrays', '[] []'],
  ['two strings', '"a""b"'],
  ['literal followed by letters', 'nullx'],
  ['extra closer', '{}}'],
  ['mismatched closer', '[1}'],
  ['mismatched closer in object', '{"a":1]'],
  ['non-breaking space is not white space', '\u00a0 1'],
  ['byte order mark after white space', ' \ufeff{}'],
  ['second byte order mark', '\ufeff\ufeff{}'],
  ['vertical tab', '\u000b1'],
  ['comment', '/* c */ 1'],
  ['capitalised literal', 'True'],
];

describe('parsePayload: invalid documents', () => {
  it.each(invalid)('%s', (_name, text) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    const error = parseError(text);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('InvalidJsonError');
    expect(error.position).toBeGreaterThanOrEqual(0);
    expect(error.position).toBeLessThanOrEqual(text.length);
    expect(error.message).toMatch(/ at position \d+$/);
  });

  it('skips one byte-order mark at the very start (RFC 8259 lets a parser ignore it)', () => {
    expect(toJsonText(parsePayload('\ufeff{"a":1}'))).toBe('{"a":1}');
  });

  it('says which character is wrong and where', () => {
    const error = parseError('{"a": x}');
    expect(error.message).toBe("Unexpected character 'x' at position 6");
    expect(error.position).toBe(6);
    expect(parseError('[1,2').message).toBe('Unexpected end of input at position 4');
    expect(parseError('"a\nb"').position).toBe(2);
    expect(parseError('01').position).toBe(1);
  });

  it(`rejects nesting of ${MAX_DEPTH + 1} levels`, () => {
    const cases: [text: string, position: number][] = [
      ['['.repeat(1001) + ']'.repeat(1001), 1000],
      ['{"a":'.repeat(1001) + '1' + '}'.repeat(1001), 5000],
      ['['.repeat(1000) + '{}' + ']'.repeat(1000), 1000],
      ['[{"a":'.repeat(500) + '[]' + '}]'.repeat(500), 3000],
    ];
    for (const [text, position] of cases) {
      const error = parseError(text);
      expect(error.message).toBe(`Nesting deeper than 1000 levels at position ${position}`);
      expect(error.position).toBe(position);
    }
  });

  it('rejects 100 000 nesting levels with InvalidJsonError, not a stack overflow', () => {
    for (const text of [
      '['.repeat(100_000) + ']'.repeat(100_000),
      '['.repeat(100_000),
      '{"a":'.repeat(100_000) + 'null' + '}'.repeat(100_000),
    ]) {
      expect(() => parsePayload(text)).toThrow(InvalidJsonError);
    }
  });
});

describe("checkPayload: the receiver's check, without a tree", () => {
  it('says whether a document is an object', () => {
    expect(checkPayload('{"a":[1,{"b":null}]}')).toEqual({ isObject: true });
    expect(checkPayload(' {} ')).toEqual({ isObject: true });
    for (const text of ['[]', '[{}]', '1', '"x"', 'null', 'true'])
      expect(checkPayload(text)).toEqual({ isObject: false });
  });

  it('takes one byte-order mark at the very start, as parsePayload does', () => {
    expect(checkPayload('\ufeff{"a":1}')).toEqual({ isObject: true });
    expect(() => checkPayload('\ufeff\ufeff{}')).toThrow(InvalidJsonError);
  });

  it.each(invalid)("refuses %s with parsePayload's error", (_name, text) => {
    expect(() => checkPayload(text)).toThrow(parseError(text).message);
  });

  it(`accepts ${MAX_DEPTH} levels and refuses ${MAX_DEPTH + 1} with parsePayload's error`, () => {
    const deepest = '{"a":'.repeat(998) + '["]]]\\"",{}]' + '}'.repeat(998);
    expect(checkPayload(deepest)).toEqual({ isObject: true });
    for (const text of [
      '['.repeat(1001) + ']'.repeat(1001),
      '{"a":'.repeat(1001) + '1' + '}'.repeat(1001),
      '{"s":"' + '['.repeat(2000) + '","a":' + '['.repeat(1000) + ']'.repeat(1000) + '}',
    ]) {
      expect(() => checkPayload(text)).toThrow(parseError(text).message);
    }
    // Brackets inside strings do not nest.
    expect(checkPayload('{"s":"' + '['.repeat(5000) + '"}')).toEqual({ isObject: true });
  });
});
