/**
 * What a channel's `accept_when` costs per webhook on the receiver's CPU, the server left out:
 * the 20 conditions of bench/accept-when-bench.ts checked on its 840 KB order, in one process,
 * the fastest of ten batches, so the figures depend little on what else the machine runs. Three
 * ways, each in ms per body:
 * - plain: the plain channel's check (`checkPayload`: JSON.parse and the nesting scan);
 * - tree: the lossless tree (`parsePayload`) and the conditions read from it, as the receiver
 *   did before it read only the conditions' paths;
 * - paths: the text read at the conditions' paths (`readPayload`) and checked, as it does now.
 * Each on the compact order and on the order indented (`JSON.stringify(…, null, 1)`).
 *
 * Run with `node --expose-gc --import tsx bench/accept-when-cost.ts` (--runs=<n> bodies a way,
 * 200 by default; without --expose-gc a way's garbage may be collected in the next one's time).
 */
import { parseArgs } from 'node:util';
import { compileConditions } from '../src/conditions/conditions.js';
import { acceptWhenSchema } from '../src/conditions/condition-schemas.js';
import { checkPayload, parsePayload } from '../src/template/index.js';
import { ACCEPT_WHEN, orderPayload } from './lib/order-payload.js';

const { values: options } = parseArgs({
  options: { runs: { type: 'string', default: '200' } },
});
const RUNS = Number(options.runs);
const collectGarbage = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const PAYLOAD_BYTES = 840 * 1024;

const conditions = compileConditions(acceptWhenSchema.parse(ACCEPT_WHEN));
if (!conditions) throw new Error('no conditions');

const ways: Record<string, (text: string) => unknown> = {
  plain: (text) => checkPayload(text),
  tree: (text) => {
    const failing = conditions.failing({ payload: parsePayload(text) });
    if (failing !== undefined) throw new Error(`the order fails ${failing}`);
  },
  paths: (text) => {
    const failing = conditions.failing({ payload: conditions.readPayload(text) });
    if (failing !== undefined) throw new Error(`the order fails ${failing}`);
  },
};

/**
 * The fastest of ten batches of each way, in ms of wall-clock time per body; the ways take
 * turns batch by batch, so a busy spell of the shared machine slows all three alike, and the
 * fastest batch is the one a neighbour slowed least.
 */
function msPerBody(text: string): Record<string, number> {
  const fastest: Record<string, number> = {};
  for (const [name, way] of Object.entries(ways)) {
    for (let i = 0; i < 10; i++) way(text);
    fastest[name] = Infinity;
  }
  for (let batch = 0; batch < 10; batch++) {
    for (const [name, way] of Object.entries(ways)) {
      // The garbage of the way before is collected now, not in this way's time.
      collectGarbage();
      const started = performance.now();
      for (let i = 0; i < RUNS / 10; i++) way(text);
      const ms = (performance.now() - started) / (RUNS / 10);
      fastest[name] = Math.min(fastest[name] as number, ms);
    }
  }
  return fastest;
}

for (const indent of [0, 1]) {
  const text = orderPayload('order.created', PAYLOAD_BYTES, indent);
  const figures = Object.entries(msPerBody(text)).map(([name, ms]) => `${name} ${ms.toFixed(2)}`);
  console.log(
    `${indent ? 'indented' : 'compact'} ${Buffer.byteLength(text)} bytes: ${figures.join(', ')} ms per body`,
  );
}
