import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring, first thing, before the service allocates.
 *
 * Under load many of a webhook's objects are still alive when the young generation is
 * collected, since a batch waits for its commit. V8 then has the code that allocates them
 * allocate straight into the old generation, and it kept doing so when the load fell. Such an
 * object dies within milliseconds, but only a full collection finds it dead, and until then
 * whatever young object it points to (a payload's text, the store statement's parameters) is
 * promoted too. At 500 webhooks/s after a busy phase that brought 1–2 full collections into
 * every 10 s, each a pause and a marking thread on a core the database needs: the latency tail
 * (docs/scaling.md).
 *
 * Set here at run time rather than as a flag of every start command: the service's own build
 * with and without this line, in turns, had 3 full collections in eight 500/s runs against none.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
