import { describe, expect, it } from 'vitest';
import {
  missingInTemplates,
  missingPlaceholders,
  parsePayload,
  renderTemplate,
} from '../../src/template/index.js';

describe('flat-key fallback', () => {
  it('renders a top-level key spelled like the path when the nested reading finds nothing', () => {
    const payload = parsePayload('{"order.id": 5, "customer.name": "Ada", "a.b.c": [1]}');
    expect(renderTemplate('{{order.id}} {{ customer.name }} {{a.b.c}}', payload)).toBe('5 Ada [1]');
    expect(missingPlaceholders('{{order.id}} {{customer.name}}', payload)).toEqual([]);
  });

  it('tries the nested reading first', () => {
    const payload = parsePayload('{"order": {"id": 7}, "order.id": 5}');
    expect(renderTemplate('{{order.id}}', payload)).toBe('7');
  });

  it('keeps a nested null: the field exists, so the flat key is not used', () => {
    const payload = parsePayload('{"order": {"id": null}, "order.id": 5}');
    expect(renderTemplate('[{{order.id}}]', payload)).toBe('[]');
    expect(missingPlaceholders('{{order.id}}', payload)).toEqual(['order.id']);
  });

  it('uses the flat key when the nested path stops at a scalar', () => {
    const payload = parsePayload('{"order": "x", "order.id": 5}');
    expect(renderTemplate('{{order.id}}', payload)).toBe('5');
  });

  it('reports a flat key whose value is null as missing', () => {
    const payload = parsePayload('{"order.id": null}');
    expect(missingPlaceholders('{{order.id}}', payload)).toEqual(['order.id']);
  });

  it('only looks at the top level', () => {
    const payload = parsePayload('{"data": {"order.id": 5}}');
    expect(renderTemplate('[{{data.order.id}}]', payload)).toBe('[]');
  });
});

describe('missingInTemplates', () => {
  it('merges the prompt template and the system prompt, each path once, as written', () => {
    const payload = parsePayload('{"order": {"id": 1}, "note": null}');
    expect(
      missingInTemplates(
        ['{{order.id}} {{ customer.email }} {{note}}', 'You help {{customer.email}} {{ tone }}'],
        payload,
      ),
    ).toEqual(['customer.email', 'note', 'tone']);
    expect(missingInTemplates(['{{order.id}}', ''], payload)).toEqual([]);
  });
});
