/**
 * The large order of the `accept_when` benchmarks and their 20 conditions: shared by
 * bench/accept-when-bench.ts (through the receiver) and bench/accept-when-cost.ts (the check
 * alone).
 */

/**
 * An order of about `bytes`, most of it the items, as a large shop order would be; written
 * compact as most senders do, or indented as JSON.stringify(…, null, indent) writes it.
 */
export function orderPayload(type: string, bytes: number, indent = 0): string {
  const item = (i: number) => ({
    sku: `sku-${String(i).padStart(5, '0')}`,
    qty: (i % 7) + 1,
    price: 19.99,
    title: 'Punch cards, pack of 100',
  });
  const write = (count: number) =>
    JSON.stringify(
      {
        type,
        id: 'evt_01HZX9Q4T7W3B5N8K2M6',
        order: {
          id: 1234567,
          total: 149.9,
          currency: 'EUR',
          customer: { id: 'cus_9912', email: 'ada@example.com' },
          items: Array.from({ length: count }, (_, i) => item(i)),
        },
      },
      null,
      indent,
    );
  const sample = 1000;
  return write(Math.floor((sample * bytes) / Buffer.byteLength(write(sample))));
}

/** 20 conditions over six distinct paths, two of them read whole; all hold for an order.created. */
export const ACCEPT_WHEN = [
  { path: 'payload.type', op: 'eq', value: 'order.created' },
  { path: 'payload.type', op: 'ne', value: 'order.test' },
  { path: 'payload.id', op: 'exists' },
  { path: 'payload.order.total', op: 'gte', value: 10 },
  { path: 'payload.order.total', op: 'lt', value: 100_000 },
  { path: 'payload.order.currency', op: 'in', value: ['EUR', 'USD', 'GBP'] },
  { path: 'payload.order', op: 'exists' },
  ...['00001', '00002', '00003', '00004', '00005', '00006', '00007'].map((n) => ({
    path: 'payload.order',
    op: 'contains',
    value: `sku-${n}`,
  })),
  ...['Punch', 'cards', 'pack', 'qty', 'price', 'title'].map((word) => ({
    path: 'payload.order.items',
    op: 'contains',
    value: word,
  })),
];
