import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring, first thing, before the service allocates.
 *
 * Under load a webhook's objects (its payload text, the store statement's parameters) are often
 * still alive when the young generation is collected, since a batch waits for its commit. V8
 * then has the code that allocates them allocate straight into the old generation, and it kept
 * doing so when the load fell: at 500 webhooks/s after a busy phase, the old generation filled
 * with objects dead within milliseconds, and its full collections (1–2 in 10 s, each a pause
 * and a marking thread on a core the database needs) came into the latency tail. Without
 * pretenuring those objects die young, as they are (docs/scaling.md).
 *
 * V8 reads this flag when it collects the young generation, so setting it at run time takes
 * effect: in an A/B, no full collection in any 500/s run after the busy phase.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
