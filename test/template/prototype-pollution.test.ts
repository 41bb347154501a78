import { describe, expect, it } from 'vitest';
import {
  isJsonObject,
  listPlaceholders,
  missingPlaceholders,
  parsePayload,
  renderTemplate,
  toJsonText,
} from '../../src/template/index.js';

const hostile = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"prototype":{"polluted":"yes"}}',
  '{"a":{"__proto__":{"polluted":"yes"}},"b":[{"__proto__":{"polluted":"yes"}}]}',
  '{"__proto__":{"__proto__":{"polluted":"yes"}},"__proto__":{"polluted":"again"}}',
  '[{"constructor":{"prototype":{"polluted":"yes","toString":"x"}}}]',
  '{"__proto__":null,"constructor":null,"hasOwnProperty":"x","toString":"y","valueOf":"z"}',
];

const templates = [
  '{{.}}',
  '{{__proto__}} {{__proto__.polluted}} {{__proto__.__proto__.polluted}}',
  '{{constructor.prototype.polluted}} {{prototype.polluted}} {{constructor}}',
  '{{a.__proto__.polluted}} {{b.0.__proto__}} {{0.constructor.prototype}}',
  '{{toString}} {{hasOwnProperty}} {{valueOf}} {{polluted}}',
];

function snapshot(target: object): Record<string, unknown> {
  const names = Reflect.ownKeys(target).map(String).sort();
  return Object.fromEntries(
    names.map((name) => [name, Object.getOwnPropertyDescriptor(target, name)?.value]),
  );
}

describe('prototype pollution', () => {
  it('leaves every prototype untouched after parsing and rendering hostile keys', () => {
    const before = [Object.prototype, Array.prototype, Map.prototype, Function.prototype].map(
      snapshot,
    );

    for (const text of hostile) {
      const payload = parsePayload(text);
      toJsonText(payload);
      for (const template of templates) {
        renderTemplate(template, payload);
        listPlaceholders(template);
        missingPlaceholders(template, payload);
      }
    }

    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((Object.create(null) as Record<string, unknown>)['polluted']).toBeUndefined();
    const after = [Object.prototype, Array.prototype, Map.prototype, Function.prototype].map(
      snapshot,
    );
    expect(after).toEqual(before);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it('reads the hostile keys back as data', () => {
    const payload = parsePayload(hostile[0] ?? '');
    expect(isJsonObject(payload) && Object.getPrototypeOf(payload)).toBe(Map.prototype);
    expect(renderTemplate('{{__proto__.polluted}}', payload)).toBe('yes');
    expect(renderTemplate('{{.}}', payload)).toBe('{"__proto__":{"polluted":"yes"}}');
    const last = parsePayload(hostile[4] ?? '');
    expect(renderTemplate('{{__proto__}}', last)).toBe('{"polluted":"again"}');
    const methods = parsePayload(hostile[6] ?? '');
    expect(renderTemplate('[{{__proto__}}|{{toString}}|{{valueOf}}]', methods)).toBe('[|y|z]');
  });
});
