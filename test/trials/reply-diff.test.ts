import { describe, expect, it } from 'vitest';
import { fieldDiff, jsonObjects, wordDiff } from '../../src/panel/channels/reply-diff.js';

const side = (parts: ReturnType<typeof wordDiff>, skip: 'added' | 'removed') =>
  parts
    .filter((part) => part.kind !== skip)
    .map((part) => part.text)
    .join('');

describe('the trial page diffs', () => {
  it('splits two replies into kept, removed and added words that give both back exactly', () => {
    const current = 'Your order 42 ships today.\nThanks!';
    const candidate = 'Good news: your order 42 ships tomorrow.\nThanks!';
    const parts = wordDiff(current, candidate);
    expect(side(parts, 'added')).toBe(current);
    expect(side(parts, 'removed')).toBe(candidate);
    expect(parts).toContainEqual({ kind: 'removed', text: 'today.\n' });
    expect(parts).toContainEqual({ kind: 'added', text: 'tomorrow.\n' });
    expect(wordDiff('same words', 'same words')).toEqual([{ kind: 'same', text: 'same words' }]);
  });

  it('compares JSON replies field by field', () => {
    const objects = jsonObjects(
      '{"a":1,"b":{"c":"x"},"gone":true}',
      '{"a":1,"b":{"c":"y"},"new":[]}',
    );
    expect(objects).toBeDefined();
    expect(fieldDiff(...(objects as NonNullable<typeof objects>))).toEqual([
      { path: 'a', current: '1', candidate: '1', kind: 'same' },
      { path: 'b.c', current: '"x"', candidate: '"y"', kind: 'changed' },
      { path: 'gone', current: 'true', candidate: undefined, kind: 'removed' },
      { path: 'new', current: undefined, candidate: '[]', kind: 'added' },
    ]);
    expect(jsonObjects('{"a":1}', 'not json')).toBeUndefined();
    expect(jsonObjects('[1]', '{"a":1}')).toBeUndefined();
  });
});
