import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring, first thing, before the service allocates. Under
 * load a webhook's short-lived objects (alive while their batch commits) taught V8 to allocate
 * them in the old generation, where only full collections free them: pauses in the latency
 * tail long after the load fell (bench/HISTORY.md). Set at run time, not on every start command.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
