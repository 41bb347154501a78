import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidJsonError,
  PayloadPathReader,
  checkPayload,
  foundValue,
  isJsonObject,
  listPlaceholders,
  missingPlaceholders,
  parsePayload,
  placeholderOf,
  renderTemplate,
  renderValue,
  resolvePath,
  toJsonText,
  type Placeholder,
} from '../../src/template/index.js';
import { EXACT_TEXT_MIN_LENGTH } from '../../src/template/exact-text.js';

/**
 * A JSON document described as a tree, so tests know the exact number text
 * and key order that the generated JSON text holds.
 */
type Model =
  | { kind: 'number'; text: string }
  | { kind: 'string'; value: string }
  | { kind: 'literal'; text: 'true' | 'false' | 'null' }
  | { kind: 'array'; items: Model[] }
  | { kind: 'object'; entries: [string, Model][] };

const digit = fc.constantFrom(...'0123456789');
const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: digit, minLength, maxLength });

const numberText = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, 25)).map(([a, b]) => a + b),
    ),
    fc.option(
      digits(1, 20).map((d) => '.' + d),
      { nil: '' },
    ),
    fc.option(
      fc
        .tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 4))
        .map((p) => p.join('')),
      { nil: '' },
    ),
  )
  .map((parts) => parts.join(''));

const awkwardChars = [
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u2028',
  '\ud800',
  '\udfff',
  '{{',
  '}}',
  '.',
  ' ',
  'é',
  '😀',
];
const stringValue = fc.string({
  unit: fc.oneof(
    fc.constantFrom(...awkwardChars),
    fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
    fc.constantFrom(...'abcxyz019 '),
  ),
  maxLength: 12,
});

const anyKey = fc.oneof(
  fc.constantFrom(
    'a',
    'b',
    '0',
    '1',
    '',
    'first name',
    'a.b',
    '{{a}}',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
  ),
  stringValue,
);

/** Keys that a `{{path}}` can address: no dot, no brace, no white space at the ends, not empty. */
const addressableKey = fc
  .oneof(
    fc.constantFrom('a', 'b', '0', '1', '01', 'first name', '__proto__', 'constructor'),
    stringValue,
  )
  .filter((key) => key !== '' && key.trim() === key && !/[.{}]/.test(key));

function modelOf(key: fc.Arbitrary<string>): fc.Arbitrary<Model> {
  const leaf: fc.Arbitrary<Model> = fc.oneof(
    numberText.map((text) => ({ kind: 'number' as const, text })),
    stringValue.map((value) => ({ kind: 'string' as const, value })),
    fc.constantFrom('true', 'false', 'null').map((text) => ({ kind: 'literal' as const, text })),
  );
  return fc.letrec<{ model: Model }>((tie) => ({
    model: fc.oneof(
      { depthSize: 'small', maxDepth: 5 },
      leaf,
      fc.array(tie('model'), { maxLength: 4 }).map((items): Model => ({ kind: 'array', items })),
      fc
        .array(fc.tuple(key, tie('model')), { maxLength: 4 })
        .map((entries): Model => ({ kind: 'object', entries })),
    ),
  })).model;
}

/** How strings are written: as JSON.stringify does, every character escaped, or lone surrogates raw. */
type StringStyle = 'plain' | 'escaped' | 'raw';

function encodeString(value: string, style: StringStyle): string {
  if (style === 'plain') return JSON.stringify(value);
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const raw = style === 'raw' && code >= 0x20 && code !== 0x22 && code !== 0x5c;
    out += raw ? value[i] : '\\u' + code.toString(16).padStart(4, '0');
  }
  return out + '"';
}

function toText(model: Model, ws: string, style: StringStyle): string {
  switch (model.kind) {
    case 'number':
    case 'literal':
      return model.text;
    case 'string':
      return encodeString(model.value, style);
    case 'array':
      return `[${ws}${model.items.map((m) => toText(m, ws, style)).join(`${ws},${ws}`)}${ws}]`;
    case 'object':
      return `{${ws}${model.entries
        .map(([k, m]) => `${encodeString(k, style)}${ws}:${ws}${toText(m, ws, style)}`)
        .join(`${ws},${ws}`)}${ws}}`;
  }
}

