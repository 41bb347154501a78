/** The webhook body every run sends: a shop's "order created" event, padded to exactly this size. */
export const PAYLOAD_BYTES = 1024;

const order = {
  event: 'order.created',
  id: 'evt_01HZX9Q4T7W3B5N8K2M6',
  created: 1717171717,
  livemode: true,
  order: {
    id: 1234567,
    number: 'SO-2024-004211',
    total: 149.9,
    currency: 'EUR',
    status: 'paid',
    customer: {
      id: 'cus_9912',
      'first name': 'Ada',
      last: 'Lovelace',
      email: 'ada@example.com',
      tags: ['vip', 'newsletter'],
    },
    shipping: {
      method: 'express',
      street: '12 Analytical Engine Way',
      city: 'London',
      zip: 'N1 9GU',
      country: 'GB',
    },
    payment: { method: 'card', brand: 'visa', last4: '4242', captured: true, amount: 14990 },
    items: [
      { sku: 'A-100', qty: 2, price: 19.99, title: 'Punch cards, pack of 100' },
      { sku: 'B-702', qty: 1, price: 59.52, title: 'Brass gear, large' },
      { sku: 'C-033', qty: 4, price: 12.6, title: 'Oil can, small' },
    ],
  },
  note: '',
};

function padded(): string {
  const bare = JSON.stringify(order);
  const room = PAYLOAD_BYTES - Buffer.byteLength(bare);
  if (room < 0) throw new Error(`the sample order is already ${Buffer.byteLength(bare)} bytes`);
  return JSON.stringify({ ...order, note: 'Please ring twice. '.repeat(room).slice(0, room) });
}

export const orderPayload = padded();

/** The prompt template of the benchmark channel: a few placeholders, as a real channel has. */
export const orderTemplate =
  'New order {{order.number}} from {{order.customer.first name}} {{order.customer.last}} ' +
  '({{order.customer.email}}): {{order.total}} {{order.currency}}, shipping {{order.shipping.method}} ' +
  'to {{order.shipping.city}}. First item: {{order.items.0.title}}. ' +
  'Write a one-line thank-you note for the customer.';
