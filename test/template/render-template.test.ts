import { describe, expect, it } from 'vitest';
import { parsePayload, renderTemplate } from '../../src/template/index.js';

// Payloads are raw JSON text so that number text, escapes and key order are really exercised.
const cases: [name: string, template: string, payload: string, expected: string][] = [
  ['the example of the contract', 'Order {{order.id}}', '{"order":{"id":123}}', 'Order 123'],
  ['a deeply nested field', '{{a.b.c.d}}', '{"a":{"b":{"c":{"d":"deep"}}}}', 'deep'],
  ['several placeholders', '{{a}}-{{b}}-{{a}}', '{"a":"x","b":"y"}', 'x-y-x'],
  ['text around placeholders', 'Hi {{name}}!\nBye.', '{"name":"Ada"}', 'Hi Ada!\nBye.'],

  [
    'array indexes',
    '{{items.0.sku}}/{{items.1.sku}}',
    '{"items":[{"sku":"A"},{"sku":"B"}]}',
    'A/B',
  ],
  ['a two-digit index', '{{a.12}}', '{"a":[0,1,2,3,4,5,6,7,8,9,10,11,"twelve"]}', 'twelve'],
  ['an index on a top-level array', '{{1}}', '[10,20]', '20'],
  ['nested arrays', '{{m.1.0}}', '{"m":[[1,2],[3,4]]}', '3'],
  ['an index with a leading zero is absent', '[{{a.01}}]', '{"a":["x","y"]}', '[]'],
  ['a negative index is absent', '[{{a.-1}}]', '{"a":["x","y"]}', '[]'],
  ['a signed index is absent', '[{{a.+1}}]', '{"a":["x","y"]}', '[]'],
  ['an index past the end is absent', '[{{a.2}}]', '{"a":["x","y"]}', '[]'],
  ['an array has no length field', '[{{a.length}}]', '{"a":["x","y"]}', '[]'],
  ['a digit key of an object is a key', '{{a.0}}', '{"a":{"0":"zero"}}', 'zero'],
  ['a non-canonical digit key of an object is a key', '{{a.01}}', '{"a":{"01":"one"}}', 'one'],

  ['white space around the path', '{{ order.id }}', '{"order":{"id":7}}', '7'],
  ['tabs and newlines around the path', '{{\t\norder.id \r\n}}', '{"order":{"id":7}}', '7'],
  ['a key with a space', '{{first name}}', '{"first name":"Ada"}', 'Ada'],
  ['a key with a space, padded', '{{  first name  }}', '{"first name":"Ada"}', 'Ada'],
  ['a nested key with spaces', '{{user.first name}}', '{"user":{"first name":"Ada"}}', 'Ada'],
  ['space inside a segment is part of the key', '[{{ a. b }}]', '{"a":{"b":1}}', '[]'],
  ['an empty segment is the empty key', '{{a..b}}', '{"a":{"":{"b":"e"}}}', 'e'],

  ['a string with quotes', '{{s}}', '{"s":"He said \\"hi\\""}', 'He said "hi"'],
  ['a string with newlines and tabs', '{{s}}', '{"s":"a\\nb\\tc\\r\\n"}', 'a\nb\tc\r\n'],
  [
    'HTML stays unescaped',
    '{{s}}',
    '{"s":"<b>&amp;</b><script>x</script>"}',
    '<b>&amp;</b><script>x</script>',
  ],
  ['a backslash and a solidus', '{{s}}', '{"s":"C:\\\\dir\\/f"}', 'C:\\dir/f'],
  ['unicode escapes are decoded', '{{s}}', '{"s":"caf\\u00e9 \\ud83d\\ude00"}', 'café 😀'],
  ['raw non-ASCII text', '{{s}}', '{"s":"żółw 🐢 日本"}', 'żółw 🐢 日本'],
  ['an empty string', '[{{s}}]', '{"s":""}', '[]'],
  ['a \\u0000 escape', '{{s}}', '{"s":"a\\u0000b"}', 'a\u0000b'],
  ['a lone high surrogate', '{{s}}', '{"s":"x\\ud800y"}', 'x\ud800y'],
  ['a lone low surrogate', '{{s}}', '{"s":"\\udc00"}', '\udc00'],
  ['a key with escapes', '{{a b}}', '{"a\\u0020b":1}', '1'],

  ['a big integer', '{{n}}', '{"n":9007199254740993}', '9007199254740993'],
  ['a trailing zero', '{{n}}', '{"n":1.50}', '1.50'],
  ['negative zero', '{{n}}', '{"n":-0}', '-0'],
  ['an exponent with sign', '{{n}}', '{"n":1E+2}', '1E+2'],
  ['an out-of-range exponent', '{{n}}', '{"n":1e400}', '1e400'],
  ['a negative fraction with exponent', '{{n}}', '{"n":-12.50e-3}', '-12.50e-3'],
  ['zero', '{{n}}', '{"n":0}', '0'],
  [
    'a long fraction',
    '{{n}}',
    '{"n":0.1000000000000000055511151231257827}',
    '0.1000000000000000055511151231257827',
  ],

  ['true', '{{t}}', '{"t":true}', 'true'],
  ['false', '{{f}}', '{"f":false}', 'false'],
  ['null renders empty', '[{{z}}]', '{"z":null}', '[]'],
  ['an absent key renders empty', '[{{nope}}]', '{"a":1}', '[]'],
  ['below an absent key renders empty', '[{{nope.deeper.still}}]', '{"a":1}', '[]'],
  ['below null renders empty', '[{{z.x}}]', '{"z":null}', '[]'],
  ['a string has no fields', '[{{s.length}}]', '{"s":"abc"}', '[]'],
  ['a string has no indexes', '[{{s.0}}]', '{"s":"abc"}', '[]'],
  ['a number has no fields', '[{{n.x}}]', '{"n":5}', '[]'],
  ['a path on a scalar payload', '[{{a}}]', '"text"', '[]'],

  [
    'an object as JSON text',
    '{{o}}',
    '{"o": { "b" : 1 , "a" : [ 1.50 , "x" ] } }',
    '{"b":1,"a":[1.50,"x"]}',
  ],
  [
    'an array as JSON text',
    '{{a}}',
    '{"a":[1, "two", null, true, false, {}, []]}',
    '[1,"two",null,true,false,{},[]]',
  ],
  ['empty containers', '{{o}} {{a}}', '{"o":{},"a":[]}', '{} []'],
  [
    'strings inside JSON text are escaped',
    '{{o}}',
    '{"o":{"s":"line\\nbreak \\"q\\" \\u0001"}}',
    '{"s":"line\\nbreak \\"q\\" \\u0001"}',
  ],
  [
    'integer-like keys keep their order',
    '{{o}}',
    '{"o":{"b":1,"2":2,"1":3}}',
    '{"b":1,"2":2,"1":3}',
  ],
  [
    'numbers inside JSON text keep their text',
    '{{o}}',
    '{"o":[1E+2,-0,1e400,9007199254740993]}',
    '[1E+2,-0,1e400,9007199254740993]',
  ],

  [
    '{{.}} is the whole payload',
    '{{.}}',
    ' { "a" : 1.0 , "b" : [ true ] } ',
    '{"a":1.0,"b":[true]}',
  ],
  ['{{ . }} with white space', '<{{ . }}>', '{"a":1}', '<{"a":1}>'],
  ['{{.}} of a string payload is JSON text', '{{.}}', '"hi\\n"', '"hi\\n"'],
  ['{{.}} of a null payload', '{{.}}', 'null', 'null'],
  ['{{.}} of a number payload', '{{.}}', '1.50', '1.50'],

  ['placeholders inside values stay literal', '{{a}}', '{"a":"{{b}}","b":"x"}', '{{b}}'],
  ['{{.}} inside values stays literal', '{{a}}', '{"a":"{{.}}"}', '{{.}}'],
  ['braces inside JSON text stay literal', '{{o}}', '{"o":{"t":"{{b}}"},"b":"x"}', '{"t":"{{b}}"}'],

  ['an unterminated {{ stays literal', 'Hello {{name', '{"name":"Ada"}', 'Hello {{name'],
  ['an unterminated {{ after a placeholder', '{{a}} and {{b', '{"a":"x","b":"y"}', 'x and {{b'],
  ['an unterminated {{ before a placeholder', '{{ oops {{a}}', '{"a":"x"}', '{{ oops x'],
  ['a lone }} stays literal', '}} {{a}} }}', '{"a":"x"}', '}} x }}'],
  ['single braces stay literal', '{a} { {a} }', '{"a":"x"}', '{a} { {a} }'],
  ['{{}} renders empty', '[{{}}]', '{"":"empty key"}', '[]'],
  ['{{ }} renders empty', '[{{  }}]', '{"a":1}', '[]'],
  ['{{{a}}} keeps the outer braces', '{{{a}}}', '{"a":"x"}', '{x}'],
  ['{{{{a}}}} keeps two outer braces', '{{{{a}}}}', '{"a":"x"}', '{{x}}'],
  ['{{{}}} keeps the outer braces', '{{{}}}', '{"a":"x"}', '{}'],
  ['an extra closing brace', '{{a}}}', '{"a":"x"}', 'x}'],
  ['a single closing brace inside the path', '[{{a}b}}]', '{"a}b":"x"}', '[x]'],
  [
    'a JSON-writing template',
    '{"id": {{id}}, "name": "{{name}}"}',
    '{"id":5,"name":"n"}',
    '{"id": 5, "name": "n"}',
  ],
  ['an empty template', '', '{"a":1}', ''],

  ['duplicate keys: the last one wins', '{{a}}', '{"a":1,"a":2}', '2'],
  ['duplicate keys in JSON text', '{{.}}', '{"a":1,"b":2,"a":3}', '{"a":3,"b":2}'],
  ['duplicate keys replacing an object', '{{a.x}}|{{a}}', '{"a":{"x":1},"a":5}', '|5'],

  ['__proto__ is a data key', '{{__proto__.x}}', '{"__proto__":{"x":"mine"}}', 'mine'],
  ['__proto__ in JSON text', '{{.}}', '{"__proto__":{"x":1}}', '{"__proto__":{"x":1}}'],
  [
    'constructor is a data key',
    '{{constructor.prototype}}',
    '{"constructor":{"prototype":"p"}}',
    'p',
  ],
  ['no constructor on a payload without it', '[{{constructor}}]', '{"a":1}', '[]'],
  ['no constructor.name', '[{{constructor.name}}]', '{"a":1}', '[]'],
  ['no __proto__ on a payload without it', '[{{__proto__}}]', '{"a":1}', '[]'],
  ['no toString', '[{{toString}}|{{a.toString}}|{{hasOwnProperty}}]', '{"a":{}}', '[||]'],
  ['no Map methods', '[{{size}}|{{get}}]', '{"a":1}', '[|]'],
  ['no array methods', '[{{a.map}}|{{a.constructor}}]', '{"a":[1]}', '[|]'],
];