const document = (key: fc.Arbitrary<string>) =>
  fc
    .record({
      model: modelOf(key),
      ws: fc.constantFrom('', ' ', '\n\t', ' \r\n '),
      style: fc.constantFrom<StringStyle>('plain', 'escaped', 'raw'),
    })
    .map(({ model, ws, style }) => ({ model, text: ws + toText(model, ws, style) + ws }));

/** Every leaf with the path that reaches it and the text it must render as (last duplicate key wins). */
function leaves(model: Model, path: string[] = []): [path: string[], expected: string][] {
  switch (model.kind) {
    case 'number':
      return [[path, model.text]];
    case 'string':
      return [[path, model.value]];
    case 'literal':
      return [[path, model.text === 'null' ? '' : model.text]];
    case 'array':
      if (model.items.length === 0) return [[path, '[]']];
      return model.items.flatMap((m, i) => leaves(m, [...path, String(i)]));
    case 'object': {
      const members = new Map(model.entries);
      if (members.size === 0) return [[path, '{}']];
      return [...members].flatMap(([k, m]) => leaves(m, [...path, k]));
    }
  }
}

const template = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '{',
      '}',
      '{{',
      '}}',
      '{{{',
      '.',
      ' ',
      '\n',
      'a',
      'b',
      '0',
      '1',
      '__proto__',
      'constructor',
    ),
    fc.string({ maxLength: 2 }),
  ),
  maxLength: 30,
});

