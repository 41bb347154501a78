import { describe, expect, it } from 'vitest';
import { exactTextOf } from '../../src/template/exact-text.js';
import {
  JsonNumber,
  parsePayload,
  toJsonText,
  type JsonObject,
  type JsonValue,
} from '../../src/template/index.js';

describe('toJsonText', () => {
  it('writes compact JSON with numbers as written and keys in order', () => {
    const text =
      ' { "z" : [ 1.50 , -0 , 1E+2 , 9007199254740993 ] , "1" : true , "a" : { } , "n" : null } ';
    expect(toJsonText(parsePayload(text))).toBe(
      '{"z":[1.50,-0,1E+2,9007199254740993],"1":true,"a":{},"n":null}',
    );
  });

  it('writes a large object received as compact JSON as its received text, kept when parsed', () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ sku: `sku-${i}`, price: 1.5 }));
    const compact = JSON.stringify({ items, note: 'é😀' });
    const tree = parsePayload(compact) as JsonObject;
    expect(exactTextOf(tree)).toBe(compact);
    expect(toJsonText(tree)).toBe(compact);
    expect(exactTextOf(tree.get('items') as JsonObject)).toBe(JSON.stringify(items));

    // Not kept where the text may not be the rendering, nor for a small object.
    const lone = JSON.stringify({ items, note: '\ud800' }).replace('\\ud800', '\ud800');
    const notKept = {
      'white space': JSON.stringify({ items }, null, 1),
      'an escape': JSON.stringify({ items, note: 'a\nb' }),
      'a repeated key': compact.replace('{"items"', '{"note":"x","items"'),
      'a lone surrogate': lone,
      small: '{"a":1}',
    };
    for (const [why, text] of Object.entries(notKept)) {
      expect(exactTextOf(parsePayload(text) as JsonObject), why).toBeUndefined();
    }
  });

  it('escapes quotes, backslashes and every control character', () => {
    const controls = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join('');
    const value = `"\\${controls}\u007f`;
    const text = toJsonText(value);
    expect(text).toBe(JSON.stringify(value));
    expect(text).toContain('\\u0000');
    expect(text).toContain('\\n');
    expect(JSON.parse(text)).toBe(value);
  });

  it('writes lone surrogates as escapes and keeps pairs as they are', () => {
    expect(toJsonText('\ud800')).toBe('"\\ud800"');
    expect(toJsonText('a\udc00b')).toBe('"a\\udc00b"');
    expect(toJsonText('\udc00\ud800')).toBe('"\\udc00\\ud800"');
    expect(toJsonText('😀')).toBe('"😀"');
    expect(JSON.parse(toJsonText('x\ud800y'))).toBe('x\ud800y');
  });

  it('escapes keys like strings', () => {
    const value = parsePayload('{"a\\"b\\n\\ud800":1}');
    expect(toJsonText(value)).toBe('{"a\\"b\\n\\ud800":1}');
  });

  it('keeps U+2028, U+2029 and non-ASCII text raw, as JSON allows', () => {
    expect(toJsonText('\u2028\u2029 é 日本')).toBe('"\u2028\u2029 é 日本"');
  });

  it('writes values built in code', () => {
    const value: JsonValue = new Map<string, JsonValue>([
      ['b', [new JsonNumber('1'), 'two', null]],
      ['a', new Map()],
    ]);
    expect(toJsonText(value)).toBe('{"b":[1,"two",null],"a":{}}');
  });

  it('writes a value nested far deeper than the call stack allows', () => {
    let value: JsonValue = [];
    for (let i = 0; i < 100_000; i++) value = [value];
    const text = toJsonText(value);
    expect(text.length).toBe(200_002);
    expect(text.startsWith('[[[')).toBe(true);
  });

  it('writes null for values that are not JSON at run time, rather than throwing', () => {
    expect(toJsonText(undefined as unknown as JsonValue)).toBe('null');
    expect(toJsonText([1 as unknown as JsonValue])).toBe('[null]');
  });
});