describe('renderTemplate', () => {
  it.each(cases)('%s', (_name, template, payload, expected) => {
    expect(renderTemplate(template, parsePayload(payload))).toBe(expected);
  });

  it('renders the same template again with another payload', () => {
    const template = 'Order {{order.id}} for {{ who }}';
    expect(renderTemplate(template, parsePayload('{"order":{"id":1},"who":"a"}'))).toBe(
      'Order 1 for a',
    );
    expect(renderTemplate(template, parsePayload('{"order":{"id":2}}'))).toBe('Order 2 for ');
  });

  it('renders many distinct templates, beyond what it keeps compiled', () => {
    const payload = parsePayload('{"a":"x"}');
    for (let i = 0; i < 500; i++) {
      expect(renderTemplate(`${i}:{{a}}`, payload)).toBe(`${i}:x`);
    }
  });

  it('renders a template larger than what it keeps compiled', () => {
    const template = '{{a}}'.repeat(10_000);
    expect(renderTemplate(template, parsePayload('{"a":"x"}'))).toBe('x'.repeat(10_000));
  });

  it('renders a value nested 1000 levels deep', () => {
    const text = '['.repeat(1000) + ']'.repeat(1000);
    expect(renderTemplate('{{.}}', parsePayload(text))).toBe(text);
    expect(renderTemplate(`{{${'0.'.repeat(998)}0}}`, parsePayload(text))).toBe('[]');
  });
});
