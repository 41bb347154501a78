/**
 * Speed of the template engine on the two shapes that matter: a typical
 * webhook (about 1 KB, ten placeholders) and a large payload dumped whole
 * with `{{.}}`. `JSON.parse` plus a regex renderer is measured alongside for
 * scale; it is lossy (numbers, `__proto__`) and not a drop-in alternative.
 *
 * Run with `npm run bench:template`.
 */
import { parsePayload, renderTemplate } from '../src/template/index.js';

const smallPayload = JSON.stringify({
  event: 'order.created',
  id: 'evt_01HZX9Q4T7W3',
  created: 1717171717,
  livemode: false,
  api_version: '2024-04-10',
  request: 'req_8d1c2b',
  order: {
    id: 123456,
    total: 99.5,
    currency: 'EUR',
    status: 'paid',
    customer: {
      id: 'cus_991',
      'first name': 'Ada',
      last: 'Lovelace',
      email: 'ada@example.com',
      tags: ['vip', 'beta'],
    },
    shipping: { street: '12 Analytical Engine Way', city: 'London', zip: 'N1 9GU', country: 'GB' },
    payment: {
      method: 'card',
      brand: 'visa',
      last4: '4242',
      captured: true,
      amount: 9950,
      fee: 2.9,
    },
    discount: { code: 'SPRING24', percent: 10, applied: true, expires: '2024-06-30T23:59:59Z' },
    items: [
      { sku: 'A-1', qty: 2, price: 19.99, title: 'Punch cards <pack of 100>' },
      { sku: 'B-7', qty: 1, price: 59.52, title: 'Brass gear "large"' },
      { sku: 'C-3', qty: 4, price: 0.5, title: 'Oil can, small' },
    ],
  },
  meta: {
    source: 'shop',
    attempt: 1,
    note: 'Leave at the door\nRing twice',
    ip: '203.0.113.9',
    ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)',
    trace: 'b7ad6b7169203331-00f067aa0ba902b7',
  },
});

const smallTemplate = [
  'New order {{ order.id }} ({{event}}) from {{order.customer.first name}} {{order.customer.last}}',
  '<{{order.customer.email}}>, total {{order.total}} {{order.currency}}.',
  'First item: {{order.items.0.title}} x{{order.items.0.qty}}. Ship to {{order.shipping.city}}.',
  'Note: {{meta.note}}',
].join('\n');

function makeLargePayload(targetLength: number): string {
  const orders: unknown[] = [];
  let length = 0;
  for (let i = 0; length < targetLength; i++) {
    const order = {
      id: 100000 + i,
      total: Math.round(i * 731) / 100,
      paid: i % 3 !== 0,
      customer: { name: `Customer ${i}`, email: `c${i}@example.com`, vip: i % 7 === 0 },
      items: [{ sku: `SKU-${i % 50}`, qty: (i % 4) + 1, note: i % 5 === 0 ? 'gift "wrap"' : null }],
    };
    length += JSON.stringify(order).length + 1;
    orders.push(order);
  }
  return JSON.stringify({ event: 'orders.export', orders });
}

const largePayload = makeLargePayload(100 * 1024);

/** The baseline: built-in parse and a one-line regex renderer over plain objects. */
function naiveRender(template: string, payload: unknown): string {
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_, path: string) => {
    if (path === '.') return JSON.stringify(payload);
    let value: unknown = payload;
    for (const key of path.split('.')) {
      value =
        value !== null && typeof value === 'object'
          ? (value as Record<string, unknown>)[key]
          : undefined;
    }
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

interface Result {
  name: string;
  opsPerSecond: number;
  microsPerOp: number;
}

let sink = 0;

/** Warms up for about 0.5 s, then takes the median of seven timed rounds of about 0.2 s each. */
function measure(name: string, run: () => string): Result {
  let iterations = 1;
  for (let warm = process.hrtime.bigint(); process.hrtime.bigint() - warm < 500_000_000n;) {
    for (let i = 0; i < iterations; i++) sink += run().length;
    iterations = Math.min(iterations * 2, 1 << 20);
  }
  const probeStart = process.hrtime.bigint();
  for (let i = 0; i < 100; i++) sink += run().length;
  const probeNs = Number(process.hrtime.bigint() - probeStart) / 100;
  const perRound = Math.max(10, Math.round(200_000_000 / probeNs));

  const rounds: number[] = [];
  for (let r = 0; r < 7; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perRound; i++) sink += run().length;
    rounds.push(Number(process.hrtime.bigint() - start) / perRound);
  }
  rounds.sort((a, b) => a - b);
  const ns = rounds[3] ?? 0;
  return { name, opsPerSecond: 1e9 / ns, microsPerOp: ns / 1000 };
}

const results = [
  measure('1 KB, 10 placeholders: parsePayload + renderTemplate', () =>
    renderTemplate(smallTemplate, parsePayload(smallPayload)),
  ),
  measure('1 KB, 10 placeholders: JSON.parse + regex (baseline)', () =>
    naiveRender(smallTemplate, JSON.parse(smallPayload)),
  ),
  measure('100 KB, {{.}}: parsePayload + renderTemplate', () =>
    renderTemplate('{{.}}', parsePayload(largePayload)),
  ),
  measure('100 KB, {{.}}: JSON.parse + regex (baseline)', () =>
    naiveRender('{{.}}', JSON.parse(largePayload)),
  ),
];

console.log(
  `Payloads: ${smallPayload.length} and ${largePayload.length} characters; Node ${process.version}`,
);
const width = Math.max(...results.map((r) => r.name.length));
console.log(`${'case'.padEnd(width)}  ${'ops/s'.padStart(10)}  ${'µs/op'.padStart(9)}`);
for (const r of results) {
  const ops = Math.round(r.opsPerSecond).toLocaleString('en-US');
  console.log(
    `${r.name.padEnd(width)}  ${ops.padStart(10)}  ${r.microsPerOp.toFixed(2).padStart(9)}`,
  );
}
if (sink === 0) console.log('(nothing rendered)');
