import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parsePayload, renderTemplate } from '../../src/template/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('a parsed payload in memory', () => {
  it('holds about the size of its text, however many escapes its strings have', () => {
    // About 800 KB of text with a \" every 7 characters: what a sender may post to a channel.
    const body = `{"n":1,"text":"${'ab\\"cd '.repeat(115_200)}"}`;
    const copies = 8;
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept = Array.from({ length: copies }, () => parsePayload(body));
    gc();
    const perCopy = (process.memoryUsage().heapUsed - before) / copies;
    // The worker holds one per event it answers; each decoded text is about 700 K characters.
    expect(perCopy).toBeLessThan(3 * body.length);
    expect(renderTemplate('{{text}}', kept[0] ?? null)).toHaveLength(115_200 * 6);
  });
});
