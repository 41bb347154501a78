import { describe, expect, it } from 'vitest';
import { acceptWhenSchema, type Condition } from '../../src/conditions/condition-schemas.js';
import { compileConditions } from '../../src/conditions/conditions.js';
import { parsePayload, type JsonValue } from '../../src/template/index.js';

// A number is compared as it was written: 9007199254740993 is no float.
const payload = parsePayload(
  JSON.stringify({
    type: 'order.created',
    amount: '120.50',
    count: 3,
    big: '@big',
    flag: true,
    empty: '',
    nothing: null,
    tags: ['a', 'b'],
    'flat.key': 'flat',
    customer: { country: 'DE', name: 'Ada Lovelace' },
  }).replace('"@big"', '9007199254740993'),
);

const holds = (condition: Condition) =>
  compileConditions([condition])?.failing({ payload }) === undefined;

describe('conditions', () => {
  it.each<[Condition, boolean]>([
    [{ path: 'payload.type', op: 'eq', value: 'order.created' }, true],
    [{ path: 'payload.type', op: 'eq', value: 'order' }, false],
    [{ path: 'payload.count', op: 'eq', value: 3 }, true],
    [{ path: 'payload.big', op: 'eq', value: '9007199254740993' }, true],
    [{ path: 'payload.flag', op: 'eq', value: true }, true],
    [{ path: 'payload.missing', op: 'eq', value: '' }, true],
    [{ path: 'payload.type', op: 'ne', value: 'order' }, true],
    [{ path: 'payload.amount', op: 'gt', value: 100 }, true],
    [{ path: 'payload.amount', op: 'gte', value: '120.5' }, true],
    [{ path: 'payload.amount', op: 'lt', value: 120.5 }, false],
    [{ path: 'payload.count', op: 'lte', value: 3 }, true],
    [{ path: 'payload.type', op: 'gt', value: 0 }, false],
    [{ path: 'payload.empty', op: 'lt', value: 1 }, false],
    [{ path: 'payload.missing', op: 'gte', value: 0 }, false],
    [{ path: 'payload.customer.country', op: 'in', value: ['DE', 'FR'] }, true],
    [{ path: 'payload.customer.country', op: 'in', value: ['US'] }, false],
    [{ path: 'payload.customer.name', op: 'exists' }, true],
    [{ path: 'payload.nothing', op: 'exists' }, false],
    [{ path: 'payload.nothing', op: 'not_exists' }, true],
    [{ path: 'payload.customer.email', op: 'not_exists' }, true],
    [{ path: 'payload.customer.name', op: 'contains', value: 'Love' }, true],
    [{ path: 'payload.tags', op: 'contains', value: '"b"' }, true],
    [{ path: 'payload.tags.1', op: 'eq', value: 'b' }, true],
    [{ path: 'payload.flat.key', op: 'eq', value: 'flat' }, true],
  ])('%j holds: %s', (condition, expected) => {
    expect(holds(condition)).toBe(expected);
  });

  it('names the first condition that does not hold; an empty list accepts everything', () => {
    const conditions = compileConditions([
      { path: 'payload.count', op: 'gte', value: 1 },
      { path: 'payload.type', op: 'in', value: ['refund', 'chargeback'] },
    ]);
    expect(conditions?.failing({ payload })).toBe('payload.type in ["refund","chargeback"]');
    expect(compileConditions([])).toBeUndefined();
  });

  it('refuses paths outside payload, values that do not fit the op, and unknown ops', () => {
    const problems = (list: unknown) => {
      const parsed = acceptWhenSchema.safeParse(list);
      return parsed.success
        ? []
        : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(problems([{ path: 'payload.a', op: 'eq', value: 'x' }])).toEqual([]);
    expect(problems([{ path: 'status', op: 'eq', value: 'x' }])).toEqual([
      '0.path: must start with payload.',
    ]);
    expect(problems([{ path: 'payload.', op: 'exists' }])).toEqual([
      '0.path: must name a field: payload.<path>',
    ]);
    expect(problems([{ path: 'payload.a', op: 'gt', value: 'many' }])).toEqual([
      '0.value: must be a number for gt',
    ]);
    expect(problems([{ path: 'payload.a', op: 'in', value: 'x' }])).toEqual([
      '0.value: must be a list of texts for in',
    ]);
    expect(problems([{ path: 'payload.a', op: 'exists', value: 1 }])).toEqual([
      '0.value: is not used by exists',
    ]);
    expect(problems([{ path: 'payload.a', op: 'eq' }])).toEqual([
      '0.value: must be one value for eq',
    ]);
    expect(problems([{ path: 'payload.a', op: 'like', value: 'x' }])).toHaveLength(1);
  });

  it('reads status and json paths once a destination names those scopes', () => {
    const when = compileConditions(
      [
        { path: 'status', op: 'eq', value: 'replied' },
        { path: 'json.score', op: 'gte', value: 0.5 },
      ],
      ['status', 'payload', 'json'],
    );
    const json = parsePayload('{"score": 0.7}');
    expect(when?.failing({ status: 'replied', json, payload })).toBeUndefined();
    expect(when?.failing({ status: 'failed', payload })).toBe('status eq "replied"');
  });

  it('reads and renders each distinct path once per check, however many conditions name it', () => {
    /** An object of the payload that counts how often a member is looked up and it is rendered. */
    class Counted extends Map<string, JsonValue> {
      lookups = 0;
      renders = 0;
      override get(key: string) {
        this.lookups++;
        return super.get(key);
      }
      override entries() {
        this.renders++;
        return super.entries();
      }
    }
    const tree = parsePayload(
      JSON.stringify({ order: { total: 120, items: [{ sku: 'sku-1' }, { sku: 'sku-2' }] } }),
    ) as ReadonlyMap<string, JsonValue>;
    const order = new Counted(tree.get('order') as ReadonlyMap<string, JsonValue>);
    const root = new Counted([['order', order]]);
    // 20 conditions over two distinct paths: the order (rendered whole) and its total.
    const conditions: Condition[] = [
      ...Array.from({ length: 12 }, (): Condition => ({
        path: 'payload.order',
        op: 'contains',
        value: 'sku-',
      })),
      ...Array.from({ length: 6 }, (_, i): Condition => ({
        path: 'payload.order.total',
        op: 'gte',
        value: i,
      })),
      { path: 'payload.order', op: 'exists' },
      { path: 'payload.order', op: 'ne', value: '{}' },
    ];
    const compiled = compileConditions(conditions);

    expect(compiled?.failing({ payload: root })).toBeUndefined();
    // One look-up of `order` per distinct path (`order` and `order.total`), one rendering.
    expect(root.lookups).toBe(2);
    expect(order.lookups).toBe(1);
    expect(order.renders).toBe(1);

    // The next check reads afresh: a payload is never answered from another's readings.
    expect(compiled?.failing({ payload: parsePayload('{"order":{"total":3}}') })).toBe(
      'payload.order contains "sku-"',
    );
    expect(compiled?.failing({ payload: root })).toBeUndefined();
    expect(order.renders).toBe(2);
  });
});
