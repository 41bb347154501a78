/**
 * What the guardrails cost the worker per KB of text sent to the AI: redaction with every kind
 * on (a fresh Redactor per event, as the worker makes one), on three texts of about 4 KB each:
 * ordinary prose with no personal data, a support ticket dense with it (an address, a phone, a
 * card, an IBAN, an IP and a key every few lines), and digit-heavy JSON (order lines, dates,
 * versions: the near misses every kind has to read and refuse), and the ticket as real text also
 * writes it (no-break and thin spaces, non-breaking hyphens, en dashes, full-width digits and `＠`,
 * zero-width marks inside values), which is read plain first. Also the spotlight's wrap of
 * each value while rendering, against rendering without it.
 *
 * Prints CPU µs per KB for each (the median of `--rounds` rounds of `--iterations` events).
 * Run with `npx tsx bench/redaction-bench.ts [--iterations 2000] [--rounds 7]`.
 */
import { parseArgs } from 'node:util';
import { EventGuard } from '../src/guardrails/event-guard.js';
import { REDACTION_KINDS } from '../src/guardrails/redaction-kinds.js';
import { Redactor } from '../src/guardrails/redactor.js';
import { parsePayload, renderTemplate } from '../src/template/index.js';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
  },
});
const iterations = Number(args.iterations);
const rounds = Number(args.rounds);

const repeat = (unit: string, bytes: number) =>
  unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

const prose = repeat(
  'The customer wrote again about the delayed parcel. She would like to know when it ships, ' +
    'whether the colour can still be changed, and if the discount from the spring sale applies. ',
  4096,
);
const ticket = repeat(
  'From ada.lovelace@example.com (+44 20 7946 0958), card 4111 1111 1111 1111, refund to ' +
    'DE89 3704 0044 0532 0130 00 from 203.0.113.7; token sk-proj-4fT9aQ2bX7mK1pL8vR3sW6yZ0cD5eH. ' +
    'Please call back on (415) 555-0132 before Friday. ',
  4096,
);
const oddTicket = repeat(
  'From ada.lovelace\u200b@example．com (+44\u00a020\u00a07946\u00a00958), card ' +
    '４１１１ １１１１ １１１１ １１１１, refund to DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00 ' +
    'from 203.0.113.7; token sk\u2011proj\u20114fT9aQ2bX7mK1pL8vR3sW6yZ0cD5eH. ' +
    'Please call back on (415)\u2009555\u20130132 before Friday. ',
  4096,
);
const digits = repeat(
  '{"order":"ORD-2024-000123","date":"2024-01-15","lines":[{"sku":"A-1001","qty":3,"price":19.99},' +
    '{"sku":"B-2002","qty":12,"price":4.5}],"version":"4.18.2","total":1234567890,"ts":"10:30:45"} ',
  4096,
);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** µs per KB of `text` for `run`, the median round. */
function perKb(text: string, run: (text: string) => unknown): number {
  for (let i = 0; i < 200; i++) run(text);
  const results: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // CPU time, not wall time: on a shared machine the wall clock also counts others' turns.
    const start = process.cpuUsage();
    for (let i = 0; i < iterations; i++) run(text);
    const used = process.cpuUsage(start);
    const us = (used.user + used.system) / iterations;
    results.push(us / (text.length / 1024));
  }
  return median(results);
}

const redactAll = (text: string) => new Redactor(REDACTION_KINDS).redact(text);

console.log(`redaction, every kind on (${iterations} events × ${rounds} rounds, median)`);
for (const [name, text] of [
  ['prose, nothing to redact', prose],
  ['ticket, dense personal data', ticket],
  ['ticket, odd spaces and forms', oddTicket],
  ['JSON full of numbers', digits],
] as const) {
  console.log(`  ${name.padEnd(30)} ${perKb(text, redactAll).toFixed(1).padStart(7)} µs/KB`);
}

const payload = parsePayload(JSON.stringify({ name: 'Ada', body: ticket, note: prose }));
const template = 'Ticket from {{name}}: {{body}}\nNote: {{note}}';
const rendered = renderTemplate(template, payload);
const spotlit = (text: string) => {
  const guard = EventGuard.of({ redact: null, restore: null, spotlight: true });
  return renderTemplate(text, payload, guard?.wrapValue);
};
console.log('spotlight while rendering (a template of three values, ~8 KB rendered)');
console.log(
  `  plain render                   ${perKb(rendered, () => renderTemplate(template, payload))
    .toFixed(1)
    .padStart(7)} µs/KB`,
);
console.log(
  `  render with data tags          ${perKb(rendered, () => spotlit(template))
    .toFixed(1)
    .padStart(7)} µs/KB`,
);