const accepts = (parse: (text: string) => unknown, text: string): boolean => {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('template engine properties', () => {
  it('never throws while rendering any template over any payload', () => {
    fc.assert(
      fc.property(document(anyKey), template, ({ text }, tpl) => {
        const payload = parsePayload(text);
        expect(typeof renderTemplate(tpl, payload)).toBe('string');
        expect(Array.isArray(listPlaceholders(tpl))).toBe(true);
        expect(Array.isArray(missingPlaceholders(tpl, payload))).toBe(true);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, tpl) => {
        expect(typeof renderTemplate(tpl, parsePayload(JSON.stringify(value)))).toBe('string');
      }),
    );
  });

  it('renders {{.}} as JSON text equal to the payload', () => {
    const roundTrip = (text: string) => {
      const rendered = renderTemplate('{{.}}', parsePayload(text));
      expect(JSON.parse(rendered)).toEqual(JSON.parse(text));
      expect(JSON.stringify(JSON.parse(rendered))).toBe(JSON.stringify(JSON.parse(text)));
    };
    fc.assert(fc.property(fc.json(), roundTrip), { numRuns: 300 });
    fc.assert(fc.property(fc.json({ stringUnit: 'binary' }), roundTrip), { numRuns: 200 });
    fc.assert(
      fc.property(document(anyKey), ({ text }) => roundTrip(text)),
      { numRuns: 500 },
    );
  });

  it('writes JSON text that parses back to the same JSON text', () => {
    fc.assert(
      fc.property(document(anyKey), ({ text }) => {
        const once = toJsonText(parsePayload(text));
        expect(toJsonText(parsePayload(once))).toBe(once);
      }),
      { numRuns: 300 },
    );
  });

  it('renders a template without {{ as itself', () => {
    fc.assert(
      fc.property(
        template.filter((t) => !t.includes('{{')),
        document(anyKey),
        (tpl, { text }) => {
          expect(renderTemplate(tpl, parsePayload(text))).toBe(tpl);
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }).filter((t) => !t.includes('{{')),
        (tpl) => {
          expect(renderTemplate(tpl, parsePayload('{"a":1}'))).toBe(tpl);
        },
      ),
    );
  });

  it('renders each leaf path as the leaf text, numbers exactly as written', () => {
    fc.assert(
      fc.property(
        document(addressableKey),
        fc.constantFrom('', ' ', '\t '),
        ({ model, text }, pad) => {
          const payload = parsePayload(text);
          for (const [path, expected] of leaves(model)) {
            if (path.length === 0) continue;
            const dotted = path.join('.');
            expect(renderTemplate(`<{{${pad}${dotted}${pad}}}>`, payload)).toBe(`<${expected}>`);
            expect(listPlaceholders(`{{${pad}${dotted}${pad}}}`)).toEqual([dotted]);
            const missing = missingPlaceholders(`{{${dotted}}}`, payload);
            expect(missing.length === 1).toBe(
              expected === '' && /^null$/.test(leafLiteral(model, path)),
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('agrees with JSON.parse on which JSON-ish strings are valid', () => {
    const jsonish = fc.string({
      unit: fc.constantFrom(
        ...'{}[]:,"\\/ \n\t\r0129-+.eEtrufalsnx',
        '\u0000',
        '\u001f',
        '\ud800',
        '\u00a0',
        'u00',
      ),
      maxLength: 30,
    });
    const mutated = fc
      .tuple(
        document(anyKey),
        fc.nat(),
        fc.nat(),
        fc.constantFrom('', ...'{}[]:,"\\ 0-.eE', '\u0000', '\u001f', '\ud800'),
      )
      .map(([{ text }, at, drop, insert]) => {
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + (drop % 2));
      });
    const agree = (text: string) => {
      const expected = accepts(JSON.parse, text);
      let error: unknown;
      try {
        const value = parsePayload(text);
        expect(JSON.parse(toJsonText(value))).toEqual(JSON.parse(text));
      } catch (caught) {
        error = caught;
      }
      expect(error === undefined).toBe(expected);
      if (error !== undefined) {
        expect(error).toBeInstanceOf(InvalidJsonError);
        const position = (error as InvalidJsonError).position;
        expect(position >= 0 && position <= text.length).toBe(true);
      }
    };
    fc.assert(fc.property(jsonish, agree), { numRuns: 2000 });
    fc.assert(fc.property(mutated, agree), { numRuns: 1000 });
  });

  it('renders large objects and arrays received as compact JSON as it renders them otherwise', () => {
    const pad = 'x'.repeat(EXACT_TEXT_MIN_LENGTH);
    // Large containers at three depths around the generated document; written compact, a
    // container may be rendered as its received text, written with white space it never is.
    const wrap = (doc: string, ws: string) =>
      `{"pad":${ws}"${pad}","doc":${ws}${doc},"list":${ws}[${doc},{"pad":"${pad}","doc":${doc}}]}`;
    const paths = ['doc', 'list', 'list.1', 'list.1.doc', 'list.0'].map(placeholderOf);
    fc.assert(
      fc.property(
        modelOf(anyKey),
        fc.constantFrom<StringStyle>('plain', 'escaped', 'raw'),
        (model, style) => {
          const compact = parsePayload(wrap(toText(model, '', style), ''));
          const spaced = parsePayload(wrap(toText(model, ' ', style), ' '));
          expect(renderTemplate('{{.}}', compact)).toBe(renderTemplate('{{.}}', spaced));
          for (const path of paths) {
            expect(renderValue(resolvePath(compact, path))).toBe(
              renderValue(resolvePath(spaced, path)),
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads paths from the text (accept_when) exactly as from the lossless tree', () => {
    const pathText = fc.oneof(
      fc.constantFrom('.', 'a', 'a.b', 'b.a', '0', '0.0', '1.a', 'a.0.b', '__proto__', 'a..b'),
      fc.array(anyKey, { minLength: 1, maxLength: 3 }).map((keys) => keys.join('.')),
    );
    /** Every container and leaf of the document, by its path, and the paths drawn. */
    const pathsOf = (model: Model, drawn: string[]): Placeholder[] => {
      const paths = new Set(drawn.map((p) => p.trim()).filter((p) => p !== ''));
      for (const [path] of leaves(model)) {
        for (let i = 1; i <= path.length; i++) paths.add(path.slice(0, i).join('.').trim());
      }
      return [...paths].filter((p) => p !== '').map(placeholderOf);
    };
    const same = (text: string, placeholders: Placeholder[]) => {
      const read = new PayloadPathReader(placeholders).read(text);
      const tree = parsePayload(text);
      expect(read.isObject).toBe(isJsonObject(tree));
      for (const placeholder of placeholders) {
        const found = read.find(placeholder);
        const expected = foundValue(resolvePath(tree, placeholder));
        expect([placeholder.path, found.present, found.render()]).toEqual([
          placeholder.path,
          expected.present,
          expected.render(),
        ]);
      }
    };
    fc.assert(
      fc.property(
        document(anyKey),
        fc.array(pathText, { maxLength: 6 }),
        ({ model, text }, drawn) => same(text, pathsOf(model, drawn)),
      ),
      { numRuns: 1000 },
    );
    // Objects that repeat keys, and flat dotted keys beside nested ones.
    fc.assert(
      fc.property(
        document(fc.constantFrom('a', 'b', '0', 'a.b', 'a.0')),
        fc.array(pathText, { maxLength: 6 }),
        ({ model, text }, drawn) => same(text, pathsOf(model, drawn)),
      ),
      { numRuns: 1000 },
    );
    // More keys in one object than the scan compares: the parsed keys are counted instead.
    const many = Array.from({ length: 40 }, (_, i) => `"k${i}": ${i}`).join(',');
    for (const text of [`{"o":{${many},"k3":"last"}}`, `{"o":{${many}}}`]) {
      same(text, ['o', 'o.k3', 'o.k39'].map(placeholderOf));
    }
  });

  it('refuses texts read at paths (accept_when) as parsePayload refuses them', () => {
    const outcome = (read: () => boolean) => {
      try {
        return read() ? 'object' : 'other value';
      } catch (error) {
        return error instanceof InvalidJsonError ? error.message : `not InvalidJsonError: ${error}`;
      }
    };
    const reader = new PayloadPathReader(['a', 'a.b', '0', '.'].map(placeholderOf));
    const documents = document(anyKey).map(({ text }) => text);
    const mutated = fc
      .tuple(documents, fc.nat(), fc.nat(), fc.constantFrom('', ...'{}[]:,"\\ 0-.eE', '\ufeff'))
      .map(([text, at, drop, insert]) => {
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + (drop % 2));
      });
    fc.assert(
      fc.property(mutated, (text) => {
        expect(outcome(() => reader.read(text).isObject)).toBe(
          outcome(() => isJsonObject(parsePayload(text))),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('checks documents (checkPayload) exactly as parsePayload parses them', () => {
    const outcome = (read: () => boolean) => {
      try {
        return read() ? 'object' : 'other value';
      } catch (error) {
        return error instanceof InvalidJsonError ? error.message : `not InvalidJsonError: ${error}`;
      }
    };
    const agree = (text: string) => {
      expect(outcome(() => checkPayload(text).isObject)).toBe(
        outcome(() => isJsonObject(parsePayload(text))),
      );
    };
    const documents = document(anyKey).map(({ text }) => text);
    const mutated = fc
      .tuple(documents, fc.nat(), fc.nat(), fc.constantFrom('', ...'{}[]:,"\\ 0-.eE', '\ufeff'))
      .map(([text, at, drop, insert]) => {
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + (drop % 2));
      });
    fc.assert(fc.property(documents, agree), { numRuns: 500 });
    fc.assert(fc.property(mutated, agree), { numRuns: 2000 });
  });
});

/** The literal text at a path, or '' when the leaf there is not a literal. */
function leafLiteral(model: Model, path: string[]): string {
  let node: Model | undefined = model;
  for (const segment of path) {
    if (node?.kind === 'array') node = node.items[Number(segment)];
    else if (node?.kind === 'object') node = new Map(node.entries).get(segment);
    else return '';
  }
  return node?.kind === 'literal' ? node.text : '';
}
