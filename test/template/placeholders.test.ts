import { describe, expect, it } from 'vitest';
import {
  isJsonObject,
  listPlaceholders,
  missingPlaceholders,
  parsePayload,
} from '../../src/template/index.js';

describe('listPlaceholders', () => {
  it('lists distinct trimmed paths in order of first use', () => {
    expect(listPlaceholders('{{b}} {{ a.x }} {{b}} {{a.x}} {{first name}}')).toEqual([
      'b',
      'a.x',
      'first name',
    ]);
  });

  it('lists . when the whole payload is used', () => {
    expect(listPlaceholders('{{a}} {{ . }} {{.}}')).toEqual(['a', '.']);
  });

  it('leaves out {{}} and text that is no placeholder', () => {
    expect(listPlaceholders('{{}} {{ }} {{a {b} }} {{x')).toEqual(['a {b}']);
    expect(listPlaceholders('no placeholders { } }} {')).toEqual([]);
    expect(listPlaceholders('')).toEqual([]);
  });

  it('reads nested braces as rendering does', () => {
    expect(listPlaceholders('{{{a}}} {{ oops {{b}}')).toEqual(['a', 'b']);
  });
});

describe('missingPlaceholders', () => {
  const payload = parsePayload(
    '{"order":{"id":1,"items":[{"sku":"A"}],"note":null,"zero":0,"empty":"","off":false}}',
  );

  it('lists the paths that are absent or null, in order of first use', () => {
    const template =
      '{{order.id}} {{order.missing}} {{order.items.0.sku}} {{order.items.1.sku}} {{order.note}} {{order.missing}}';
    expect(missingPlaceholders(template, payload)).toEqual([
      'order.missing',
      'order.items.1.sku',
      'order.note',
    ]);
  });

  it('does not count falsy values that render as text', () => {
    expect(missingPlaceholders('{{order.zero}}{{order.empty}}{{order.off}}', payload)).toEqual([]);
  });

  it('never reports . nor {{}}', () => {
    expect(missingPlaceholders('{{.}} {{}}', parsePayload('null'))).toEqual([]);
  });

  it('reports inherited names as missing', () => {
    expect(
      missingPlaceholders('{{constructor}} {{__proto__}} {{order.items.length}}', payload),
    ).toEqual(['constructor', '__proto__', 'order.items.length']);
  });
});

describe('isJsonObject', () => {
  it('is true only for objects', () => {
    expect(isJsonObject(parsePayload('{}'))).toBe(true);
    expect(isJsonObject(parsePayload('{"a":[]}'))).toBe(true);
    for (const text of ['[]', '[{}]', '"{}"', '1', 'true', 'null']) {
      expect(isJsonObject(parsePayload(text))).toBe(false);
    }
  });
});
